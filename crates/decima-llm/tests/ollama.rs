//! The native Ollama client (`POST /api/chat`, NDJSON) against the test server's Ollama: text,
//! thinking, tool calls and their round trip, cut answers, errors before and during the stream,
//! framing split anywhere, and `options` on every request.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use decima_core::{FailureClass, Role};
use decima_llm::{
    ChatMessage, ChatRequest, FinishReason, HttpProvider, LlmError, Protocol, Provider,
    ProviderConfig, RetryPolicy, StreamEvent, Timeouts, ToolSpec, collect, with_retry,
};
use decima_testkit::{LlmServer, Reply, ScriptedToolCall, StreamFault, StreamOptions, Turn};
use futures_util::StreamExt;
use serde_json::{Value, json};

/// The preset's form of the base URL (`…/v1`), with the window the runtime plans for.
fn config(server: &LlmServer) -> ProviderConfig {
    let mut config = ProviderConfig::new(
        "ollama",
        Protocol::Ollama,
        server.openai_base_url(),
        "qwen3:8b",
    );
    config.num_ctx = Some(16_384);
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

fn ask(text: &str) -> ChatRequest {
    ChatRequest {
        model: "qwen3:8b".into(),
        messages: [
            ChatMessage::new(Role::System, "Be brief."),
            ChatMessage::new(Role::User, text),
        ]
        .map(Arc::new)
        .into(),
        max_tokens: Some(512),
        ..ChatRequest::default()
    }
}

fn text_turn(parts: &[&str]) -> Turn {
    Turn {
        text: parts.iter().map(|s| s.to_string()).collect(),
        usage: Some((21, 5)),
        ..Turn::default()
    }
}

fn weather_call(id: &str) -> ScriptedToolCall {
    ScriptedToolCall {
        id: id.into(),
        name: "get_weather".into(),
        argument_chunks: vec![r#"{"city": "#.into(), r#""Tokyo"}"#.into()],
    }
}

fn body(server: &LlmServer, index: usize) -> Value {
    server.requests()[index].json.clone().unwrap()
}

#[tokio::test]
async fn text_streams_and_the_request_is_native_with_the_window_and_the_cap() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(text_turn(&["Hel", "lo ", "世界 <&>"])));
    let done = collect(provider(config(&server)).stream(&ask("hi")))
        .await
        .unwrap();
    assert_eq!(done.text, "Hello 世界 <&>");
    assert_eq!(done.finish, Some(FinishReason::Stop));
    let usage = done.usage.unwrap();
    assert_eq!((usage.prompt_tokens, usage.completion_tokens), (21, 5));

    let request = &server.requests()[0];
    assert_eq!(request.path, "/api/chat");
    assert_eq!(request.header("accept"), Some("application/x-ndjson"));
    assert_eq!(request.header("accept-encoding"), Some("identity"));
    let body = request.json.as_ref().unwrap();
    assert_eq!(body["model"], "qwen3:8b");
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["options"],
        json!({ "num_ctx": 16384, "num_predict": 512 })
    );
    assert_eq!(
        body["messages"],
        json!([
            { "role": "system", "content": "Be brief." },
            { "role": "user", "content": "hi" }
        ])
    );
}

#[tokio::test]
async fn a_root_without_v1_reaches_the_same_endpoint() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(text_turn(&["ok"])));
    let mut cfg = config(&server);
    cfg.base_url = server.ollama_base_url();
    let done = collect(provider(cfg).stream(&ask("hi"))).await.unwrap();
    assert_eq!(done.text, "ok");
    assert_eq!(server.requests()[0].path, "/api/chat");
}

#[tokio::test]
async fn thinking_and_a_whole_tool_call_then_its_result_goes_back_with_its_name() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        reasoning: vec!["Need ".into(), "the weather.".into()],
        tool_calls: vec![weather_call("")],
        usage: Some((169, 15)),
        ..Turn::default()
    }));
    server.enqueue(Reply::Stream(text_turn(&["It is 11°C."])));
    let p = provider(config(&server));
    let mut request = ask("weather in Tokyo?");
    request.tools = vec![ToolSpec {
        name: "get_weather".into(),
        description: "Get the weather in a given city".into(),
        parameters: json!({ "type": "object", "properties": { "city": { "type": "string" } } }),
    }];
    let first = collect(p.stream(&request)).await.unwrap();
    assert_eq!(first.reasoning.as_deref(), Some("Need the weather."));
    assert_eq!(first.finish, Some(FinishReason::ToolCalls));
    assert_eq!(first.tool_calls.len(), 1, "{first:?}");
    let call = &first.tool_calls[0];
    assert_eq!(call.name, "get_weather");
    assert_eq!(call.arguments, r#"{"city":"Tokyo"}"#);
    assert!(
        call.id.starts_with("call_0_"),
        "a generated id: {}",
        call.id
    );
    assert_eq!(
        body(&server, 0)["tools"][0]["function"]["name"],
        "get_weather"
    );

    let mut result = ChatMessage::new(Role::Tool, "11 degrees celsius");
    result.tool_call_id = Some(call.id.clone());
    request.messages.push(Arc::new(first.to_message()));
    request.messages.push(Arc::new(result));
    let second = collect(p.stream(&request)).await.unwrap();
    assert_eq!(second.text, "It is 11°C.");
    let sent = body(&server, 1);
    assert_eq!(
        sent["messages"][2],
        json!({
            "role": "assistant",
            "content": "",
            "thinking": "Need the weather.",
            "tool_calls": [{
                "id": call.id,
                "function": { "name": "get_weather", "arguments": { "city": "Tokyo" } }
            }]
        })
    );
    assert_eq!(
        sent["messages"][3],
        json!({
            "role": "tool",
            "content": "11 degrees celsius",
            "tool_name": "get_weather",
            "tool_call_id": call.id
        })
    );
}

#[tokio::test]
async fn a_scripted_call_id_is_kept() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        tool_calls: vec![weather_call("call_k3b9x0qa")],
        ..Turn::default()
    }));
    let done = collect(provider(config(&server)).stream(&ask("x")))
        .await
        .unwrap();
    assert_eq!(done.tool_calls[0].id, "call_k3b9x0qa");
}

#[tokio::test]
async fn an_answer_cut_by_the_cap_finishes_on_length_and_runs_no_call() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        text: vec!["Writing the file".into()],
        tool_calls: vec![weather_call("")],
        finish: Some("length".into()),
        usage: Some((40, 512)),
        ..Turn::default()
    }));
    let done = collect(provider(config(&server)).stream(&ask("x")))
        .await
        .unwrap();
    assert_eq!(done.finish, Some(FinishReason::Length));
    assert!(done.is_cut_off());
    assert!(done.tool_calls.is_empty(), "{done:?}");
    assert_eq!(done.cut_off_tool_calls.len(), 1);
    assert_eq!(done.text, "Writing the file");
}

#[tokio::test]
async fn an_error_line_mid_stream_fails_the_answer_as_transient() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        fault: Some(StreamFault::ErrorEventAfter(1)),
        ..text_turn(&["a", "b"])
    }));
    let mut stream = provider(config(&server)).stream(&ask("x"));
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        StreamEvent::TextDelta("a".into())
    );
    let err = stream.next().await.unwrap().unwrap_err();
    assert!(
        matches!(&err, LlmError::StreamError { message, .. } if message.contains("an error was encountered while running the model")),
        "{err:?}"
    );
    assert_eq!(err.class(), FailureClass::Transient);
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn an_overflow_error_line_is_a_context_overflow() {
    let server = LlmServer::start().await;
    let line = r#"{"error":"the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length"}"#;
    server.enqueue(Reply::RawSse {
        chunks: vec![(Duration::ZERO, format!("{line}\n").into_bytes())],
    });
    let err = collect(provider(config(&server)).stream(&ask("x")))
        .await
        .unwrap_err();
    assert_eq!(err.class(), FailureClass::ContextOverflow, "{err}");
}

/// A text line and the `done` line as Ollama writes them (docs/api.md, one object per line).
const TEXT_LINE: &str = r#"{"model":"llama3.2","created_at":"2023-08-04T08:52:19.385406455-07:00","message":{"role":"assistant","content":"Grüße, 世界"},"done":false}"#;
const DONE_LINE: &str = r#"{"model":"llama3.2","created_at":"2023-08-04T19:22:45.499127Z","message":{"role":"assistant","content":""},"done":true,"total_duration":4883583458,"load_duration":1334875,"prompt_eval_count":26,"prompt_eval_duration":342546000,"eval_count":282,"eval_duration":4535599000}"#;

#[tokio::test]
async fn a_line_split_at_every_byte_decodes_the_same() {
    let server = LlmServer::start().await;
    let line = format!("{TEXT_LINE}\n");
    for at in 0..=line.len() {
        server.enqueue(Reply::RawSse {
            chunks: vec![
                (Duration::ZERO, line.as_bytes()[..at].to_vec()),
                (Duration::from_millis(2), line.as_bytes()[at..].to_vec()),
                // The last line without its newline is still a line.
                (Duration::ZERO, DONE_LINE.as_bytes().to_vec()),
            ],
        });
    }
    let p = provider(config(&server));
    for at in 0..=line.len() {
        let done = collect(p.stream(&ask("x"))).await.unwrap();
        assert_eq!(done.text, "Grüße, 世界", "split at {at}");
        assert_eq!(done.finish, Some(FinishReason::Stop), "split at {at}");
        assert_eq!(done.usage.unwrap().completion_tokens, 282, "split at {at}");
    }
    assert_eq!(server.pending_replies(), 0);
}

#[tokio::test]
async fn framing_options_all_decode_the_same() {
    let server = LlmServer::start().await;
    let variants = [
        StreamOptions {
            split_every: Some(1),
            ..StreamOptions::default()
        },
        StreamOptions {
            split_every: Some(7),
            event_delay: Some(Duration::from_millis(3)),
            ..StreamOptions::default()
        },
        StreamOptions {
            no_trailing_newline: true,
            ..StreamOptions::default()
        },
    ];
    for options in &variants {
        server.enqueue(Reply::Stream(Turn {
            reasoning: vec!["hm".into()],
            options: options.clone(),
            ..text_turn(&["one ", "two"])
        }));
    }
    let p = provider(config(&server));
    for options in &variants {
        let done = collect(p.stream(&ask("x"))).await.unwrap();
        assert_eq!(done.text, "one two", "{options:?}");
        assert_eq!(done.reasoning.as_deref(), Some("hm"), "{options:?}");
        assert_eq!(done.finish, Some(FinishReason::Stop), "{options:?}");
    }
}

#[tokio::test]
async fn a_stream_that_ends_without_done_is_broken() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::RawSse {
        chunks: vec![(Duration::ZERO, format!("{TEXT_LINE}\n").into_bytes())],
    });
    server.enqueue(Reply::Stream(Turn {
        fault: Some(StreamFault::CutAfter(2)),
        ..text_turn(&["a", "b", "c"])
    }));
    let p = provider(config(&server));
    let err = collect(p.stream(&ask("x"))).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::Stream { detail, .. } if detail.contains("ended before the model finished")),
        "{err:?}"
    );
    assert_eq!(err.class(), FailureClass::Transient);
    // The connection cut mid-body is broken too.
    let err = collect(p.stream(&ask("x"))).await.unwrap_err();
    assert!(matches!(err, LlmError::Stream { .. }), "{err:?}");
}

#[tokio::test]
async fn a_malformed_line_is_a_protocol_error() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        fault: Some(StreamFault::MalformedAfter(1)),
        ..text_turn(&["a", "b"])
    }));
    let err = collect(provider(config(&server)).stream(&ask("x")))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, LlmError::Protocol { detail, .. } if detail.contains("not valid JSON")),
        "{err:?}"
    );
}

#[tokio::test]
async fn errors_before_the_stream_come_with_their_status() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::model_not_found());
    server.enqueue(Reply::context_overflow());
    let p = provider(config(&server));
    let err = collect(p.stream(&ask("x"))).await.unwrap_err();
    match &err {
        LlmError::Http {
            status, message, ..
        } => {
            assert_eq!(*status, 404);
            assert_eq!(message, "model 'qwen3:8b' not found");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(err.class(), FailureClass::Data);
    let err = collect(p.stream(&ask("x"))).await.unwrap_err();
    assert!(matches!(err, LlmError::ContextOverflow { .. }), "{err:?}");
}

#[tokio::test]
async fn every_request_carries_the_window_and_the_cap_retries_included() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::server_error(503));
    server.enqueue(Reply::Stream(text_turn(&["fine"])));
    let policy = RetryPolicy {
        min_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(50),
        ..RetryPolicy::default()
    };
    let done = collect(with_retry(provider(config(&server)), ask("x"), policy))
        .await
        .unwrap();
    assert_eq!(done.text, "fine");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        let options = &request.json.as_ref().unwrap()["options"];
        assert_eq!(options["num_ctx"], 16384);
        assert_eq!(options["num_predict"], 512);
    }
    // Without a planned window, none is asked for.
    let mut unset = config(&server);
    unset.num_ctx = None;
    server.enqueue(Reply::Stream(text_turn(&["x"])));
    collect(provider(unset).stream(&ask("x"))).await.unwrap();
    assert_eq!(body(&server, 2)["options"], json!({ "num_predict": 512 }));
}
