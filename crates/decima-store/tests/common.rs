//! Helpers shared by the store's integration tests.
#![allow(dead_code)]
// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use decima_core::EstimateCounter;
use decima_store::Store;
use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};

pub async fn open(path: &Path) -> Store {
    Store::open(path, Arc::new(EstimateCounter)).await.unwrap()
}

pub async fn temp_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir.path().join("decima.db")).await;
    (dir, store)
}

/// A database at the schema of migration `version`, as an older Decima left it: the migrations
/// up to it applied, with foreign keys on, through one connection.
pub async fn database_at(path: &Path, version: i64) -> SqlitePool {
    use std::str::FromStr;
    let options = SqliteConnectOptions::from_str("sqlite:")
        .unwrap()
        .filename(path)
        .create_if_missing(true)
        .foreign_keys(true);
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
        .unwrap();
    let migrations = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
    let migrator = sqlx::migrate::Migrator::new(migrations).await.unwrap();
    migrator.run_to(version, &pool).await.unwrap();
    pool
}
