//! Importing conversations from JSONL history files: picked in the system's open dialog, or
//! dropped on the window. The webview never names a file itself: a picked file is the one the
//! dialog returned, and a dropped one must be among the paths the window's own drop event
//! carried (`AppState::dropped`), so a page cannot make the app read any file it likes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use decima_store::{Conversation, Store};
use serde::Serialize;
use tauri::ipc::Channel;
use tauri::{AppHandle, DragDropEvent, State};
use tauri_plugin_dialog::DialogExt;

use super::dialogs::{answered_path, dialog_title_or};
use crate::dto::{ConversationSummary, DroppedImport};
use crate::{AppError, AppState};

/// The extension of the files imported: Decima's JSONL export and OpenAI-style chat logs.
const EXTENSION: &str = "jsonl";
/// How long a drop's import waits for the window's drop event to be recorded: the page hears of
/// the drop after it is recorded, so the record is there already unless the page was told of
/// the paths some other way.
const DROP_RECORD_WAIT: Duration = Duration::from_secs(2);

/// Asks for a JSONL history file and imports it as a new conversation, titled by the file's
/// name. `None` when the dialog was cancelled. Nothing is stored unless every line reads.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "conversation_import"))]
pub async fn conversation_import(
    app: AppHandle,
    state: State<'_, AppState>,
    dialog_title: String,
    filter_name: String,
) -> Result<Option<ConversationSummary>, AppError> {
    let mut dialog = app
        .dialog()
        .file()
        .set_title(dialog_title_or(&dialog_title, "Import a conversation"))
        .add_filter(
            dialog_title_or(&filter_name, "Conversation history (JSONL)"),
            &[EXTENSION],
        );
    if let Some(documents) = directories::UserDirs::new()
        .and_then(|u| u.document_dir().map(Path::to_path_buf))
        .filter(|d| d.is_dir())
    {
        dialog = dialog.set_directory(documents);
    }
    let Some(path) = answered_path(
        |answer| dialog.pick_file(answer),
        "open",
        "that is not a file on this computer",
    )
    .await?
    else {
        return Ok(None);
    };
    let conversation = import_file(&state.store, &path).await?;
    Ok(Some(ConversationSummary::from(&conversation)))
}

/// Imports the files dropped on the window, each on its own: one bad file does not keep the
/// others out. Each answer says what became of one file.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(
    name = "command",
    skip_all,
    fields(name = "conversation_import_dropped")
)]
pub async fn conversation_import_dropped(
    state: State<'_, AppState>,
    paths: Vec<String>,
) -> Result<Vec<DroppedImport>, AppError> {
    let mut answers = Vec::with_capacity(paths.len());
    for text in paths {
        let path = PathBuf::from(&text);
        let name = path
            .file_name()
            .map_or_else(|| text.clone(), |n| n.to_string_lossy().into_owned());
        let outcome = match dropped(&state, &path).await {
            Ok(()) => import_file(&state.store, &path).await,
            Err(e) => Err(e),
        };
        answers.push(match outcome {
            Ok(conversation) => DroppedImport {
                name,
                conversation: Some(ConversationSummary::from(&conversation)),
                error: None,
            },
            Err(e) => DroppedImport {
                name,
                conversation: None,
                error: Some(e.message),
            },
        });
    }
    Ok(answers)
}

/// What files dragged over the window are doing, for the page to show where a drop goes and to
/// import what was dropped.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum FileDrag {
    /// Files came over the window.
    Entered,
    /// They left it without a drop.
    Left,
    /// They were dropped: the only paths [`conversation_import_dropped`] and
    /// `workspace_add_dropped` then accept.
    Dropped {
        /// The files, as the window's drop event named them.
        paths: Vec<String>,
        /// Where they were dropped, in CSS pixels from the page's top left: a drop on a
        /// conversation adds them to its workspace, one elsewhere imports them.
        x: f64,
        /// See `x`.
        y: f64,
    },
}

/// Hands the window's drags of files to the page through `on_drag`, from now on (a later call
/// replaces an earlier channel). A channel rather than Tauri's drag events: listening to an
/// event makes the app evaluate script in the webview at once, which wakes WebKit's
/// JavaScript engine in the app's own process (about 4 MiB, for as long as it runs); a channel
/// costs nothing until a drag happens.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "file_drags_watch"))]
pub fn file_drags_watch(state: State<'_, AppState>, on_drag: Channel<FileDrag>) {
    if let Ok(mut watcher) = state.drag_watcher.lock() {
        *watcher = Some(on_drag);
    }
}

/// Tells the page what a drag over the window did; a drop's paths are recorded first, for
/// [`conversation_import_dropped`] to check. Moves within the window are not sent. `scale` is
/// the window's scale factor, which turns the drop's physical position into CSS pixels.
pub fn on_drag(state: &AppState, event: &DragDropEvent, scale: f64) {
    let drag = match event {
        DragDropEvent::Enter { .. } => FileDrag::Entered,
        DragDropEvent::Leave => FileDrag::Left,
        DragDropEvent::Drop { paths, position } => {
            record_drop(state, paths);
            let scale = if scale > 0.0 { scale } else { 1.0 };
            FileDrag::Dropped {
                paths: paths
                    .iter()
                    .map(|p| p.to_string_lossy().into_owned())
                    .collect(),
                x: position.x / scale,
                y: position.y / scale,
            }
        }
        _ => return,
    };
    let watcher = state.drag_watcher.lock().ok().and_then(|w| w.clone());
    if let Some(channel) = watcher
        && let Err(e) = channel.send(drag)
    {
        tracing::warn!(error = %e, "the page was not told of a drag over the window");
    }
}

/// Records the paths of a drop on the window, for [`conversation_import_dropped`] to check.
/// Only the latest drop is kept.
fn record_drop(state: &AppState, paths: &[PathBuf]) {
    if let Ok(mut dropped) = state.dropped.lock() {
        dropped.clear();
        dropped.extend(paths.iter().cloned());
    }
}

/// Whether `path` came with the window's latest drop, waiting briefly for its record.
pub(super) async fn dropped(state: &AppState, path: &Path) -> Result<(), AppError> {
    let started = tokio::time::Instant::now();
    loop {
        let known = state
            .dropped
            .lock()
            .map(|set| set.contains(path))
            .unwrap_or(false);
        if known {
            return Ok(());
        }
        if started.elapsed() > DROP_RECORD_WAIT {
            return Err(AppError::invalid(
                "only a file dropped on this window can be imported from it",
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Imports one file, refusing what is not a JSONL history before reading it, and digests it
/// for the tenth man in the background.
async fn import_file(store: &Store, path: &Path) -> Result<Conversation, AppError> {
    let is_jsonl = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case(EXTENSION));
    if !is_jsonl {
        return Err(AppError::invalid(format!(
            "{} is not a conversation history: Decima imports .jsonl files (its own JSONL \
             export, or one chat message per line). Markdown and text exports are for reading; \
             character cards and presets are imported in Settings.",
            path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned()
            )
        )));
    }
    let conversation = decima_runtime::import::conversation_file(store, path, None, None).await?;
    // A long history is digested for the tenth man now rather than while the analyst waits
    // for the first review. It is a cache: failing to fill it fails nothing.
    let digesting = store.clone();
    let id = conversation.id;
    let last = i64::try_from(conversation.message_count).unwrap_or(i64::MAX);
    tauri::async_runtime::spawn(async move {
        if let Err(e) = decima_runtime::review::digest_cache::warm(&digesting, id, 0, last).await {
            tracing::warn!(error = %e, "the imported history was not digested ahead for reviews");
        }
    });
    Ok(conversation)
}
