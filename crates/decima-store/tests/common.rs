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

/// A fresh SQLite store in a temporary folder, whatever backend the suite runs on.
pub async fn temp_sqlite_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir.path().join("decima.db")).await;
    (dir, store)
}

/// The backend the suite runs on: SQLite, or PostgreSQL when `DECIMA_TEST_STORE=postgres`
/// (scripts/test.sh runs the ported tests a second time that way).
pub fn on_postgres() -> bool {
    std::env::var("DECIMA_TEST_STORE").is_ok_and(|v| v == "postgres")
}

/// A fresh, empty store on the suite's backend (see [`on_postgres`]); on PostgreSQL, a new
/// database of the tests' server, migrated.
pub async fn temp_store() -> (tempfile::TempDir, Store) {
    if !on_postgres() {
        return temp_sqlite_store().await;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = decima_testkit::postgres::fresh_database("store").await;
    let location = decima_store::StoreLocation::parse(&url).unwrap();
    Store::migrate(&location).await.unwrap();
    let store = Store::connect(&location, Arc::new(EstimateCounter))
        .await
        .unwrap();
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
    let migrations = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations/sqlite");
    let migrator = sqlx::migrate::Migrator::new(migrations).await.unwrap();
    migrator.run_to(version, &pool).await.unwrap();
    pool
}

/// One integer `sql` reads (with `$N` placeholders bound to `binds`), on the suite's backend.
pub async fn scalar(store: &Store, sql: &'static str, binds: &[&str]) -> i64 {
    if let Some(pool) = store.sqlite_pool() {
        let mut q = sqlx::query_scalar(sql);
        for b in binds {
            q = q.bind(*b);
        }
        return q.fetch_one(pool).await.unwrap();
    }
    let mut q = sqlx::query_scalar(sql);
    for b in binds {
        q = q.bind(*b);
    }
    q.fetch_one(store.postgres_pool().unwrap()).await.unwrap()
}

/// One text `sql` reads, on the suite's backend.
pub async fn text(store: &Store, sql: &'static str, binds: &[&str]) -> String {
    if let Some(pool) = store.sqlite_pool() {
        let mut q = sqlx::query_scalar(sql);
        for b in binds {
            q = q.bind(*b);
        }
        return q.fetch_one(pool).await.unwrap();
    }
    let mut q = sqlx::query_scalar(sql);
    for b in binds {
        q = q.bind(*b);
    }
    q.fetch_one(store.postgres_pool().unwrap()).await.unwrap()
}

/// Runs `sql` (a test's change behind the store's back), on the suite's backend.
pub async fn execute(store: &Store, sql: &'static str, binds: &[&str]) {
    if let Some(pool) = store.sqlite_pool() {
        let mut q = sqlx::query(sql);
        for b in binds {
            q = q.bind(*b);
        }
        q.execute(pool).await.unwrap();
        return;
    }
    let mut q = sqlx::query(sql);
    for b in binds {
        q = q.bind(*b);
    }
    q.execute(store.postgres_pool().unwrap()).await.unwrap();
}
