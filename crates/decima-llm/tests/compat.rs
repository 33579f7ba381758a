//! The OpenAI-compatible client against the servers analysts really run: one test per defect
//! their quirks caused, then every OpenAI-compatible preset against its server's profile.
//!
//! Each quirk is reproduced by the test server (`decima_testkit::llm_server::Profile`), where it
//! names its source; the tests below name it again where they rely on it.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use decima_core::{FailureClass, Role, ToolCall};
use decima_llm::secrets::SecretString;
use decima_llm::{
    ChatMessage, ChatRequest, Completion, CutOffToolCall, FinishReason, HttpProvider, LlmError,
    Protocol, Provider, ProviderConfig, RetryPolicy, StreamEvent, Timeouts, ToolSpec, Usage,
    collect, presets, with_retry,
};
use decima_testkit::llm_server::{
    AnthropicQuirks, OpenAiQuirks, Profile, ReasoningField as ScriptReasoning, gemini,
};
use decima_testkit::{LlmServer, Reply, ScriptedToolCall, StreamOptions, Turn};
use futures_util::StreamExt;
use serde_json::{Value, json};

const KEY: &str = "sk-test-compat-0123456789";

fn config(server: &LlmServer, protocol: Protocol) -> ProviderConfig {
    let base = match protocol {
        Protocol::OpenAi => server.openai_base_url(),
        Protocol::Anthropic => server.anthropic_base_url(),
    };
    let mut config = ProviderConfig::new("test", protocol, base, "test-model");
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

fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        min_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(50),
        ..RetryPolicy::default()
    }
}

/// A request offering the two tools the scripted turns call.
fn request() -> ChatRequest {
    let tool = |name: &str| ToolSpec {
        name: name.into(),
        description: format!("{name} tool"),
        parameters: json!({"type": "object"}),
    };
    ChatRequest {
        model: "test-model".into(),
        messages: [
            ChatMessage::new(Role::System, "Be brief."),
            ChatMessage::new(Role::User, "What is in /data?"),
        ]
        .map(std::sync::Arc::new)
        .into(),
        tools: vec![tool("shell"), tool("read_file")],
        ..ChatRequest::default()
    }
}

const SHELL_ARGS: &str = r#"{"cmd":"ls /data"}"#;
const READ_ARGS: &str = r#"{"path":"/data/a.csv"}"#;

/// Two calls, their arguments streamed in pieces.
fn two_calls() -> Vec<ScriptedToolCall> {
    vec![
        ScriptedToolCall {
            id: "call_shell_1".into(),
            name: "shell".into(),
            argument_chunks: vec![r#"{"cm"#.into(), r#"d":"ls"#.into(), r#" /data"}"#.into()],
        },
        ScriptedToolCall {
            id: "call_read_2".into(),
            name: "read_file".into(),
            argument_chunks: vec![r#"{"path":"#.into(), r#""/data/a.csv"}"#.into()],
        },
    ]
}

fn expected_calls() -> Vec<ToolCall> {
    vec![
        ToolCall {
            id: "call_shell_1".into(),
            name: "shell".into(),
            arguments: SHELL_ARGS.into(),
            signature: None,
        },
        ToolCall {
            id: "call_read_2".into(),
            name: "read_file".into(),
            arguments: READ_ARGS.into(),
            signature: None,
        },
    ]
}

/// Text, two calls and usage.
fn tool_turn(openai: OpenAiQuirks) -> Turn {
    Turn {
        text: vec!["Let me ".into(), "look.".into()],
        tool_calls: two_calls(),
        usage: Some((30, 12)),
        openai,
        ..Turn::default()
    }
}

/// The (name, arguments) of each call, for servers whose ids are not the script's.
fn names_and_arguments(calls: &[ToolCall]) -> Vec<(&str, &str)> {
    calls
        .iter()
        .map(|c| (c.name.as_str(), c.arguments.as_str()))
        .collect()
}

/// The answer as the runtime would store it: the store refuses what this refuses.
fn assert_storable(done: &Completion) {
    done.to_message()
        .validate()
        .unwrap_or_else(|e| panic!("the answer cannot be stored: {e}: {done:?}"));
}

// ---------- Defects ----------

/// Defect 2. Ollama (ollama/ollama#4357) and SGLang (sgl-project/sglang#3912) send
/// `"finish_reason": ""` on every chunk; only a non-empty reason ends the answer.
#[tokio::test]
async fn empty_finish_reasons_do_not_end_the_answer() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(tool_turn(OpenAiQuirks {
        empty_finish_reason: true,
        ..OpenAiQuirks::default()
    })));
    let done = collect(provider(config(&server, Protocol::OpenAi)).stream(&request()))
        .await
        .unwrap();
    assert_eq!(done.text, "Let me look.");
    assert_eq!(done.tool_calls, expected_calls());
    assert_eq!(done.finish, Some(FinishReason::ToolCalls));
    assert_eq!(
        done.usage,
        Some(Usage {
            prompt_tokens: 30,
            completion_tokens: 12,
            ..Usage::default()
        })
    );
}

/// Defect 3. vLLM streams tool calls without ids (vllm-project/vllm#18412): the client makes
/// up ids, distinct within the answer and the same whenever the same bytes are decoded.
#[tokio::test]
async fn tool_calls_without_ids_get_generated_ids() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(tool_turn(OpenAiQuirks {
        omit_tool_ids: true,
        ..OpenAiQuirks::default()
    })));
    let done = collect(provider(config(&server, Protocol::OpenAi)).stream(&request()))
        .await
        .unwrap();
    assert_eq!(
        names_and_arguments(&done.tool_calls),
        [("shell", SHELL_ARGS), ("read_file", READ_ARGS)]
    );
    let ids: Vec<&str> = done.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert!(ids.iter().all(|id| id.starts_with("call_")), "{ids:?}");
    assert_ne!(ids[0], ids[1]);
    assert_storable(&done);

    // The same bytes decode to the same ids.
    let body = |content: &str| {
        let chunk = |delta: Value, finish: Value| {
            format!(
                "data: {}\n\n",
                json!({"id": "chatcmpl-7", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            )
        };
        let mut out = chunk(json!({"content": content}), Value::Null);
        out += &chunk(
            json!({"tool_calls": [{"index": 0, "type": "function", "function": {"name": "shell", "arguments": SHELL_ARGS}}]}),
            Value::Null,
        );
        out += &chunk(json!({}), json!("tool_calls"));
        out += "data: [DONE]\n\n";
        out.into_bytes()
    };
    let server = LlmServer::start().await;
    for _ in 0..2 {
        server.enqueue(Reply::RawSse {
            chunks: vec![(Duration::ZERO, body("x"))],
        });
    }
    let p = provider(config(&server, Protocol::OpenAi));
    let first = collect(p.stream(&request())).await.unwrap();
    let second = collect(p.stream(&request())).await.unwrap();
    assert_eq!(first.tool_calls, second.tool_calls);
    assert!(first.tool_calls[0].id.starts_with("call_"));
}

/// Defect 4. Ollama (ollama/ollama#15457) and proxies (QuantumNous/new-api#2701) give every call
/// index 0, told apart only by their ids; Gemini's OpenAI endpoint sends no index at all
/// (THU-MAIC/OpenMAIC#1556) and empty ids on argument deltas (AstrBotDevs/AstrBot#6661).
#[tokio::test]
async fn calls_sharing_an_index_or_without_one_are_kept_apart() {
    let cases = [
        (
            "shared index",
            OpenAiQuirks {
                shared_tool_index: true,
                ..OpenAiQuirks::default()
            },
        ),
        (
            "shared index, whole calls",
            OpenAiQuirks {
                shared_tool_index: true,
                whole_tool_calls: true,
                ..OpenAiQuirks::default()
            },
        ),
        (
            "no index",
            OpenAiQuirks {
                omit_tool_index: true,
                empty_id_continuations: true,
                ..OpenAiQuirks::default()
            },
        ),
        (
            "no index, whole calls",
            OpenAiQuirks {
                omit_tool_index: true,
                whole_tool_calls: true,
                ..OpenAiQuirks::default()
            },
        ),
    ];
    for (case, quirks) in cases {
        let server = LlmServer::start().await;
        server.enqueue(Reply::Stream(tool_turn(quirks)));
        let done = collect(provider(config(&server, Protocol::OpenAi)).stream(&request()))
            .await
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(done.tool_calls, expected_calls(), "{case}");
    }

    // Neither index nor id: each name starts a call.
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(tool_turn(OpenAiQuirks {
        omit_tool_index: true,
        omit_tool_ids: true,
        ..OpenAiQuirks::default()
    })));
    let done = collect(provider(config(&server, Protocol::OpenAi)).stream(&request()))
        .await
        .unwrap();
    assert_eq!(
        names_and_arguments(&done.tool_calls),
        [("shell", SHELL_ARGS), ("read_file", READ_ARGS)]
    );
    assert_storable(&done);
}

/// Defect 6. A server that ignores `"stream": true` answers with one `application/json` chat
/// completion: it is the answer, not a broken stream to retry.
#[tokio::test]
async fn a_json_answer_to_a_stream_request_is_decoded_whole() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        reasoning: vec!["Think.".into()],
        ..tool_turn(OpenAiQuirks {
            json_body: true,
            ..OpenAiQuirks::default()
        })
    }));
    let done = collect(with_retry(
        provider(config(&server, Protocol::OpenAi)),
        request(),
        fast_retry(),
    ))
    .await
    .unwrap();
    assert_eq!(done.text, "Let me look.");
    assert_eq!(done.reasoning.as_deref(), Some("Think."));
    assert_eq!(done.tool_calls, expected_calls());
    assert_eq!(done.finish, Some(FinishReason::ToolCalls));
    assert_eq!(
        done.usage,
        Some(Usage {
            prompt_tokens: 30,
            completion_tokens: 12,
            ..Usage::default()
        })
    );
    assert_eq!(server.requests().len(), 1, "not retried");
}

/// Defect 6, errors. OpenRouter answers 200 with `{"error": {"code": N, ...}}` once a model has
/// started (openrouter.ai/docs/api-reference/errors); other servers put an OpenAI error object
/// in a 200. The error is classified by its code or type, not taken for a broken stream.
#[tokio::test]
async fn an_error_in_a_json_200_is_classified() {
    let cases = [
        (
            r#"{"error":{"code":401,"message":"No auth credentials found"}}"#,
            FailureClass::Permission,
            1,
        ),
        (
            r#"{"error":{"message":"Invalid 'messages': empty","type":"invalid_request_error","param":null,"code":null}}"#,
            FailureClass::Data,
            1,
        ),
        (
            r#"{"error":{"code":502,"message":"Provider returned error","metadata":{"provider_name":"x"}}}"#,
            FailureClass::Transient,
            4,
        ),
    ];
    for (body, class, attempts) in cases {
        let server = LlmServer::start().await;
        for _ in 0..4 {
            server.enqueue(Reply::Status {
                status: 200,
                headers: Vec::new(),
                body: body.into(),
            });
        }
        let err = collect(with_retry(
            provider(config(&server, Protocol::OpenAi)),
            request(),
            fast_retry(),
        ))
        .await
        .unwrap_err();
        assert_eq!(err.class(), class, "{body}: {err}");
        assert!(
            !matches!(err, LlmError::Stream { .. } | LlmError::Protocol { .. }),
            "{body}: {err}"
        );
        assert_eq!(server.requests().len(), attempts, "{body}");
    }
}

/// Defect 6, without a content type to go by (`text/plain`, or none): the first bytes decide. A
/// JSON answer starts with `{`, after the blank lines DeepSeek sends while busy
/// (api-docs.deepseek.com/quick_start/rate_limit); an event stream never does.
#[tokio::test]
async fn the_first_bytes_decide_when_the_content_type_does_not() {
    let sse = concat!(
        ": keep-alive\n\n",
        "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"streamed\"},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    let json = concat!(
        "\n\n\n",
        r#"{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"whole"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}"#,
    );
    for (body, text) in [(sse, "streamed"), (json, "whole")] {
        let server = LlmServer::start().await;
        server.enqueue(Reply::Status {
            status: 200,
            headers: vec![("content-type".into(), "text/plain".into())],
            body: body.into(),
        });
        let done = collect(provider(config(&server, Protocol::OpenAi)).stream(&request()))
            .await
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(done.text, text);
        assert_eq!(done.finish, Some(FinishReason::Stop));
    }
}

/// Defect 7. Arguments cut off by the output limit are not a call to run: "repairing" them would
/// write a truncated file. The answer reports the call as cut off, its text as received, in both
/// protocols (Anthropic's `max_tokens` stop leaves the `tool_use` block open).
#[tokio::test]
async fn calls_cut_off_by_the_output_limit_are_reported_not_repaired() {
    let cut = r#"{"path":"a.py","content":"def f():\n    ret"#;
    for (protocol, finish) in [
        (Protocol::OpenAi, "length"),
        (Protocol::Anthropic, "max_tokens"),
    ] {
        let server = LlmServer::start().await;
        server.enqueue(Reply::Stream(Turn {
            text: vec!["Writing.".into()],
            tool_calls: vec![ScriptedToolCall {
                id: "call_w".into(),
                name: "write_file".into(),
                argument_chunks: vec![cut.into()],
            }],
            finish: Some(finish.into()),
            ..Turn::default()
        }));
        let events: Vec<StreamEvent> = provider(config(&server, protocol))
            .stream(&request())
            .map(Result::unwrap)
            .collect()
            .await;
        let cut_off = CutOffToolCall {
            id: "call_w".into(),
            name: "write_file".into(),
            arguments: cut.into(),
        };
        assert!(
            events.contains(&StreamEvent::ToolCallCutOff(cut_off.clone())),
            "{protocol:?}: {events:?}"
        );
        assert!(
            !events.iter().any(|e| matches!(e, StreamEvent::ToolCall(_))),
            "{protocol:?}: {events:?}"
        );
        let mut done = Completion::default();
        for event in events {
            done.apply(event);
        }
        assert_eq!(done.finish, Some(FinishReason::Length), "{protocol:?}");
        assert!(done.is_cut_off());
        assert!(done.tool_calls.is_empty(), "{protocol:?}: {done:?}");
        assert_eq!(done.cut_off_tool_calls, vec![cut_off], "{protocol:?}");
        assert_eq!(done.text, "Writing.");
        assert!(done.to_message().tool_calls.is_empty());
    }
}

/// Defect 7, whatever the order: a call that arrived whole before the answer ended on the output
/// limit is not run either.
#[test]
fn a_length_finish_moves_earlier_calls_out_of_the_calls_to_run() {
    let mut done = Completion::default();
    done.apply(StreamEvent::ToolCall(expected_calls()[0].clone()));
    done.apply(StreamEvent::Finish(FinishReason::Length));
    done.apply(StreamEvent::ToolCall(expected_calls()[1].clone()));
    assert!(done.tool_calls.is_empty());
    assert_eq!(
        done.cut_off_tool_calls
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        ["shell", "read_file"]
    );
}

/// Defect 8. vLLM sends `reasoning` and `reasoning_content` in the same delta
/// (vllm-project/vllm#34030): the reasoning is kept, and echoed back, once.
#[tokio::test]
async fn reasoning_in_both_fields_is_taken_once() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        reasoning: vec!["Think ".into(), "hard.".into()],
        reasoning_field: ScriptReasoning::Both,
        text: vec!["42".into()],
        ..Turn::default()
    }));
    server.enqueue(Reply::Stream(Turn {
        text: vec!["ok".into()],
        ..Turn::default()
    }));
    let mut cfg = config(&server, Protocol::OpenAi);
    cfg.reasoning_echo = true;
    let p = provider(cfg);
    let first = collect(p.stream(&request())).await.unwrap();
    assert_eq!(first.reasoning.as_deref(), Some("Think hard."));
    let mut next = request();
    next.messages.push(first.to_message().into());
    next.messages
        .push(ChatMessage::new(Role::User, "why?").into());
    collect(p.stream(&next)).await.unwrap();
    let body = server.requests()[1].json.clone().unwrap();
    assert_eq!(body["messages"][2]["reasoning_content"], "Think hard.");
}

/// Defect 9. OpenRouter keeps slow streams open with `: OPENROUTER PROCESSING` comments
/// (openrouter.ai/docs/api-reference/streaming), DeepSeek with `: keep-alive`
/// (api-docs.deepseek.com/quick_start/rate_limit): a comment proves the connection alive, so it
/// resets the idle timer. Events come every 800 ms, comments half-way, the idle timeout is 600 ms.
#[tokio::test]
async fn keepalive_comments_reset_the_idle_timer() {
    for protocol in [Protocol::OpenAi, Protocol::Anthropic] {
        let server = LlmServer::start().await;
        server.enqueue(Reply::Stream(Turn {
            text: vec!["slow ".into(), "but ".into(), "alive".into()],
            options: StreamOptions {
                keepalive_comments: true,
                keepalive_text: Some("OPENROUTER PROCESSING".into()),
                event_delay: Some(Duration::from_millis(800)),
                ..StreamOptions::default()
            },
            ..Turn::default()
        }));
        let mut cfg = config(&server, protocol);
        cfg.timeouts.idle = Duration::from_millis(600);
        let done = collect(provider(cfg).stream(&request()))
            .await
            .unwrap_or_else(|e| panic!("{protocol:?}: {e}"));
        assert_eq!(done.text, "slow but alive", "{protocol:?}");
    }

    // Without comments the same pace is an idle timeout.
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        text: vec!["slow ".into(), "dead".into()],
        options: StreamOptions {
            event_delay: Some(Duration::from_millis(800)),
            ..StreamOptions::default()
        },
        ..Turn::default()
    }));
    let mut cfg = config(&server, Protocol::OpenAi);
    cfg.timeouts.idle = Duration::from_millis(600);
    let err = collect(provider(cfg).stream(&request())).await.unwrap_err();
    assert!(matches!(err, LlmError::IdleTimeout { .. }), "{err}");
}

/// OpenAI's `include_usage`, vLLM and LiteLLM end with a `"choices": []` usage chunk; some servers
/// never send `data: [DONE]`. Both still make a whole answer.
#[tokio::test]
async fn a_usage_chunk_with_empty_choices_and_no_done() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        options: StreamOptions {
            omit_done: true,
            ..StreamOptions::default()
        },
        ..tool_turn(OpenAiQuirks::default())
    }));
    let events: Vec<StreamEvent> = provider(config(&server, Protocol::OpenAi))
        .stream(&request())
        .map(Result::unwrap)
        .collect()
        .await;
    let mut done = Completion::default();
    for event in events {
        done.apply(event);
    }
    assert_eq!(done.tool_calls, expected_calls());
    assert_eq!(done.finish, Some(FinishReason::ToolCalls));
    assert_eq!(
        done.usage,
        Some(Usage {
            prompt_tokens: 30,
            completion_tokens: 12,
            ..Usage::default()
        })
    );
}

/// Errors and failure reasons inside a 200 stream, each as a real server sends it, classified
/// so that server failures are retried and refusals are not.
#[tokio::test]
async fn failures_inside_a_stream_are_classified() {
    let text = r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Par"},"finish_reason":null}]}"#;
    let cases = [
        (
            // OpenRouter, once a model has started: an error object and finish_reason "error"
            // (openrouter.ai/docs/api-reference/streaming, "Handling Errors During Streaming").
            r#"data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","provider":"openai","error":{"code":"server_error","message":"Provider disconnected unexpectedly"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}"#,
            FailureClass::Transient,
        ),
        (
            // The same finish reason without the error object.
            r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"error"}]}"#,
            FailureClass::Transient,
        ),
        (
            // DeepSeek interrupts an answer it has no resources for
            // (api-docs.deepseek.com/api/create-chat-completion, finish_reason).
            r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"insufficient_system_resource"}]}"#,
            FailureClass::Transient,
        ),
        (
            // vLLM's error shape (block/goose#8031).
            r#"data: {"object":"error","message":"This model's maximum context length is 4096 tokens.","type":"BadRequestError","param":null,"code":400}"#,
            FailureClass::ContextOverflow,
        ),
        (
            r#"data: {"error":{"object":"error","message":"Engine loop died","type":"InternalServerError","param":null,"code":500}}"#,
            FailureClass::Transient,
        ),
        (
            // LM Studio: an error object with only a message (zendev-sh/goai#110).
            r#"data: {"error":{"message":"Compute error."},"message":"Compute error."}"#,
            FailureClass::Data,
        ),
    ];
    for (line, class) in cases {
        let server = LlmServer::start().await;
        server.enqueue(Reply::RawSse {
            chunks: vec![(Duration::ZERO, format!("{text}\n\n{line}\n\n").into_bytes())],
        });
        let err = collect(provider(config(&server, Protocol::OpenAi)).stream(&request()))
            .await
            .unwrap_err();
        assert!(matches!(err, LlmError::StreamError { .. }), "{line}: {err}");
        assert_eq!(err.class(), class, "{line}: {err}");
    }

    // Zhipu stops a stream its moderation flags with "sensitive"
    // (docs.bigmodel.cn/cn/guide/platform/securityaudit): a content filter, not an error.
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        text: vec!["Par".into()],
        finish: Some("sensitive".into()),
        ..Turn::default()
    }));
    let done = collect(provider(config(&server, Protocol::OpenAi)).stream(&request()))
        .await
        .unwrap();
    assert_eq!(done.finish, Some(FinishReason::ContentFilter));
}

// ---------- Every OpenAI-compatible preset against its server ----------

/// The server behind each OpenAI-compatible preset. A new preset fails the suite until it is
/// given one here.
fn profile_of(preset: &str) -> Option<Profile> {
    Some(match preset {
        "openai" => Profile::OpenAi,
        "deepseek" => Profile::DeepSeek,
        "qwen" => Profile::Qwen,
        "moonshot" => Profile::Moonshot,
        "zhipu" => Profile::Zhipu,
        "openrouter" => Profile::OpenRouter,
        "ollama" => Profile::Ollama,
        "lmstudio" => Profile::LmStudio,
        "llamacpp" => Profile::LlamaCpp,
        "vllm" => Profile::Vllm,
        _ => return None,
    })
}

/// Servers analysts reach through a custom base URL rather than a preset.
const CUSTOM_SERVERS: [Profile; 4] = [
    Profile::Sglang,
    Profile::LiteLlm,
    Profile::LiteLlmOllama,
    Profile::GeminiOpenAi,
];

/// A preset's settings, pointed at the test server.
fn preset_config(server: &LlmServer, preset: &presets::ProviderPreset) -> ProviderConfig {
    let mut cfg = config(server, Protocol::OpenAi);
    cfg.name = preset.name.clone();
    cfg.model = preset.default_model.clone();
    cfg.reasoning_echo = preset.reasoning_echo;
    if let Some(field) = preset.reasoning_field {
        cfg.reasoning_field = field;
    }
    cfg.supports_json_schema = preset.supports_json_schema;
    if !preset.needs_api_key {
        cfg.api_key = None;
    }
    cfg
}

/// One tool-calling turn (reasoning where the server streams it, text, two calls, usage) in the
/// server's shape, then the follow-up request that sends it back with the tools' results.
async fn check_against(label: &str, server: &LlmServer, cfg: ProviderConfig, profile: Profile) {
    let reasons = profile.reasoning_field().is_some();
    server.enqueue(Reply::Stream(profile.apply(Turn {
        model: cfg.model.clone(),
        reasoning: if reasons {
            vec!["Look ".into(), "first.".into()]
        } else {
            Vec::new()
        },
        ..tool_turn(OpenAiQuirks::default())
    })));
    server.enqueue(Reply::Stream(profile.apply(Turn {
        text: vec!["Two files.".into()],
        usage: Some((60, 3)),
        ..Turn::default()
    })));
    let echo = cfg.reasoning_echo.then(|| cfg.reasoning_field.as_str());
    let gemini = profile == Profile::GeminiOpenAi;
    if gemini {
        // Gemini 3 refuses the follow-up unless each call's signature comes back.
        server.refuse_with(gemini::refuses_unsigned_calls);
    }
    let p = provider(cfg);
    let events: Vec<StreamEvent> = p
        .stream(&request())
        .map(|e| e.unwrap_or_else(|e| panic!("{label}: {e}")))
        .collect()
        .await;
    let count = |f: fn(&StreamEvent) -> bool| events.iter().filter(|e| f(e)).count();
    assert_eq!(count(|e| matches!(e, StreamEvent::Finish(_))), 1, "{label}");
    assert_eq!(count(|e| matches!(e, StreamEvent::Usage(_))), 1, "{label}");
    let mut done = Completion::default();
    for event in events {
        done.apply(event);
    }

    assert_eq!(done.text, "Let me look.", "{label}");
    let reasoning = reasons.then(|| "Look first.".to_string());
    assert_eq!(done.reasoning, reasoning, "{label}: reasoning once");
    if profile.quirks().omit_tool_ids {
        assert_eq!(
            names_and_arguments(&done.tool_calls),
            [("shell", SHELL_ARGS), ("read_file", READ_ARGS)],
            "{label}"
        );
        assert_ne!(done.tool_calls[0].id, done.tool_calls[1].id, "{label}");
    } else if gemini {
        let signed: Vec<ToolCall> = expected_calls()
            .into_iter()
            .enumerate()
            .map(|(i, call)| ToolCall {
                signature: (i == 0).then(|| "c2lnbmF0dXJl0".to_owned()),
                ..call
            })
            .collect();
        assert_eq!(
            done.tool_calls, signed,
            "{label}: each call keeps its signature"
        );
    } else {
        assert_eq!(done.tool_calls, expected_calls(), "{label}");
    }
    assert!(done.cut_off_tool_calls.is_empty(), "{label}");
    assert_eq!(
        done.usage,
        Some(Usage {
            prompt_tokens: 30,
            completion_tokens: 12,
            ..Usage::default()
        }),
        "{label}"
    );
    assert_eq!(done.finish, Some(FinishReason::ToolCalls), "{label}");
    assert_storable(&done);

    // The answer and the tools' results go back; the next answer reads as well.
    let mut next = request();
    next.messages.push(done.to_message().into());
    for call in &done.tool_calls {
        let mut result = ChatMessage::new(Role::Tool, format!("{} done", call.name));
        result.tool_call_id = Some(call.id.clone());
        next.messages.push(result.into());
    }
    let second = collect(p.stream(&next))
        .await
        .unwrap_or_else(|e| panic!("{label}: second turn: {e}"));
    assert_eq!(second.text, "Two files.", "{label}");
    assert_eq!(second.finish, Some(FinishReason::Stop), "{label}");

    let body = server.requests()[1].json.clone().unwrap();
    let sent = &body["messages"][2];
    let sent_calls: Vec<(String, String, String)> = sent["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["function"]["name"].as_str().unwrap().to_string(),
                c["function"]["arguments"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let kept: Vec<(String, String, String)> = done
        .tool_calls
        .iter()
        .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone()))
        .collect();
    assert_eq!(sent_calls, kept, "{label}");
    for (call, sent) in done
        .tool_calls
        .iter()
        .zip(sent["tool_calls"].as_array().unwrap())
    {
        let expected = match (gemini, &call.signature) {
            (true, Some(signature)) => json!({ "google": { "thought_signature": signature } }),
            _ => Value::Null,
        };
        assert_eq!(
            sent["extra_content"], expected,
            "{label}: a signature goes back to Gemini only"
        );
    }
    for (i, call) in done.tool_calls.iter().enumerate() {
        assert_eq!(
            body["messages"][3 + i]["tool_call_id"],
            call.id.as_str(),
            "{label}"
        );
    }
    for field in ["reasoning_content", "reasoning"] {
        let expected = match (echo, &reasoning) {
            (Some(echoed), Some(text)) if echoed == field => Value::from(text.as_str()),
            _ => Value::Null,
        };
        assert_eq!(
            sent[field], expected,
            "{label}: {field} echoed once, where wanted"
        );
    }
}

#[tokio::test]
async fn every_openai_compatible_preset_against_its_server() {
    let mut seen = Vec::new();
    for preset in presets::all()
        .iter()
        .filter(|p| p.protocol == Protocol::OpenAi)
    {
        let profile = profile_of(&preset.name).unwrap_or_else(|| {
            panic!(
                "preset {} has no server profile in tests/compat.rs",
                preset.name
            )
        });
        let server = LlmServer::start().await;
        check_against(
            &preset.name,
            &server,
            preset_config(&server, preset),
            profile,
        )
        .await;
        seen.push(profile);
    }
    for profile in CUSTOM_SERVERS {
        let server = LlmServer::start().await;
        let mut cfg = config(&server, Protocol::OpenAi);
        if profile == Profile::GeminiOpenAi {
            cfg.model = "gemini-3-pro-preview".into();
        }
        check_against(profile.name(), &server, cfg, profile).await;
        seen.push(profile);
    }
    for profile in Profile::ALL {
        assert!(
            seen.contains(&profile),
            "{} is never tested",
            profile.name()
        );
    }
}

/// The same turn as a whole `chat.completion` from a server that does not stream, for every
/// server's reasoning field.
#[tokio::test]
async fn every_server_answering_without_streaming() {
    for profile in Profile::ALL {
        let server = LlmServer::start().await;
        let mut turn = profile.apply(Turn {
            reasoning: vec!["Look first.".into()],
            ..tool_turn(OpenAiQuirks::default())
        });
        turn.openai = OpenAiQuirks {
            json_body: true,
            ..OpenAiQuirks::default()
        };
        server.enqueue(Reply::Stream(turn));
        let done = collect(provider(config(&server, Protocol::OpenAi)).stream(&request()))
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", profile.name()));
        assert_eq!(done.text, "Let me look.", "{}", profile.name());
        assert_eq!(
            done.reasoning.as_deref(),
            Some("Look first."),
            "{}",
            profile.name()
        );
        assert_eq!(done.tool_calls, expected_calls(), "{}", profile.name());
        assert_eq!(
            done.finish,
            Some(FinishReason::ToolCalls),
            "{}",
            profile.name()
        );
    }
}

/// A history whose calls Gemini did not write (another model's, or imported), and which Gemini 3
/// therefore never signed: an earlier turn's step, an answer, then a step of the current turn.
fn unsigned_history(model: &str) -> ChatRequest {
    let step = |id: &str| {
        let mut calls = expected_calls();
        calls[0].id = format!("{id}_shell");
        calls[1].id = format!("{id}_read");
        let results = calls.iter().map(|c| ChatMessage {
            tool_call_id: Some(c.id.clone()),
            ..ChatMessage::new(Role::Tool, "done")
        });
        let call = ChatMessage {
            tool_calls: calls.clone(),
            ..ChatMessage::new(Role::Assistant, "")
        };
        std::iter::once(call).chain(results).collect::<Vec<_>>()
    };
    let mut messages = vec![
        ChatMessage::new(Role::System, "Be brief."),
        ChatMessage::new(Role::User, "What was in /data?"),
    ];
    messages.extend(step("old"));
    messages.push(ChatMessage::new(Role::Assistant, "Two files."));
    messages.push(ChatMessage::new(Role::User, "And now?"));
    messages.extend(step("new"));
    ChatRequest {
        model: model.into(),
        messages: messages.into_iter().map(Arc::new).collect(),
        ..request()
    }
}

#[tokio::test]
async fn gemini_takes_unsigned_calls_with_googles_stand_in_and_other_servers_see_nothing() {
    let server = LlmServer::start().await;
    server.refuse_with(gemini::refuses_unsigned_calls);
    server.enqueue(Reply::Stream(Profile::GeminiOpenAi.apply(Turn {
        text: vec!["Still two.".into()],
        ..Turn::default()
    })));
    let mut cfg = config(&server, Protocol::OpenAi);
    cfg.model = "gemini-3-flash-preview".into();
    let done = collect(provider(cfg).stream(&unsigned_history("gemini-3-flash-preview")))
        .await
        .unwrap();
    assert_eq!(done.text, "Still two.");
    let body = server.requests()[0].json.clone().unwrap();
    let signature_of = |message: usize, call: usize| {
        body["messages"][message]["tool_calls"][call]["extra_content"].clone()
    };
    // messages: 0 system, 1 user, 2 old step, 3-4 results, 5 answer, 6 user, 7 new step.
    assert_eq!(
        signature_of(7, 0),
        json!({ "google": { "thought_signature": "skip_thought_signature_validator" } }),
        "the current turn's step gets the stand-in on its first call"
    );
    assert_eq!(
        signature_of(7, 1),
        Value::Null,
        "only the first call is signed"
    );
    assert_eq!(
        signature_of(2, 0),
        Value::Null,
        "earlier turns go as they are"
    );

    // Signed calls sent to a server that is not Gemini: the field never appears.
    let other = LlmServer::start().await;
    other.enqueue(Reply::Stream(Turn {
        text: vec!["Two.".into()],
        ..Turn::default()
    }));
    let mut history = unsigned_history("qwen3");
    let mut step = (*history.messages[7]).clone();
    step.tool_calls[0].signature = Some("c2lnbmF0dXJl0".into());
    history.messages[7] = Arc::new(step);
    let mut cfg = config(&other, Protocol::OpenAi);
    cfg.model = "qwen3".into();
    collect(provider(cfg).stream(&history)).await.unwrap();
    let sent = String::from_utf8(other.requests()[0].body.clone()).unwrap();
    assert!(!sent.contains("extra_content"), "{sent}");
}

/// Prompt-cache figures reach `Usage` from each server's own usage shape: OpenAI's
/// `prompt_tokens_details.cached_tokens` (streamed and as one JSON body), DeepSeek's
/// `prompt_cache_hit_tokens`, and Anthropic's `cache_read_input_tokens` and
/// `cache_creation_input_tokens`, whose `input_tokens` leaves both out.
#[tokio::test]
async fn prompt_cache_hits_and_writes_are_read_from_every_usage_shape() {
    let cached_turn = |openai: OpenAiQuirks| Turn {
        text: vec!["Done.".into()],
        usage: Some((2_000, 12)),
        cached: Some((1_536, 300)),
        openai,
        ..Turn::default()
    };
    let server = LlmServer::start().await;
    let expected_openai = Usage {
        prompt_tokens: 2_000,
        completion_tokens: 12,
        cache_read_tokens: 1_536,
        cache_write_tokens: 0,
    };
    for quirks in [
        Profile::OpenAi.quirks(),
        Profile::DeepSeek.quirks(),
        OpenAiQuirks {
            json_body: true,
            ..OpenAiQuirks::default()
        },
    ] {
        let shape = format!("{quirks:?}");
        server.enqueue(Reply::Stream(cached_turn(quirks)));
        let done = collect(provider(config(&server, Protocol::OpenAi)).stream(&request()))
            .await
            .unwrap();
        assert_eq!(done.usage, Some(expected_openai), "{shape}");
    }
    // The documented stream, and the real API's, which repeats the cumulative usage (cache
    // fields included) in `message_delta`.
    for anthropic in [AnthropicQuirks::default(), AnthropicQuirks::real_api()] {
        let shape = format!("{anthropic:?}");
        server.enqueue(Reply::Stream(Turn {
            anthropic,
            ..cached_turn(OpenAiQuirks::default())
        }));
        let done = collect(provider(config(&server, Protocol::Anthropic)).stream(&request()))
            .await
            .unwrap();
        assert_eq!(
            done.usage,
            Some(Usage {
                prompt_tokens: 2_000,
                completion_tokens: 12,
                cache_read_tokens: 1_536,
                cache_write_tokens: 300,
            }),
            "{shape}"
        );
    }
}
