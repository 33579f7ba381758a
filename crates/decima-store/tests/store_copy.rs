//! `Store::copy_to`: a local SQLite store moved into a shared PostgreSQL one. A store with a
//! bit of everything (a compressed conversation with tool calls, pins and a rollback, a run with
//! its plan, steps, model calls, snapshots' records and events, a subagent's conversation and
//! run) is copied; every table holds the same rows on both sides, the message checksums agree,
//! the target reads back what the source holds, and a second copy changes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::Arc;

use decima_core::context::compress::PlanInput;
use decima_core::context::{CompressionLevel, HistoryBudget, Strategy, pinned_units, plan};
use decima_core::{EstimateCounter, NewMessage, Role, ToolCall};
use decima_store::{
    CallUsage, CompactionTrigger, NewExecution, NewProvider, NewSnapshot, SandboxKind,
    SnapshotReason, StepKind, Store, StoreLocation, TodoInput, TodoStatus,
};
use decima_testkit::ConversationBuilder;

/// Every table a copy fills, with its rows counted on each side.
const TABLES: &[&str] = &[
    "presets",
    "providers",
    "app_settings",
    "token_calibrations",
    "conversations",
    "executions",
    "compactions",
    "summaries",
    "messages",
    "todos",
    "snapshots",
    "steps",
    "model_calls",
    "events",
];

async fn counts(store: &Store) -> Vec<(&'static str, i64)> {
    let mut out = Vec::new();
    for table in TABLES {
        let sql: &'static str = Box::leak(format!("SELECT COUNT(*) FROM {table}").into_boxed_str());
        out.push((*table, common::scalar(store, sql, &[]).await));
    }
    out
}

async fn filled_sqlite() -> (tempfile::TempDir, Store) {
    let (dir, store) = common::temp_sqlite_store().await;
    store
        .app_settings()
        .put("run", &serde_json::json!({"provider": "team"}))
        .await
        .unwrap();
    store.calibrations().save("gpt-4o", 1.07, 3).await.unwrap();
    let provider = store
        .providers()
        .create(NewProvider {
            name: "team".into(),
            kind: "openai".into(),
            preset: None,
            base_url: "https://llm.team.example/v1".into(),
            model: "gpt-4o".into(),
            context_window: 128_000,
            settings: serde_json::json!({"warn_at": 0.7}),
        })
        .await
        .unwrap();
    let preset = store
        .presets()
        .create(
            "analyst",
            "native",
            None,
            &serde_json::json!({"anchors": []}),
        )
        .await
        .unwrap();

    let history = ConversationBuilder::new(11, 120).build().messages;
    let c = store
        .conversations()
        .import("Q3 churn", Some(&preset.id), &history)
        .await
        .unwrap();
    store.messages().set_pinned(c.id, 3, true).await.unwrap();
    let calls = NewMessage {
        tool_calls: vec![ToolCall {
            id: "call_1".into(),
            name: "shell".into(),
            arguments: "{\"cmd\": \"wc -l data.csv\",  \"spacing\":  \"kept\"}".into(),
            signature: None,
        }],
        ..NewMessage::new(Role::Assistant, "counting")
    };
    store.messages().append(c.id, calls).await.unwrap();
    let result = NewMessage {
        tool_call_id: Some("call_1".into()),
        ..NewMessage::new(Role::Tool, "1204 data.csv\n中文 ✓")
    };
    store.messages().append(c.id, result).await.unwrap();
    let gone = store
        .messages()
        .append(c.id, NewMessage::new(Role::User, "rolled back"))
        .await
        .unwrap();
    store
        .messages()
        .soft_delete_after(c.id, gone.seq - 1)
        .await
        .unwrap();

    let messages = store.messages().all(c.id).await.unwrap();
    let pinned = pinned_units(&messages);
    let compaction = plan(PlanInput {
        messages: &messages,
        pinned: &pinned,
        summaries: &[],
        level: CompressionLevel::Standard,
        strategy: Strategy::Extract,
        budget: HistoryBudget::new(2_000),
        counter: &EstimateCounter,
        written: None,
    })
    .unwrap();
    store
        .compactions()
        .apply(c.id, &compaction, CompactionTrigger::Manual)
        .await
        .unwrap();

    let run = store
        .executions()
        .create(&NewExecution {
            conversation_id: c.id,
            parent_id: None,
            depth: 0,
            task: "find the churn driver".into(),
            sandbox: SandboxKind::Host,
            provider_id: Some(provider.id.clone()),
            workspace: None,
            options: serde_json::json!({}),
        })
        .await
        .unwrap();
    let todos = store
        .todos()
        .replace_plan(
            run.id,
            &[TodoInput {
                id: None,
                title: "load the data".into(),
                status: TodoStatus::InProgress,
                phase: None,
                checkpoint: true,
                pinned: true,
                reason: None,
            }],
        )
        .await
        .unwrap();
    store
        .snapshots()
        .record(&NewSnapshot {
            execution_id: run.id,
            todo_id: Some(todos[0].id.clone()),
            reason: SnapshotReason::TodoStart,
            message_seq: 5,
            todo_state: serde_json::json!([]),
            workspace_archive: None,
        })
        .await
        .unwrap();
    store
        .steps()
        .record(run.id, StepKind::Analysis, "read the file")
        .await
        .unwrap();
    store
        .executions()
        .add_model_call(
            run.id,
            Some(CallUsage {
                tokens_in: 1_200,
                tokens_out: 80,
                cache_read_tokens: 1_000,
                cache_write_tokens: 0,
            }),
            Some(420),
        )
        .await
        .unwrap();
    store
        .events()
        .append(
            Some(run.id),
            Some(c.id),
            "run.started",
            &serde_json::json!({"n": 1}),
        )
        .await
        .unwrap();

    // A subagent: its own conversation, its run a child of the first.
    let child = store
        .conversations()
        .create("subagent", None)
        .await
        .unwrap();
    store
        .messages()
        .append(child.id, NewMessage::new(Role::User, "look it up"))
        .await
        .unwrap();
    store
        .executions()
        .create(&NewExecution {
            conversation_id: child.id,
            parent_id: Some(run.id),
            depth: 1,
            task: "look it up".into(),
            sandbox: SandboxKind::Host,
            provider_id: None,
            workspace: None,
            options: serde_json::json!({}),
        })
        .await
        .unwrap();
    (dir, store)
}

#[tokio::test]
async fn a_local_store_moves_into_a_shared_one_whole_and_a_second_copy_changes_nothing() {
    let (_dir, source) = filled_sqlite().await;
    let url = decima_testkit::postgres::fresh_database("store_copy").await;
    let location = StoreLocation::parse(&url).unwrap();
    Store::migrate(&location).await.unwrap();
    let target = Store::connect(&location, Arc::new(EstimateCounter))
        .await
        .unwrap();

    let report = source.copy_to(&target).await.unwrap();
    assert_eq!(report.conversations_copied, 2);
    assert_eq!(report.conversations_present, 0);
    assert!(report.source_messages > 120, "{report:?}");
    assert_eq!(report.source_messages, report.target_messages);
    assert_eq!(report.source_checksum, report.target_checksum);
    let before = counts(&source).await;
    assert_eq!(
        counts(&target).await,
        before,
        "every table holds the same rows"
    );
    assert!(
        before.iter().all(|(_, n)| *n > 0),
        "the fixture fills every table: {before:?}"
    );

    // What the target reads back is what the source holds.
    for c in source.conversations().list().await.unwrap() {
        let copied = target.conversations().get(c.id).await.unwrap();
        assert_eq!(copied, c, "counts, seqs and times as they were");
        assert_eq!(
            target.messages().all(c.id).await.unwrap(),
            source.messages().all(c.id).await.unwrap()
        );
        assert_eq!(
            target.compactions().live_state(c.id).await.unwrap(),
            source.compactions().live_state(c.id).await.unwrap()
        );
        for run in source
            .executions()
            .list_by_conversation(c.id)
            .await
            .unwrap()
        {
            assert_eq!(target.executions().get(run.id).await.unwrap(), run);
            assert_eq!(
                target.executions().model_calls(run.id).await.unwrap(),
                source.executions().model_calls(run.id).await.unwrap()
            );
        }
    }
    // The target takes new messages where the source left off.
    let first = &source.conversations().list().await.unwrap()[1];
    let next = target
        .messages()
        .append(
            first.id,
            NewMessage::new(Role::User, "continued on the team's store"),
        )
        .await
        .unwrap();
    let source_next = source
        .messages()
        .append(first.id, NewMessage::new(Role::User, "and locally"))
        .await
        .unwrap();
    assert_eq!(next.seq, source_next.seq);

    // A second run copies nothing and loses nothing.
    let again = source.copy_to(&target).await.unwrap();
    assert_eq!(again.conversations_copied, 0);
    assert_eq!(again.conversations_present, 2);
    assert!(again.rows.iter().all(|(_, n)| *n == 0), "{:?}", again.rows);
}
