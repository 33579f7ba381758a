//! Importing conversations from JSONL history files: picked in the system's open dialog, or
//! dropped on the window. The webview never names a file itself: a picked file is the one the
//! dialog returned, and a dropped one must be among the paths the window's own drop event
//! carried (`AppState::dropped`), so a page cannot make the app read any file it likes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use decima_store::{Conversation, Store};
use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt;

use crate::dto::{ConversationSummary, DroppedImport};
use crate::{AppError, AppState};

/// The extension of the files imported: Decima's JSONL export and OpenAI-style chat logs.
const EXTENSION: &str = "jsonl";
/// How long a drop's import waits for the window's drop event to be recorded: the webview hears
/// of the drop through the same event, so the record is normally there already.
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
    let (tx, rx) = tokio::sync::oneshot::channel();
    let mut dialog = app
        .dialog()
        .file()
        .set_title(super::export::dialog_title_or(
            &dialog_title,
            "Import a conversation",
        ))
        .add_filter(
            super::export::dialog_title_or(&filter_name, "Conversation history (JSONL)"),
            &[EXTENSION],
        );
    if let Some(documents) = directories::UserDirs::new()
        .and_then(|u| u.document_dir().map(Path::to_path_buf))
        .filter(|d| d.is_dir())
    {
        dialog = dialog.set_directory(documents);
    }
    dialog.pick_file(move |picked| {
        let _ = tx.send(picked);
    });
    let picked = rx
        .await
        .map_err(|_| AppError::internal("the open dialog closed without an answer"))?;
    let Some(picked) = picked else {
        return Ok(None);
    };
    let path = picked
        .into_path()
        .map_err(|e| AppError::invalid(format!("that is not a file on this computer: {e}")))?;
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

/// Records the paths of a drop on the window, for [`conversation_import_dropped`] to check.
/// Only the latest drop is kept.
pub fn record_drop(state: &AppState, paths: &[PathBuf]) {
    if let Ok(mut dropped) = state.dropped.lock() {
        dropped.clear();
        dropped.extend(paths.iter().cloned());
    }
}

/// Whether `path` came with the window's latest drop, waiting briefly for its record.
async fn dropped(state: &AppState, path: &Path) -> Result<(), AppError> {
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
