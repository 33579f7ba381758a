//! The Anthropic quirks the test server renders, checked event by event against the shapes their
//! sources show, with a raw TCP client.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use decima_testkit::llm_server::{AnthropicQuirks, InputInStart, ThinkingBlock};
use decima_testkit::{LlmServer, Reply, ScriptedToolCall, Turn};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// POSTs `body` to /v1/messages with `connection: close` and returns the status line and the body.
async fn post(server: &LlmServer, body: &str) -> (String, String) {
    let mut stream = TcpStream::connect(server.addr()).await.unwrap();
    let request = format!(
        "POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut raw))
        .await
        .unwrap()
        .unwrap();
    let raw = String::from_utf8(raw).unwrap();
    let (head, rest) = raw.split_once("\r\n\r\n").unwrap();
    (head.lines().next().unwrap().to_owned(), rest.to_owned())
}

/// POSTs to /v1/messages and returns the SSE events' (name, data).
async fn events(server: &LlmServer) -> Vec<(String, Value)> {
    let (_, raw_body) = post(server, "{}").await;
    let mut rest = raw_body.as_str();
    let mut body = String::new();
    loop {
        let (size, after) = rest.split_once("\r\n").unwrap();
        let size = usize::from_str_radix(size, 16).unwrap();
        if size == 0 {
            break;
        }
        body.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
    body.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            let mut name = String::new();
            let mut data = Value::Null;
            for line in e.lines() {
                if let Some(n) = line.strip_prefix("event: ") {
                    name = n.to_string();
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data = serde_json::from_str(d).unwrap();
                }
            }
            (name, data)
        })
        .collect()
}

fn call(chunks: &[&str]) -> ScriptedToolCall {
    ScriptedToolCall {
        id: "toolu_1".into(),
        name: "shell".into(),
        argument_chunks: chunks.iter().map(|s| s.to_string()).collect(),
    }
}

#[tokio::test]
async fn redacted_and_extra_thinking_blocks_come_whole_and_in_order() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        reasoning: vec!["a".into()],
        reasoning_signature: Some("sigA".into()),
        anthropic: AnthropicQuirks {
            thinking_blocks: vec![
                ThinkingBlock::Redacted {
                    data: "EmwK".into(),
                },
                ThinkingBlock::Thinking {
                    deltas: vec!["b".into()],
                    signature: "sigB".into(),
                },
            ],
            ..AnthropicQuirks::default()
        },
        text: vec!["t".into()],
        ..Turn::default()
    }));
    let events = events(&server).await;
    let starts: Vec<&Value> = events
        .iter()
        .filter(|(n, _)| n == "content_block_start")
        .map(|(_, d)| d)
        .collect();
    assert_eq!(
        starts[1],
        &json!({"type": "content_block_start", "index": 1,
                "content_block": {"type": "redacted_thinking", "data": "EmwK"}})
    );
    assert_eq!(starts[2]["content_block"]["type"], "thinking");
    assert_eq!(starts[3]["content_block"]["type"], "text");
    // The redacted block has no deltas: its start is followed by its stop.
    let at = events
        .iter()
        .position(|(_, d)| d["content_block"]["type"] == "redacted_thinking")
        .unwrap();
    assert_eq!(
        events[at + 1].1,
        json!({"type": "content_block_stop", "index": 1})
    );
    let signatures: Vec<&Value> = events
        .iter()
        .filter(|(_, d)| d["delta"]["type"] == "signature_delta")
        .map(|(_, d)| &d["delta"]["signature"])
        .collect();
    assert_eq!(signatures, [&json!("sigA"), &json!("sigB")]);
}

#[tokio::test]
async fn tool_input_shapes() {
    for (quirks, expect_start, expect_deltas) in [
        (
            AnthropicQuirks::real_api(),
            json!({}),
            vec!["", "{\"cmd\":", "\"ls\"}"],
        ),
        (
            AnthropicQuirks {
                input_in_start: InputInStart::Only,
                ..AnthropicQuirks::default()
            },
            json!({"cmd": "ls"}),
            vec![],
        ),
        (
            AnthropicQuirks {
                input_in_start: InputInStart::WithEmptyDelta,
                ..AnthropicQuirks::default()
            },
            json!({"cmd": "ls"}),
            vec![""],
        ),
    ] {
        let server = LlmServer::start().await;
        server.enqueue(Reply::Stream(Turn {
            tool_calls: vec![call(&["{\"cmd\":", "\"ls\"}"])],
            anthropic: quirks.clone(),
            ..Turn::default()
        }));
        let events = events(&server).await;
        let start = events
            .iter()
            .find(|(n, _)| n == "content_block_start")
            .unwrap();
        assert_eq!(
            start.1["content_block"]["input"], expect_start,
            "{quirks:?}"
        );
        let deltas: Vec<&str> = events
            .iter()
            .filter(|(_, d)| d["delta"]["type"] == "input_json_delta")
            .map(|(_, d)| d["delta"]["partial_json"].as_str().unwrap())
            .collect();
        assert_eq!(deltas, expect_deltas, "{quirks:?}");
    }
}

#[tokio::test]
async fn an_open_tool_block_and_cumulative_usage() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        tool_calls: vec![call(&["{\"cmd\":"])],
        usage: Some((120, 7)),
        finish: Some("max_tokens".into()),
        anthropic: AnthropicQuirks {
            leave_last_tool_use_open: true,
            full_usage_in_message_delta: true,
            ..AnthropicQuirks::default()
        },
        ..Turn::default()
    }));
    let events = events(&server).await;
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "message_delta",
            "message_stop"
        ]
    );
    assert_eq!(
        events[3].1["usage"],
        json!({"input_tokens": 120, "cache_creation_input_tokens": 0,
               "cache_read_input_tokens": 0, "output_tokens": 7})
    );
    assert_eq!(events[3].1["delta"]["stop_reason"], "max_tokens");
}

#[tokio::test]
async fn a_root_union_in_a_tool_schema_is_refused_like_the_real_api_and_the_turn_waits() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        text: vec!["fine".into()],
        ..Turn::default()
    }));
    let tools = |schema: Value| {
        json!({"model": "m", "max_tokens": 8, "stream": true,
               "messages": [{"role": "user", "content": "hi"}],
               "tools": [{"name": "ok", "input_schema": {"type": "object"}},
                         {"name": "union", "input_schema": schema}]})
        .to_string()
    };
    let (status, body) = post(
        &server,
        &tools(json!({"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]})),
    )
    .await;
    assert!(status.contains(" 400 "), "{status}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["type"], "invalid_request_error");
    assert_eq!(
        body["error"]["message"],
        "tools.1.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at \
         the top level"
    );
    // The scripted turn was not spent on the refused request.
    assert_eq!(server.pending_replies(), 1);
    let (status, _) = post(&server, &tools(json!({"type": "object"}))).await;
    assert!(status.contains(" 200 "), "{status}");
    assert_eq!(server.pending_replies(), 0);
}
