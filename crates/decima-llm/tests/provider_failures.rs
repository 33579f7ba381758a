//! Failures as real servers send them: hostile `Retry-After` values, and every preset's
//! context-overflow wording, through the wire.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use decima_core::{FailureClass, Role};
use decima_llm::secrets::SecretString;
use decima_llm::{
    ChatMessage, ChatRequest, HttpProvider, LlmError, Protocol, Provider, ProviderConfig,
    RetryPolicy, Timeouts, collect, presets, with_retry,
};
use decima_testkit::{LlmServer, Reply, Turn};

const KEY: &str = "sk-test-failures-0123456789";

fn config(server: &LlmServer, name: &str, protocol: Protocol) -> ProviderConfig {
    let base = match protocol {
        Protocol::OpenAi => server.openai_base_url(),
        Protocol::Anthropic => server.anthropic_base_url(),
        Protocol::Ollama => server.ollama_base_url(),
    };
    let mut config = ProviderConfig::new(name, protocol, base, "test-model");
    config.api_key = Some(SecretString::new(KEY));
    config.timeouts = Timeouts {
        connect: Duration::from_secs(2),
        idle: Duration::from_secs(5),
        total: Duration::from_secs(20),
    };
    config
}

fn provider(config: ProviderConfig) -> Arc<dyn Provider> {
    Arc::new(HttpProvider::new(config).unwrap())
}

fn ask() -> ChatRequest {
    ChatRequest {
        model: "test-model".into(),
        messages: [ChatMessage::new(Role::User, "x")]
            .map(std::sync::Arc::new)
            .into(),
        ..ChatRequest::default()
    }
}

fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        min_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(50),
        ..RetryPolicy::default()
    }
}

fn rate_limited(protocol: Protocol, retry_after: &str) -> Reply {
    let body = match protocol {
        Protocol::OpenAi => {
            r#"{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#
        }
        Protocol::Anthropic => {
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"Rate limited"}}"#
        }
        Protocol::Ollama => {
            r#"{"error":"you've reached your hourly usage limit, please wait or upgrade to continue"}"#
        }
    };
    Reply::Status {
        status: 429,
        headers: vec![("retry-after".into(), retry_after.into())],
        body: body.into(),
    }
}

// ---------- Defect 1: Retry-After ----------

/// What a `Retry-After` value must lead to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    /// Longer than the policy's limit: the 429 goes to the person at once.
    TooLong,
    /// Unusable or short: retried (after the backoff, or the short wait).
    Retried,
}

/// Defect 1: `Retry-After: 1e20` overflowed `Duration::from_secs_f64` and killed `decima chat`
/// with exit 101. No value may panic; a wait over the limit is reported, not waited out.
#[tokio::test]
async fn no_retry_after_value_panics_and_long_waits_are_reported() {
    let cases: &[(&str, Wait)] = &[
        ("1e20", Wait::TooLong),
        ("1e308", Wait::TooLong),
        ("1.8e19", Wait::TooLong),
        ("18446744073709551616", Wait::TooLong),
        ("99999999999999999999999999999999", Wait::TooLong),
        ("18446744073709551615", Wait::TooLong),
        ("inf", Wait::TooLong),
        ("+Infinity", Wait::TooLong),
        ("3600", Wait::TooLong),
        ("61", Wait::TooLong),
        ("Fri, 31 Dec 9999 23:59:59 GMT", Wait::TooLong),
        ("-1", Wait::Retried),
        ("-1e20", Wait::Retried),
        ("-inf", Wait::Retried),
        ("NaN", Wait::Retried),
        ("nan", Wait::Retried),
        ("1e-400", Wait::Retried),
        ("0.2", Wait::Retried),
        ("0", Wait::Retried),
        ("", Wait::Retried),
        ("   ", Wait::Retried),
        ("soon", Wait::Retried),
        ("0x10", Wait::Retried),
        ("1,5", Wait::Retried),
        ("Thu, 01 Jan 1970 00:00:00 GMT", Wait::Retried),
        ("Sun, 06 Nov 1994 08:49:37 GMT", Wait::Retried),
        ("Mon, 32 Foo 2024 99:99:99 GMT", Wait::Retried),
    ];
    for protocol in [Protocol::OpenAi, Protocol::Anthropic] {
        for (value, wait) in cases {
            let server = LlmServer::start().await;
            server.enqueue(rate_limited(protocol, value));
            server.enqueue(Reply::Stream(Turn {
                text: vec!["fine".into()],
                ..Turn::default()
            }));
            let started = Instant::now();
            let result = collect(with_retry(
                provider(config(&server, "test", protocol)),
                ask(),
                fast_retry(),
            ))
            .await;
            let case = format!("{protocol:?} Retry-After {value:?}");
            assert!(
                started.elapsed() < Duration::from_secs(3),
                "{case}: waited {:?}",
                started.elapsed()
            );
            match wait {
                Wait::TooLong => {
                    let err = result.expect_err(&case);
                    assert_eq!(err.status(), Some(429), "{case}: {err}");
                    assert_eq!(err.class(), FailureClass::Transient, "{case}");
                    assert!(
                        err.retry_after()
                            .is_some_and(|w| w > Duration::from_secs(60)),
                        "{case}: {:?}",
                        err.retry_after()
                    );
                    assert_eq!(server.requests().len(), 1, "{case}: not waited out");
                }
                Wait::Retried => {
                    let done = result.unwrap_or_else(|e| panic!("{case}: {e}"));
                    assert_eq!(done.text, "fine", "{case}");
                    assert_eq!(server.requests().len(), 2, "{case}");
                }
            }
        }
    }
}

// ---------- Defect 11: context overflow wording of every preset ----------

/// One provider's real overflow error: the HTTP status and body it sends, and where it was seen.
struct Overflow {
    preset: &'static str,
    status: u16,
    body: &'static str,
    source: &'static str,
}

const OVERFLOWS: &[Overflow] = &[
    Overflow {
        preset: "openai",
        status: 400,
        body: r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130415 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        source: "OpenAI API, code context_length_exceeded (dimagi/open-chat-studio#463)",
    },
    Overflow {
        preset: "anthropic",
        status: 400,
        body: r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210034 tokens > 200000 maximum"}}"#,
        source: "Anthropic API, prompt over the window",
    },
    Overflow {
        preset: "anthropic",
        status: 400,
        body: r#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease input length or `max_tokens` and try again"},"request_id":"req_011CUB2XUHWkFnQzxcKBbjpF"}"#,
        source: "Anthropic API, prompt plus max_tokens over the window \
                 (continuedev/continue#6080, anthropics/claude-code#408, docker/docker-agent#569)",
    },
    Overflow {
        preset: "anthropic",
        status: 413,
        body: r#"{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}"#,
        source: "Anthropic errors docs: 413 request_too_large",
    },
    Overflow {
        preset: "deepseek",
        status: 400,
        body: r#"{"error":{"message":"This model's maximum context length is 131072 tokens. However, you requested 131134 tokens (122942 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}"#,
        source: "DeepSeek API (evalstate/fast-agent#621, FoundationAgents/OpenManus#79)",
    },
    Overflow {
        preset: "qwen",
        status: 400,
        body: r#"{"error":{"code":"invalid_parameter_error","param":null,"message":"<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 129024]","type":"invalid_request_error"},"id":"chatcmpl-1","request_id":"1"}"#,
        source: "DashScope compatible mode (QwenLM/qwen-code#98, QwenLM/Qwen-Agent#615)",
    },
    Overflow {
        preset: "moonshot",
        status: 400,
        body: r#"{"error":{"message":"Invalid request: Your request exceeded model token limit: 262144 (requested: 269030)","type":"invalid_request_error"}}"#,
        source: "Moonshot API (MoonshotAI/kimi-cli#2011)",
    },
    Overflow {
        preset: "zhipu",
        status: 400,
        body: r#"{"error":{"code":"1261","message":"Prompt exceeds max length"}}"#,
        source: "Zhipu GLM error 1261 (NousResearch/hermes-agent#1877, mangowhoiscloud/geode#668)",
    },
    Overflow {
        preset: "openrouter",
        status: 400,
        body: r#"{"error":{"message":"This endpoint's maximum context length is 131072 tokens. However, you requested about 138956 tokens (7884 of text input, 131072 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.","code":400,"metadata":{"provider_name":null}}}"#,
        source: "OpenRouter (OpenHands/OpenHands#9937, agno-agi/agno#3980)",
    },
    Overflow {
        preset: "ollama",
        status: 400,
        body: r#"{"error":"{\"error\":{\"code\":400,\"message\":\"request (8889 tokens) exceeds the available context size (4096 tokens), try increasing it\",\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":8889,\"n_ctx\":4096}}"}"#,
        source: "Ollama with truncation off, the runner's error inside a string \
                 (ollama/ollama#17889)",
    },
    Overflow {
        preset: "ollama",
        status: 400,
        body: r#"{"error":"the prompt is longer than the context length currently available to the model; try increasing it"}"#,
        source: "Ollama with context shift off (ollama/ollama#17944)",
    },
    Overflow {
        preset: "ollama",
        status: 500,
        body: r#"{"error":"the input length exceeds the context length"}"#,
        source: "Ollama, embeddings and older chat paths, HTTP 500",
    },
    Overflow {
        preset: "lmstudio",
        status: 400,
        body: r#"{"error":"Trying to keep the first 15857 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}"#,
        source: "LM Studio (lmstudio-ai/lmstudio-bug-tracker#237, #546)",
    },
    Overflow {
        preset: "lmstudio",
        status: 400,
        body: r#"{"error":"The number of tokens to keep from the initial prompt is greater than the context length (n_keep: 13055>= n_ctx: 4096). Try to load the model with a larger context length, or provide a shorter input."}"#,
        source: "LM Studio (Gitlawb/openclaude#353, lmstudio-ai/lmstudio-bug-tracker#2205)",
    },
    Overflow {
        preset: "llamacpp",
        status: 400,
        body: r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}"#,
        source: "llama.cpp server (ggml-org/llama.cpp#15780, #17284, oobabooga/textgen#7257)",
    },
    Overflow {
        preset: "vllm",
        status: 400,
        body: r#"{"object":"error","message":"This model's maximum context length is 131072 tokens. However, you requested 219523 tokens in the messages, Please reduce the length of the messages.","type":"BadRequestError","param":null,"code":400}"#,
        source: "vLLM OpenAI server (bytedance/deer-flow#326)",
    },
    Overflow {
        preset: "vllm",
        status: 400,
        body: r#"{"error":{"message":"The decoder prompt (length 2136) is longer than the maximum model length of 2048.","type":"BadRequestError","param":null,"code":400}}"#,
        source: "vLLM V1 (OpenBMB/MiniCPM-V#1048, xorbitsai/inference#3785)",
    },
    Overflow {
        preset: "gemini",
        status: 400,
        body: r#"[{"error":{"code":400,"message":"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]"#,
        source: "Gemini through its OpenAI-compatible endpoint, no preset (google-gemini/gemini-cli#6678)",
    },
    Overflow {
        preset: "sglang",
        status: 400,
        body: r#"{"object":"error","message":"Input length (160062 tokens) exceeds the maximum allowed length (59862 tokens).","type":"BadRequestError","param":null,"code":400}"#,
        source: "SGLang, no preset (sgl-project/sglang#4048)",
    },
];

/// Errors that talk about tokens or lengths but are not the window's: they must keep their class.
const NOT_OVERFLOWS: &[(u16, &str, FailureClass, &str)] = &[
    (
        429,
        r#"{"error":{"message":"Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 25000, Requested 9000. Please try again in 4.2s.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#,
        FailureClass::Transient,
        "OpenAI tokens-per-minute limit",
    ),
    (
        429,
        r#"{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization of 30,000 input tokens per minute. Please reduce the prompt length or the maximum tokens requested, or try again later."}}"#,
        FailureClass::Transient,
        "Anthropic input-tokens-per-minute limit",
    ),
    (
        400,
        r#"{"error":{"message":"max_tokens must be less than or equal to 16384, the maximum value for max_tokens is less than the context_window for this model","type":"invalid_request_error"}}"#,
        FailureClass::Data,
        "Groq max_tokens cap (RooCodeInc/Roo-Code#5729)",
    ),
    (
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"tools.0.name: String should have at most 64 characters; the tool name exceeds the maximum length"}}"#,
        FailureClass::Data,
        "constructed: a schema error about a length that is not the window's",
    ),
];

/// Defect 11: Anthropic's "input length and `max_tokens` exceed context limit" was classed as
/// Data. Every preset's provider gets its real wording checked, and a new preset without a row
/// fails this test.
#[tokio::test]
async fn every_presets_overflow_wording_is_a_context_overflow() {
    for preset in presets::all() {
        assert!(
            OVERFLOWS.iter().any(|o| o.preset == preset.name),
            "preset {} has no overflow wording in the table",
            preset.name
        );
    }
    for overflow in OVERFLOWS {
        let protocol = presets::find(overflow.preset)
            .map(|p| p.protocol)
            .unwrap_or(Protocol::OpenAi);
        let server = LlmServer::start().await;
        server.enqueue(Reply::Status {
            status: overflow.status,
            headers: Vec::new(),
            body: overflow.body.into(),
        });
        let err = collect(with_retry(
            provider(config(&server, overflow.preset, protocol)),
            ask(),
            fast_retry(),
        ))
        .await
        .unwrap_err();
        let case = format!(
            "{} HTTP {} ({})",
            overflow.preset, overflow.status, overflow.source
        );
        assert_eq!(err.class(), FailureClass::ContextOverflow, "{case}: {err}");
        assert!(
            matches!(err, LlmError::ContextOverflow { .. }),
            "{case}: {err:?}"
        );
        assert_eq!(server.requests().len(), 1, "{case}: not retried");
    }
    for (status, body, class, what) in NOT_OVERFLOWS {
        let server = LlmServer::start().await;
        server.enqueue(Reply::Status {
            status: *status,
            headers: Vec::new(),
            body: (*body).into(),
        });
        let err = collect(provider(config(&server, "x", Protocol::OpenAi)).stream(&ask()))
            .await
            .unwrap_err();
        assert_eq!(err.class(), *class, "{what}: {err}");
    }
}
