//! What `decima chat` puts on stdout when the provider misbehaves: a retried answer once, and a
//! hostile `Retry-After` as an error, never a crash. Runs the real binary against the wire-level
//! test server; stdout is a pipe here, as it is for `decima chat … > answer.md`.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output, Stdio};

use decima_testkit::{LlmServer, Reply, StreamFault, Turn};

const KEY: &str = "sk-test-chat-output-0123456789";

/// `decima chat MESSAGE` with the provider given by the `DECIMA_*` environment.
async fn chat(server: &LlmServer, message: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_decima"));
    cmd.arg("--data-dir")
        .arg(dir.path().join("data"))
        .args(["chat", message])
        .env_remove("DECIMA_DATA_DIR")
        .env("DECIMA_SECRET_BACKEND", "file")
        .env("DECIMA_PROVIDER_KIND", "openai")
        .env("DECIMA_BASE_URL", server.openai_base_url())
        .env("DECIMA_MODEL", "gpt-4o")
        .env("DECIMA_API_KEY", KEY)
        .env("DECIMA_CONTEXT_WINDOW", "128000")
        .stdin(Stdio::null());
    // In a blocking thread, so the test server on this runtime keeps serving.
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    drop(dir);
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Defect 12: after a retry, stdout held the discarded partial answer followed by the full one.
/// When stdout is not a terminal the answer is printed once it is final, so it appears exactly
/// once and the partial never.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_answer_reaches_a_piped_stdout_exactly_once() {
    let server = LlmServer::start().await;
    let parts = ["The ledger ", "balances: ", "42 rows ", "match."];
    server.enqueue(Reply::Stream(Turn {
        text: parts.iter().map(|s| s.to_string()).collect(),
        fault: Some(StreamFault::CutAfter(3)),
        ..Turn::default()
    }));
    server.enqueue(Reply::Stream(Turn {
        text: parts.iter().map(|s| s.to_string()).collect(),
        usage: Some((30, 6)),
        ..Turn::default()
    }));
    let out = chat(&server, "Does the ledger balance?").await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(server.requests().len(), 2, "cut, then retried: {stderr}");
    assert_eq!(text(&out.stdout), "The ledger balances: 42 rows match.\n");
    assert!(
        stderr.contains("discarded"),
        "the retry is still said: {stderr}"
    );
}

/// Defect 1 through the binary: `Retry-After: 1e20` made `decima chat` panic (exit 101). It is a
/// failed request now, named as such, with nothing on stdout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_retry_after_is_an_error_not_a_crash() {
    for value in ["1e20", "inf", "99999999999999999999999", "-1e400"] {
        let server = LlmServer::start().await;
        server.enqueue(Reply::Status {
            status: 429,
            headers: vec![("retry-after".into(), value.into())],
            body: r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#.into(),
        });
        // A value that is not a wait at all falls back to the backoff, and the retry succeeds.
        server.enqueue(Reply::Stream(Turn {
            text: vec!["fine".into()],
            ..Turn::default()
        }));
        let out = chat(&server, "hello").await;
        let stderr = text(&out.stderr);
        assert_ne!(out.status.code(), Some(101), "{value}: panicked: {stderr}");
        if value == "-1e400" {
            assert!(out.status.success(), "{value}: {stderr}");
            assert_eq!(text(&out.stdout), "fine\n");
        } else {
            assert_eq!(out.status.code(), Some(5), "{value}: {stderr}");
            let last = stderr.lines().last().unwrap_or_default();
            assert!(
                last.starts_with("error: [transient]") && last.contains("429"),
                "{value}: {stderr}"
            );
            assert!(out.stdout.is_empty(), "{value}");
        }
    }
}
