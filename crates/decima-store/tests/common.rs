//! Helpers shared by the store's integration tests.
#![allow(dead_code)]
// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use decima_core::EstimateCounter;
use decima_store::Store;

pub async fn open(path: &Path) -> Store {
    Store::open(path, Arc::new(EstimateCounter)).await.unwrap()
}

pub async fn temp_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir.path().join("decima.db")).await;
    (dir, store)
}
