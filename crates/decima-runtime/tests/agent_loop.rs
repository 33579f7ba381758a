//! The agent loop end to end against the wire-level test server: real SQLite file, real
//! workspace on disk, real shell commands. The server scripts the model's tool calls.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::{Choices, Fixture, todos};
use decima_core::{FailureClass, Role};
use decima_runtime::Event;
use decima_runtime::agent::{self, RunOptions, RunRequest, StopOnFailure};
use decima_store::{ExecutionStatus, Resolution, TodoStatus};
use decima_testkit::{Reply, workspace};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planned_run_uses_tools_snapshots_each_todo_and_compresses_finished_phases() {
    let f = Fixture::new().await;
    f.call(
        "todo_write",
        json!({"todos": [
            {"title": "collect", "status": "in_progress", "phase": "gather"},
            {"title": "report", "status": "pending", "phase": "write", "checkpoint": true}
        ]}),
    );
    f.call(
        "shell",
        json!({"command": "printf 'a,b\\n1,2\\n' > data.csv && seq 100000 100600 && wc -l < data.csv"}),
    );
    f.call(
        "todo_write",
        json!({"todos": [
            {"title": "collect", "status": "completed", "phase": "gather"},
            {"title": "report", "status": "in_progress", "phase": "write", "checkpoint": true}
        ]}),
    );
    f.calls(&[
        ("read_file", json!({"path": "data.csv"})),
        (
            "write_file",
            json!({"path": "out/report.md", "content": "# Two rows\n"}),
        ),
    ]);
    f.call(
        "todo_write",
        json!({"todos": [
            {"title": "collect", "status": "completed", "phase": "gather"},
            {"title": "report", "status": "completed", "phase": "write", "checkpoint": true}
        ]}),
    );
    f.say("The file has 2 lines; the report is in out/report.md.");

    let outcome = f
        .run(
            "Count the rows of the data and write a report",
            RunOptions::default(),
        )
        .await;
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    assert_eq!(
        outcome.answer.as_deref(),
        Some("The file has 2 lines; the report is in out/report.md.")
    );
    assert_eq!(f.server.pending_replies(), 0);
    let ws = f.workspace();
    assert_eq!(
        std::fs::read_to_string(ws.join("out/report.md")).unwrap(),
        "# Two rows\n"
    );

    // Each request offers the five tools; each result reaches the next request.
    let first = f.server.requests()[0].json.clone().unwrap();
    let names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "shell",
            "read_file",
            "write_file",
            "todo_write",
            "spawn_subagent"
        ]
    );
    assert!(
        f.last_tool_result(2).contains("2\n[exit code 0]"),
        "{:?}",
        f.tool_results(2)
    );
    let results = f.tool_results(4);
    assert!(results[results.len() - 2].contains("a,b"), "{results:?}");
    // Step records feed the volatile tail of later requests.
    assert!(
        f.request_text(3).contains("Recent steps"),
        "{}",
        f.request_text(3)
    );

    let view = agent::view(&f.store, outcome.execution.id).await.unwrap();
    assert_eq!(view.status, "succeeded");
    assert!(view.todos.iter().all(|t| t.status == TodoStatus::Completed));
    let reasons: Vec<&str> = view.snapshots.iter().map(|s| s.reason).collect();
    assert_eq!(
        reasons,
        ["run_start", "todo_start", "todo_start", "checkpoint"]
    );
    assert!(view.steps.iter().any(|s| s.kind == "supervision"));
    assert_eq!(
        view.steps.iter().filter(|s| s.kind == "analysis").count(),
        6
    );

    let events = f.events.take();
    let compactions: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Compacted { trigger, .. } => Some(trigger.as_str()),
            _ => None,
        })
        .collect();
    // The first phase (with its long output) was folded when its last todo completed. Later
    // ones compress only what makes the history smaller: the short second phase and the
    // checkpoint may have had nothing worth folding.
    assert_eq!(compactions.first(), Some(&"phase"), "{compactions:?}");
    // The run history counts them: each made the providers' caches miss from the summaries on.
    assert_eq!(
        view.usage.compressions,
        Some(u32::try_from(compactions.len()).unwrap()),
        "{compactions:?}"
    );
    assert!(
        compactions
            .iter()
            .all(|t| ["phase", "checkpoint"].contains(t)),
        "{compactions:?}"
    );
    assert!(events.iter().any(
        |e| matches!(e, Event::ToolFinished { name, exit_code: Some(0), .. } if name == "shell")
    ));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::ContextUsage { layers, .. } if !layers.is_empty()))
    );
    assert!(matches!(
        events.last(),
        Some(Event::Finished {
            status: ExecutionStatus::Succeeded,
            ..
        })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_failure_rolls_back_files_plan_and_history_then_skip_goes_on() {
    let f = Fixture::new().await;
    let ws = f.workspace();
    workspace::seed(&ws).unwrap();
    let before = workspace::tree(&ws).unwrap();

    f.call(
        "todo_write",
        todos(&[("clean the data", "in_progress"), ("summarise", "pending")]),
    );
    f.call(
        "shell",
        json!({"command": "rm doomed.txt && mkdir -p new/dir && printf '\\x00\\xff' > new/dir/x.bin && printf changed > a/b/c/deep.txt && head -c 1000 keep.bin > keep.bin"}),
    );
    f.call("read_file", json!({"path": "missing/input.csv"}));
    f.call(
        "todo_write",
        json!({"todos": [
            {"title": "clean the data", "status": "failed", "reason": "the input file is missing"},
            {"title": "summarise", "status": "pending"}
        ]}),
    );
    let outcome = f.run("Clean and summarise", RunOptions::default()).await;
    assert_eq!(outcome.execution.status, ExecutionStatus::AwaitingUser);
    let failure = outcome.waiting_on.clone().unwrap();
    assert_eq!(failure.class, FailureClass::Data);
    assert_eq!(
        workspace::tree(&ws).unwrap(),
        before,
        "the workspace is back byte for byte"
    );
    assert!(failure.rolled_back["files_removed"].as_u64().unwrap() >= 1);
    assert!(failure.rolled_back["messages_removed"].as_u64().unwrap() >= 4);
    assert_eq!(failure.details["place"]["todo_title"], "clean the data");
    assert_eq!(failure.details["place"]["position"], 1);
    assert!(!failure.suggested_actions.as_array().unwrap().is_empty());

    // The plan is as it was when the todo started; the history after its start is gone.
    let plan = f.store.todos().plan(outcome.execution.id).await.unwrap();
    assert_eq!(plan[0].status, TodoStatus::InProgress);
    let live = f.messages_of(&outcome).await;
    assert!(
        live.iter()
            .all(|m| !m.content.contains("missing/input.csv"))
    );
    // Every call that survived has exactly one answer.
    let calls: Vec<String> = live
        .iter()
        .flat_map(|m| m.tool_calls.iter().map(|c| c.id.clone()))
        .collect();
    let answers: Vec<String> = live.iter().filter_map(|m| m.tool_call_id.clone()).collect();
    assert_eq!(calls, answers);

    // Skip: the todo is skipped, the model is told, and the run goes on to the end.
    f.call(
        "todo_write",
        todos(&[("clean the data", "skipped"), ("summarise", "completed")]),
    );
    f.say("Skipped the cleaning; summary done.");
    let resumed = agent::recover(
        &f.session(&StopOnFailure),
        outcome.execution.id,
        Resolution::Skip,
    )
    .await
    .unwrap();
    assert_eq!(resumed.execution.status, ExecutionStatus::Succeeded);
    let n = f.server.requests().len();
    assert!(
        f.request_text(n - 2).contains("skipped this todo"),
        "{}",
        f.request_text(n - 2)
    );
    let view = agent::view(&f.store, outcome.execution.id).await.unwrap();
    assert_eq!(view.failures[0].resolution, Some("skip"));
}

/// Finished executions' workspace snapshots are reclaimed; one that waits for a choice keeps
/// them, and they still restore.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_of_finished_executions_are_collected_and_a_waiting_ones_are_kept() {
    let f = Fixture::new().await;
    let ws = f.workspace();
    workspace::seed(&ws).unwrap();
    // A run's inputs (its `run_start` snapshot) are kept for the tenth man's recomputations;
    // `inputs` picks those, else the others.
    let archives = |execution, inputs: bool| {
        let store = f.store.clone();
        async move {
            store
                .snapshots()
                .list(execution)
                .await
                .unwrap()
                .into_iter()
                .filter(|s| (s.reason == decima_store::SnapshotReason::RunStart) == inputs)
                .filter_map(|s| s.workspace_archive)
                .map(|id| decima_sandbox::SnapshotId::parse(&id).unwrap())
                .collect::<Vec<_>>()
        }
    };

    // One run finishes; another fails on data and waits, rolled back to its todo's snapshot.
    // The first changes the workspace before its todo starts, so the todo's snapshot is not
    // its inputs'.
    f.call("shell", json!({"command": "printf zero > before.txt"}));
    f.call("todo_write", todos(&[("count", "in_progress")]));
    f.call("shell", json!({"command": "printf one > counted.txt"}));
    f.call("todo_write", todos(&[("count", "completed")]));
    f.say("Counted.");
    let done = f.run("Count", RunOptions::default()).await;
    assert_eq!(done.execution.status, ExecutionStatus::Succeeded);
    f.call("todo_write", todos(&[("clean", "in_progress")]));
    f.call("read_file", json!({"path": "missing/input.csv"}));
    f.call(
        "todo_write",
        json!({"todos": [{"title": "clean", "status": "failed", "reason": "no input"}]}),
    );
    let waiting = f.run("Clean", RunOptions::default()).await;
    assert_eq!(waiting.execution.status, ExecutionStatus::AwaitingUser);
    let finished = archives(done.execution.id, false).await;
    let kept = archives(waiting.execution.id, false).await;
    let mut inputs = archives(done.execution.id, true).await;
    inputs.extend(archives(waiting.execution.id, true).await);
    assert!(!finished.is_empty() && !kept.is_empty() && inputs.len() == 2);
    assert!(finished.iter().all(|id| !inputs.contains(id)));

    let snapshots = agent::snapshot_store(f.dir.path()).unwrap();
    // Taken moments ago, they are all kept: another process may not have recorded its own yet.
    let stats = agent::collect_snapshots(&f.store, f.dir.path())
        .await
        .unwrap();
    assert_eq!(stats.manifests_removed, 0);
    // An hour later, only the waiting execution's remain.
    let hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
    for entry in std::fs::read_dir(f.dir.path().join("snapshots/manifests")).unwrap() {
        let file = std::fs::File::options()
            .write(true)
            .open(entry.unwrap().path())
            .unwrap();
        file.set_modified(hour_ago).unwrap();
    }
    let stats = agent::collect_snapshots(&f.store, f.dir.path())
        .await
        .unwrap();
    assert!(!stats.busy);
    assert!(stats.manifests_removed >= 1, "{stats:?}");
    assert!(
        finished
            .iter()
            .all(|id| !kept.contains(id) && !snapshots.contains(id))
    );
    assert!(kept.iter().all(|id| snapshots.contains(id)));
    assert!(
        inputs.iter().all(|id| snapshots.contains(id)),
        "every run's inputs are kept"
    );
    let restored = f.dir.path().join("restored");
    snapshots.restore(&kept[0], &restored).unwrap();
    assert!(
        restored.join("keep.bin").is_file(),
        "the kept snapshot restores whole"
    );
}

/// Answers every failure with the next choice of a list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logic_failure_is_replanned_once_automatically_then_waits_and_abort_cancels() {
    let f = Fixture::new().await;
    f.call("todo_write", todos(&[("fit the model", "in_progress")]));
    f.call(
        "todo_write",
        json!({"todos": [{"title": "fit the model", "status": "failed", "reason": "the approach does not converge"}]}),
    );
    // The automatic replan: the report is in the next request's instant context.
    f.call("todo_write", todos(&[("fit the model", "in_progress")]));
    f.call(
        "todo_write",
        json!({"todos": [{"title": "fit the model", "status": "failed", "reason": "still no convergence"}]}),
    );
    let choices = Choices(std::sync::Mutex::new(vec![Resolution::Abort]));
    let outcome = agent::run(
        &f.session(&choices),
        RunRequest {
            workspace: Some(f.workspace()),
            task: "Fit a model".into(),
            ..RunRequest::default()
        },
    )
    .await
    .unwrap();
    assert!(
        f.request_text(2).contains("Failure report"),
        "{}",
        f.request_text(2)
    );
    assert!(f.request_text(2).contains("write a new plan"));
    assert_eq!(outcome.execution.status, ExecutionStatus::Cancelled);
    let failures = f.store.failures().list(outcome.execution.id).await.unwrap();
    assert_eq!(failures.len(), 2);
    assert_eq!(failures[0].resolution, Some(Resolution::Replan));
    assert_eq!(failures[1].resolution, Some(Resolution::Abort));
    assert_eq!(failures[1].class, FailureClass::Logic);
    let stored = f
        .store
        .executions()
        .get(outcome.execution.id)
        .await
        .unwrap();
    let ending = stored.ending.expect("the ending is recorded");
    assert_eq!(ending.by, decima_store::EndedBy::Abort);
    let last = f.messages_of(&outcome).await.last().unwrap().seq;
    assert_eq!(ending.after_seq, last);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_failing_call_three_times_is_a_stuck_loop() {
    let f = Fixture::new().await;
    for _ in 0..3 {
        f.call("shell", json!({"command": "cat no-such-file"}));
    }
    f.say("never asked: the loop stops for the analyst");
    let outcome = f.run("Read the file", RunOptions::default()).await;
    // A stuck loop goes to the analyst at once: asking the model again is what failed.
    assert_eq!(outcome.execution.status, ExecutionStatus::AwaitingUser);
    assert_eq!(f.server.requests().len(), 3);
    let failures = f.store.failures().list(outcome.execution.id).await.unwrap();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].details["trigger"], "stuck_loop");
    assert_eq!(failures[0].resolution, None);
    assert!(
        failures[0].message.contains("failing"),
        "{}",
        failures[0].message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_request_that_keeps_failing_waits_and_retry_continues() {
    let f = Fixture::new().await;
    for _ in 0..4 {
        f.server.enqueue(Reply::server_error(503));
    }
    let outcome = f.run("Say hello", RunOptions::default()).await;
    assert_eq!(outcome.execution.status, ExecutionStatus::AwaitingUser);
    let failure = outcome.waiting_on.unwrap();
    assert_eq!(failure.class, FailureClass::Transient);
    assert_eq!(failure.details["trigger"], "model_request");
    assert_eq!(failure.rolled_back, json!({}));
    f.say("Hello.");
    let done = agent::recover(
        &f.session(&StopOnFailure),
        outcome.execution.id,
        Resolution::Retry,
    )
    .await
    .unwrap();
    assert_eq!(done.answer.as_deref(), Some("Hello."));
    // The task was stored once, not once per attempt.
    let users = f
        .messages_of(&done)
        .await
        .into_iter()
        .filter(|m| m.role == Role::User)
        .count();
    assert_eq!(users, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_step_budget_stops_the_run_and_retry_grants_another() {
    let f = Fixture::new().await;
    for i in 0..3 {
        f.call("shell", json!({"command": format!("echo {i}")}));
    }
    f.say("done");
    let outcome = f
        .run(
            "Loop",
            RunOptions {
                max_steps: 2,
                ..RunOptions::default()
            },
        )
        .await;
    assert_eq!(outcome.execution.status, ExecutionStatus::AwaitingUser);
    assert_eq!(
        outcome.waiting_on.unwrap().details["trigger"],
        "step_budget"
    );
    assert_eq!(f.server.requests().len(), 2);
    let done = agent::recover(
        &f.session(&StopOnFailure),
        outcome.execution.id,
        Resolution::Retry,
    )
    .await
    .unwrap();
    assert_eq!(done.execution.status, ExecutionStatus::Succeeded);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_tool_input_gets_clear_tool_errors_and_the_run_goes_on() {
    let f = Fixture::new().await;
    let outside = f.dir.path().join("outside.txt");
    std::fs::write(&outside, "secret").unwrap();
    f.raw_call("shell", "{not json");
    f.call("write_file", json!({"content": "no path"}));
    f.call("read_file", json!({"path": "../outside.txt"}));
    f.call(
        "write_file",
        json!({"path": outside.to_string_lossy(), "content": "overwritten"}),
    );
    f.call(
        "shell",
        json!({"command": "ln -s .. up && cat up/outside.txt > /dev/null; echo linked"}),
    );
    f.call("read_file", json!({"path": "up/outside.txt"}));
    f.call(
        "shell",
        json!({"command": "head -c 100000000 /dev/zero | tr '\\000' a"}),
    );
    f.call("shell", json!({"command": "sleep 600", "timeout_s": 1}));
    f.call("shell", json!({"command": "(sleep 600 &) ; echo forked"}));
    f.call(
        "shell",
        json!({"command": "printf 'ok \\377\\376 bytes\\n'"}),
    );
    f.call("no_such_tool", json!({}));
    f.say("Survived.");
    let started = std::time::Instant::now();
    let outcome = f.run("Try everything", RunOptions::default()).await;
    assert_eq!(
        outcome.execution.status,
        ExecutionStatus::Succeeded,
        "{:?}",
        f.store.failures().list(outcome.execution.id).await
    );
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "secret");
    let result = |i: usize| f.last_tool_result(i);
    assert!(
        result(1).contains("[tool error: data]") && result(1).contains("shell"),
        "{}",
        result(1)
    );
    assert!(
        result(2).contains("[tool error: data]") && result(2).contains("path"),
        "{}",
        result(2)
    );
    assert!(
        result(3).contains("[tool error: permission]"),
        "{}",
        result(3)
    );
    assert!(
        result(4).contains("[tool error: permission]"),
        "{}",
        result(4)
    );
    assert!(
        result(6).contains("[tool error: permission]"),
        "{}",
        result(6)
    );
    assert!(result(7).contains(".decima/output/"), "{}", result(7));
    assert!(result(7).len() < 100_000, "{}", result(7).len());
    assert!(result(8).contains("timed out"), "{}", result(8));
    assert!(result(9).contains("forked"), "{}", result(9));
    assert!(
        result(10).contains("ok \u{fffd}\u{fffd} bytes"),
        "{}",
        result(10)
    );
    assert!(result(11).contains("no tool named"), "{}", result(11));
    assert!(
        f.store
            .failures()
            .list(outcome.execution.id)
            .await
            .unwrap()
            .is_empty()
    );
}

/// Unix: the shell's process group, read from `/proc` (on Windows, decima-cli's `windows_cli`
/// checks that a call's processes end with it).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_kills_the_command_and_ends_the_run_cancelled() {
    let f = Fixture::new().await;
    f.call("todo_write", todos(&[("wait for it", "in_progress")]));
    f.call("shell", json!({"command": "echo $$ > pid; sleep 600"}));
    let session = f.session(&StopOnFailure);
    let cancel = session.cancel.clone();
    let ws = f.workspace();
    let run = agent::run(
        &session,
        RunRequest {
            workspace: Some(ws.clone()),
            task: "Wait".into(),
            ..RunRequest::default()
        },
    );
    let canceller = async {
        while !ws.join("pid").exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    };
    let (outcome, ()) = tokio::join!(run, canceller);
    let outcome = outcome.unwrap();
    assert_eq!(outcome.execution.status, ExecutionStatus::Cancelled);
    let pid: i32 = std::fs::read_to_string(ws.join("pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "the command was killed"
    );
    let live = f.messages_of(&outcome).await;
    assert!(live.last().unwrap().content.contains("[cancelled]"));
    // The state it leaves: where the analyst stopped it, and no todo still "in progress".
    let stored = f
        .store
        .executions()
        .get(outcome.execution.id)
        .await
        .unwrap();
    let ending = stored.ending.expect("the ending is recorded");
    assert_eq!(ending.by, decima_store::EndedBy::Stop);
    assert_eq!(ending.step, 2, "cancelled during its second step");
    assert_eq!(ending.after_seq, live.last().unwrap().seq);
    assert_eq!(
        stored.error.as_deref(),
        Some("stopped by the analyst at step 2")
    );
    let plan = f.store.todos().plan(outcome.execution.id).await.unwrap();
    assert_eq!(plan[0].status, TodoStatus::Cancelled);
    assert_eq!(
        plan[0].reason.as_deref(),
        Some("stopped by the analyst at step 2")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_dropped_mid_call_is_interrupted_and_resume_never_runs_the_call_again() {
    let f = Fixture::new().await;
    f.call(
        "shell",
        json!({"command": "echo ran >> effects; sleep 600"}),
    );
    let ws = f.workspace();
    let session = f.session(&StopOnFailure);
    let run = agent::run(
        &session,
        RunRequest {
            workspace: Some(ws.clone()),
            task: "Do it once".into(),
            ..RunRequest::default()
        },
    );
    // The process "dies" while the command runs: the future is dropped, nothing is finished.
    let dropped = tokio::time::timeout(Duration::from_secs(2), run).await;
    assert!(dropped.is_err());
    let execution = f.store.executions().list_recent(1).await.unwrap().remove(0);
    assert_eq!(execution.status, ExecutionStatus::Running);
    let marked = agent::interrupt_orphans(&f.store, f.dir.path())
        .await
        .unwrap();
    assert_eq!(marked, vec![execution.id]);

    f.say("It may or may not have run; I checked.");
    let done = agent::resume(&f.session(&StopOnFailure), execution.id)
        .await
        .unwrap();
    assert_eq!(done.execution.status, ExecutionStatus::Succeeded);
    assert_eq!(
        std::fs::read_to_string(ws.join("effects")).unwrap(),
        "ran\n"
    );
    let result = f.last_tool_result(1);
    assert!(
        result.contains("[interrupted]") && result.contains("effect is unknown"),
        "{result}"
    );
    // A second resume of a finished run is refused.
    assert!(
        agent::resume(&f.session(&StopOnFailure), execution.id)
            .await
            .is_err()
    );
}
