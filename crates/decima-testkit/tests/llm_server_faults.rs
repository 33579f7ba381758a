//! The wire-level LLM server's framing options and faults (CRLF lines, split reads, keep-alive
//! comments, a missing [DONE], cut and stalled streams, malformed and error events, rate limits,
//! error replies, raw chunks and delays) and what it records, checked with a raw TCP client.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::llm_server::*;
use decima_testkit::{LlmServer, Reply, StreamFault, StreamOptions, Turn, refused_base_url};
use std::time::{Duration, Instant, SystemTime};
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

#[tokio::test]
async fn crlf_option_frames_lines_with_crlf() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        options: StreamOptions {
            crlf: true,
            ..StreamOptions::default()
        },
        ..text_turn(&["a"])
    }));
    let body = exchange(&server, ANTHROPIC_PATH, "{}").await.body_str();
    assert!(body.starts_with("event: message_start\r\ndata: {"));
    assert!(body.ends_with("event: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n"));
    assert!(
        !body.replace("\r\n", "").contains('\n'),
        "every newline is CRLF"
    );
}

#[tokio::test]
async fn split_every_spreads_events_over_many_reads() {
    let server = LlmServer::start().await;
    let turn = text_turn(&["Hello", " world"]);
    server.enqueue(Reply::Stream(turn.clone()));
    server.enqueue(Reply::Stream(Turn {
        options: StreamOptions {
            split_every: Some(40),
            ..StreamOptions::default()
        },
        ..turn
    }));
    let whole = exchange(&server, OPENAI_PATH, "{}").await;
    let mut client = Client::connect(&server).await;
    client.send(&post(OPENAI_PATH, "{}", &[])).await;
    let split = client.read_response().await;
    assert!(split.complete);
    assert!(
        split.chunk_sizes.iter().all(|&n| n <= 40),
        "{:?}",
        split.chunk_sizes
    );
    assert!(split.chunk_sizes.len() > 10);
    assert!(client.reads > 5, "only {} reads", client.reads);
    // Same SSE bytes, only the framing differs (ids count requests).
    assert_eq!(
        fix_created(&split.body_str()),
        fix_created(&whole.body_str()).replace("chatcmpl-1", "chatcmpl-2")
    );
}

#[tokio::test]
async fn keepalive_comments_and_ping_events_are_interleaved() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        options: StreamOptions {
            keepalive_comments: true,
            ..StreamOptions::default()
        },
        ..text_turn(&["a"])
    }));
    server.enqueue(Reply::Stream(Turn {
        options: StreamOptions {
            ping_events: true,
            ..StreamOptions::default()
        },
        ..text_turn(&["a"])
    }));
    let openai = exchange(&server, OPENAI_PATH, "{}").await.body_str();
    assert!(openai.starts_with(": keep-alive\n\ndata: {"));
    assert_eq!(openai.matches(": keep-alive\n\n").count(), 4);
    assert!(openai.ends_with(": keep-alive\n\ndata: [DONE]\n\n"));
    let anthropic = exchange(&server, ANTHROPIC_PATH, "{}").await.body_str();
    let ping = "event: ping\ndata: {\"type\": \"ping\"}\n\n";
    assert!(anthropic.starts_with("event: message_start\n"));
    assert!(anthropic.contains(&format!("}}}}\n\n{ping}event: content_block_start\n")));
    // Six events (start, block start, delta, block stop, message delta, stop): five pings.
    assert_eq!(anthropic.matches(ping).count(), 5);
}

#[tokio::test]
async fn omit_done_and_no_trailing_newline() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        options: StreamOptions {
            omit_done: true,
            no_trailing_newline: true,
            ..StreamOptions::default()
        },
        ..text_turn(&["a"])
    }));
    let response = exchange(&server, OPENAI_PATH, "{}").await;
    assert!(response.complete);
    let body = response.body_str();
    assert!(!body.contains("[DONE]"));
    assert!(body.ends_with(r#""finish_reason":"stop"}]}"#), "{body}");
}

#[tokio::test]
async fn cut_after_closes_without_the_terminal_chunk() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        fault: Some(StreamFault::CutAfter(2)),
        ..text_turn(&["a", "b", "c"])
    }));
    let response = exchange(&server, OPENAI_PATH, "{}").await;
    assert!(!response.complete);
    assert!(!response.raw_str().contains("0\r\n\r\n"));
    let body = response.body_str();
    assert_eq!(body.matches("data: ").count(), 2, "{body}");
    assert!(body.contains(r#"{"content":"a"}"#));
    assert!(!body.contains(r#"{"content":"b"}"#));
    assert_eq!(server.requests()[0].disconnected_at, None);
}

#[tokio::test]
async fn stall_keeps_the_connection_open_and_records_the_client_leaving() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        fault: Some(StreamFault::StallAfter(1)),
        ..text_turn(&["a", "b"])
    }));
    let mut client = Client::connect(&server).await;
    client.send(&post(ANTHROPIC_PATH, "{}", &[])).await;
    let head = client.read_head().await;
    assert_eq!(head.status, 200);
    while !String::from_utf8_lossy(&client.buf).contains("message_start") {
        assert!(client.fill().await > 0);
    }
    // Nothing more comes, and the connection stays open.
    let mut tmp = [0u8; 1024];
    let more = tokio::time::timeout(Duration::from_millis(300), client.stream.read(&mut tmp)).await;
    assert!(more.is_err(), "the stalled stream sent {more:?}");
    assert_eq!(server.requests()[0].disconnected_at, None);
    let left_at = Instant::now();
    drop(client);
    let seen = server
        .wait_for_disconnect(0, STEP)
        .await
        .expect("the server noticed the client leave");
    assert!(seen >= left_at);
    assert!(
        seen - left_at < Duration::from_millis(500),
        "noticed after {:?}",
        seen - left_at
    );
}

#[tokio::test]
async fn client_leaving_mid_stream_is_recorded_promptly() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        options: StreamOptions {
            event_delay: Some(Duration::from_secs(10)),
            ..StreamOptions::default()
        },
        ..text_turn(&["a", "b"])
    }));
    let mut client = Client::connect(&server).await;
    client.send(&post(OPENAI_PATH, "{}", &[])).await;
    client.read_head().await;
    let left_at = Instant::now();
    drop(client);
    let seen = server
        .wait_for_disconnect(0, STEP)
        .await
        .expect("the server noticed the client leave");
    assert!(seen - left_at < Duration::from_millis(500));
}

#[tokio::test]
async fn malformed_event_is_sent_then_the_stream_continues() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        fault: Some(StreamFault::MalformedAfter(2)),
        ..text_turn(&["a", "b"])
    }));
    server.enqueue(Reply::Stream(Turn {
        fault: Some(StreamFault::MalformedAfter(1)),
        ..text_turn(&["a"])
    }));
    let response = exchange(&server, OPENAI_PATH, "{}").await;
    assert!(response.complete);
    let body = response.body_str();
    let events: Vec<&str> = body.split_terminator("\n\n").collect();
    assert_eq!(events[2], r#"data: {"choices":[{"delta":{"content":"x""#);
    assert!(events[1].contains(r#"{"content":"a"}"#));
    assert!(events[3].contains(r#"{"content":"b"}"#));
    assert_eq!(events.last(), Some(&"data: [DONE]"));
    for event in events.iter().filter(|e| **e != "data: [DONE]") {
        let data = event.strip_prefix("data: ").expect("data line");
        let valid = serde_json::from_str::<serde_json::Value>(data).is_ok();
        assert_eq!(valid, event != &events[2], "{event}");
    }
    let body = exchange(&server, ANTHROPIC_PATH, "{}").await.body_str();
    let events: Vec<&str> = body.split_terminator("\n\n").collect();
    assert!(events[1].starts_with("event: content_block_delta\ndata: {"));
    assert!(serde_json::from_str::<serde_json::Value>(&events[1][33..]).is_err());
    assert!(
        events
            .last()
            .is_some_and(|e| e.starts_with("event: message_stop"))
    );
}

#[tokio::test]
async fn error_event_ends_the_stream_in_each_protocol() {
    let server = LlmServer::start().await;
    for _ in 0..2 {
        server.enqueue(Reply::Stream(Turn {
            fault: Some(StreamFault::ErrorEventAfter(2)),
            ..text_turn(&["a", "b"])
        }));
    }
    let anthropic = exchange(&server, ANTHROPIC_PATH, "{}").await;
    assert!(anthropic.complete);
    let body = anthropic.body_str();
    let events: Vec<&str> = body.split_terminator("\n\n").collect();
    assert_eq!(events.len(), 3);
    assert_eq!(
        events[2],
        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"
    );
    let openai = exchange(&server, OPENAI_PATH, "{}").await;
    assert!(openai.complete);
    let body = openai.body_str();
    let events: Vec<&str> = body.split_terminator("\n\n").collect();
    assert_eq!(events.len(), 3);
    assert!(events[2].starts_with(r#"data: {"error":{"message":"#));
    assert!(events[2].contains(r#""type":"server_error""#));
    assert!(!body.contains("[DONE]"));
}

#[tokio::test]
async fn rate_limited_carries_retry_after_seconds_in_each_protocol_shape() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::rate_limited(7));
    server.enqueue(Reply::rate_limited(7));
    let openai = exchange(&server, OPENAI_PATH, "{}").await;
    assert_eq!(openai.head.status, 429);
    assert_eq!(openai.head.header("retry-after"), Some("7"));
    assert_eq!(openai.head.header("content-type"), Some("application/json"));
    assert_eq!(
        openai.head.header("content-length"),
        Some(openai.body.len().to_string().as_str())
    );
    assert_eq!(openai.json()["error"]["code"], "rate_limit_exceeded");
    assert_eq!(openai.json()["error"]["type"], "rate_limit_exceeded");
    let anthropic = exchange(&server, ANTHROPIC_PATH, "{}").await;
    assert_eq!(anthropic.head.status, 429);
    assert_eq!(anthropic.head.header("retry-after"), Some("7"));
    assert_eq!(anthropic.json()["type"], "error");
    assert_eq!(anthropic.json()["error"]["type"], "rate_limit_error");
}

#[tokio::test]
async fn rate_limited_until_sends_an_http_date() {
    let server = LlmServer::start().await;
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_900_000_000);
    server.enqueue(Reply::rate_limited_until(at));
    let response = exchange(&server, OPENAI_PATH, "{}").await;
    assert_eq!(response.head.status, 429);
    let value = response.head.header("retry-after").expect("retry-after");
    assert_eq!(value, "Sun, 17 Mar 2030 17:46:40 GMT");
    assert_eq!(httpdate::parse_http_date(value).expect("HTTP-date"), at);
}

#[tokio::test]
async fn error_replies_are_rendered_per_protocol() {
    let server = LlmServer::start().await;
    let cases: Vec<(Reply, u16, &str, &str)> = vec![
        (
            Reply::unauthorized(),
            401,
            r#"{"error":{"message":"Incorrect API key provided: sk-test****************1234. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
        ),
        (
            Reply::forbidden(),
            403,
            r#"{"error":{"message":"Country, region, or territory not supported","type":"request_forbidden","param":null,"code":"unsupported_country_region_territory"}}"#,
            r#"{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}"#,
        ),
        (
            Reply::model_not_found(),
            404,
            r#"{"error":{"message":"The model `gpt-x` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}"#,
            r#"{"type":"error","error":{"type":"not_found_error","message":"model: gpt-x"}}"#,
        ),
        (
            Reply::bad_request("messages: must not be empty"),
            400,
            r#"{"error":{"message":"messages: must not be empty","type":"invalid_request_error","param":null,"code":null}}"#,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages: must not be empty"}}"#,
        ),
        (
            Reply::context_overflow(),
            400,
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130214 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210034 tokens > 200000 maximum"}}"#,
        ),
        (
            Reply::server_error(500),
            500,
            r#"{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}"#,
            r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#,
        ),
        (
            Reply::server_error(502),
            502,
            r#"{"error":{"message":"Bad gateway.","type":"cf_bad_gateway","param":null,"code":502}}"#,
            r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#,
        ),
        (
            Reply::server_error(529),
            529,
            r#"{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}"#,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ),
    ];
    for (reply, status, openai_body, anthropic_body) in cases {
        server.enqueue(reply.clone());
        server.enqueue(reply);
        let openai = exchange(&server, OPENAI_PATH, r#"{"model":"gpt-x"}"#).await;
        assert_eq!(openai.head.status, status);
        assert_eq!(openai.body_str(), openai_body);
        assert!(openai.head.header("x-request-id").is_some());
        assert!(openai.head.header("retry-after").is_none());
        let anthropic = exchange(&server, ANTHROPIC_PATH, r#"{"model":"gpt-x"}"#).await;
        assert_eq!(anthropic.head.status, status);
        assert_eq!(anthropic.body_str(), anthropic_body);
        assert!(anthropic.head.header("request-id").is_some());
    }
}

#[tokio::test]
async fn status_reply_is_sent_verbatim() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Status {
        status: 503,
        headers: vec![
            ("content-type".into(), "text/html".into()),
            ("x-custom".into(), "1".into()),
        ],
        body: "<html>down</html>".into(),
    });
    let response = exchange(&server, OPENAI_PATH, "{}").await;
    assert_eq!(response.head.status, 503);
    assert_eq!(response.head.header("content-type"), Some("text/html"));
    assert_eq!(response.head.header("x-custom"), Some("1"));
    assert_eq!(response.body_str(), "<html>down</html>");
}

#[tokio::test]
async fn raw_sse_chunks_are_written_verbatim_after_their_delays() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::RawSse {
        chunks: vec![
            (Duration::ZERO, b"data: {\"a\"".to_vec()),
            (Duration::from_millis(50), b":1}\n".to_vec()),
            (Duration::ZERO, b"\n".to_vec()),
        ],
    });
    let started = Instant::now();
    let response = exchange(&server, OPENAI_PATH, "{}").await;
    assert!(started.elapsed() >= Duration::from_millis(50));
    assert_eq!(
        response.raw_str(),
        "a\r\ndata: {\"a\"\r\n4\r\n:1}\n\r\n1\r\n\n\r\n0\r\n\r\n"
    );
}

#[tokio::test]
async fn event_delay_spaces_events_out() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        options: StreamOptions {
            event_delay: Some(Duration::from_millis(30)),
            ..StreamOptions::default()
        },
        ..text_turn(&["a"])
    }));
    let started = Instant::now();
    let response = exchange(&server, OPENAI_PATH, "{}").await;
    // Four events, three pauses.
    assert!(started.elapsed() >= Duration::from_millis(90));
    assert_eq!(response.chunk_sizes.len(), 4);
}

#[tokio::test]
async fn requests_are_recorded_with_headers_body_and_json() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(text_turn(&["a"])));
    let body = r#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#;
    let mut client = Client::connect(&server).await;
    let before = Instant::now();
    client
        .send(&post(
            OPENAI_PATH,
            body,
            &[("Authorization", "Bearer sk-1"), ("X-Title", "Decima")],
        ))
        .await;
    client.read_response().await;
    let requests = server.wait_for_requests(1, STEP).await;
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert_eq!(r.method, "POST");
    assert_eq!(r.path, "/v1/chat/completions");
    assert!(
        r.headers
            .iter()
            .any(|(n, v)| n == "authorization" && v == "Bearer sk-1")
    );
    assert!(r.headers.iter().all(|(n, _)| *n == n.to_ascii_lowercase()));
    assert_eq!(r.header("x-title"), Some("Decima"));
    assert_eq!(r.header("X-TITLE"), Some("Decima"));
    assert_eq!(r.body, body.as_bytes());
    let json = r.json.as_ref().expect("json parsed");
    assert_eq!(json["messages"][0]["content"], "hi");
    assert!(r.received_at >= before);
    assert_eq!(r.disconnected_at, None);
}

#[tokio::test]
async fn non_json_body_is_recorded_without_json() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::server_error(500));
    exchange(&server, OPENAI_PATH, "not json").await;
    let r = &server.requests()[0];
    assert_eq!(r.body, b"not json");
    assert!(r.json.is_none());
}

#[tokio::test]
async fn replies_are_taken_in_fifo_order() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::server_error(503));
    server.enqueue(Reply::unauthorized());
    server.enqueue(Reply::Stream(text_turn(&["ok"])));
    assert_eq!(server.pending_replies(), 3);
    assert_eq!(exchange(&server, OPENAI_PATH, "{}").await.head.status, 503);
    assert_eq!(exchange(&server, OPENAI_PATH, "{}").await.head.status, 401);
    assert_eq!(exchange(&server, OPENAI_PATH, "{}").await.head.status, 200);
    assert_eq!(server.pending_replies(), 0);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn keep_alive_serves_sequential_requests_on_one_connection() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(text_turn(&["one"])));
    server.enqueue(Reply::rate_limited(1));
    server.enqueue(Reply::Stream(text_turn(&["three"])));
    let mut client = Client::connect(&server).await;
    client.send(&post(ANTHROPIC_PATH, "{}", &[])).await;
    let first = client.read_response().await;
    assert!(first.complete);
    assert!(first.body_str().contains("one"));
    client.send(&post(ANTHROPIC_PATH, "{}", &[])).await;
    let second = client.read_response().await;
    assert_eq!(second.head.status, 429);
    client.send(&post(ANTHROPIC_PATH, "{}", &[])).await;
    let third = client.read_response().await;
    assert!(third.body_str().contains("three"));
    assert!(third.body_str().contains("msg_test3"));
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn connection_close_is_honoured() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(text_turn(&["a"])));
    let mut client = Client::connect(&server).await;
    client
        .send(&post(OPENAI_PATH, "{}", &[("connection", "close")]))
        .await;
    let response = client.read_response().await;
    assert!(response.complete);
    assert_eq!(response.head.header("connection"), Some("close"));
    assert!(client.closed_by_server().await);
}

#[tokio::test]
async fn missing_script_answers_500_saying_so() {
    let server = LlmServer::start().await;
    let openai = exchange(&server, OPENAI_PATH, "{}").await;
    assert_eq!(openai.head.status, 500);
    assert!(openai.body_str().contains("no scripted reply"));
    assert!(openai.json()["error"]["message"].is_string());
    let anthropic = exchange(&server, ANTHROPIC_PATH, "{}").await;
    assert_eq!(anthropic.head.status, 500);
    assert_eq!(anthropic.json()["type"], "error");
    assert!(anthropic.body_str().contains("no scripted reply"));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn responder_answers_from_the_request_when_the_queue_is_empty() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let server = LlmServer::start().await;
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&calls);
    server.respond_with(move |request| {
        seen.fetch_add(1, Ordering::SeqCst);
        let tools = request
            .json
            .as_ref()
            .and_then(|j| j["messages"].as_array())
            .map(|m| m.iter().filter(|m| m["role"] == "tool").count())
            .expect("the responder sees the parsed body");
        Reply::Stream(text_turn(&[&format!("tools={tools}")]))
    });

    // A queued reply wins over the responder.
    server.enqueue(Reply::Stream(text_turn(&["queued"])));
    let first = exchange(&server, OPENAI_PATH, &conversation_body(2)).await;
    assert!(first.body_str().contains("queued"));
    assert!(!first.body_str().contains("tools="));
    assert_eq!(calls.load(Ordering::SeqCst), 0);

    // With the queue empty, every request is answered from its own body, in both protocols.
    for (path, tools) in [(OPENAI_PATH, 0), (ANTHROPIC_PATH, 1), (OPENAI_PATH, 3)] {
        let response = exchange(&server, path, &conversation_body(tools)).await;
        assert_eq!(response.head.status, 200);
        assert!(response.complete);
        assert!(
            response.body_str().contains(&format!("tools={tools}")),
            "{path} with {tools} tool messages: {}",
            response.body_str()
        );
    }
    assert_eq!(calls.load(Ordering::SeqCst), 3);

    // Concurrent requests each get the answer for their own conversation (spawned, not joined
    // in place: each exchange holds a 64 KiB read buffer, too much for one test stack).
    let server = Arc::new(server);
    let mut concurrent = tokio::task::JoinSet::new();
    for tools in 4..8 {
        let server = Arc::clone(&server);
        let path = if tools % 2 == 0 {
            OPENAI_PATH
        } else {
            ANTHROPIC_PATH
        };
        concurrent.spawn(async move {
            let response = exchange(&server, path, &conversation_body(tools)).await;
            (tools, response.body_str())
        });
    }
    while let Some(joined) = concurrent.join_next().await {
        let (tools, body) = joined.expect("exchange task");
        assert!(body.contains(&format!("tools={tools}")), "{body}");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 7);

    // A reply queued later still goes first, then the responder takes over again.
    server.enqueue(Reply::server_error(503));
    let queued = exchange(&server, OPENAI_PATH, &conversation_body(1)).await;
    assert_eq!(queued.head.status, 503);
    let after = exchange(&server, OPENAI_PATH, &conversation_body(1)).await;
    assert!(after.body_str().contains("tools=1"));
    assert_eq!(calls.load(Ordering::SeqCst), 8);
    assert_eq!(server.pending_replies(), 0);
    assert_eq!(server.requests().len(), 10);
}

#[tokio::test]
async fn a_panicking_responder_answers_500_saying_so() {
    let server = LlmServer::start().await;
    server.respond_with(|_| panic!("scripted failure"));
    let response = exchange(&server, OPENAI_PATH, "{}").await;
    assert_eq!(response.head.status, 500);
    assert!(response.body_str().contains("responder panicked"));
    assert!(response.body_str().contains("scripted failure"));
    // The server keeps serving.
    let again = exchange(&server, ANTHROPIC_PATH, "{}").await;
    assert_eq!(again.head.status, 500);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_stream_on_an_unknown_path_is_404() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(text_turn(&["a"])));
    let response = exchange(&server, "/v1/completions", "{}").await;
    assert_eq!(response.head.status, 404);
    assert!(response.body_str().contains("/v1/completions"));
}

#[tokio::test]
async fn chunked_request_bodies_are_rejected() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(text_turn(&["a"])));
    let mut client = Client::connect(&server).await;
    client
        .send(
            b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        )
        .await;
    let response = client.read_response().await;
    assert_eq!(response.head.status, 400);
    assert!(client.closed_by_server().await);
    assert_eq!(server.pending_replies(), 1);
}

#[tokio::test]
async fn expect_100_continue_is_answered_before_the_body() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(text_turn(&["a"])));
    let mut client = Client::connect(&server).await;
    client
        .send(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\nexpect: 100-continue\r\n\r\n")
        .await;
    let interim = client.read_head().await;
    assert_eq!(interim.status, 100);
    client.send(b"{}").await;
    let response = client.read_response().await;
    assert_eq!(response.head.status, 200);
    assert_eq!(server.requests()[0].body, b"{}");
}

#[tokio::test]
async fn wait_for_requests_gives_up_after_the_timeout() {
    let server = LlmServer::start().await;
    let started = Instant::now();
    let requests = server.wait_for_requests(1, Duration::from_millis(50)).await;
    assert!(requests.is_empty());
    assert!(started.elapsed() >= Duration::from_millis(50));
}

#[tokio::test]
async fn refused_base_url_refuses_connections() {
    let url = refused_base_url();
    let addr = url.strip_prefix("http://").expect("http url");
    assert!(addr.starts_with("127.0.0.1:"));
    let err = TcpStream::connect(addr).await.expect_err("refused");
    assert_eq!(err.kind(), std::io::ErrorKind::ConnectionRefused);
}

#[tokio::test]
async fn dropping_the_server_stops_it() {
    let server = LlmServer::start().await;
    let addr = server.addr();
    assert!(
        server
            .openai_base_url()
            .ends_with(&format!(":{}/v1", addr.port()))
    );
    assert_eq!(server.anthropic_base_url(), format!("http://{addr}"));
    drop(server);
    let deadline = Instant::now() + STEP;
    loop {
        tokio::task::yield_now().await;
        if TcpStream::connect(addr).await.is_err() {
            break;
        }
        assert!(Instant::now() < deadline, "still accepting after drop");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
