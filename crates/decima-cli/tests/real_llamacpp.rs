//! `decima` against a real llama.cpp server with a small real model, as an analyst runs a local
//! model from the command line: `provider add` reads the window the server serves and
//! `provider list --json` says where it came from; a chat killed with SIGKILL while the model
//! streams leaves the conversation free at once for the next chat, which says it took it over;
//! a chat stopped with SIGTERM while the model streams exits promptly and keeps what the model
//! had said, marked as stopped.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead as _, Read as _};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use decima_testkit::llamacpp::LlamaCppServer;
use serde_json::Value;

use crate::common::{Env, text};

/// A question the small model answers at length: hundreds of tokens, many seconds.
const LONG: &str = "Write a long story about an accountant who finds an error in the ledger.";

async fn with_provider(server: &LlamaCppServer) -> Env {
    let env = Env::new().await;
    let out = env
        .decima(&[
            "provider",
            "add",
            "local",
            "--preset",
            "llamacpp",
            "--base-url",
            &server.base_url(),
            "--model",
            "smollm2",
        ])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    env
}

async fn new_conversation(env: &Env) -> String {
    let store = env.store().await;
    let id = store
        .conversations()
        .create("local", None)
        .await
        .unwrap()
        .id;
    store.close().await;
    id.to_string()
}

/// Starts a chat and waits until the model is answering: the conversation is claimed and the
/// server has decoded the first tokens of the answer.
async fn chat_mid_answer(env: &Env, server: &LlamaCppServer, conversation: &str) -> Child {
    let mut child = env
        .command(&["chat", "--conversation", conversation, LONG])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    // Drained in the background, so the pipe never fills.
    std::thread::spawn(move || {
        let mut all = Vec::new();
        let _ = stdout.read_to_end(&mut all);
    });
    let started = Instant::now();
    while !claimed(env, conversation).await {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the chat never claimed its conversation"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Until the server has decoded a few tokens of the answer: mid-answer, whatever the speed.
    while decoded(server) < 3 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the chat ended before the model answered"
        );
        assert!(started.elapsed() < Duration::from_secs(120), "no answer");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child
}

/// The tokens the server's busy slot has decoded so far (its `/slots`), 0 when none is busy.
fn decoded(server: &LlamaCppServer) -> u64 {
    let out = Command::new("curl")
        .args(["-s", &format!("{}/slots", server.root_url())])
        .output()
        .unwrap();
    let slots: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    slots
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["is_processing"] == true)
        .filter_map(|s| s["next_token"][0]["n_decoded"].as_u64())
        .max()
        .unwrap_or(0)
}

/// Whether something holds the conversation.
async fn claimed(env: &Env, conversation: &str) -> bool {
    let store = env.store().await;
    let rows: i64 =
        sqlx::query_scalar("SELECT count(*) FROM conversation_claims WHERE conversation_id = $1")
            .bind(conversation)
            .fetch_one(store.sqlite_pool().unwrap())
            .await
            .unwrap();
    store.close().await;
    rows > 0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_servers_window_is_read_and_a_killed_or_stopped_chat_frees_its_conversation() {
    let server = LlamaCppServer::start(2_048).await;
    let env = with_provider(&server).await;
    let listed = env.decima(&["provider", "list", "--json"]).await;
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed[0]["context_window"], 2_048, "{listed}");
    assert_eq!(listed[0]["context_window_source"], "served", "{listed}");

    // Killed with SIGKILL mid-answer: the next chat takes the conversation over at once.
    let conversation = new_conversation(&env).await;
    let mut child = chat_mid_answer(&env, &server, &conversation).await;
    child.kill().unwrap();
    child.wait().unwrap();
    // Timed to the takeover note, not to the answer's end: on a busy 2-core machine the model's
    // answer alone can take a minute, and the claim is what this measures.
    let started = Instant::now();
    let mut next = env
        .command(&["chat", "--conversation", &conversation, "Name one colour."])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = next.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut noted = None;
        let mut all = String::new();
        for line in std::io::BufReader::new(stderr).lines() {
            let line = line.unwrap();
            if noted.is_none() && line.contains("took over the conversation") {
                noted = Some(started.elapsed());
            }
            all.push_str(&line);
            all.push('\n');
        }
        (noted, all)
    });
    while next.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "the next chat did not end within 5 minutes"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let status = next.wait().unwrap();
    let (noted, stderr) = reader.join().unwrap();
    assert!(status.success(), "refused: {stderr}");
    let noted = noted.unwrap_or_else(|| panic!("no takeover note: {stderr}"));
    assert!(
        noted < Duration::from_secs(30),
        "it waited {noted:?} for the dead chat's claim (a claim lasts a minute)"
    );

    // Stopped with SIGTERM mid-answer: out promptly, the partial answer kept as stopped.
    let child = chat_mid_answer(&env, &server, &conversation).await;
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let stopped = Instant::now();
    let mut child = child;
    while child.try_wait().unwrap().is_none() {
        assert!(
            stopped.elapsed() < Duration::from_secs(5),
            "the chat did not stop within 5 s of SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let shown = env
        .decima(&["conversation", "show", &conversation, "--json"])
        .await;
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let answers: Vec<&Value> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .collect();
    let last = answers.last().unwrap();
    assert_eq!(last["answer"]["ended"], "stopped", "{last}");
    assert!(
        !last["content"].as_str().unwrap().trim().is_empty(),
        "{last}"
    );
    // The answers that came back whole carry what the server reported.
    let whole = answers
        .iter()
        .find(|m| m["answer"]["ended"] != "stopped")
        .unwrap();
    assert!(
        whole["answer"]["tokens_in"].as_u64().unwrap() > 0,
        "{whole}"
    );
}
