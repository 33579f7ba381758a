//! A run's answers that a local model leaves unfinished or malformed, against the wire-level
//! test server: a call written as text is read back and run; a looping answer and a second cut
//! answer in a row take the failure path instead of standing as the run's answer; a cut answer
//! is asked again once; a stop while the model streams keeps what it said; and the step history
//! carries only the steps the request no longer shows.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::Fixture;
use decima_core::FailureClass;
use decima_runtime::agent::{self, RunOptions, RunRequest, StopOnFailure};
use decima_store::{AnswerEnd, ExecutionStatus};
use decima_testkit::{Reply, StreamFault, Turn};

/// Runs `task` on the host in `session`, which the test may stop, with the tenth man off.
async fn run_in(
    f: &Fixture,
    session: &agent::Session<'_>,
    task: &str,
) -> decima_runtime::Result<agent::RunOutcome> {
    agent::run(
        session,
        RunRequest {
            conversation: None,
            workspace: Some(f.workspace()),
            task: task.into(),
            sandbox: decima_store::SandboxKind::Host,
            options: RunOptions {
                tenth_man: decima_runtime::review::TenthManMode::Off,
                ..RunOptions::default()
            },
        },
    )
    .await
}

fn text(parts: &[&str], finish: Option<&str>) -> Reply {
    Reply::Stream(Turn {
        text: parts.iter().map(|p| (*p).to_owned()).collect(),
        usage: Some((800, 40)),
        finish: finish.map(str::to_owned),
        ..Turn::default()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_the_server_left_in_the_text_is_read_back_run_and_recorded_as_such() {
    let f = Fixture::new().await;
    // Qwen2.5 behind a llama.cpp started without --jinja: the call arrives as Hermes text.
    f.server.enqueue(text(
        &[
            "I will count the rows.\n<tool_call>\n",
            "{\"name\": \"shell\", \"arguments\": {\"command\": \"echo 42 rows\"}}\n</tool_call>",
        ],
        Some("stop"),
    ));
    f.say("There are 42 rows.");
    let outcome = f.run("How many rows?", RunOptions::default()).await;
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    let result = f.last_tool_result(1);
    assert!(result.contains("42 rows"), "{result}");
    let steps = f.store.steps().list(outcome.execution.id).await.unwrap();
    assert!(
        steps
            .iter()
            .any(|s| s.content.contains("recovered from text") && s.content.contains("hermes")),
        "{steps:?}"
    );
    let messages = f.messages_of(&outcome).await;
    let answer = messages.iter().find(|m| !m.tool_calls.is_empty()).unwrap();
    assert_eq!(answer.content, "I will count the rows.");
    let answers = f
        .store
        .answers()
        .of_conversation(outcome.execution.conversation_id)
        .await
        .unwrap();
    let recorded = answers.iter().find(|a| a.seq == answer.seq).unwrap();
    assert_eq!(recorded.record.calls_from_text.as_deref(), Some("hermes"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_looping_answer_is_a_failure_not_the_runs_answer() {
    let f = Fixture::new().await;
    let mut parts = vec!["The reconciliation: ".to_owned()];
    for _ in 0..300 {
        parts.push("all accounts match. ".to_owned());
    }
    f.server.enqueue(Reply::Stream(Turn {
        text: parts,
        ..Turn::default()
    }));
    f.say("never asked");
    let outcome = f.run("Reconcile", RunOptions::default()).await;
    assert_eq!(outcome.execution.status, ExecutionStatus::AwaitingUser);
    let waiting = outcome.waiting_on.unwrap();
    assert_eq!(waiting.class, FailureClass::Degenerate);
    assert_eq!(waiting.details["trigger"], "looping_answer");
    // Stored as its own class, and offered what may mend it.
    let stored = f.store.failures().get(&waiting.id).await.unwrap();
    assert_eq!(stored.class, FailureClass::Degenerate);
    let offered = decima_runtime::agent::FailureReport::of(&stored).offered();
    assert_eq!(offered.first(), Some(&decima_store::Resolution::Replan));
    assert_eq!(f.server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_answer_is_asked_again_once_and_a_second_cut_in_a_row_is_a_failure() {
    let f = Fixture::new().await;
    f.server.enqueue(text(
        &["The totals are: North 1,204, South"],
        Some("length"),
    ));
    f.server
        .enqueue(text(&["The totals: North 1,204, South 9"], Some("length")));
    f.say("never asked");
    let outcome = f.run("Totals?", RunOptions::default()).await;
    assert_eq!(outcome.execution.status, ExecutionStatus::AwaitingUser);
    let waiting = outcome.waiting_on.unwrap();
    assert_eq!(waiting.details["trigger"], "cut_twice");
    let requests = f.server.requests();
    assert_eq!(requests.len(), 2);
    // The second request told the model what happened to the first.
    let second = requests[1].json.as_ref().unwrap().to_string();
    assert!(second.contains("cut by the output limit"), "{second}");
    // Both requests carried the window's output cap: a quarter of 64,000, at most 8,192.
    for r in &requests {
        assert_eq!(r.json.as_ref().unwrap()["max_tokens"], 8_192);
    }
    let answers = f
        .store
        .answers()
        .of_conversation(outcome.execution.conversation_id)
        .await
        .unwrap();
    assert_eq!(answers.len(), 2);
    assert!(answers.iter().all(|a| a.record.ended == AnswerEnd::Cut));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_answer_then_a_whole_one_ends_the_run_with_the_whole_one() {
    let f = Fixture::new().await;
    f.server.enqueue(text(
        &["The totals are: North 1,204, South"],
        Some("length"),
    ));
    f.say("North 1,204; South 980.");
    let outcome = f.run("Totals?", RunOptions::default()).await;
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    assert_eq!(outcome.answer.as_deref(), Some("North 1,204; South 980."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_while_the_model_streams_keeps_what_it_said_and_takes_effect_within_a_second() {
    let f = Fixture::new().await;
    f.server.enqueue(Reply::Stream(Turn {
        text: vec![
            "Reading the ledger: ".into(),
            "the first total is 1,204".into(),
        ],
        fault: Some(StreamFault::StallAfter(3)),
        ..Turn::default()
    }));
    let session = f.session(&StopOnFailure);
    let cancel = session.cancel.clone();
    let stopper = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(600)).await;
        cancel.cancel();
        std::time::Instant::now()
    });
    let outcome = run_in(&f, &session, "Read the ledger").await.unwrap();
    let stopped = stopper.await.unwrap();
    assert!(stopped.elapsed() < Duration::from_secs(1));
    assert_eq!(outcome.execution.status, ExecutionStatus::Cancelled);
    let messages = f.messages_of(&outcome).await;
    let partial = messages
        .iter()
        .find(|m| m.content.starts_with("Reading the ledger"))
        .expect("the partial answer is kept");
    let answers = f
        .store
        .answers()
        .of_conversation(outcome.execution.conversation_id)
        .await
        .unwrap();
    let recorded = answers.iter().find(|a| a.seq == partial.seq).unwrap();
    assert_eq!(recorded.record.ended, AnswerEnd::Stopped);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_before_the_first_token_ends_the_run_within_a_second() {
    let f = Fixture::new().await;
    // The server accepted the request and sends nothing yet.
    f.server.enqueue(Reply::Stream(Turn {
        text: vec!["never".into()],
        fault: Some(StreamFault::StallAfter(0)),
        ..Turn::default()
    }));
    let session = f.session(&StopOnFailure);
    let cancel = session.cancel.clone();
    let started = std::time::Instant::now();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        cancel.cancel();
    });
    let outcome = run_in(&f, &session, "Read the ledger").await.unwrap();
    assert!(started.elapsed() < Duration::from_millis(1_500));
    assert_eq!(outcome.execution.status, ExecutionStatus::Cancelled);
    // The conversation shows where it stopped: the run's ending row.
    let ending = f
        .store
        .executions()
        .get(outcome.execution.id)
        .await
        .unwrap();
    assert_eq!(ending.status, ExecutionStatus::Cancelled);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_while_a_subagent_streams_ends_both_within_a_second_and_keeps_what_the_child_said() {
    let f = Fixture::new().await;
    f.call(
        "spawn_subagent",
        serde_json::json!({"task": "Count the rows of ledger.csv"}),
    );
    // The child's model has begun its answer and then says nothing more.
    f.server.enqueue(Reply::Stream(Turn {
        text: vec!["Counting: ".into(), "the ledger has".into()],
        fault: Some(StreamFault::StallAfter(3)),
        ..Turn::default()
    }));
    let session = f.session(&StopOnFailure);
    let cancel = session.cancel.clone();
    let server = &f.server;
    let stopper = async {
        server.wait_for_requests(2, Duration::from_secs(60)).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
        std::time::Instant::now()
    };
    let run = run_in(&f, &session, "How many rows does the ledger have?");
    let (outcome, stopped) = tokio::join!(run, stopper);
    let outcome = outcome.unwrap();
    assert!(
        stopped.elapsed() < Duration::from_secs(1),
        "the stop took {:?}",
        stopped.elapsed()
    );
    assert_eq!(outcome.execution.status, ExecutionStatus::Cancelled);
    let children = f
        .store
        .executions()
        .children(outcome.execution.id)
        .await
        .unwrap();
    assert_eq!(children.len(), 1);
    let child = &children[0];
    assert_eq!(child.status, ExecutionStatus::Cancelled);
    // Where it stopped shows in the child's conversation: what the child's model had said.
    let answers = f
        .store
        .answers()
        .of_conversation(child.conversation_id)
        .await
        .unwrap();
    let stopped: Vec<_> = answers
        .iter()
        .filter(|a| a.record.ended == AnswerEnd::Stopped)
        .collect();
    assert_eq!(stopped.len(), 1, "{answers:?}");
    let said = f
        .store
        .messages()
        .get(child.conversation_id, stopped[0].seq)
        .await
        .unwrap();
    assert_eq!(said.execution_id, Some(child.id));
    assert!(said.content.starts_with("Counting: "), "{}", said.content);
}
