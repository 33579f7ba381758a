//! The clients against the wire-level test server: every protocol variant and every fault.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use decima_core::{FailureClass, Role, ToolCall};
use decima_llm::secrets::SecretString;
use decima_llm::{
    ChatMessage, ChatRequest, Completion, FinishReason, HttpProvider, JsonSchemaFormat, LlmError,
    Protocol, Provider, ProviderConfig, ReasoningField, RetryPolicy, StreamEvent, Timeouts,
    ToolChoice, ToolSpec, collect,
};
use decima_testkit::llm_server::ReasoningField as ScriptReasoning;
use decima_testkit::{LlmServer, Reply, ScriptedToolCall, StreamFault, StreamOptions, Turn};
use futures_util::StreamExt;
use serde_json::json;

pub(super) const KEY: &str = "sk-test-wire-0123456789";

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

pub(super) fn ask(text: &str) -> ChatRequest {
    ChatRequest {
        model: "test-model".into(),
        messages: [
            ChatMessage::new(Role::System, "Be brief."),
            ChatMessage::new(Role::User, text),
        ]
        .map(std::sync::Arc::new)
        .into(),
        ..ChatRequest::default()
    }
}

pub(super) fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        min_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(50),
        ..RetryPolicy::default()
    }
}

pub(super) fn text_turn(parts: &[&str]) -> Turn {
    Turn {
        text: parts.iter().map(|s| s.to_string()).collect(),
        usage: Some((21, 5)),
        ..Turn::default()
    }
}

pub(super) async fn complete(
    p: &Arc<dyn Provider>,
    request: &ChatRequest,
) -> Result<Completion, LlmError> {
    collect(p.stream(request)).await
}

pub(super) async fn events(p: &Arc<dyn Provider>, request: &ChatRequest) -> Vec<StreamEvent> {
    let mut stream = p.stream(request);
    let mut out = Vec::new();
    while let Some(e) = stream.next().await {
        out.push(e.unwrap());
    }
    out
}

// ---------- OpenAI-compatible ----------

#[tokio::test]
async fn openai_text_usage_and_request_shape() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(text_turn(&["Hel", "lo ", "世界"])));
    let p = provider(config(&server, Protocol::OpenAi));
    let done = complete(&p, &ask("hi")).await.unwrap();
    assert_eq!(done.text, "Hello 世界");
    assert_eq!(done.usage.unwrap().prompt_tokens, 21);
    assert_eq!(done.usage.unwrap().completion_tokens, 5);
    assert_eq!(done.finish, Some(FinishReason::Stop));

    let req = &server.requests()[0];
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(req.header("accept-encoding"), Some("identity"));
    let body = req.json.as_ref().unwrap();
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "Be brief."})
    );
}

#[tokio::test]
async fn openai_reasoning_in_both_fields_and_echo_back() {
    for (script_field, field) in [
        (
            ScriptReasoning::ReasoningContent,
            ReasoningField::ReasoningContent,
        ),
        (ScriptReasoning::Reasoning, ReasoningField::Reasoning),
    ] {
        let server = LlmServer::start().await;
        server.enqueue(Reply::Stream(Turn {
            reasoning: vec!["Think ".into(), "hard.".into()],
            reasoning_field: script_field,
            text: vec!["42".into()],
            ..Turn::default()
        }));
        server.enqueue(Reply::Stream(text_turn(&["ok"])));
        let mut cfg = config(&server, Protocol::OpenAi);
        cfg.reasoning_echo = true;
        cfg.reasoning_field = field;
        let p = provider(cfg);
        let first = complete(&p, &ask("q")).await.unwrap();
        assert_eq!(first.reasoning.as_deref(), Some("Think hard."));
        assert_eq!(first.text, "42");

        let mut next = ask("q");
        next.messages.push(first.to_message().into());
        next.messages
            .push(ChatMessage::new(Role::User, "why?").into());
        complete(&p, &next).await.unwrap();
        let body = server.requests()[1].json.clone().unwrap();
        let key = match field {
            ReasoningField::ReasoningContent => "reasoning_content",
            ReasoningField::Reasoning => "reasoning",
        };
        assert_eq!(body["messages"][2][key], "Think hard.", "{body}");
    }
}

#[tokio::test]
async fn openai_parallel_tool_calls_assemble_and_tools_are_sent() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        tool_calls: vec![
            ScriptedToolCall {
                id: "call_a".into(),
                name: "shell".into(),
                argument_chunks: vec!["{\"cm".into(), "d\":\"ls".into(), " /data\"}".into()],
            },
            ScriptedToolCall {
                id: "call_b".into(),
                name: "read_file".into(),
                argument_chunks: vec!["{\"path\":".into(), "\"/data/a.csv\"}".into()],
            },
        ],
        ..Turn::default()
    }));
    let p = provider(config(&server, Protocol::OpenAi));
    let mut request = ask("look");
    request.tools = vec![ToolSpec {
        name: "shell".into(),
        description: "Run a command".into(),
        parameters: json!({"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}),
    }];
    request.tool_choice = Some(ToolChoice::Auto);
    request.parallel_tool_calls = Some(true);
    let done = complete(&p, &request).await.unwrap();
    assert_eq!(
        done.tool_calls,
        vec![
            ToolCall {
                id: "call_a".into(),
                name: "shell".into(),
                arguments: "{\"cmd\":\"ls /data\"}".into(),
                signature: None,
            },
            ToolCall {
                id: "call_b".into(),
                name: "read_file".into(),
                arguments: "{\"path\":\"/data/a.csv\"}".into(),
                signature: None,
            },
        ]
    );
    assert_eq!(done.finish, Some(FinishReason::ToolCalls));
    let body = server.requests()[0].json.clone().unwrap();
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["name"], "shell");
    assert_eq!(body["tool_choice"], "auto");
    assert_eq!(body["parallel_tool_calls"], true);

    // The assistant turn and its results go back in OpenAI's shape.
    let mut next = request.clone();
    next.messages.push(done.to_message().into());
    let mut result = ChatMessage::new(Role::Tool, "a.csv");
    result.tool_call_id = Some("call_a".into());
    next.messages.push(result.into());
    // Every call needs its result: OpenAI refuses a request that leaves one unanswered (and
    // Decima never sends one).
    let mut result = ChatMessage::new(Role::Tool, "x,y");
    result.tool_call_id = Some("call_b".into());
    next.messages.push(result.into());
    server.enqueue(Reply::Stream(text_turn(&["done"])));
    complete(&p, &next).await.unwrap();
    let body = server.requests()[1].json.clone().unwrap();
    assert_eq!(body["messages"][2]["content"], serde_json::Value::Null);
    assert_eq!(
        body["messages"][2]["tool_calls"][1]["function"]["arguments"],
        "{\"path\":\"/data/a.csv\"}"
    );
    assert_eq!(
        body["messages"][3],
        json!({"role": "tool", "content": "a.csv", "tool_call_id": "call_a"})
    );
}

#[tokio::test]
async fn openai_json_schema_only_where_supported() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(text_turn(&["{}"])));
    server.enqueue(Reply::Stream(text_turn(&["{}"])));
    let mut request = ask("json please");
    request.response_format = Some(JsonSchemaFormat {
        name: "answer".into(),
        schema: json!({"type": "object"}),
        strict: true,
    });
    let mut cfg = config(&server, Protocol::OpenAi);
    cfg.supports_json_schema = true;
    complete(&provider(cfg), &request).await.unwrap();
    complete(&provider(config(&server, Protocol::OpenAi)), &request)
        .await
        .unwrap();
    let requests = server.requests();
    assert_eq!(
        requests[0].json.as_ref().unwrap()["response_format"]["type"],
        "json_schema"
    );
    assert_eq!(
        requests[0].json.as_ref().unwrap()["response_format"]["json_schema"]["strict"],
        true
    );
    assert!(
        requests[1]
            .json
            .as_ref()
            .unwrap()
            .get("response_format")
            .is_none()
    );
}

#[tokio::test]
async fn sse_framing_variants_all_decode_the_same() {
    let variants = [
        StreamOptions {
            crlf: true,
            ..StreamOptions::default()
        },
        StreamOptions {
            split_every: Some(1),
            ..StreamOptions::default()
        },
        StreamOptions {
            split_every: Some(7),
            crlf: true,
            ..StreamOptions::default()
        },
        StreamOptions {
            keepalive_comments: true,
            ..StreamOptions::default()
        },
        StreamOptions {
            omit_done: true,
            ..StreamOptions::default()
        },
        StreamOptions {
            omit_done: true,
            no_trailing_newline: true,
            ..StreamOptions::default()
        },
        StreamOptions {
            no_trailing_newline: true,
            ..StreamOptions::default()
        },
    ];
    for protocol in [Protocol::OpenAi, Protocol::Anthropic] {
        for options in &variants {
            let server = LlmServer::start().await;
            server.enqueue(Reply::Stream(Turn {
                options: StreamOptions {
                    ping_events: protocol == Protocol::Anthropic,
                    ..options.clone()
                },
                ..text_turn(&["a", "β", "c\nd"])
            }));
            let done = complete(&provider(config(&server, protocol)), &ask("x")).await;
            let done = done.unwrap_or_else(|e| panic!("{protocol:?} {options:?}: {e}"));
            assert_eq!(done.text, "aβc\nd", "{protocol:?} {options:?}");
            assert!(done.finish.is_some(), "{protocol:?} {options:?}");
        }
    }
}

#[tokio::test]
async fn raw_sse_with_comments_and_a_final_event_without_newline() {
    let server = LlmServer::start().await;
    let chunk = |content: &str| {
        format!(
            "data: {}\r\n\r\n",
            json!({"choices":[{"index":0,"delta":{"content":content},"finish_reason":null}]})
        )
    };
    let finish = json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]});
    server.enqueue(Reply::RawSse {
        chunks: vec![
            (Duration::ZERO, b": OPENROUTER PROCESSING\r\n\r\n".to_vec()),
            (Duration::from_millis(5), chunk("one ").into_bytes()),
            (
                Duration::from_millis(5),
                chunk("two").as_bytes()[..9].to_vec(),
            ),
            (
                Duration::from_millis(5),
                chunk("two").as_bytes()[9..].to_vec(),
            ),
            (Duration::ZERO, format!("data: {finish}").into_bytes()),
        ],
    });
    let done = complete(&provider(config(&server, Protocol::OpenAi)), &ask("x"))
        .await
        .unwrap();
    assert_eq!(done.text, "one two");
    assert_eq!(done.finish, Some(FinishReason::Stop));
}

#[tokio::test]
async fn invalid_tool_arguments_are_repaired_or_kept_as_invalid() {
    for protocol in [Protocol::OpenAi, Protocol::Anthropic] {
        let server = LlmServer::start().await;
        server.enqueue(Reply::Stream(Turn {
            tool_calls: vec![ScriptedToolCall {
                id: "call_1".into(),
                name: "shell".into(),
                argument_chunks: vec!["{\"cmd\": \"ls".into()],
            }],
            ..Turn::default()
        }));
        server.enqueue(Reply::Stream(Turn {
            tool_calls: vec![ScriptedToolCall {
                id: "call_2".into(),
                name: "shell".into(),
                argument_chunks: vec!["{cmd: ls -la}".into()],
            }],
            ..Turn::default()
        }));
        let p = provider(config(&server, protocol));
        let repaired = complete(&p, &ask("x")).await.unwrap();
        assert_eq!(
            repaired.tool_calls[0].arguments, "{\"cmd\": \"ls\"}",
            "{protocol:?}"
        );
        // Hopeless arguments keep the call, marked, so the runtime answers it with a tool
        // error instead of losing the answer.
        let kept = complete(&p, &ask("x")).await.unwrap();
        let (raw, _) = decima_llm::invalid_arguments(&kept.tool_calls[0].arguments).unwrap();
        assert_eq!(raw, "{cmd: ls -la}", "{protocol:?}");
    }
}

// ---------- Anthropic ----------

#[tokio::test]
async fn anthropic_text_headers_and_system_parameter() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(text_turn(&["Bon", "jour"])));
    let p = provider(config(&server, Protocol::Anthropic));
    let done = complete(&p, &ask("hi")).await.unwrap();
    assert_eq!(done.text, "Bonjour");
    assert_eq!(done.usage.unwrap().prompt_tokens, 21);
    assert_eq!(done.usage.unwrap().completion_tokens, 5);
    assert_eq!(done.finish, Some(FinishReason::Stop));
    let req = &server.requests()[0];
    assert_eq!(req.path, "/v1/messages");
    assert_eq!(req.header("x-api-key"), Some(KEY));
    assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
    assert!(req.header("authorization").is_none());
    let body = req.json.as_ref().unwrap();
    assert_eq!(body["system"], "Be brief.");
    assert_eq!(body["messages"][0]["role"], "user");
    assert!(body["max_tokens"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn anthropic_thinking_keeps_its_signature_and_sends_it_back() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        reasoning: vec!["Let me ".into(), "check.".into()],
        reasoning_signature: Some("EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds".into()),
        text: vec!["Done.".into()],
        options: StreamOptions {
            ping_events: true,
            ..StreamOptions::default()
        },
        ..Turn::default()
    }));
    server.enqueue(Reply::Stream(text_turn(&["ok"])));
    let p = provider(config(&server, Protocol::Anthropic));
    let mut request = ask("q");
    request.thinking_budget = Some(2048);
    let first = complete(&p, &request).await.unwrap();
    assert_eq!(first.reasoning.as_deref(), Some("Let me check."));
    assert_eq!(
        first.reasoning_signature.as_deref(),
        Some("EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds")
    );
    let body = server.requests()[0].json.clone().unwrap();
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );

    let mut next = request.clone();
    next.messages.push(first.to_message().into());
    next.messages
        .push(ChatMessage::new(Role::User, "and?").into());
    complete(&p, &next).await.unwrap();
    let body = server.requests()[1].json.clone().unwrap();
    assert_eq!(
        body["messages"][1]["content"][0],
        json!({"type": "thinking", "thinking": "Let me check.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"})
    );
}

#[tokio::test]
async fn anthropic_tool_use_with_split_input_json() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        text: vec!["Checking.".into()],
        tool_calls: vec![ScriptedToolCall {
            id: "toolu_01".into(),
            name: "shell".into(),
            argument_chunks: vec!["{\"c".into(), "md\": \"wc -l".into(), " a.csv\"}".into()],
        }],
        options: StreamOptions {
            split_every: Some(5),
            ping_events: true,
            ..StreamOptions::default()
        },
        ..Turn::default()
    }));
    let p = provider(config(&server, Protocol::Anthropic));
    let mut request = ask("count");
    request.tools = vec![ToolSpec {
        name: "shell".into(),
        description: "Run".into(),
        parameters: json!({"type": "object"}),
    }];
    request.tool_choice = Some(ToolChoice::Required);
    let done = complete(&p, &request).await.unwrap();
    assert_eq!(done.text, "Checking.");
    assert_eq!(done.tool_calls[0].id, "toolu_01");
    assert_eq!(done.tool_calls[0].arguments, "{\"cmd\": \"wc -l a.csv\"}");
    assert_eq!(done.finish, Some(FinishReason::ToolCalls));
    let body = server.requests()[0].json.clone().unwrap();
    assert_eq!(body["tools"][0]["input_schema"], json!({"type": "object"}));
    assert_eq!(body["tool_choice"], json!({"type": "any"}));
}

#[tokio::test]
async fn anthropic_error_event_mid_stream_is_transient() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        fault: Some(StreamFault::ErrorEventAfter(2)),
        ..text_turn(&["a", "b"])
    }));
    let err = complete(&provider(config(&server, Protocol::Anthropic)), &ask("x"))
        .await
        .unwrap_err();
    assert_eq!(err.class(), FailureClass::Transient, "{err}");
    assert!(err.to_string().contains("overloaded"), "{err}");
}

// ---------- Faults ----------
