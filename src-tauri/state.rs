//! What the commands share.

use decima_store::Store;

/// Managed by Tauri and handed to every command.
pub struct AppState {
    /// The store, shared with nothing else in the process.
    pub store: Store,
}

impl AppState {
    /// Wraps an opened store.
    pub fn new(store: Store) -> Self {
        Self { store }
    }
}
