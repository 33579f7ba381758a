//! `decima context ID --json` as a whole process, on a compacted conversation of 100,000
//! messages, from a SQLite file and from a shared PostgreSQL database, in the same run: what an
//! analyst waits for when the window (or a script) asks what the next request would hold.
//!
//! Both stores get the same generated history (`ConversationBuilder`: user turns, tool calls
//! with results, reasoning, Chinese and English), imported and compressed once at the standard
//! level with a 16,000-token window; one `context` run first fills the per-conversation token
//! memo, as an analyst's first look does.
//!
//! Needs the tests' PostgreSQL (`DECIMA_TEST_POSTGRES_URL`; `scripts/test.sh` starts one, or
//! `source scripts/lib.sh && start_test_postgres`).
//!
//! Run: `cargo bench -p decima-cli --bench context_shared`

// Bench code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use decima_testkit::ConversationBuilder;

const WINDOW: &str = "16000";

/// `decima [--database-url URL] ARGS` on the data directory `data`.
fn decima(data: &Path, url: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_decima"));
    cmd.arg("--data-dir").arg(data);
    if let Some(url) = url {
        cmd.arg("--database-url").arg(url);
    }
    let out = cmd
        .args(args)
        .env_remove("DECIMA_DATA_DIR")
        .env_remove("DECIMA_DATABASE_URL")
        .env("DECIMA_CONTEXT_WINDOW", WINDOW)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Imports the history, compresses it once and looks at it once; returns the conversation.
fn prepared(data: &Path, url: Option<&str>, history: &Path) -> String {
    let out = decima(
        data,
        url,
        &["conversation", "import", history.to_str().unwrap()],
    );
    let id = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    decima(data, url, &["compress", &id, "--level", "standard"]);
    decima(data, url, &["context", &id, "--json"]);
    id
}

fn context_100k(c: &mut Criterion) {
    // `cargo test --all-targets` runs each benchmark once to see that it works (criterion's
    // test mode, without `--bench`): a short history does for that.
    let measuring = std::env::args().any(|a| a == "--bench");
    let messages = if measuring { 100_000 } else { 2_000 };
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("history.jsonl");
    std::fs::write(
        &history,
        ConversationBuilder::new(7, messages).build().to_jsonl(),
    )
    .unwrap();
    let lite_data = dir.path().join("sqlite");
    let lite = prepared(&lite_data, None, &history);

    let rt = tokio::runtime::Runtime::new().unwrap();
    let url = rt.block_on(decima_testkit::postgres::fresh_database("bench_context"));
    let pg_data = dir.path().join("postgres");
    decima(&pg_data, Some(&url), &["db", "migrate"]);
    let pg = prepared(&pg_data, Some(&url), &history);

    let mut group = c.benchmark_group("context_100k_compacted");
    group.bench_function("sqlite", |b| {
        b.iter(|| decima(&lite_data, None, &["context", &lite, "--json"]))
    });
    group.bench_function("postgres", |b| {
        b.iter(|| decima(&pg_data, Some(&url), &["context", &pg, "--json"]))
    });
    group.finish();
}

criterion_group!(
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .measurement_time(Duration::from_secs(10))
        .warm_up_time(Duration::from_secs(2));
    targets = context_100k
);
criterion_main!(benches);
