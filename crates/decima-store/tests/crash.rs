//! A writer process killed with SIGKILL mid-append loses nothing it acknowledged.
//!
//! The test re-runs its own binary as the writer (selected by an environment variable). The writer
//! appends in a loop and prints each seq only after `append` returned Ok. The parent kills it while
//! it is busy, reopens the file and checks every printed seq.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use decima_core::{ConversationId, NewMessage, Role};

const CHILD_ENV: &str = "DECIMA_CRASH_WRITER_DB";

#[test]
fn sigkill_mid_append_loses_no_acknowledged_message() {
    if let Ok(db) = std::env::var(CHILD_ENV) {
        run_writer(&db);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("decima.db");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let conversation = runtime.block_on(async {
        let store = common::open(&db).await;
        let c = store.conversations().create("crash", None).await.unwrap();
        store.close().await;
        c.id
    });

    for round in 0..3 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                &decima_testkit::processes::test_name(
                    module_path!(),
                    "sigkill_mid_append_loses_no_acknowledged_message",
                ),
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &db)
            .env("DECIMA_CRASH_CONVERSATION", conversation.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut acked = Vec::new();
        let started = Instant::now();
        // Kill at a different point each round, while appends are in full flow.
        let kill_after = 150 + round * 97;
        while acked.len() < kill_after {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "writer too slow"
            );
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(seq) = line.strip_prefix("ACK ") {
                        acked.push(seq.parse::<i64>().unwrap());
                    }
                }
                _ => panic!("writer exited early"),
            }
        }
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();

        runtime.block_on(async {
            let store = common::open(&db).await;
            assert_eq!(store.integrity_check().await.unwrap(), "ok");
            let stored: std::collections::BTreeSet<i64> = store
                .messages()
                .all(conversation)
                .await
                .unwrap()
                .iter()
                .map(|m| m.seq)
                .collect();
            for seq in &acked {
                assert!(
                    stored.contains(seq),
                    "acknowledged seq {seq} lost in round {round}"
                );
            }
            let max = *stored.iter().max().unwrap();
            assert_eq!(stored.len() as i64, max, "seqs stay gapless after a crash");
            store.close().await;
        });
    }
}

/// The child: append forever, acknowledging each committed seq on stdout.
fn run_writer(db: &str) {
    let conversation: ConversationId = std::env::var("DECIMA_CRASH_CONVERSATION")
        .unwrap()
        .parse()
        .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = common::open(std::path::Path::new(db)).await;
        let body = "payload ".repeat(512);
        loop {
            let m = store
                .messages()
                .append(conversation, NewMessage::new(Role::User, body.clone()))
                .await
                .unwrap();
            println!("ACK {}", m.seq);
        }
    });
}
