//! The clients against the test server's faults: rate limits, server errors, errors that are not
//! retried, refused connections, a stall, the total cap, a cut stream, a malformed chunk, a dropped
//! stream, the order of events, and a request with an unanswered call that is never sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::wire::*;
use decima_core::{FailureClass, Role, ToolCall};
use decima_llm::secrets::SecretString;
use decima_llm::{
    ChatMessage, ChatRequest, Completion, LlmError, Protocol, ProviderConfig, StreamEvent, collect,
    with_retry,
};
use decima_testkit::{
    LlmServer, Reply, ScriptedToolCall, StreamFault, StreamOptions, Turn, refused_base_url,
};
use futures_util::StreamExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[tokio::test]
async fn rate_limits_are_retried_after_retry_after_in_both_forms() {
    for protocol in [Protocol::OpenAi, Protocol::Anthropic] {
        let server = LlmServer::start().await;
        server.enqueue(Reply::rate_limited(1));
        // An absolute date, whole seconds: at least 3 s after enqueueing, so about 2 s after the
        // first retry.
        server.enqueue(Reply::rate_limited_until(
            std::time::SystemTime::now() + Duration::from_secs(4),
        ));
        server.enqueue(Reply::Stream(text_turn(&["finally"])));
        let started = Instant::now();
        let done = collect(with_retry(
            provider(config(&server, protocol)),
            ask("x"),
            fast_retry(),
        ))
        .await
        .unwrap();
        assert_eq!(done.text, "finally");
        assert_eq!(server.requests().len(), 3);
        // The first wait is 1 s; the second lasts until the date, which is past started + 3 s.
        assert!(
            started.elapsed() >= Duration::from_millis(2900),
            "{:?}",
            started.elapsed()
        );
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "{:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn server_errors_are_retried_three_times_then_reported() {
    let server = LlmServer::start().await;
    for status in [500, 502, 503, 500] {
        server.enqueue(Reply::server_error(status));
    }
    let err = collect(with_retry(
        provider(config(&server, Protocol::OpenAi)),
        ask("x"),
        fast_retry(),
    ))
    .await
    .unwrap_err();
    assert_eq!(err.class(), FailureClass::Transient);
    assert!(err.to_string().contains("HTTP 500"), "{err}");
    assert_eq!(server.requests().len(), 4, "one attempt and three retries");

    let server = LlmServer::start().await;
    server.enqueue(Reply::server_error(502));
    server.enqueue(Reply::server_error(503));
    server.enqueue(Reply::Stream(text_turn(&["up again"])));
    let done = collect(with_retry(
        provider(config(&server, Protocol::Anthropic)),
        ask("x"),
        fast_retry(),
    ))
    .await
    .unwrap();
    assert_eq!(done.text, "up again");
}

#[tokio::test]
async fn permission_data_and_overflow_errors_are_not_retried() {
    let cases: Vec<(Reply, FailureClass, &str)> = vec![
        (Reply::unauthorized(), FailureClass::Permission, "401"),
        (Reply::forbidden(), FailureClass::Permission, "403"),
        (Reply::model_not_found(), FailureClass::Data, "404"),
        (
            Reply::bad_request("messages: field required"),
            FailureClass::Data,
            "400",
        ),
        (
            Reply::context_overflow(),
            FailureClass::ContextOverflow,
            "context window",
        ),
    ];
    for protocol in [Protocol::OpenAi, Protocol::Anthropic] {
        for (reply, class, needle) in cases.clone() {
            let server = LlmServer::start().await;
            server.enqueue(reply);
            server.enqueue(Reply::Stream(text_turn(&["must not be reached"])));
            let err = collect(with_retry(
                provider(config(&server, protocol)),
                ask("x"),
                fast_retry(),
            ))
            .await
            .unwrap_err();
            assert_eq!(err.class(), class, "{protocol:?}: {err}");
            assert!(err.to_string().contains(needle), "{protocol:?}: {err}");
            assert!(
                !err.to_string().contains(KEY),
                "the key never appears in an error"
            );
            assert_eq!(
                server.requests().len(),
                1,
                "{protocol:?} {needle}: not retried"
            );
        }
    }
}

#[tokio::test]
async fn refused_connections_are_transient() {
    let mut cfg = ProviderConfig::new(
        "down",
        Protocol::OpenAi,
        format!("{}/v1", refused_base_url()),
        "m",
    );
    cfg.api_key = Some(SecretString::new(KEY));
    let err = complete(&provider(cfg), &ask("x")).await.unwrap_err();
    assert_eq!(err.class(), FailureClass::Transient, "{err}");
    assert!(err.to_string().contains("cannot reach down"), "{err}");
}

#[tokio::test]
async fn a_stall_hits_the_idle_timeout() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        fault: Some(StreamFault::StallAfter(2)),
        ..text_turn(&["a", "b", "c"])
    }));
    let mut cfg = config(&server, Protocol::OpenAi);
    cfg.timeouts.idle = Duration::from_millis(300);
    let started = Instant::now();
    let err = complete(&provider(cfg), &ask("x")).await.unwrap_err();
    assert!(matches!(err, LlmError::IdleTimeout { .. }), "{err}");
    assert_eq!(err.class(), FailureClass::Transient);
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn the_total_cap_ends_a_slow_stream() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        options: StreamOptions {
            event_delay: Some(Duration::from_millis(100)),
            ..StreamOptions::default()
        },
        ..text_turn(&["a"; 30])
    }));
    let mut cfg = config(&server, Protocol::Anthropic);
    cfg.timeouts.total = Duration::from_millis(500);
    let err = complete(&provider(cfg), &ask("x")).await.unwrap_err();
    assert!(matches!(err, LlmError::TotalTimeout { .. }), "{err}");
}

#[tokio::test]
async fn a_cut_stream_retries_visibly_without_duplicating_text() {
    for protocol in [Protocol::OpenAi, Protocol::Anthropic] {
        let server = LlmServer::start().await;
        server.enqueue(Reply::Stream(Turn {
            fault: Some(StreamFault::CutAfter(4)),
            ..text_turn(&["one ", "two ", "three"])
        }));
        server.enqueue(Reply::Stream(text_turn(&["one ", "two ", "three"])));
        let mut stream = with_retry(provider(config(&server, protocol)), ask("x"), fast_retry());
        let mut seen = Vec::new();
        while let Some(event) = stream.next().await {
            seen.push(event.unwrap());
        }
        let discarded = seen
            .iter()
            .position(|e| matches!(e, StreamEvent::Discarded { .. }));
        let discarded =
            discarded.unwrap_or_else(|| panic!("{protocol:?}: no Discarded event in {seen:?}"));
        assert!(
            seen[..discarded]
                .iter()
                .any(|e| matches!(e, StreamEvent::TextDelta(_))),
            "partial output came first"
        );
        let mut completion = Completion::default();
        for e in seen {
            completion.apply(e);
        }
        assert_eq!(
            completion.text, "one two three",
            "{protocol:?}: nothing duplicated"
        );
    }
}

#[tokio::test]
async fn a_malformed_chunk_is_a_transient_protocol_error() {
    for protocol in [Protocol::OpenAi, Protocol::Anthropic] {
        let server = LlmServer::start().await;
        server.enqueue(Reply::Stream(Turn {
            fault: Some(StreamFault::MalformedAfter(2)),
            ..text_turn(&["a", "b"])
        }));
        let err = complete(&provider(config(&server, protocol)), &ask("x"))
            .await
            .unwrap_err();
        assert!(
            matches!(err, LlmError::Protocol { .. }),
            "{protocol:?}: {err}"
        );
        assert_eq!(err.class(), FailureClass::Transient);
    }
}

#[tokio::test]
async fn dropping_the_stream_disconnects_within_100_ms() {
    for protocol in [Protocol::OpenAi, Protocol::Anthropic] {
        let server = LlmServer::start().await;
        server.enqueue(Reply::Stream(Turn {
            fault: Some(StreamFault::StallAfter(3)),
            ..text_turn(&["a", "b", "c", "d"])
        }));
        let p = provider(config(&server, protocol));
        let mut stream = p.stream(&ask("x"));
        let first = stream.next().await.unwrap().unwrap();
        assert!(matches!(first, StreamEvent::TextDelta(_)), "{first:?}");
        let dropped_at = Instant::now();
        drop(stream);
        let deadline = Instant::now() + Duration::from_secs(2);
        let seen = loop {
            if let Some(at) = server.requests()[0].disconnected_at {
                break at;
            }
            assert!(
                Instant::now() < deadline,
                "{protocol:?}: the server never saw the disconnect"
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        };
        let lag = seen.saturating_duration_since(dropped_at);
        assert!(
            lag < Duration::from_millis(100),
            "{protocol:?}: disconnect seen after {lag:?}"
        );
    }
}

#[tokio::test]
async fn events_arrive_in_order_before_the_stream_ends() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        reasoning: vec!["r".into()],
        text: vec!["t".into()],
        tool_calls: vec![ScriptedToolCall {
            id: "c".into(),
            name: "shell".into(),
            argument_chunks: vec!["{}".into()],
        }],
        usage: Some((3, 4)),
        ..Turn::default()
    }));
    let seen = events(&provider(config(&server, Protocol::OpenAi)), &ask("x")).await;
    let kinds: Vec<&str> = seen
        .iter()
        .map(|e| match e {
            StreamEvent::ReasoningDelta(_) => "reasoning",
            StreamEvent::TextDelta(_) => "text",
            StreamEvent::ToolCall(_) => "tool",
            StreamEvent::Finish(_) => "finish",
            StreamEvent::Usage(_) => "usage",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["reasoning", "text", "tool", "finish", "usage"]);
}

/// A request that puts another message between a tool call and its result, as two runs
/// interleaving in one conversation once did, is never sent: both protocols refuse it before a
/// byte leaves, with a system-class error naming the call, and nothing is retried.
#[tokio::test]
async fn a_request_with_a_call_left_unanswered_is_never_sent() {
    let server = LlmServer::start().await;
    for protocol in [Protocol::OpenAi, Protocol::Anthropic] {
        let mut call = ChatMessage::new(Role::Assistant, "");
        call.tool_calls = vec![ToolCall {
            id: "call_run_one".into(),
            name: "shell".into(),
            arguments: r#"{"command":"wc -l q3.csv"}"#.into(),
            signature: None,
        }];
        let mut result = ChatMessage::new(Role::Tool, "1200 q3.csv");
        result.tool_call_id = Some("call_run_one".into());
        let request = ChatRequest {
            model: "test-model".into(),
            messages: [
                ChatMessage::new(Role::User, "Count the rows"),
                call,
                ChatMessage::new(Role::User, "the other run's task"),
                result,
            ]
            .map(Arc::new)
            .into(),
            ..ChatRequest::default()
        };
        let provider = provider(config(&server, protocol));
        let outcome = collect(with_retry(provider, request, fast_retry())).await;
        match outcome {
            Err(e @ LlmError::MalformedRequest(_)) => {
                assert_eq!(e.class(), FailureClass::System);
                let text = e.to_string();
                assert!(
                    text.contains("call_run_one") && text.contains("no result"),
                    "{text}"
                );
            }
            other => panic!("{protocol:?}: expected a refusal, got {other:?}"),
        }
    }
    assert!(
        server.requests().is_empty(),
        "a malformed request reached the server"
    );
}
