//! What the commands share.

use std::path::PathBuf;
use std::sync::Arc;

use decima_store::Store;

use crate::runs::Runs;

/// Managed by Tauri and handed to every command.
pub struct AppState {
    /// The store, shared with nothing else in the process.
    pub store: Store,
    /// The data directory: workspaces, snapshots, locks, keys.
    pub data_dir: PathBuf,
    /// Runs in progress, to stop them and to answer their failures.
    pub runs: Arc<Runs>,
}

impl AppState {
    /// Wraps an opened store and its data directory.
    pub fn new(store: Store, data_dir: PathBuf) -> Self {
        Self {
            store,
            data_dir,
            runs: Arc::default(),
        }
    }
}
