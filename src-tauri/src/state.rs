//! What the commands share.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use decima_core::ConversationId;
use decima_runtime::compression::WrittenSummary;
use decima_store::Store;
use tauri::ipc::Channel;

use crate::app_menu::AppMenuAction;
use crate::commands::import::FileDrag;
use crate::runs::Runs;

/// Managed by Tauri and handed to every command.
pub struct AppState {
    /// The store, shared with nothing else in the process.
    pub store: Store,
    /// The data directory: workspaces, snapshots, locks, keys.
    pub data_dir: PathBuf,
    /// Runs in progress, to stop them and to answer their failures.
    pub runs: Arc<Runs>,
    /// The model-written summary of each conversation's last compression preview, so that
    /// confirming it stores the text the person read rather than a second, different one.
    pub previews: Mutex<HashMap<ConversationId, WrittenSummary>>,
    /// The files this window exported: the only ones it opens or shows in their folder, so a
    /// page cannot ask it to open any path it likes.
    pub exported: Mutex<HashSet<PathBuf>>,
    /// The paths of the latest drop on the window: the only files a drop may import, so a page
    /// cannot ask it to read any path it likes.
    pub dropped: Mutex<HashSet<PathBuf>>,
    /// Where the page hears of drags of files over the window, once it asked.
    pub drag_watcher: Mutex<Option<Channel<FileDrag>>>,
    /// Where the page hears of the menu bar's choices (macOS's Settings…), once it asked.
    pub menu_watcher: Mutex<Option<Channel<AppMenuAction>>>,
    /// Where the store was opened from, for Settings.
    pub opened: Opened,
    /// Whether the page already follows the shared store's changes (one forwarding task).
    pub following: Arc<std::sync::atomic::AtomicBool>,
    /// Where that task sends them: the page's latest channel.
    pub change_watcher: Arc<Mutex<Option<Channel<crate::dto::StoreChange>>>>,
}

impl AppState {
    /// Wraps an opened store and its data directory.
    pub fn new(store: Store, data_dir: PathBuf) -> Self {
        Self {
            store,
            data_dir,
            runs: Arc::default(),
            previews: Mutex::default(),
            exported: Mutex::default(),
            dropped: Mutex::default(),
            drag_watcher: Mutex::default(),
            menu_watcher: Mutex::default(),
            opened: Opened::new(String::new(), decima_runtime::database::Source::Local, None),
            following: Arc::default(),
            change_watcher: Arc::default(),
        }
    }

    /// Records where the store was opened from.
    #[must_use]
    pub fn opened_at(mut self, opened: Opened) -> Self {
        self.opened = opened;
        self
    }
}

/// Where the open store came from: what Settings shows of the database.
#[derive(Debug, Clone)]
pub struct Opened {
    /// A file's path, or a URL without its password.
    pub shown: String,
    /// What chose it.
    pub source: decima_runtime::database::Source,
    /// Why the shared database Settings chose was not opened (this computer's file was).
    pub error: Option<String>,
}

impl Opened {
    /// Says where the store came from.
    pub fn new(
        shown: String,
        source: decima_runtime::database::Source,
        error: Option<String>,
    ) -> Self {
        Self {
            shown,
            source,
            error,
        }
    }
}
