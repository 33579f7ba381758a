//! Stop leaves a trace, in the real app: a run sent with Enter and stopped during a long
//! command ends with a row in the conversation ("Stopped by you at step 2") and its todo in
//! progress shows cancelled, in the window and in the SQLite file.
//!
//! Needs a display (scripts/test.sh runs it under `xvfb-run -a`); without one it fails.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use decima_core::{NewMessage, Role};
use decima_store::Store;
use decima_testkit::{LlmServer, Reply, ScriptedToolCall, Turn};
use fantoccini::Locator;
use serde_json::json;
use support::{Driver, click, connect, count, shot, text_of, wait_for_text, wait_until};

fn call(id: &str, name: &str, arguments: serde_json::Value) -> Reply {
    Reply::Stream(Turn {
        tool_calls: vec![ScriptedToolCall {
            id: id.into(),
            name: name.into(),
            argument_chunks: vec![arguments.to_string()],
        }],
        ..Turn::default()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_leaves_a_row_in_the_conversation_and_the_todo_cancelled() {
    let _alone = support::one_at_a_time().await;
    let data = tempfile::tempdir().unwrap();
    let db = data.path().join("decima.db");
    let server = LlmServer::start().await;
    server.enqueue(call(
        "call_plan",
        "todo_write",
        json!({"todos": [{"title": "Load the ledger", "status": "in_progress"}]}),
    ));
    server.enqueue(call(
        "call_wait",
        "shell",
        json!({"command": "echo started > started; sleep 600"}),
    ));
    {
        let store = Store::open_in_dir(data.path(), decima_llm::tokens::store_counter())
            .await
            .unwrap();
        store
            .providers()
            .create(support::provider("local", server.openai_base_url(), 32_000))
            .await
            .unwrap();
        store
            .conversations()
            .import(
                "Ledger load",
                None,
                &[NewMessage::new(Role::User, "The ledger is in /data.")],
            )
            .await
            .unwrap();
        store.close().await;
    }

    let driver = Driver::start();
    let client = connect(&driver, data.path()).await;
    click(&client, "[data-testid=conversation-title-button]").await;
    wait_for_text(&client, "[data-testid=message]", "The ledger is in /data.").await;
    let input = client
        .find(Locator::Css("[data-testid=composer-input]"))
        .await
        .unwrap();
    // Enter sends (U+E007 is WebDriver's Enter key), as in the chat apps analysts use.
    input.send_keys("Load the ledger\u{E007}").await.unwrap();
    // The long command is running: the plan shows the todo in progress.
    wait_for_text(&client, "[data-testid=todo-panel]", "Load the ledger").await;
    wait_until(&client, "the long command never started", || async {
        count(&client, "[data-testid=stop]").await == 1
            && std::fs::read_dir(data.path())
                .map(|dirs| dirs.flatten().any(|d| walk_has(&d.path(), "started", 4)))
                .unwrap_or(false)
    })
    .await;
    click(&client, "[data-testid=stop]").await;

    let row = wait_for_text(&client, "[data-testid=run-ended]", "Stopped by you at step").await;
    let said = row.prop("textContent").await.unwrap().unwrap_or_default();
    assert!(said.contains("Stopped by you at step 2"), "{said}");
    assert_eq!(
        support::attr(&client, "[data-testid=run-ended]", "data-ended-by")
            .await
            .as_deref(),
        Some("stop")
    );
    wait_until(&client, "the todo was not shown cancelled", || async {
        text_of(&client, "[data-testid=todo-panel]")
            .await
            .contains("cancelled")
    })
    .await;
    // The stored reason is the runtime's record; the plan words it as the window does.
    wait_until(&client, "the cancelled todo did not say why", || async {
        text_of(&client, "[data-testid=todo-panel]")
            .await
            .contains("Stopped by you at step 2")
    })
    .await;
    shot(&client, "stop-row.png").await;
    let todo: Vec<(String, String)> = support::rows(
        &db,
        "SELECT status, COALESCE(reason, '') FROM todos WHERE title = 'Load the ledger'",
    )
    .await;
    assert_eq!(
        todo,
        [(
            "cancelled".to_owned(),
            "stopped by the analyst at step 2".to_owned()
        )]
    );
    let ended: Vec<(String, String)> = support::rows(
        &db,
        "SELECT status, ended_by FROM executions WHERE task = 'Load the ledger'",
    )
    .await;
    assert_eq!(ended, [("cancelled".to_owned(), "stop".to_owned())]);
    client.close().await.unwrap();
}

/// Whether a file named `name` lies under `dir`, at most `depth` folders down.
fn walk_has(dir: &std::path::Path, name: &str, depth: u32) -> bool {
    if dir.file_name().is_some_and(|n| n == name) {
        return true;
    }
    if depth == 0 || !dir.is_dir() {
        return false;
    }
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .any(|e| walk_has(&e.path(), name, depth - 1))
        })
        .unwrap_or(false)
}
