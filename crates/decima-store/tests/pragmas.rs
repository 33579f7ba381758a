//! The connection settings the design requires, read back from SQLite itself. SQLite only, on
//! every run of the suite: PostgreSQL's schema is checked by schema_parity.rs.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use decima_core::EstimateCounter;
use decima_store::{Store, StoreError};
use std::sync::Arc;

#[tokio::test]
async fn every_connection_uses_wal_normal_sync_foreign_keys_and_busy_timeout() {
    let (_dir, store) = common::temp_sqlite_store().await;
    // Take several connections at once so we see more than the first one.
    let mut conns = Vec::new();
    for _ in 0..3 {
        conns.push(
            store
                .sqlite_pool()
                .expect("a SQLite store")
                .acquire()
                .await
                .unwrap(),
        );
    }
    for conn in &mut conns {
        let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
            .fetch_one(&mut **conn)
            .await
            .unwrap();
        assert_eq!(mode, "wal");
        let sync: i64 = sqlx::query_scalar("PRAGMA synchronous")
            .fetch_one(&mut **conn)
            .await
            .unwrap();
        assert_eq!(sync, 1, "NORMAL");
        let fk: i64 = sqlx::query_scalar("PRAGMA foreign_keys")
            .fetch_one(&mut **conn)
            .await
            .unwrap();
        assert_eq!(fk, 1);
        let busy: i64 = sqlx::query_scalar("PRAGMA busy_timeout")
            .fetch_one(&mut **conn)
            .await
            .unwrap();
        assert!(busy >= 5_000, "{busy}");
        let autocheckpoint: i64 = sqlx::query_scalar("PRAGMA wal_autocheckpoint")
            .fetch_one(&mut **conn)
            .await
            .unwrap();
        assert_eq!(autocheckpoint, 0, "writers never checkpoint inline");
    }
}

/// With automatic checkpoints off, the store's own checkpointer must move committed pages from
/// the WAL into the database file once writes pause, or the WAL would only grow.
#[tokio::test]
async fn the_wal_is_checkpointed_in_the_background_once_writes_pause() {
    let (dir, store) = common::temp_sqlite_store().await;
    let db = dir.path().join("decima.db");
    let size = || std::fs::metadata(&db).unwrap().len();
    // Let the checkpoint after the migrations settle first.
    tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
    let before = size();
    let conversation = store.conversations().create("big", None).await.unwrap();
    let text = "ledger line 0123456789 ".repeat(100_000);
    store
        .messages()
        .append(
            conversation.id,
            decima_core::NewMessage::new(decima_core::Role::User, text.clone()),
        )
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while size() < before + text.len() as u64 / 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the database file stayed at {} bytes: the WAL was never checkpointed",
            size()
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // Nothing was lost on the way.
    let stored = store.messages().all(conversation.id).await.unwrap();
    assert_eq!(stored[0].content, text);
}

#[tokio::test]
async fn the_schema_has_every_table_of_the_design() {
    let (_dir, store) = common::temp_sqlite_store().await;
    let tables: Vec<String> =
        sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .fetch_all(store.sqlite_pool().expect("a SQLite store"))
            .await
            .unwrap();
    for t in [
        "compactions",
        "conversations",
        "events",
        "executions",
        "failures",
        "history_exports",
        "messages",
        "presets",
        "providers",
        "reviews",
        "snapshots",
        "steps",
        "summaries",
        "todos",
        "token_calibrations",
    ] {
        assert!(
            tables.iter().any(|x| x == t),
            "missing table {t}: {tables:?}"
        );
    }
    let provider_columns: Vec<String> =
        sqlx::query_scalar("SELECT name FROM pragma_table_info('providers')")
            .fetch_all(store.sqlite_pool().expect("a SQLite store"))
            .await
            .unwrap();
    assert!(
        !provider_columns
            .iter()
            .any(|c| c.contains("key") || c.contains("secret") || c.contains("token")),
        "provider rows never hold secrets: {provider_columns:?}"
    );
    assert_eq!(store.integrity_check().await.unwrap(), "ok");
}

#[tokio::test]
async fn reopening_keeps_data_and_does_not_rerun_migrations() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("decima.db");
    let id = {
        let store = common::open(&path).await;
        let c = store
            .conversations()
            .create("persisted", None)
            .await
            .unwrap();
        store.close().await;
        c.id
    };
    let store = common::open(&path).await;
    assert_eq!(
        store.conversations().get(id).await.unwrap().title,
        "persisted"
    );
}

#[tokio::test]
async fn a_file_that_is_not_a_database_gets_a_clear_error_and_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("decima.db");
    let garbage = b"this is not sqlite, it is someone's notes\n".repeat(200);
    std::fs::write(&path, &garbage).unwrap();
    let err = Store::open(&path, Arc::new(EstimateCounter))
        .await
        .err()
        .unwrap();
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("cannot open the database") && text.contains("decima.db"),
        "{text}"
    );
    assert!(text.contains("not a database"), "{text}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        garbage,
        "the file is untouched"
    );
}
