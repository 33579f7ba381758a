//! The todos rebuild of 20261201000000 (run endings) on a database an older Decima wrote: the
//! todos keep their rows, rowids and references, a cancelled run's todo left in progress
//! becomes cancelled, and every other todo is as it was.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;

use decima_core::ExecutionId;
use decima_store::TodoStatus;
use sqlx::SqlitePool;

const BEFORE: i64 = 20261130000000;
const CONVERSATION: &str = "0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5ac1";
const CANCELLED: &str = "0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a01";
const INTERRUPTED: &str = "0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a02";

async fn old_database(path: &Path) -> SqlitePool {
    common::database_at(path, BEFORE).await
}

async fn exec(pool: &SqlitePool, sql: String) {
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
        .execute(pool)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_cancelled_runs_open_todo_becomes_cancelled_and_every_reference_holds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("decima.db");
    let pool = old_database(&path).await;
    exec(
        &pool,
        format!(
            "INSERT INTO conversations (id, title, created_at, updated_at) \
             VALUES ('{CONVERSATION}', 'old', 1, 1)"
        ),
    )
    .await;
    exec(
        &pool,
        format!(
            "INSERT INTO executions (id, conversation_id, task, status, error, created_at, updated_at) \
             VALUES ('{CANCELLED}', '{CONVERSATION}', 'a', 'cancelled', 'cancelled', 10, 10), \
                    ('{INTERRUPTED}', '{CONVERSATION}', 'b', 'interrupted', NULL, 11, 11)"
        ),
    )
    .await;
    // Rowids out of order, to show they are kept.
    exec(
        &pool,
        format!(
            "INSERT INTO todos (rowid, id, execution_id, position, title, status, created_at, updated_at) \
             VALUES (9, 't1', '{CANCELLED}', 0, 'gather', 'completed', 20, 20), \
                    (4, 't2', '{CANCELLED}', 1, 'report', 'in_progress', 21, 21), \
                    (6, 't3', '{INTERRUPTED}', 0, 'resume me', 'in_progress', 22, 22)"
        ),
    )
    .await;
    exec(
        &pool,
        format!(
            "INSERT INTO snapshots (id, execution_id, todo_id, reason, message_seq, todo_state, created_at) \
             VALUES ('s1', '{CANCELLED}', 't2', 'todo_start', 0, '[]', 30)"
        ),
    )
    .await;
    exec(
        &pool,
        format!(
            "INSERT INTO failures (id, execution_id, todo_id, class, message, snapshot_id, created_at) \
             VALUES ('f1', '{CANCELLED}', 't2', 'logic', 'bad', 's1', 40)"
        ),
    )
    .await;
    pool.close().await;

    let store = common::open(&path).await;
    let rows: Vec<(i64, String, String, Option<String>)> =
        sqlx::query_as("SELECT rowid, id, status, reason FROM todos ORDER BY rowid")
            .fetch_all(store.sqlite_pool().expect("a SQLite store"))
            .await
            .unwrap();
    assert_eq!(
        rows,
        [
            (
                4,
                "t2".into(),
                "cancelled".into(),
                Some("the run was cancelled".into())
            ),
            (6, "t3".into(), "in_progress".into(), None),
            (9, "t1".into(), "completed".into(), None),
        ]
    );
    let broken: Vec<(String, i64, String, i64)> = sqlx::query_as("PRAGMA foreign_key_check")
        .fetch_all(store.sqlite_pool().expect("a SQLite store"))
        .await
        .unwrap();
    assert!(broken.is_empty(), "{broken:?}");
    let referenced: Vec<String> = sqlx::query_scalar(
        "SELECT s.todo_id FROM snapshots s JOIN todos t ON t.id = s.todo_id \
         UNION ALL SELECT f.todo_id FROM failures f JOIN todos t ON t.id = f.todo_id",
    )
    .fetch_all(store.sqlite_pool().expect("a SQLite store"))
    .await
    .unwrap();
    assert_eq!(referenced, ["t2", "t2"]);
    // The store reads the new status, and the old runs have no recorded ending.
    let id: ExecutionId = CANCELLED.parse().unwrap();
    let plan = store.todos().plan(id).await.unwrap();
    assert_eq!(plan[1].status, TodoStatus::Cancelled);
    assert_eq!(store.executions().get(id).await.unwrap().ending, None);
    // The CHECK now takes the new status and still refuses others.
    let refused = sqlx::query("UPDATE todos SET status = 'abandoned' WHERE id = 't1'")
        .execute(store.sqlite_pool().expect("a SQLite store"))
        .await;
    assert!(refused.is_err());
}
