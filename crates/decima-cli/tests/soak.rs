//! The crash soak: `decima run` is killed with SIGKILL at random points twenty times, and
//! `decima resume` continues it each time. Afterwards no acknowledged row is missing, SQLite's
//! `integrity_check` is ok, and no stored tool call ran twice: every call appends its own id to
//! a file in the workspace, so a call run twice would show up there twice.
//!
//! The model is the wire-level test server, answering from the conversation it is sent: the
//! n-th tool result asks for call n + 1, so a resumed run carries on where the stored history
//! ends, whoever was killed where.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use decima_testkit::{LlmServer, Reply, ScriptedToolCall, Turn};
use serde_json::{Value, json};

const KILLS: usize = 20;

/// seq, role, tool_call_id, tool_calls, deleted_at.
type MessageRow = (i64, String, Option<String>, Option<String>, Option<String>);

fn decima(data: &Path, server: &LlmServer, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_decima"));
    cmd.arg("--data-dir")
        .arg(data)
        .args(args)
        .env_remove("DECIMA_DATA_DIR")
        .env("DECIMA_SECRET_BACKEND", "file")
        .env("DECIMA_PROVIDER_KIND", "openai")
        .env("DECIMA_BASE_URL", server.openai_base_url())
        .env("DECIMA_MODEL", "gpt-4o")
        .env("DECIMA_API_KEY", "sk-soak-0123456789")
        .env("DECIMA_CONTEXT_WINDOW", "128000")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// A running `decima` whose stdout lines (events) and stderr are collected as they come.
struct Running {
    child: Child,
    stdout: std::thread::JoinHandle<Vec<String>>,
    stderr: std::thread::JoinHandle<String>,
}

impl Running {
    fn spawn(mut cmd: Command) -> Self {
        let mut child = cmd.spawn().unwrap();
        let out = child.stdout.take().unwrap();
        let err = child.stderr.take().unwrap();
        let stdout = std::thread::spawn(move || {
            BufReader::new(out)
                .lines()
                .map_while(Result::ok)
                .collect::<Vec<_>>()
        });
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                text.push_str(&line);
                text.push('\n');
            }
            text
        });
        Self {
            child,
            stdout,
            stderr,
        }
    }

    /// Kills it if it still runs; returns whether it was still running, its event lines and
    /// its stderr.
    fn kill(mut self) -> (bool, Vec<String>, String) {
        let alive = self.child.try_wait().unwrap().is_none();
        if alive {
            self.child.kill().unwrap();
        }
        self.child.wait().unwrap();
        (
            alive,
            self.stdout.join().unwrap(),
            self.stderr.join().unwrap(),
        )
    }

    fn wait(mut self, limit: Duration) -> (i32, Vec<String>, String) {
        let started = Instant::now();
        while self.child.try_wait().unwrap().is_none() {
            assert!(
                started.elapsed() < limit,
                "decima did not finish in {limit:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let code = self.child.wait().unwrap().code().unwrap_or(-1);
        (
            code,
            self.stdout.join().unwrap(),
            self.stderr.join().unwrap(),
        )
    }
}

/// The seqs of the messages a process reported stored: acknowledged rows.
fn acknowledged(lines: &[String]) -> Vec<i64> {
    lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "message_stored")
        .filter_map(|e| e["seq"].as_i64())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_twenty_times_and_resumed_loses_nothing_and_runs_no_call_twice() {
    let server = LlmServer::start().await;
    let finish = Arc::new(AtomicBool::new(false));
    {
        let finish = Arc::clone(&finish);
        server.respond_with(move |request| {
            let messages = request.json.as_ref().unwrap()["messages"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let done = messages.iter().filter(|m| m["role"] == "tool").count();
            if finish.load(Ordering::SeqCst) {
                return Reply::Stream(Turn {
                    text: vec![format!("Done after {done} calls.")],
                    ..Turn::default()
                });
            }
            let id = format!("soak_{done}");
            // Every fourth step changes the plan (a snapshot is taken when a todo starts);
            // the others append their own id to the effects file, slowly enough to be killed
            // in the middle.
            let (name, arguments) = if done % 4 == 3 {
                (
                    "todo_write",
                    json!({"todos": [
                        {"title": format!("part {}", done / 4), "status": "in_progress"},
                        {"title": "the rest", "status": "pending"}
                    ]}),
                )
            } else {
                (
                    "shell",
                    json!({"command": format!("echo {id} >> effects.log; sleep 0.05; echo {id}")}),
                )
            };
            Reply::Stream(Turn {
                reasoning: vec![format!("Step {done}.")],
                tool_calls: vec![ScriptedToolCall {
                    id,
                    name: name.into(),
                    argument_chunks: vec![arguments.to_string()],
                }],
                ..Turn::default()
            })
        });
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let ws_arg = ws.to_string_lossy().into_owned();

    let seed = fastrand::u64(..);
    println!("soak seed {seed}");
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut acked: Vec<i64> = Vec::new();
    let mut execution: Option<String> = None;
    let mut kills = 0;
    let mut stderr_log = String::new();
    while kills < KILLS {
        let cmd = match &execution {
            None => decima(
                &data,
                &server,
                &[
                    "run",
                    // The answer counts the calls, which no tool printed: not this test's matter.
                    "--figures",
                    "off",
                    "--json",
                    "--max-steps",
                    "100000",
                    "--workspace",
                    &ws_arg,
                    "Append ids until told to stop",
                ],
            ),
            Some(id) => decima(&data, &server, &["resume", id, "--json"]),
        };
        let running = Running::spawn(cmd);
        // Kill anywhere: while it starts, streams, runs a command, writes, snapshots. (A debug
        // build takes a few hundred milliseconds to its first step; the range reaches well
        // past it.)
        std::thread::sleep(Duration::from_millis(rng.u64(30..1500)));
        let (alive, lines, stderr) = running.kill();
        acked.extend(acknowledged(&lines));
        stderr_log.push_str(&stderr);
        if execution.is_none() {
            execution = stderr
                .lines()
                .find_map(|l| l.strip_prefix("execution "))
                .map(str::to_owned);
            if execution.is_none() {
                // Killed before the execution existed: the run is started again.
                assert!(alive, "decima run ended by itself: {stderr}");
                continue;
            }
        }
        assert!(alive, "decima ended before it was killed: {stderr}");
        kills += 1;
    }
    let id = execution.unwrap();

    // The last resume runs to the end.
    finish.store(true, Ordering::SeqCst);
    let (code, lines, stderr) = Running::spawn(decima(&data, &server, &["resume", &id, "--json"]))
        .wait(Duration::from_secs(120));
    assert_eq!(code, 0, "{stderr}\nearlier:\n{stderr_log}");
    acked.extend(acknowledged(&lines));
    let last: Value = serde_json::from_str(lines.last().unwrap()).unwrap();
    assert_eq!(last["type"], "finished");
    assert_eq!(last["status"], "succeeded");

    // The database is intact, and every acknowledged message is there and live.
    let db = data.join("decima.db");
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}?mode=ro", db.display()))
        .await
        .unwrap();
    let integrity: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(integrity, "ok");
    let conversation: String =
        sqlx::query_scalar("SELECT conversation_id FROM executions WHERE id = ?")
            .bind(&id)
            .fetch_one(&pool)
            .await
            .unwrap();
    let rows: Vec<MessageRow> = sqlx::query_as(
        "SELECT seq, role, tool_call_id, tool_calls, deleted_at FROM messages \
         WHERE conversation_id = ? ORDER BY seq",
    )
    .bind(&conversation)
    .fetch_all(&pool)
    .await
    .unwrap();
    let live: HashMap<i64, bool> = rows.iter().map(|r| (r.0, r.4.is_none())).collect();
    assert!(!acked.is_empty());
    for seq in &acked {
        assert_eq!(
            live.get(seq),
            Some(&true),
            "acknowledged message {seq} is missing"
        );
    }
    // Seqs are gapless.
    let seqs: Vec<i64> = rows.iter().map(|r| r.0).collect();
    assert_eq!(seqs, (1..=seqs.len() as i64).collect::<Vec<_>>());

    // Every stored call has exactly one result, and none ran twice.
    let mut calls = Vec::new();
    let mut answered = Vec::new();
    for (_, role, call_id, tool_calls, _) in &rows {
        if role == "assistant"
            && let Some(tool_calls) = tool_calls
        {
            let parsed: Value = serde_json::from_str(tool_calls).unwrap();
            for c in parsed.as_array().unwrap() {
                calls.push(c["id"].as_str().unwrap().to_owned());
            }
        }
        if let Some(id) = call_id {
            answered.push(id.clone());
        }
    }
    assert_eq!(calls, answered, "each call answered once, in order");
    let unique: BTreeSet<&String> = calls.iter().collect();
    assert_eq!(unique.len(), calls.len(), "no call id stored twice");
    let effects = std::fs::read_to_string(ws.join("effects.log")).unwrap_or_default();
    let mut seen = BTreeSet::new();
    for line in effects.lines() {
        assert!(seen.insert(line), "the call {line} ran twice:\n{effects}");
        assert!(
            unique.contains(&line.to_owned()),
            "{line} ran but was never stored"
        );
    }
    println!(
        "{} kills, {} stored calls, {} effects, {} acknowledged messages",
        kills,
        calls.len(),
        seen.len(),
        acked.len()
    );
    assert!(
        calls.len() >= KILLS,
        "the run made progress across the kills"
    );
}
