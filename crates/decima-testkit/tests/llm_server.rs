//! The wire-level LLM server, checked byte for byte with a raw TCP client.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use decima_testkit::{LlmServer, ReasoningField, Reply, ScriptedToolCall, Turn};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The longest any single step of a test may take before it is a failure, not a hang.
pub(super) const STEP: Duration = Duration::from_secs(5);

pub(super) const OPENAI_PATH: &str = "/v1/chat/completions";
pub(super) const ANTHROPIC_PATH: &str = "/v1/messages";

/// A raw HTTP/1.1 POST with a JSON body.
pub(super) fn post(path: &str, body: &str, extra: &[(&str, &str)]) -> Vec<u8> {
    let mut out = format!(
        "POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in extra {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(body);
    out.into_bytes()
}

/// A turn with just these text deltas.
pub(super) fn text_turn(text: &[&str]) -> Turn {
    Turn {
        text: text.iter().map(|s| s.to_string()).collect(),
        ..Turn::default()
    }
}

/// Frames each piece as one HTTP chunk and adds the terminal chunk.
pub(super) fn chunked(pieces: &[String]) -> String {
    let mut out = String::new();
    for piece in pieces {
        out.push_str(&format!("{:x}\r\n{piece}\r\n", piece.len()));
    }
    out.push_str("0\r\n\r\n");
    out
}

/// Replaces every `"created":<digits>` with a fixed 10-digit value, so bytes can be compared.
pub(super) fn fix_created(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = rest.find("\"created\":") {
        let (before, after) = rest.split_at(at + "\"created\":".len());
        out.push_str(before);
        let digits = after.chars().take_while(|c| c.is_ascii_digit()).count();
        assert_eq!(digits, 10, "created is a 10-digit unix time");
        out.push_str("1700000000");
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

pub(super) struct Head {
    pub(super) status: u16,
    pub(super) headers: Vec<(String, String)>,
}

impl Head {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub(super) struct Response {
    pub(super) head: Head,
    /// The body exactly as on the wire (chunk framing included).
    pub(super) raw: Vec<u8>,
    /// The body with chunk framing removed.
    pub(super) body: Vec<u8>,
    /// Whether the body was complete (terminal chunk, or content-length reached).
    pub(super) complete: bool,
    /// The size of every data chunk received.
    pub(super) chunk_sizes: Vec<usize>,
}

impl Response {
    pub(super) fn raw_str(&self) -> String {
        String::from_utf8(self.raw.clone()).expect("utf-8 body")
    }
    pub(super) fn body_str(&self) -> String {
        String::from_utf8(self.body.clone()).expect("utf-8 body")
    }
    pub(super) fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("JSON body")
    }
}

pub(super) struct Client {
    pub(super) stream: TcpStream,
    pub(super) buf: Vec<u8>,
    /// How many reads returned data.
    pub(super) reads: usize,
}

impl Client {
    pub(super) async fn connect(server: &LlmServer) -> Client {
        let stream = tokio::time::timeout(STEP, TcpStream::connect(server.addr()))
            .await
            .expect("connect in time")
            .expect("connect");
        Client {
            stream,
            buf: Vec::new(),
            reads: 0,
        }
    }

    pub(super) async fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.expect("send");
    }

    /// Reads once more; returns the bytes read (0 on EOF or reset).
    pub(super) async fn fill(&mut self) -> usize {
        let mut tmp = [0u8; 65536];
        let n = tokio::time::timeout(STEP, self.stream.read(&mut tmp))
            .await
            .expect("the server answered in time")
            .unwrap_or(0);
        if n > 0 {
            self.reads += 1;
        }
        self.buf.extend_from_slice(&tmp[..n]);
        n
    }

    pub(super) fn take_line(&mut self) -> Option<String> {
        let at = self.buf.windows(2).position(|w| w == b"\r\n")?;
        let line = String::from_utf8(self.buf[..at].to_vec()).expect("utf-8 line");
        self.buf.drain(..at + 2);
        Some(line)
    }

    pub(super) async fn read_head(&mut self) -> Head {
        loop {
            if let Some(at) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let text = String::from_utf8(self.buf[..at].to_vec()).expect("utf-8 head");
                self.buf.drain(..at + 4);
                let mut lines = text.split("\r\n");
                let status_line = lines.next().expect("status line");
                assert!(status_line.starts_with("HTTP/1.1 "), "{status_line}");
                let status = status_line[9..12].parse().expect("status code");
                let headers = lines
                    .map(|l| {
                        let (n, v) = l.split_once(": ").expect("header line");
                        (n.to_owned(), v.to_owned())
                    })
                    .collect();
                return Head { status, headers };
            }
            assert!(self.fill().await > 0, "connection closed before the head");
        }
    }

    /// Reads one response; a 100 Continue is skipped.
    pub(super) async fn read_response(&mut self) -> Response {
        let mut head = self.read_head().await;
        while head.status == 100 {
            head = self.read_head().await;
        }
        let mut raw = Vec::new();
        let mut body = Vec::new();
        let mut chunk_sizes = Vec::new();
        if let Some(len) = head.header("content-length") {
            let len: usize = len.parse().expect("content-length");
            while self.buf.len() < len {
                if self.fill().await == 0 {
                    break;
                }
            }
            let complete = self.buf.len() >= len;
            let take = len.min(self.buf.len());
            body = self.buf.drain(..take).collect();
            return Response {
                head,
                raw: body.clone(),
                body,
                complete,
                chunk_sizes,
            };
        }
        assert_eq!(head.header("transfer-encoding"), Some("chunked"));
        loop {
            let line = loop {
                if let Some(line) = self.take_line() {
                    break line;
                }
                if self.fill().await == 0 {
                    raw.extend_from_slice(&self.buf);
                    return Response {
                        head,
                        raw,
                        body,
                        complete: false,
                        chunk_sizes,
                    };
                }
            };
            raw.extend_from_slice(line.as_bytes());
            raw.extend_from_slice(b"\r\n");
            let size = usize::from_str_radix(&line, 16).expect("chunk size line");
            while self.buf.len() < size + 2 {
                if self.fill().await == 0 {
                    raw.extend_from_slice(&self.buf);
                    return Response {
                        head,
                        raw,
                        body,
                        complete: false,
                        chunk_sizes,
                    };
                }
            }
            let data: Vec<u8> = self.buf.drain(..size + 2).collect();
            assert_eq!(&data[size..], b"\r\n", "chunk data ends with CRLF");
            raw.extend_from_slice(&data);
            if size == 0 {
                return Response {
                    head,
                    raw,
                    body,
                    complete: true,
                    chunk_sizes,
                };
            }
            chunk_sizes.push(size);
            body.extend_from_slice(&data[..size]);
        }
    }

    /// Whether the server closed the connection (EOF) within the step time.
    pub(super) async fn closed_by_server(&mut self) -> bool {
        self.fill().await == 0
    }
}

/// Sends one request on a new connection and reads the response.
pub(super) async fn exchange(server: &LlmServer, path: &str, body: &str) -> Response {
    let mut client = Client::connect(server).await;
    client.send(&post(path, body, &[])).await;
    client.read_response().await
}

#[tokio::test]
async fn openai_small_turn_is_byte_exact_including_chunk_framing() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(text_turn(&["Hi"])));
    let response = exchange(&server, OPENAI_PATH, r#"{"model":"x","stream":true}"#).await;
    assert_eq!(response.head.status, 200);
    assert!(response.complete);
    let expected = concat!(
        "ec\r\n",
        r#"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"test-model","system_fingerprint":"fp_test","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}"#,
        "\n\n\r\n",
        "db\r\n",
        r#"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"test-model","system_fingerprint":"fp_test","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}"#,
        "\n\n\r\n",
        "cf\r\n",
        r#"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"test-model","system_fingerprint":"fp_test","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}"#,
        "\n\n\r\n",
        "e\r\n",
        "data: [DONE]\n\n\r\n",
        "0\r\n\r\n",
    );
    assert_eq!(fix_created(&response.raw_str()), expected);
}

#[tokio::test]
async fn openai_full_turn_renders_reasoning_text_tools_and_usage() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        model: "deepseek-reasoner".into(),
        reasoning: vec!["Think".into()],
        text: vec!["Hel".into(), "lo \"q\"".into()],
        tool_calls: vec![ScriptedToolCall {
            id: "call_abc".into(),
            name: "read_file".into(),
            argument_chunks: vec!["{\"path\":".into(), "\"a.txt\"}".into()],
        }],
        usage: Some((12, 34)),
        ..Turn::default()
    }));
    let response = exchange(
        &server,
        OPENAI_PATH,
        r#"{"model":"deepseek-reasoner","stream":true,"stream_options":{"include_usage":true}}"#,
    )
    .await;
    let chunk = |delta: &str, finish: &str| {
        format!(
            r#"data: {{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"deepseek-reasoner","system_fingerprint":"fp_test","choices":[{{"index":0,"delta":{delta},"logprobs":null,"finish_reason":{finish}}}],"usage":null}}"#
        ) + "\n\n"
    };
    let expected = chunked(&[
        chunk(r#"{"role":"assistant","content":""}"#, "null"),
        chunk(r#"{"reasoning_content":"Think"}"#, "null"),
        chunk(r#"{"content":"Hel"}"#, "null"),
        chunk(r#"{"content":"lo \"q\""}"#, "null"),
        chunk(
            r#"{"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"read_file","arguments":""}}]}"#,
            "null",
        ),
        chunk(
            r#"{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}"#,
            "null",
        ),
        chunk(
            r#"{"tool_calls":[{"index":0,"function":{"arguments":"\"a.txt\"}"}}]}"#,
            "null",
        ),
        chunk("{}", r#""tool_calls""#),
        r#"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"deepseek-reasoner","system_fingerprint":"fp_test","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":34,"total_tokens":46}}"#.to_owned() + "\n\n",
        "data: [DONE]\n\n".to_owned(),
    ]);
    assert_eq!(fix_created(&response.raw_str()), expected);
}

#[tokio::test]
async fn openai_reasoning_field_and_usage_only_when_asked() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        reasoning: vec!["hmm".into()],
        reasoning_field: ReasoningField::Reasoning,
        usage: Some((1, 2)),
        finish: Some("length".into()),
        ..Turn::default()
    }));
    let body = exchange(&server, OPENAI_PATH, r#"{"stream":true}"#)
        .await
        .body_str();
    assert!(body.contains(r#""delta":{"reasoning":"hmm"}"#), "{body}");
    assert!(!body.contains("reasoning_content"));
    assert!(
        !body.contains("usage"),
        "no usage unless include_usage: {body}"
    );
    assert!(body.contains(r#""finish_reason":"length""#));
}

#[tokio::test]
async fn anthropic_turn_is_byte_exact() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        model: "claude-test".into(),
        reasoning: vec!["Let me".into(), " see".into()],
        reasoning_signature: Some("sig==".into()),
        text: vec!["Hi".into()],
        tool_calls: vec![ScriptedToolCall {
            id: "toolu_01".into(),
            name: "search".into(),
            argument_chunks: vec!["{\"q\":".into(), "\"x\"}".into()],
        }],
        usage: Some((100, 20)),
        ..Turn::default()
    }));
    let response = exchange(&server, ANTHROPIC_PATH, r#"{"model":"claude-test"}"#).await;
    assert_eq!(response.head.status, 200);
    assert_eq!(
        response.head.header("content-type"),
        Some("text/event-stream")
    );
    assert!(response.head.header("request-id").is_some());
    let event = |name: &str, data: &str| format!("event: {name}\ndata: {data}\n\n");
    let expected = chunked(&[
        event(
            "message_start",
            r#"{"type":"message_start","message":{"id":"msg_test1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":100,"output_tokens":1}}}"#,
        ),
        event(
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
        ),
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me"}}"#,
        ),
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" see"}}"#,
        ),
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig=="}}"#,
        ),
        event(
            "content_block_stop",
            r#"{"type":"content_block_stop","index":0}"#,
        ),
        event(
            "content_block_start",
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
        ),
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}"#,
        ),
        event(
            "content_block_stop",
            r#"{"type":"content_block_stop","index":1}"#,
        ),
        event(
            "content_block_start",
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01","name":"search","input":{}}}"#,
        ),
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"q\":"}}"#,
        ),
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"x\"}"}}"#,
        ),
        event(
            "content_block_stop",
            r#"{"type":"content_block_stop","index":2}"#,
        ),
        event(
            "message_delta",
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":20}}"#,
        ),
        event("message_stop", r#"{"type":"message_stop"}"#),
    ]);
    assert_eq!(response.raw_str(), expected);
}

#[tokio::test]
async fn anthropic_text_only_turn_starts_at_index_zero_and_ends_turn() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(text_turn(&["a"])));
    let body = exchange(&server, ANTHROPIC_PATH, "{}").await.body_str();
    assert!(body.contains(
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#
    ));
    assert!(!body.contains("thinking"));
    assert!(body.contains(r#""stop_reason":"end_turn""#));
}

#[tokio::test]
async fn stream_headers_are_the_providers() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(text_turn(&["x"])));
    let head = exchange(&server, OPENAI_PATH, "{}").await.head;
    assert_eq!(head.status, 200);
    assert_eq!(
        head.header("content-type"),
        Some("text/event-stream; charset=utf-8")
    );
    assert_eq!(head.header("transfer-encoding"), Some("chunked"));
    assert_eq!(head.header("cache-control"), Some("no-cache"));
    assert_eq!(head.header("connection"), Some("keep-alive"));
    assert!(
        head.header("x-request-id")
            .is_some_and(|v| v.starts_with("req_"))
    );
    let date = head.header("date").expect("date header");
    httpdate::parse_http_date(date).expect("date is an HTTP-date");
    assert!(head.header("content-length").is_none());
}

/// A chat body with `tools` tool-result messages after one user message.
pub(super) fn conversation_body(tools: usize) -> String {
    let mut messages = vec![serde_json::json!({"role": "user", "content": "go"})];
    for i in 0..tools {
        messages.push(serde_json::json!({"role": "tool", "tool_call_id": format!("call_{i}"), "content": "ok"}));
    }
    serde_json::json!({"model": "m", "stream": true, "messages": messages}).to_string()
}
