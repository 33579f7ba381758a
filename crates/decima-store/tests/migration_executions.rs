//! The executions rebuild (20261124000000) on a database written by the previous schema: every
//! row that references executions survives, with foreign keys and integrity intact.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;

use decima_core::ExecutionId;
use decima_store::ExecutionStatus;
use sqlx::{Row, SqlitePool};

const BEFORE_REBUILD: i64 = 20261123000000;

async fn old_database(path: &Path) -> SqlitePool {
    common::database_at(path, BEFORE_REBUILD).await
}

async fn exec(pool: &SqlitePool, sql: &'static str) {
    sqlx::query(sql).execute(pool).await.unwrap();
}

async fn count(pool: &SqlitePool, sql: &'static str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap()
}

/// Names of every index and trigger, and the executions rows with their rowids.
async fn fingerprint(pool: &SqlitePool) -> (Vec<String>, Vec<String>) {
    let objects: Vec<String> = sqlx::query_scalar(
        "SELECT type || ' ' || name FROM sqlite_schema WHERE type IN ('index', 'trigger', 'table') \
         ORDER BY type, name",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    let rows = sqlx::query(
        "SELECT rowid, id, conversation_id, parent_id, depth, task, status, sandbox_kind, \
         provider_id, result, error, created_at, started_at, finished_at, updated_at \
         FROM executions ORDER BY rowid",
    )
    .fetch_all(pool)
    .await
    .unwrap()
    .into_iter()
    .map(|r| {
        (0..15)
            .map(|i| {
                r.try_get::<Option<String>, _>(i)
                    .ok()
                    .flatten()
                    .or_else(|| {
                        r.try_get::<Option<i64>, _>(i)
                            .ok()
                            .flatten()
                            .map(|n| n.to_string())
                    })
                    .unwrap_or_else(|| "NULL".into())
            })
            .collect::<Vec<_>>()
            .join("|")
    })
    .collect();
    (objects, rows)
}

const E1: &str = "0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a01";
const E2: &str = "0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a02";

#[tokio::test]
async fn rebuild_keeps_every_row_index_trigger_and_reference() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("decima.db");
    let pool = old_database(&path).await;
    exec(&pool, "INSERT INTO providers (id, name, kind, base_url, model, context_window, created_at, updated_at) \
        VALUES ('p1', 'local', 'openai', 'http://localhost', 'm', 8192, 1, 1)").await;
    exec(
        &pool,
        "INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5ac1', 'old', 1, 1)",
    )
    .await;
    // Rowids out of insertion order, to show they are kept, and a subagent row before its
    // parent's rowid, to show the self-reference resolves whatever the order.
    exec(&pool, "INSERT INTO executions (rowid, id, conversation_id, depth, task, status, provider_id, \
        result, created_at, started_at, updated_at) \
        VALUES (7, '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a01', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5ac1', 0, 'build it', 'running', 'p1', NULL, 10, 11, 12)").await;
    exec(&pool, "INSERT INTO executions (rowid, id, conversation_id, parent_id, depth, task, status, \
        sandbox_kind, result, created_at, started_at, finished_at, updated_at) \
        VALUES (3, '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a02', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5ac1', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a01', 1, \
        'sub', 'succeeded', 'docker', 'done', 20, 21, 22, 22)").await;
    exec(&pool, "INSERT INTO messages (id, conversation_id, execution_id, seq, role, content, tokens, created_at) \
        VALUES ('m1', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5ac1', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a01', 1, 'user', 'hi', 3, 30), \
               ('m2', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5ac1', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a02', 2, 'assistant', 'yo', 3, 31)").await;
    exec(
        &pool,
        "INSERT INTO todos (id, execution_id, position, title, status, created_at, updated_at) \
        VALUES ('t1', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a01', 0, 'first', 'in_progress', 40, 40)",
    )
    .await;
    exec(&pool, "INSERT INTO snapshots (id, execution_id, todo_id, reason, message_seq, todo_state, \
        workspace_archive, created_at) \
        VALUES ('s1', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a01', 't1', 'todo_start', 1, '[]', 'arch-1', 50)").await;
    exec(
        &pool,
        "INSERT INTO failures (id, execution_id, todo_id, class, message, snapshot_id, created_at) \
        VALUES ('f1', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a01', 't1', 'logic', 'bad', 's1', 60)",
    )
    .await;
    exec(
        &pool,
        "INSERT INTO steps (id, execution_id, seq, kind, content, tokens, created_at) \
        VALUES ('st1', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a01', 1, 'action', 'ran ls', 2, 70)",
    )
    .await;
    exec(
        &pool,
        "INSERT INTO events (conversation_id, execution_id, kind, payload, created_at) \
        VALUES ('0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5ac1', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a02', 'todo.started', '{}', 80)",
    )
    .await;
    exec(&pool, "INSERT INTO compactions (id, conversation_id, execution_id, level, trigger, strategy, \
        tokens_before, tokens_after, created_at) \
        VALUES ('k1', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5ac1', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a01', 'standard', 'auto', 'extract', 10, 5, 90)").await;
    let (objects_before, executions_before) = fingerprint(&pool).await;
    let live_before = count(
        &pool,
        "SELECT live_messages FROM conversations WHERE id = '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5ac1'",
    )
    .await;
    pool.close().await;

    // Opening with the current store applies the rebuild.
    let store = common::open(&path).await;
    let pool = store.sqlite_pool().expect("a SQLite store");
    let (objects_after, executions_after) = fingerprint(pool).await;
    // Every object is back; the only new ones are what later migrations add (the tenth man's,
    // the app settings, one active execution per conversation and the conversation claims,
    // the tenth man's cached summaries, the full-text index with its triggers and the switch a
    // bulk insert turns its insert trigger off with, each model call's
    // usage and the trigger that sums it per run, the MCP servers with their switches and
    // approvals, the images of tool results, how each answer ended and what it cost, and the
    // analyst's decisions on figures and the tenth man's receipts for them).
    let added: Vec<&String> = objects_after
        .iter()
        .filter(|o| !objects_before.contains(o))
        .collect();
    let missing: Vec<&String> = objects_before
        .iter()
        .filter(|o| !objects_after.contains(o))
        .collect();
    assert!(missing.is_empty(), "lost in the rebuild: {missing:?}");
    assert_eq!(
        added,
        [
            "index answers_by_conversation",
            "index executions_one_active",
            "index mcp_approvals_scope",
            "index messages_live_tokens",
            "index review_findings_open",
            "index reviews_execution",
            "index sqlite_autoindex_app_settings_1",
            "index sqlite_autoindex_conversation_claims_1",
            "index sqlite_autoindex_conversation_mcp_servers_1",
            "index sqlite_autoindex_figure_decisions_1",
            "index sqlite_autoindex_figure_receipts_1",
            "index sqlite_autoindex_mcp_servers_1",
            "index sqlite_autoindex_message_images_1",
            "index sqlite_autoindex_review_findings_1",
            "index sqlite_autoindex_review_findings_2",
            "table answers",
            "table app_settings",
            "table conversation_claims",
            "table conversation_mcp_servers",
            "table figure_decisions",
            "table figure_receipts",
            "table mcp_approvals",
            "table mcp_servers",
            "table message_images",
            "table messages_fts",
            "table messages_fts_config",
            "table messages_fts_data",
            "table messages_fts_docsize",
            "table messages_fts_idx",
            "table messages_fts_live",
            "table model_calls",
            "table review_digests",
            "table review_findings",
            "trigger messages_fts_delete",
            "trigger messages_fts_insert",
            "trigger messages_fts_update",
            "trigger model_calls_sum",
        ],
        "objects no migration after the rebuild explains"
    );
    assert_eq!(
        executions_after, executions_before,
        "rows and rowids are unchanged"
    );
    for (table, n) in [
        ("messages", 2),
        ("todos", 1),
        ("snapshots", 1),
        ("failures", 1),
        ("steps", 1),
        ("events", 1),
        ("compactions", 1),
    ] {
        let sql: &'static str = Box::leak(format!("SELECT COUNT(*) FROM {table}").into_boxed_str());
        assert_eq!(count(pool, sql).await, n, "{table} rows survive");
    }
    assert_eq!(
        count(
            pool,
            "SELECT live_messages FROM conversations WHERE id = '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5ac1'"
        )
        .await,
        live_before
    );
    let dangling: Vec<(String, i64, String, i64)> = sqlx::query_as("PRAGMA foreign_key_check")
        .fetch_all(pool)
        .await
        .unwrap();
    assert!(dangling.is_empty(), "{dangling:?}");
    assert_eq!(store.integrity_check().await.unwrap(), "ok");
    let leftovers = count(
        pool,
        "SELECT COUNT(*) FROM sqlite_schema WHERE sql LIKE '%executions_parked%' \
         OR sql LIKE '%executions_rebuilt%'",
    )
    .await;
    assert_eq!(leftovers, 0, "no reference points at a temporary table");
    assert!(
        sqlx::query_scalar::<_, i64>("PRAGMA foreign_keys")
            .fetch_one(pool)
            .await
            .unwrap()
            == 1
    );

    // The new status is allowed, unknown ones still refused, and references still enforced.
    let e1: ExecutionId = E1.parse().unwrap();
    let waiting = store
        .executions()
        .set_status(e1, ExecutionStatus::AwaitingUser)
        .await
        .unwrap();
    assert_eq!(waiting.status, ExecutionStatus::AwaitingUser);
    assert_eq!(waiting.provider_id.as_deref(), Some("p1"));
    let sub = store.executions().get(E2.parse().unwrap()).await.unwrap();
    assert_eq!(sub.parent_id, Some(e1));
    assert!(
        sqlx::query("UPDATE executions SET status = 'bogus' WHERE id = ?")
            .bind(E1)
            .execute(pool)
            .await
            .is_err()
    );
    assert!(
        sqlx::query(
            "INSERT INTO todos (id, execution_id, position, title, created_at, updated_at) \
             VALUES ('t9', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5aff', 0, 'x', 1, 1)"
        )
        .execute(pool)
        .await
        .is_err(),
        "foreign keys to executions are still enforced"
    );
    assert!(
        sqlx::query("DELETE FROM executions WHERE id = ?")
            .bind(E1)
            .execute(pool)
            .await
            .is_err(),
        "a referenced execution cannot be deleted"
    );
}
