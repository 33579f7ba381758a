//! One writer per conversation, enforced by the store on a real SQLite file: at most one active
//! execution (running or awaiting the analyst), chat turns and compressions claimed, and
//! everything else refused before it writes, across two handles on one file as two processes
//! would hold them. A database an older Decima left with two active runs in one conversation
//! keeps the newest active.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use decima_core::{ConversationId, ExecutionId};
use decima_store::{
    Busy, ClaimKind, ExecutionStatus, Holder, NewExecution, SandboxKind, Store, StoreError,
};

const MINUTE: Duration = Duration::from_secs(60);

fn run_in(conversation: ConversationId, task: &str) -> NewExecution {
    NewExecution {
        conversation_id: conversation,
        parent_id: None,
        depth: 0,
        task: task.into(),
        sandbox: SandboxKind::Host,
        provider_id: None,
        workspace: None,
        options: serde_json::json!({}),
    }
}

fn busy(result: Result<impl std::fmt::Debug, StoreError>) -> Busy {
    match result {
        Err(StoreError::Busy(busy)) => *busy,
        other => panic!("expected the conversation to be busy, got {other:?}"),
    }
}

async fn rows(store: &Store, sql: &'static str) -> i64 {
    common::scalar(store, sql, &[]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_eight_runs_started_at_once_from_two_handles_exactly_one_starts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("decima.db");
    let a = common::open(&path).await;
    let b = common::open(&path).await;
    let conversation = a.conversations().create("busy", None).await.unwrap().id;
    let mut tasks = Vec::new();
    for i in 0..8 {
        let store = if i % 2 == 0 { a.clone() } else { b.clone() };
        tasks.push(tokio::spawn(async move {
            let id = ExecutionId::new();
            (
                id,
                store
                    .executions()
                    .start(id, &run_in(conversation, &format!("run {i}")))
                    .await,
            )
        }));
    }
    let mut started = Vec::new();
    let mut refused = Vec::new();
    for task in tasks {
        let (id, result) = task.await.unwrap();
        match result {
            Ok(execution) => {
                assert_eq!(execution.status, ExecutionStatus::Running);
                assert!(execution.started_at.is_some());
                started.push(id);
            }
            Err(e) => refused.push(busy(Err::<(), _>(e))),
        }
    }
    assert_eq!(
        started.len(),
        1,
        "exactly one run may hold the conversation"
    );
    for b in &refused {
        match &b.holder {
            Holder::Execution { id, status, .. } => {
                assert_eq!(*id, started[0]);
                assert_eq!(*status, ExecutionStatus::Running);
            }
            other => panic!("refused for {other:?}"),
        }
        assert!(b.to_string().contains(&started[0].to_string()));
    }
    // Nothing of the refused runs was stored.
    assert_eq!(rows(&a, "SELECT COUNT(*) FROM executions").await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_and_an_active_run_exclude_each_other_until_released_or_finished() {
    let (_dir, store) = common::temp_store().await;
    let conversation = store.conversations().create("c", None).await.unwrap().id;
    let other = store
        .conversations()
        .create("other", None)
        .await
        .unwrap()
        .id;
    let claims = store.claims();
    assert_eq!(claims.busy(conversation).await.unwrap(), None);

    let chat = claims
        .claim(conversation, ClaimKind::Chat, "process 1 on a", MINUTE)
        .await
        .unwrap();
    // A second claim, a run and a compression are refused; another conversation is free.
    let held = busy(
        claims
            .claim(
                conversation,
                ClaimKind::Compression,
                "process 2 on b",
                MINUTE,
            )
            .await,
    );
    assert!(
        matches!(&held.holder, Holder::Claim { kind: ClaimKind::Chat, owner, .. } if owner == "process 1 on a")
    );
    assert!(
        held.to_string().contains("chat turn by process 1 on a"),
        "{held}"
    );
    busy(
        store
            .executions()
            .start(ExecutionId::new(), &run_in(conversation, "t"))
            .await,
    );
    store
        .executions()
        .start(ExecutionId::new(), &run_in(other, "t"))
        .await
        .unwrap();
    assert!(claims.renew(&chat, MINUTE).await.unwrap());
    claims.release(&chat).await.unwrap();
    assert!(!claims.renew(&chat, MINUTE).await.unwrap(), "released");

    // A run now holds it, while running and while it waits for the analyst.
    let run = store
        .executions()
        .start(ExecutionId::new(), &run_in(conversation, "the run"))
        .await
        .unwrap();
    let held = busy(
        claims
            .claim(conversation, ClaimKind::Chat, "me", MINUTE)
            .await,
    );
    assert!(matches!(
        held.holder,
        Holder::Execution {
            status: ExecutionStatus::Running,
            ..
        }
    ));
    store
        .executions()
        .set_status(run.id, ExecutionStatus::AwaitingUser)
        .await
        .unwrap();
    let held = busy(
        claims
            .claim(conversation, ClaimKind::Chat, "me", MINUTE)
            .await,
    );
    assert!(matches!(
        held.holder,
        Holder::Execution {
            status: ExecutionStatus::AwaitingUser,
            ..
        }
    ));
    assert!(held.to_string().contains("waits for a choice"), "{held}");
    // Recovering it takes nothing new: it held the conversation already.
    store
        .executions()
        .set_status(run.id, ExecutionStatus::Running)
        .await
        .unwrap();
    store
        .executions()
        .finish(run.id, ExecutionStatus::Succeeded, Some("done"), None)
        .await
        .unwrap();
    let compression = claims
        .claim(conversation, ClaimKind::Compression, "me", MINUTE)
        .await
        .unwrap();
    claims.release(&compression).await.unwrap();
    assert_eq!(claims.busy(conversation).await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_run_resumes_only_while_nothing_else_holds_its_conversation() {
    let (_dir, store) = common::temp_store().await;
    let conversation = store.conversations().create("c", None).await.unwrap().id;
    let first = store
        .executions()
        .start(ExecutionId::new(), &run_in(conversation, "first"))
        .await
        .unwrap();
    assert!(
        store
            .executions()
            .interrupt_if_running(first.id)
            .await
            .unwrap()
    );
    // Interrupted is not active: a new run may start.
    let second = store
        .executions()
        .start(ExecutionId::new(), &run_in(conversation, "second"))
        .await
        .unwrap();
    let held = busy(
        store
            .executions()
            .set_status(first.id, ExecutionStatus::Running)
            .await,
    );
    assert!(matches!(held.holder, Holder::Execution { id, .. } if id == second.id));
    assert_eq!(
        store.executions().get(first.id).await.unwrap().status,
        ExecutionStatus::Interrupted
    );
    store
        .executions()
        .finish(second.id, ExecutionStatus::Cancelled, None, Some("stop"))
        .await
        .unwrap();
    store
        .executions()
        .set_status(first.id, ExecutionStatus::Running)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lapsed_claim_is_taken_over_and_its_old_holder_cannot_free_the_new_one() {
    let (_dir, store) = common::temp_store().await;
    let conversation = store.conversations().create("c", None).await.unwrap().id;
    let claims = store.claims();
    let dead = claims
        .claim(
            conversation,
            ClaimKind::Chat,
            "a process that died",
            Duration::from_millis(1),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(claims.busy(conversation).await.unwrap(), None, "lapsed");
    let live = claims
        .claim(conversation, ClaimKind::Compression, "me", MINUTE)
        .await
        .unwrap();
    assert!(!claims.renew(&dead, MINUTE).await.unwrap());
    claims.release(&dead).await.unwrap();
    let held = busy(
        claims
            .claim(conversation, ClaimKind::Chat, "me", MINUTE)
            .await,
    );
    assert!(matches!(
        held.holder,
        Holder::Claim {
            kind: ClaimKind::Compression,
            ..
        }
    ));
    claims.release(&live).await.unwrap();
    // Unknown and deleted conversations are not found, not busy.
    assert!(matches!(
        claims
            .claim(ConversationId::new(), ClaimKind::Chat, "me", MINUTE)
            .await,
        Err(StoreError::NotFound { .. })
    ));
}

/// An older Decima let two runs into one conversation. The migration keeps the newest active
/// and makes the others interrupted, so they can be resumed later; no row is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_migration_keeps_the_newest_of_two_active_runs_and_interrupts_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("decima.db");
    let pool = common::database_at(&path, 20261128000000).await;
    for sql in [
        "INSERT INTO conversations (id, title, created_at, updated_at) VALUES \
         ('0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5ac1', 'two runs', 1, 1)",
        "INSERT INTO executions (id, conversation_id, task, status, created_at, updated_at) VALUES \
         ('0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a01', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5ac1', 'old', 'awaiting_user', 10, 10), \
         ('0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a02', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5ac1', 'new', 'running', 20, 20), \
         ('0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a03', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5ac1', 'done', 'succeeded', 30, 30)",
        "INSERT INTO failures (id, execution_id, class, message, resolution, created_at) VALUES \
         ('f1', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a01', 'logic', 'bad', 'replan', 40)",
    ] {
        sqlx::query(sql).execute(&pool).await.unwrap();
    }
    pool.close().await;

    let store = common::open(&path).await;
    let status = |id: &'static str| {
        let store = store.clone();
        async move {
            store
                .executions()
                .get(id.parse().unwrap())
                .await
                .unwrap()
                .status
        }
    };
    assert_eq!(
        status("0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a01").await,
        ExecutionStatus::Interrupted
    );
    assert_eq!(
        status("0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a02").await,
        ExecutionStatus::Running
    );
    assert_eq!(
        status("0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a03").await,
        ExecutionStatus::Succeeded
    );
    // The failures table was rebuilt for the new choice; its rows are all there, and
    // `rollback` is now a resolution it takes.
    let failure = store.failures().get("f1").await.unwrap();
    assert_eq!(failure.resolution, Some(decima_store::Resolution::Replan));
    let resolved = store
        .failures()
        .record(&decima_store::NewFailure {
            execution_id: "0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a01".parse().unwrap(),
            todo_id: None,
            class: decima_core::FailureClass::Logic,
            message: "budget".into(),
            details: serde_json::json!({}),
            snapshot_id: None,
            rolled_back: serde_json::json!({}),
            suggested_actions: serde_json::json!(["rollback", "abort"]),
        })
        .await
        .unwrap();
    let resolved = store
        .failures()
        .resolve(&resolved.id, decima_store::Resolution::Rollback)
        .await
        .unwrap();
    assert_eq!(
        resolved.resolution,
        Some(decima_store::Resolution::Rollback)
    );
    assert_eq!(store.integrity_check().await.unwrap(), "ok");
    // PostgreSQL checks every foreign key as it writes; SQLite is asked.
    if let Some(pool) = store.sqlite_pool() {
        let fk: Vec<(String,)> = sqlx::query_as("SELECT \"table\" FROM pragma_foreign_key_check")
            .fetch_all(pool)
            .await
            .unwrap();
        assert!(fk.is_empty(), "{fk:?}");
    }
}
