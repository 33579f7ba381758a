//! A failure is a state the runtime reaches, not a transition it happens to see. Models that
//! behave unlike the happy path (one that insists a todo failed, one that repeats a successful
//! call, one that leaves a failed todo alone and answers) end in a rollback and a wait, well
//! before the step budget; the analyst is offered only what the failure allows, and may roll
//! back a failure that did not roll back on its own. Real SQLite file, real workspace, real
//! shell, the wire-level test server scripting the model.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Choices, Fixture, todos};
use decima_core::FailureClass;
use decima_runtime::RuntimeError;
use decima_runtime::agent::{self, FailureReport, RunOptions, StopOnFailure};
use decima_store::{ExecutionStatus, Resolution, TodoStatus};
use serde_json::json;

fn failed(title: &str, reason: &str) -> serde_json::Value {
    json!({"todos": [{"title": title, "status": "failed", "reason": reason}]})
}

fn offered(failure: &decima_store::Failure) -> Vec<Resolution> {
    FailureReport::of(failure).offered()
}

/// The model marks a todo failed, gets the automatic replan, and marks the same todo failed
/// again: no transition happens (it already is failed), but the state is the same failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_insists_a_todo_failed_is_rolled_back_and_waits() {
    let f = Fixture::new().await;
    let ws = f.workspace();
    f.call(
        "todo_write",
        todos(&[("export the figures", "in_progress")]),
    );
    f.call(
        "shell",
        json!({"command": "mkdir -p out && echo partial > out/figures.csv"}),
    );
    f.call(
        "todo_write",
        failed("export the figures", "the totals do not add up"),
    );
    // After the replan, the model sends the very same plan again.
    f.call(
        "todo_write",
        failed("export the figures", "the totals do not add up"),
    );
    // Whatever the model would do next must never be asked for.
    for _ in 0..10 {
        f.call("shell", json!({"command": "echo spinning"}));
    }
    let outcome = f.run("Export the figures", RunOptions::default()).await;

    assert_eq!(outcome.execution.status, ExecutionStatus::AwaitingUser);
    assert_eq!(
        f.server.requests().len(),
        4,
        "the run stopped at the state, not at the step budget"
    );
    let failures = f.store.failures().list(outcome.execution.id).await.unwrap();
    assert_eq!(failures.len(), 2);
    assert_eq!(failures[0].resolution, Some(Resolution::Replan));
    assert_eq!(
        failures[0].resolved_by,
        Some(decima_store::ResolvedBy::Automatic),
        "nobody chose the first replan: the run did"
    );
    let waiting = outcome.waiting_on.unwrap();
    assert_eq!(waiting.id, failures[1].id);
    assert_eq!(waiting.details["trigger"], "still_failed");
    assert_eq!(waiting.class, FailureClass::Logic);
    assert!(
        waiting.message.contains("export the figures"),
        "{}",
        waiting.message
    );
    // Rolled back: the file the failed todo wrote is gone, the plan is as it started.
    assert!(
        !ws.join("out/figures.csv").exists(),
        "the workspace kept the todo's file"
    );
    assert!(waiting.rolled_back["files_removed"].as_u64().unwrap() >= 1);
    let plan = f.store.todos().plan(outcome.execution.id).await.unwrap();
    assert_eq!(plan[0].status, TodoStatus::InProgress);
    // The replan told the model what a failed todo must become.
    assert!(
        f.request_text(3).contains("must not stay failed"),
        "{}",
        f.request_text(3)
    );
    assert!(
        !offered(&waiting).contains(&Resolution::Rollback),
        "already rolled back"
    );
}

/// After the replan the model does something else and leaves the todo failed, then answers as
/// if it were done: the run does not succeed over a failed todo.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_todo_left_alone_after_the_replan_ends_it_even_when_the_model_answers() {
    let f = Fixture::new().await;
    f.call(
        "todo_write",
        todos(&[("load the data", "in_progress"), ("chart", "pending")]),
    );
    f.call(
        "todo_write",
        json!({"todos": [
            {"title": "load the data", "status": "failed", "reason": "the file is locked"},
            {"title": "chart", "status": "pending"}
        ]}),
    );
    f.say("All done, here is the chart.");
    let outcome = f.run("Load and chart", RunOptions::default()).await;
    assert_eq!(outcome.execution.status, ExecutionStatus::AwaitingUser);
    assert_eq!(outcome.answer, None);
    let waiting = outcome.waiting_on.unwrap();
    assert_eq!(waiting.details["trigger"], "still_failed");
    assert!(
        waiting.message.contains("the file is locked"),
        "{}",
        waiting.message
    );
    let stored = f
        .store
        .executions()
        .get(outcome.execution.id)
        .await
        .unwrap();
    assert_eq!(
        stored.result, None,
        "no answer was stored over a failed todo"
    );
}

/// A replan that does take goes on: the failed todo is set back to pending and then done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replan_that_takes_goes_on_to_the_end() {
    let f = Fixture::new().await;
    f.call("todo_write", todos(&[("fit the model", "in_progress")]));
    f.call("todo_write", failed("fit the model", "does not converge"));
    f.call(
        "todo_write",
        todos(&[
            ("fit the model", "pending"),
            ("fit a simpler model", "in_progress"),
        ]),
    );
    f.call(
        "todo_write",
        todos(&[
            ("fit the model", "skipped"),
            ("fit a simpler model", "completed"),
        ]),
    );
    f.say("Fitted the simpler model.");
    let outcome = f.run("Fit a model", RunOptions::default()).await;
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    let failures = f.store.failures().list(outcome.execution.id).await.unwrap();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].resolution, Some(Resolution::Replan));
}

/// The same successful call with the same result three times, nothing else in between, is a
/// stuck loop: no automatic replan, a rollback and a wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_successful_call_repeated_unchanged_is_a_stuck_loop_that_rolls_back() {
    let f = Fixture::new().await;
    let ws = f.workspace();
    f.call("todo_write", todos(&[("count the rows", "in_progress")]));
    f.call("shell", json!({"command": "printf 'a\\nb\\n' > rows.txt"}));
    for _ in 0..3 {
        f.call("shell", json!({"command": "wc -l rows.txt"}));
    }
    for _ in 0..5 {
        f.call("shell", json!({"command": "echo spinning"}));
    }
    let outcome = f.run("Count the rows", RunOptions::default()).await;
    assert_eq!(outcome.execution.status, ExecutionStatus::AwaitingUser);
    assert_eq!(f.server.requests().len(), 5);
    let failures = f.store.failures().list(outcome.execution.id).await.unwrap();
    assert_eq!(failures.len(), 1, "a stuck loop gets no automatic replan");
    let waiting = outcome.waiting_on.unwrap();
    assert_eq!(waiting.details["trigger"], "stuck_loop");
    assert!(waiting.message.contains("unchanged"), "{}", waiting.message);
    assert!(
        !ws.join("rows.txt").exists(),
        "rolled back to the todo's start"
    );
    assert_eq!(
        offered(&waiting),
        [Resolution::Replan, Resolution::Skip, Resolution::Abort]
    );
}

/// An unchanged `todo_write`, sent three times in a row, is a loop like any other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unchanged_plan_sent_three_times_is_a_stuck_loop() {
    let f = Fixture::new().await;
    f.call(
        "todo_write",
        todos(&[("plan", "pending"), ("work", "pending")]),
    );
    for _ in 0..3 {
        f.call(
            "todo_write",
            todos(&[("plan", "in_progress"), ("work", "pending")]),
        );
    }
    f.say("never reached");
    let outcome = f.run("Plan and work", RunOptions::default()).await;
    assert_eq!(outcome.execution.status, ExecutionStatus::AwaitingUser);
    assert_eq!(f.server.requests().len(), 4);
    let waiting = outcome.waiting_on.unwrap();
    assert_eq!(waiting.details["trigger"], "stuck_loop");
    assert_eq!(waiting.details["call"]["name"], "todo_write");
}

/// A poll whose answer changes is progress, not a loop; neither is the same call with other
/// calls in between.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poll_whose_answer_changes_is_not_a_stuck_loop() {
    let f = Fixture::new().await;
    for _ in 0..4 {
        f.call(
            "shell",
            json!({"command": "echo x >> log.txt && wc -l < log.txt"}),
        );
    }
    for _ in 0..2 {
        f.call("shell", json!({"command": "echo same"}));
        f.call("shell", json!({"command": "true"}));
    }
    f.say("The log grew to four lines.");
    let outcome = f.run("Watch the log", RunOptions::default()).await;
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    assert!(
        f.store
            .failures()
            .list(outcome.execution.id)
            .await
            .unwrap()
            .is_empty()
    );
}

/// A step-budget failure rolls nothing back: its report says what the todo changed, offers a
/// rollback, and refuses any choice it does not offer, everywhere, leaving it unresolved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_budget_failure_reports_its_changes_offers_rollback_and_refuses_skip() {
    let f = Fixture::new().await;
    let ws = f.workspace();
    std::fs::write(ws.join("input.csv"), "a,b\n1,2\n").unwrap();
    std::fs::write(ws.join("stale.txt"), "old").unwrap();
    f.call("todo_write", todos(&[("build the report", "in_progress")]));
    f.call(
        "shell",
        json!({"command": "mkdir -p out && echo r > out/report.md && echo 3,4 >> input.csv && rm stale.txt"}),
    );
    f.call("shell", json!({"command": "echo still working"}));
    let outcome = f
        .run(
            "Build the report",
            RunOptions {
                max_steps: 3,
                ..RunOptions::default()
            },
        )
        .await;
    assert_eq!(outcome.execution.status, ExecutionStatus::AwaitingUser);
    let waiting = outcome.waiting_on.unwrap();
    assert_eq!(waiting.details["trigger"], "step_budget");
    assert_eq!(
        waiting.rolled_back,
        json!({}),
        "the budget rolls nothing back by itself"
    );
    assert_eq!(
        offered(&waiting),
        [
            Resolution::Retry,
            Resolution::Replan,
            Resolution::Rollback,
            Resolution::Abort
        ]
    );
    let report = FailureReport::of(&waiting);
    let changes = report.details.changes.clone().unwrap();
    assert_eq!(changes.added, ["out", "out/report.md"]);
    assert_eq!(changes.changed, ["input.csv"]);
    assert_eq!(changes.removed, ["stale.txt"]);
    assert_eq!(changes.counts, [2, 1, 1]);
    assert!(changes.messages_since >= 4, "{}", changes.messages_since);

    // Skip is not offered: refused by recover and by the check the faces use, nothing changes.
    let refused = agent::recover(
        &f.session(&StopOnFailure),
        outcome.execution.id,
        Resolution::Skip,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(refused, RuntimeError::ChoiceNotOffered(_)),
        "{refused}"
    );
    let text = refused.to_string();
    assert!(
        text.contains("skip is not a choice") && text.contains("retry, replan, rollback, abort"),
        "{text}"
    );
    assert!(
        agent::check_choice(&f.store, outcome.execution.id, Resolution::Skip)
            .await
            .is_err()
    );
    let still = f.store.failures().get(&waiting.id).await.unwrap();
    assert_eq!(still.resolution, None);
    assert_eq!(
        f.store
            .executions()
            .get(outcome.execution.id)
            .await
            .unwrap()
            .status,
        ExecutionStatus::AwaitingUser
    );
    assert!(
        ws.join("out/report.md").exists(),
        "a refused choice touched the workspace"
    );

    // Rollback: the workspace, plan and history go back, and a new failure asks again,
    // without rollback now.
    let after = agent::recover(
        &f.session(&StopOnFailure),
        outcome.execution.id,
        Resolution::Rollback,
    )
    .await
    .unwrap();
    assert_eq!(after.execution.status, ExecutionStatus::AwaitingUser);
    assert!(!ws.join("out").exists());
    assert!(ws.join("stale.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join("input.csv")).unwrap(),
        "a,b\n1,2\n"
    );
    let next = after.waiting_on.unwrap();
    assert_ne!(next.id, waiting.id);
    assert_eq!(next.details["trigger"], "step_budget");
    assert!(next.rolled_back["files_removed"].as_u64().unwrap() >= 1);
    assert!(!offered(&next).contains(&Resolution::Rollback));
    let failures = f.store.failures().list(outcome.execution.id).await.unwrap();
    assert_eq!(failures[0].resolution, Some(Resolution::Rollback));

    // Then abort, which every failure offers.
    let done = agent::recover(
        &f.session(&StopOnFailure),
        outcome.execution.id,
        Resolution::Abort,
    )
    .await
    .unwrap();
    assert_eq!(done.execution.status, ExecutionStatus::Cancelled);
}

/// A choice source that answers with a choice the failure does not offer is refused: the run
/// waits, the failure unresolved, as if nobody had answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_choice_source_answering_an_unoffered_choice_leaves_the_run_waiting() {
    let f = Fixture::new().await;
    f.call("shell", json!({"command": "echo one"}));
    f.call("shell", json!({"command": "echo two"}));
    let choices = Choices(std::sync::Mutex::new(vec![Resolution::Skip]));
    let outcome = agent::run(
        &f.session(&choices),
        agent::RunRequest {
            workspace: Some(f.workspace()),
            task: "Echo".into(),
            options: RunOptions {
                max_steps: 1,
                tenth_man: decima_runtime::review::TenthManMode::Off,
                ..RunOptions::default()
            },
            ..agent::RunRequest::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(outcome.execution.status, ExecutionStatus::AwaitingUser);
    let waiting = outcome.waiting_on.unwrap();
    assert_eq!(waiting.resolution, None);
    // No todo, no snapshot: skip and rollback have nothing to act on.
    assert_eq!(
        offered(&waiting),
        [Resolution::Retry, Resolution::Replan, Resolution::Abort]
    );
}

/// llama.cpp's refusal of a prompt longer than its window, byte for byte as its server sends it
/// (read from a real server; it refuses even with context shift on, and never truncates).
fn llamacpp_refusal(sent: u32, n_ctx: u32) -> decima_testkit::Reply {
    decima_testkit::Reply::Status {
        status: 400,
        headers: vec![],
        body: format!(
            r#"{{"error":{{"code":400,"message":"request ({sent} tokens) exceeds the available context size ({n_ctx} tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":{sent},"n_ctx":{n_ctx}}}}}"#
        ),
    }
}

/// A request the server refuses for its length, still refused after Decima fitted itself to
/// the window the refusal names: the failure offers to use the server's window and compress
/// (not a retry, which would be refused again), says the number, and that choice fits the run,
/// compresses deeply and goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overflow_the_server_refuses_twice_offers_its_window_and_compress() {
    let f = Fixture::new().await;
    f.call(
        "todo_write",
        todos(&[("summarise the ledger", "in_progress")]),
    );
    for i in 0..6 {
        f.call(
            "shell",
            json!({"command": format!("seq 1 400 | sed 's/^/ledger line {i} /'")}),
        );
    }
    f.server.enqueue(llamacpp_refusal(9_120, 8_192));
    f.server.enqueue(llamacpp_refusal(8_410, 8_192));
    let outcome = f.run("Summarise the ledger", RunOptions::default()).await;

    assert_eq!(outcome.execution.status, ExecutionStatus::AwaitingUser);
    let waiting = outcome.waiting_on.unwrap();
    assert_eq!(waiting.class, FailureClass::ContextOverflow);
    assert_eq!(
        offered(&waiting),
        [
            Resolution::Compress,
            Resolution::Replan,
            Resolution::Skip,
            Resolution::Rollback,
            Resolution::Abort
        ],
        "a retry of a refused request is not offered"
    );
    assert_eq!(
        FailureReport::of(&waiting).details.served_window,
        Some(8_192)
    );
    // The first refusal already taught Decima the window, stored with where it came from.
    let provider = f.store.providers().get_by_name("local").await.unwrap();
    assert_eq!(provider.context_window, 8_192);
    assert_eq!(provider.settings["window_source"], "served");
    let sent_before = f.server.requests().len();

    // Retry is refused: it is not among the choices.
    let refused = agent::recover(
        &f.session(&StopOnFailure),
        outcome.execution.id,
        Resolution::Retry,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(refused, RuntimeError::ChoiceNotOffered(_)),
        "{refused}"
    );
    assert_eq!(
        f.server.requests().len(),
        sent_before,
        "a refused choice sent a request"
    );

    f.call(
        "todo_write",
        todos(&[("summarise the ledger", "completed")]),
    );
    f.say("The ledger has 2,400 lines in six parts.");
    let done = agent::recover(
        &f.session(&StopOnFailure),
        outcome.execution.id,
        Resolution::Compress,
    )
    .await
    .unwrap();
    assert_eq!(done.execution.status, ExecutionStatus::Succeeded);
    let resolved = f.store.failures().get(&waiting.id).await.unwrap();
    assert_eq!(resolved.resolution, Some(Resolution::Compress));
    assert_eq!(
        resolved.resolved_by,
        Some(decima_store::ResolvedBy::Analyst)
    );

    // The conversation stands compressed deeply (by the first refusal's refit, or on the
    // analyst's word; what one did the other does not repeat, and the window is told so),
    // and every request after the choice was fitted to the server's window: its answer cap is
    // inside 8,192 and the oldest output is no longer sent verbatim.
    let compactions = f
        .store
        .compactions()
        .in_force(outcome.execution.conversation_id)
        .await
        .unwrap();
    assert!(
        compactions.iter().any(|(c, range)| c.level
            == decima_core::context::CompressionLevel::Deep
            && range.is_some_and(|(start, _)| start <= 2)),
        "{compactions:?}"
    );
    let manual = compactions
        .iter()
        .any(|(c, _)| c.trigger == decima_store::CompactionTrigger::Manual);
    let said = f.events.take().iter().any(|e| {
        matches!(e, decima_runtime::Event::Warning { message }
            if message.contains("nothing more of the conversation could be compressed")
                && message.contains("8,192"))
    });
    assert!(
        manual != said,
        "compressed: {manual}, said it could not: {said}"
    );
    let requests = f.server.requests();
    let after: Vec<_> = requests[sent_before..]
        .iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .collect();
    assert!(!after.is_empty());
    for request in after {
        let body = request.json.as_ref().unwrap();
        let cap = body["max_tokens"].as_u64().unwrap();
        assert!(
            cap <= u64::from(decima_runtime::settings::default_output_reserve(8_192)),
            "{cap}"
        );
        assert!(
            !body.to_string().contains("ledger line 0 1\\n"),
            "the oldest tool output is still sent verbatim after the deep compression"
        );
    }
}

/// What the analyst types while a failure waits goes with the choice: it is stored as their
/// message after the failure (and after a rollback, which would otherwise undo it), the model
/// reads it in the next request, and guidance too long to be a message is refused before
/// anything changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guidance_given_with_a_choice_reaches_the_model_and_the_transcript() {
    let f = Fixture::new().await;
    f.call("todo_write", todos(&[("total the ledger", "in_progress")]));
    f.call(
        "shell",
        json!({"command": "mkdir -p out && echo partial > out/total.csv"}),
    );
    f.call("shell", json!({"command": "echo still working"}));
    let outcome = f
        .run(
            "Total the ledger",
            RunOptions {
                max_steps: 3,
                ..RunOptions::default()
            },
        )
        .await;
    assert_eq!(outcome.execution.status, ExecutionStatus::AwaitingUser);

    let too_long = "x".repeat(agent::MAX_GUIDANCE_CHARS + 1);
    let refused = agent::Choice::new(Resolution::Replan, Some(&too_long)).unwrap_err();
    assert!(refused.to_string().contains("at most 8,000"), "{refused}");

    // Roll back with guidance: the rollback undoes the todo's messages, not the guidance.
    let after = agent::recover(
        &f.session(&StopOnFailure),
        outcome.execution.id,
        agent::Choice::new(Resolution::Rollback, Some("the ledger is ledger_q3.csv")).unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(after.execution.status, ExecutionStatus::AwaitingUser);
    let messages = f.messages_of(&outcome).await;
    let last = messages.last().unwrap();
    assert_eq!(last.role, decima_core::Role::User);
    assert_eq!(last.content, "the ledger is ledger_q3.csv");

    f.call("todo_write", todos(&[("total the ledger", "completed")]));
    f.say("Totalled from ledger_q3.csv.");
    let sent_before = f.server.requests().len();
    let done = agent::recover(
        &f.session(&StopOnFailure),
        outcome.execution.id,
        agent::Choice::new(Resolution::Replan, Some("  and round to cents  ")).unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(done.execution.status, ExecutionStatus::Succeeded);
    let next = f.request_text(sent_before);
    assert!(next.contains("the ledger is ledger_q3.csv"), "{next}");
    assert!(next.contains("and round to cents"), "{next}");
    assert!(next.contains("guidance with this choice"), "{next}");
    let guidance: Vec<String> = f
        .messages_of(&outcome)
        .await
        .into_iter()
        .filter(|m| m.role == decima_core::Role::User)
        .map(|m| m.content)
        .collect();
    assert_eq!(
        guidance[1..],
        ["the ledger is ledger_q3.csv", "and round to cents"],
        "{guidance:?}"
    );
}
