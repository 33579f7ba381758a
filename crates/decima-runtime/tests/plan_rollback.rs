//! Rolling an ended run back to the start of one of its todos, from the Plan panel: a preview
//! that names what it undoes, the rollback itself (files, plan, messages), and an Undo that
//! puts everything back, refused once the conversation moved on.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Fixture, todos};
use decima_runtime::agent::{RunOptions, plan_rollback};
use decima_store::{ExecutionStatus, TodoStatus};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ended_run_rolls_back_to_a_todos_start_and_the_undo_puts_it_back() {
    let f = Fixture::new().await;
    f.call(
        "todo_write",
        todos(&[("load the data", "in_progress"), ("chart it", "pending")]),
    );
    f.call("shell", json!({"command": "printf 'a\\n1\\n' > data.csv"}));
    f.call(
        "todo_write",
        todos(&[("load the data", "completed"), ("chart it", "in_progress")]),
    );
    f.call(
        "shell",
        json!({"command": "printf 'png' > chart.png && printf 'b\\n2\\n' > data.csv"}),
    );
    f.call(
        "todo_write",
        todos(&[("load the data", "completed"), ("chart it", "completed")]),
    );
    f.say("Charted.");
    let outcome = f.run("Load and chart", RunOptions::default()).await;
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    let run = outcome.execution.id;
    let conversation = outcome.execution.conversation_id;
    let plan = f.store.todos().plan(run).await.unwrap();
    let chart = plan
        .iter()
        .find(|t| t.title == "chart it")
        .unwrap()
        .id
        .clone();
    let ws = f.workspace();
    let messages_before = f
        .messages_of(&outcome)
        .await
        .iter()
        .filter(|m| m.deleted_at.is_none())
        .count();

    // The preview names what the rollback would undo, and changes nothing.
    let preview = plan_rollback::preview(&f.store, f.dir.path(), run, &chart)
        .await
        .unwrap();
    assert_eq!(preview.added, ["chart.png"]);
    assert_eq!(preview.changed, ["data.csv"]);
    assert!(preview.messages_since > 0);
    assert!(ws.join("chart.png").is_file());

    let done = plan_rollback::roll_back(&f.store, f.dir.path(), run, &chart)
        .await
        .unwrap();
    assert!(!ws.join("chart.png").exists(), "the todo's file is gone");
    assert_eq!(
        std::fs::read_to_string(ws.join("data.csv")).unwrap(),
        "a\n1\n"
    );
    assert!(done.rolled.messages_removed > 0);
    let rolled_plan = f.store.todos().plan(run).await.unwrap();
    let status = |plan: &[decima_store::Todo], title: &str| {
        plan.iter().find(|t| t.title == title).unwrap().status
    };
    assert_eq!(status(&rolled_plan, "chart it"), TodoStatus::InProgress);
    assert_eq!(status(&rolled_plan, "load the data"), TodoStatus::Completed);

    // Undo: the files, the plan and the messages come back.
    let restored = plan_rollback::undo(&f.store, f.dir.path(), run, done.undo)
        .await
        .unwrap();
    assert_eq!(restored, done.rolled.messages_removed);
    assert_eq!(std::fs::read(ws.join("chart.png")).unwrap(), b"png");
    assert_eq!(
        std::fs::read_to_string(ws.join("data.csv")).unwrap(),
        "b\n2\n"
    );
    let back = f.store.todos().plan(run).await.unwrap();
    assert_eq!(status(&back, "chart it"), TodoStatus::Completed);
    let live = f
        .store
        .messages()
        .all(conversation)
        .await
        .unwrap()
        .iter()
        .filter(|m| m.deleted_at.is_none())
        .count();
    assert_eq!(live, messages_before);
    let twice = plan_rollback::undo(&f.store, f.dir.path(), run, done.undo)
        .await
        .unwrap_err();
    assert!(twice.to_string().contains("undone already"), "{twice}");
    // However many events the run recorded between the rollback and its undo.
    let far = plan_rollback::roll_back(&f.store, f.dir.path(), run, &chart)
        .await
        .unwrap();
    for i in 0..1_100 {
        f.store
            .events()
            .append(
                Some(run),
                Some(conversation),
                "test.filler",
                &serde_json::json!({ "i": i }),
            )
            .await
            .unwrap();
    }
    plan_rollback::undo(&f.store, f.dir.path(), run, far.undo)
        .await
        .unwrap();
    let twice = plan_rollback::undo(&f.store, f.dir.path(), run, far.undo)
        .await
        .unwrap_err();
    assert!(twice.to_string().contains("undone already"), "{twice}");

    // Once the conversation moved on, a rollback's undo is refused and nothing changes.
    let again = plan_rollback::roll_back(&f.store, f.dir.path(), run, &chart)
        .await
        .unwrap();
    f.say("Next.");
    f.run_in("local", Some(conversation), "Go on").await;
    let late = plan_rollback::undo(&f.store, f.dir.path(), run, again.undo)
        .await
        .unwrap_err();
    assert!(late.to_string().contains("moved on"), "{late}");
    assert!(!ws.join("chart.png").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_todo_without_a_snapshot_or_a_run_awaiting_a_choice_is_refused_with_a_reason() {
    let f = Fixture::new().await;
    f.call("todo_write", todos(&[("load", "in_progress")]));
    f.say("Done.");
    let outcome = f.run("Load", RunOptions::default()).await;
    let missing =
        plan_rollback::preview(&f.store, f.dir.path(), outcome.execution.id, "no-such-todo")
            .await
            .unwrap_err();
    assert!(missing.to_string().contains("no snapshot"), "{missing}");
    // A run that waits on a failure is rolled back from its recovery panel.
    f.call("todo_write", todos(&[("load", "in_progress")]));
    f.call(
        "todo_write",
        json!({"todos": [{"title": "load", "status": "failed", "reason": "locked"}]}),
    );
    f.say("Done anyway.");
    let waiting = f.run("Load again", RunOptions::default()).await;
    assert_eq!(waiting.execution.status, ExecutionStatus::AwaitingUser);
    let refused = plan_rollback::preview(&f.store, f.dir.path(), waiting.execution.id, "x")
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("recovery panel"), "{refused}");
}
