//! The 20261216000000 migration (who answered a failure) on a database an older Decima wrote:
//! the automatic replans, known from the events the run logged, read as the run's; every other
//! answered failure as the analyst's; a waiting one as nobody's yet. The compress resolution of
//! 20261215000000 is taken, and the rebuild keeps every row.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use decima_core::ExecutionId;
use decima_store::{Resolution, ResolvedBy};

const BEFORE: i64 = 20261214000000;
const CONVERSATION: &str = "0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5bc1";
const EXECUTION: &str = "0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5b01";

#[tokio::test]
async fn earlier_automatic_replans_read_as_the_runs_and_the_rest_as_the_analysts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("decima.db");
    let pool = common::database_at(&path, BEFORE).await;
    let sql = format!(
        "INSERT INTO conversations (id, title, created_at, updated_at) \
             VALUES ('{CONVERSATION}', 'old', 1, 1); \
         INSERT INTO executions (id, conversation_id, task, status, created_at, updated_at) \
             VALUES ('{EXECUTION}', '{CONVERSATION}', 'a', 'awaiting_user', 10, 10); \
         INSERT INTO failures (rowid, id, execution_id, class, message, resolution, resolved_at, created_at) \
             VALUES (7, 'auto', '{EXECUTION}', 'logic', 'first', 'replan', 21, 20), \
                    (3, 'mine', '{EXECUTION}', 'logic', 'second', 'replan', 31, 30), \
                    (5, 'open', '{EXECUTION}', 'context_overflow', 'third', NULL, NULL, 40); \
         INSERT INTO events (conversation_id, execution_id, kind, payload, created_at) \
             VALUES ('{CONVERSATION}', '{EXECUTION}', 'failure.auto_replan', '{{\"failure_id\":\"auto\"}}', 21), \
                    ('{CONVERSATION}', '{EXECUTION}', 'failure.resolved', \
                     '{{\"failure_id\":\"mine\",\"choice\":\"replan\"}}', 31);"
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;

    let store = common::open(&path).await;
    let id: ExecutionId = EXECUTION.parse().unwrap();
    let failures = store.failures().list(id).await.unwrap();
    let by: Vec<(&str, Option<ResolvedBy>)> = failures
        .iter()
        .map(|f| (f.id.as_str(), f.resolved_by))
        .collect();
    assert_eq!(
        by,
        [
            ("auto", Some(ResolvedBy::Automatic)),
            ("mine", Some(ResolvedBy::Analyst)),
            ("open", None)
        ]
    );
    let rowids: Vec<(i64, String)> =
        sqlx::query_as("SELECT rowid, id FROM failures ORDER BY rowid")
            .fetch_all(store.sqlite_pool().expect("a SQLite store"))
            .await
            .unwrap();
    assert_eq!(
        rowids,
        [(3, "mine".into()), (5, "open".into()), (7, "auto".into())]
    );
    // The waiting overflow takes the new answer, by the analyst; the CHECK refuses others.
    let answered = store
        .failures()
        .resolve("open", Resolution::Compress)
        .await
        .unwrap();
    assert_eq!(answered.resolved_by, Some(ResolvedBy::Analyst));
    let refused = sqlx::query("UPDATE failures SET resolved_by = 'someone' WHERE id = 'mine'")
        .execute(store.sqlite_pool().expect("a SQLite store"))
        .await;
    assert!(refused.is_err());
}
