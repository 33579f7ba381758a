//! A conversation is never left busy by a `decima` that is gone. A chat killed with SIGKILL
//! mid-answer leaves its claim behind, and the next chat on this machine takes it over at once
//! and says so; SIGTERM stops a chat (or a review) as Ctrl-C does, promptly, releasing the claim
//! before the process exits. A run killed the same way is interrupted by the next command at
//! once, through its lock file. Real processes, the real binary, a stalled model stream.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// The signal tests are Unix-only (signals): elsewhere their helpers and imports go unused.
#![cfg_attr(not(unix), allow(unused_imports, dead_code))]

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use decima_core::ConversationId;
use decima_testkit::{Reply, StreamFault, Turn};

use crate::common::{Env, execution_id, text};

/// A reply that sends its first piece and then stalls: a chat caught mid-answer.
fn stall(env: &Env) {
    env.server.enqueue(Reply::Stream(Turn {
        text: vec!["Half an ".into(), "answer".into()],
        fault: Some(StreamFault::StallAfter(2)),
        ..Turn::default()
    }));
}

async fn new_conversation(env: &Env) -> ConversationId {
    let store = env.store().await;
    let id = store
        .conversations()
        .create("claimed", None)
        .await
        .unwrap()
        .id;
    store.close().await;
    id
}

fn spawn(env: &Env, args: &[&str]) -> Child {
    env.command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The pid the conversation's claim names, if it has one (read behind the store's back).
async fn claim_pid(env: &Env, conversation: ConversationId) -> Option<i64> {
    let store = env.store().await;
    let pid: Option<Option<i64>> =
        sqlx::query_scalar("SELECT pid FROM conversation_claims WHERE conversation_id = $1")
            .bind(conversation.to_string())
            .fetch_optional(store.sqlite_pool().unwrap())
            .await
            .unwrap();
    store.close().await;
    pid.flatten()
}

/// Waits (up to a minute) for the model to be asked and to have sent what it sends before it
/// stalls.
async fn mid_stream(env: &Env, requests: usize) {
    env.server
        .wait_for_requests(requests, Duration::from_secs(60))
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
}

/// Sends SIGTERM to `child` and waits for it to exit: its output and how long it took. Kills
/// it and panics after 10 s.
async fn terminate(mut child: Child) -> (Output, Duration) {
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(10) {
            child.kill().unwrap();
            panic!("decima did not stop within 10 s of SIGTERM");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let took = started.elapsed();
    (child.wait_with_output().unwrap(), took)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_killed_mid_answer_is_taken_over_at_once_by_the_next_chat() {
    let env = Env::new().await;
    let conversation = new_conversation(&env).await;
    let id = conversation.to_string();
    stall(&env);
    let mut child = spawn(&env, &["chat", "--conversation", &id, "First question"]);
    mid_stream(&env, 1).await;
    let pid = child.id();
    assert_eq!(
        claim_pid(&env, conversation).await,
        Some(i64::from(pid)),
        "the chat holds the conversation, named by its process"
    );
    child.kill().unwrap();
    child.wait().unwrap();

    env.say("The second answer.");
    let started = Instant::now();
    let out = env
        .decima(&["chat", "--conversation", &id, "Second question"])
        .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "not refused as busy: {stderr}");
    eprintln!("a chat after a killed chat: {:?}", started.elapsed());
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "no wait for the claim's minute"
    );
    assert_eq!(text(&out.stdout), "The second answer.\n", "{stderr}");
    assert!(
        stderr.contains(&format!(
            "note: took over the conversation from process {pid}, which is no longer running"
        )),
        "{stderr}"
    );
    assert_eq!(claim_pid(&env, conversation).await, None, "released after");
}

// Signals: Unix by nature (Windows stops a process with Ctrl-Break, which a test cannot send
// to a process without a console of its own).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_a_chat_mid_answer_promptly_and_frees_the_conversation() {
    let env = Env::new().await;
    let conversation = new_conversation(&env).await;
    let id = conversation.to_string();
    stall(&env);
    let child = spawn(&env, &["chat", "--conversation", &id, "A question"]);
    mid_stream(&env, 1).await;
    assert!(claim_pid(&env, conversation).await.is_some(), "claimed");
    let (out, took) = terminate(child).await;
    let stderr = text(&out.stderr);
    eprintln!("a chat exited {took:?} after SIGTERM");
    assert!(took < Duration::from_secs(2), "took {took:?}: {stderr}");
    // It exited by itself, not by the signal's default action, and said why.
    assert!(out.status.code().is_some_and(|c| c != 0), "{stderr}");
    assert!(stderr.contains("[cancelling: the answer stops"), "{stderr}");
    assert!(stderr.contains("cancelled"), "{stderr}");
    // Released, not merely left to a process that is gone: no row at all.
    assert_eq!(claim_pid(&env, conversation).await, None);
    let store = env.store().await;
    assert_eq!(store.claims().busy(conversation).await.unwrap(), None);
    store.close().await;
    assert!(
        env.server
            .wait_for_disconnect(0, Duration::from_secs(5))
            .await
            .is_some(),
        "the answer's request was dropped"
    );

    env.say("Next.");
    let out = env.decima(&["chat", "--conversation", &id, "Again"]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        !stderr.contains("took over"),
        "nothing to take over: {stderr}"
    );
}

// Signals: Unix by nature (Windows stops a process with Ctrl-Break, which a test cannot send
// to a process without a console of its own).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_a_review_promptly_and_stores_nothing() {
    let env = Env::new().await;
    let conversation = super::review::small_conversation(&env, 6).await;
    stall(&env);
    let child = spawn(&env, &["review", &conversation.to_string()]);
    mid_stream(&env, 1).await;
    let (out, took) = terminate(child).await;
    let stderr = text(&out.stderr);
    eprintln!("a review exited {took:?} after SIGTERM");
    assert!(took < Duration::from_secs(2), "took {took:?}: {stderr}");
    assert!(out.status.code().is_some_and(|c| c != 0), "{stderr}");
    assert!(stderr.contains("nothing was stored"), "{stderr}");
    let store = env.store().await;
    let reviews = store
        .reviews()
        .open_findings(conversation, None)
        .await
        .unwrap();
    assert!(reviews.is_empty());
    let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM reviews")
        .fetch_one(store.sqlite_pool().unwrap())
        .await
        .unwrap();
    assert_eq!(stored, 0);
    store.close().await;
}

/// A run killed with SIGKILL while the model answers holds its execution through a lock file,
/// which the kernel drops with the process: the next command on the conversation finds it
/// orphaned and goes ahead at once, with no lease or claim to wait out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_mid_answer_frees_its_conversation_at_once() {
    let env = Env::new().await;
    let conversation = new_conversation(&env).await;
    let id = conversation.to_string();
    stall(&env);
    let ws = env.ws().to_string_lossy().into_owned();
    let mut child = spawn(
        &env,
        &[
            "run",
            "--tenth-man",
            "off",
            "--workspace",
            &ws,
            "--conversation",
            &id,
            "A task",
        ],
    );
    mid_stream(&env, 1).await;
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    let execution = execution_id(&out.stderr);

    env.say("Free again.");
    let started = Instant::now();
    let out = env.decima(&["chat", "--conversation", &id, "Next"]).await;
    let took = started.elapsed();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let view = env.show(&execution).await;
    assert_eq!(view["status"], "interrupted", "{view}");
    eprintln!("a chat after a killed run: {took:?}");
    assert!(took < Duration::from_secs(30), "took {took:?}");
}

/// The same on a shared PostgreSQL store, where a run holds a lease instead of a lock file: the
/// lease names the runner's process, so the next command on this machine takes the dead
/// runner's lease at once rather than after its time to live (30 s here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_on_a_shared_store_frees_its_conversation_at_once() {
    let env = Env::on_postgres("killed_run").await;
    let store = env.store().await;
    let conversation = store
        .conversations()
        .create("shared", None)
        .await
        .unwrap()
        .id;
    store.close().await;
    let id = conversation.to_string();
    stall(&env);
    let ws = env.ws().to_string_lossy().into_owned();
    let mut child = spawn(
        &env,
        &["run", "--workspace", &ws, "--conversation", &id, "A task"],
    );
    mid_stream(&env, 1).await;
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    let execution = execution_id(&out.stderr);

    env.say("Free again.");
    let started = Instant::now();
    let out = env.decima(&["chat", "--conversation", &id, "Next"]).await;
    let took = started.elapsed();
    let stderr = text(&out.stderr);
    // Refused as busy (exit 1) while the dead runner's lease stood.
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    eprintln!("a chat after a killed run on PostgreSQL: {took:?}");
    assert!(took < Duration::from_secs(20), "took {took:?}");
    let view = env.show(&execution).await;
    assert_eq!(view["status"], "interrupted", "{view}");
}
