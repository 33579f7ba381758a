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
    ChatMessage, ChatRequest, Completion, FinishReason, HttpProvider, LlmError, Protocol, Provider,
    ProviderConfig, RetryPolicy, StreamEvent, Timeouts, ToolSpec, Usage, collect, presets,
    with_retry,
};
use decima_testkit::llm_server::{OpenAiQuirks, Profile, gemini};
use decima_testkit::{LlmServer, Reply, ScriptedToolCall, Turn};
use futures_util::StreamExt;
use serde_json::{Value, json};

const KEY: &str = "sk-test-compat-0123456789";

pub(super) fn config(server: &LlmServer, protocol: Protocol) -> ProviderConfig {
    let base = match protocol {
        Protocol::OpenAi => server.openai_base_url(),
        Protocol::Anthropic => server.anthropic_base_url(),
        Protocol::Ollama => server.ollama_base_url(),
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

pub(super) fn provider(config: ProviderConfig) -> Arc<dyn Provider> {
    Arc::new(HttpProvider::new(config).unwrap())
}

pub(super) fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        min_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(50),
        ..RetryPolicy::default()
    }
}

/// A request offering the two tools the scripted turns call.
pub(super) fn request() -> ChatRequest {
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
pub(super) fn two_calls() -> Vec<ScriptedToolCall> {
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

pub(super) fn expected_calls() -> Vec<ToolCall> {
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
pub(super) fn tool_turn(openai: OpenAiQuirks) -> Turn {
    Turn {
        text: vec!["Let me ".into(), "look.".into()],
        tool_calls: two_calls(),
        usage: Some((30, 12)),
        openai,
        ..Turn::default()
    }
}

/// The (name, arguments) of each call, for servers whose ids are not the script's.
pub(super) fn names_and_arguments(calls: &[ToolCall]) -> Vec<(&str, &str)> {
    calls
        .iter()
        .map(|c| (c.name.as_str(), c.arguments.as_str()))
        .collect()
}

/// The answer as the runtime would store it: the store refuses what this refuses.
pub(super) fn assert_storable(done: &Completion) {
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

// ---------- Every OpenAI-compatible preset against its server ----------

/// The server behind each OpenAI-compatible preset. A new preset fails the suite until it is
/// given one here.
pub(super) fn profile_of(preset: &str) -> Option<Profile> {
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

/// Servers analysts reach through a custom base URL rather than a preset. Ollama's `/v1` is
/// one now that its preset speaks the native protocol, for providers of kind `openai` set up
/// before.
pub(super) const CUSTOM_SERVERS: [Profile; 5] = [
    Profile::Ollama,
    Profile::Sglang,
    Profile::LiteLlm,
    Profile::LiteLlmOllama,
    Profile::GeminiOpenAi,
];

/// A preset's settings, pointed at the test server.
pub(super) fn preset_config(
    server: &LlmServer,
    preset: &presets::ProviderPreset,
) -> ProviderConfig {
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
pub(super) async fn check_against(
    label: &str,
    server: &LlmServer,
    cfg: ProviderConfig,
    profile: Profile,
) {
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

/// A history whose calls Gemini did not write (another model's, or imported), and which Gemini 3
/// therefore never signed: an earlier turn's step, an answer, then a step of the current turn.
pub(super) fn unsigned_history(model: &str) -> ChatRequest {
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
