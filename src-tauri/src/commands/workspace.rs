//! A conversation's workspace in the window: the files the agent (or the analyst) wrote there
//! and which call wrote each, a preview of one, "save as" to a place the analyst picks, and
//! files the analyst drops or picks copied in ("open folder" is `run_options::workspace_open`).
//! The webview names workspace paths only (checked by the sandbox as the tools' are); host
//! paths come from the system's dialogs or the window's own drop event.

use std::path::{Path, PathBuf};

use decima_runtime::workspace::{self, WorkspacePlace, Writer};
use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt;

use super::dialogs::{answered_path, dialog_title_or};
use crate::dto::{
    AddedFileView, SavedFileView, WorkspaceFileView, WorkspaceOwnerView, WorkspaceView, WriterView,
};
use crate::preview::{self, FilePreview, Kind};
use crate::{AppError, AppState};

/// The longest workspace path the webview may name.
const MAX_PATH: usize = 4096;
/// The most files one drop or pick adds.
const MAX_ADDED: usize = 100;

/// The files of the conversation's workspace that its runs or the analyst wrote (every file
/// with `all`), newest first, with who wrote each.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "workspace_files"))]
pub async fn workspace_files(
    state: State<'_, AppState>,
    conversation_id: String,
    all: bool,
) -> Result<WorkspaceView, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    let place = open(&state, id).await?;
    let entries = workspace::entries(&state.store, &place, id, all).await?;
    let pending_announcement = workspace::added::pending_paths(&state.store, id).await?;
    // A deleted owner leaves the files where they are; the panel then just lists them.
    let owner = match place.owner {
        Some(owner) => {
            state
                .store
                .conversations()
                .get(owner)
                .await
                .ok()
                .map(|c| WorkspaceOwnerView {
                    conversation_id: owner.to_string(),
                    title: c.title,
                })
        }
        None => None,
    };
    // Files left in the host folder are counted only when runs work in Docker: a host
    // listing is cheap, while a container's would start it.
    let left_on_host = if place.kind == decima_store::SandboxKind::Docker && place.owner.is_none() {
        workspace::left_on_host(&state.store, &state.data_dir, id)
            .await
            .unwrap_or(0)
    } else {
        0
    };
    Ok(WorkspaceView {
        location: place.host_dir.as_ref().map(|d| d.display().to_string()),
        left_on_host: u32::try_from(left_on_host).unwrap_or(u32::MAX),
        owner,
        pending_announcement,
        sandbox: place.kind.as_str().to_owned(),
        can_open_folder: place.host_dir.is_some(),
        files: entries
            .into_iter()
            .map(|e| WorkspaceFileView {
                path: e.path,
                #[allow(clippy::cast_precision_loss)] // sizes far below 2^53
                size: e.size as f64,
                #[allow(clippy::cast_precision_loss)]
                modified_ms: e.modified as f64 * 1000.0,
                written_by: e.written_by.map(writer_view),
            })
            .collect(),
    })
}

/// What the panel shows of one file: at most a few MB of it are read, however large it is.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "workspace_preview"))]
pub async fn workspace_preview(
    state: State<'_, AppState>,
    conversation_id: String,
    path: String,
) -> Result<FilePreview, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    check_path(&path)?;
    let place = open(&state, id).await?;
    let kind = Kind::of(&path);
    let cap = if kind.read_whole() {
        preview::WHOLE_BYTES
    } else {
        preview::HEAD_BYTES
    };
    // One byte past the cap says whether the file goes on, without listing the workspace.
    let mut bytes = place
        .sandbox
        .read_head(path, cap + 1)
        .await
        .map_err(decima_runtime::RuntimeError::Workspace)?;
    let whole = bytes.len() as u64 <= cap;
    bytes.truncate(usize::try_from(cap).unwrap_or(usize::MAX));
    tokio::task::spawn_blocking(move || preview::preview(kind, &bytes, whole))
        .await
        .map_err(|e| AppError::internal(format!("the preview failed: {e}")))
}

/// Asks where to save a file of the workspace (its own name proposed) and copies it there,
/// streamed. `None` when the dialog was cancelled.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "workspace_save_as"))]
pub async fn workspace_save_as(
    app: AppHandle,
    state: State<'_, AppState>,
    conversation_id: String,
    path: String,
    dialog_title: String,
) -> Result<Option<SavedFileView>, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    check_path(&path)?;
    let place = open(&state, id).await?;
    // A missing file is said before the dialog opens, not after a place was picked.
    place
        .sandbox
        .read_head(path.clone(), 0)
        .await
        .map_err(decima_runtime::RuntimeError::Workspace)?;
    let documents =
        directories::UserDirs::new().and_then(|u| u.document_dir().map(Path::to_path_buf));
    let folder = super::export::default_folder(documents, &state.data_dir)?;
    let name = path.rsplit('/').next().unwrap_or(&path).to_owned();
    let dialog = app
        .dialog()
        .file()
        .set_title(dialog_title_or(&dialog_title, "Save a copy of the file"))
        .set_directory(&folder)
        .set_file_name(&name);
    let Some(to) = answered_path(
        |answer| dialog.save_file(answer),
        "save",
        "that place cannot hold a file",
    )
    .await?
    else {
        return Ok(None);
    };
    let bytes = place
        .sandbox
        .copy_out(path, to.clone())
        .await
        .map_err(decima_runtime::RuntimeError::Workspace)?;
    tracing::info!(bytes, "a workspace file was saved out");
    #[allow(clippy::cast_precision_loss)]
    Ok(Some(SavedFileView {
        path: to.display().to_string(),
        bytes: bytes as f64,
    }))
}

/// Copies files dropped on the conversation into its workspace. Only paths the window's own
/// drop event carried are taken.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "workspace_add_dropped"))]
pub async fn workspace_add_dropped(
    state: State<'_, AppState>,
    conversation_id: String,
    paths: Vec<String>,
) -> Result<Vec<AddedFileView>, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    if paths.len() > MAX_ADDED {
        return Err(AppError::invalid(format!(
            "at most {MAX_ADDED} files are added at once"
        )));
    }
    let mut from = Vec::with_capacity(paths.len());
    for text in paths {
        let path = PathBuf::from(text);
        super::import::dropped(&state, &path).await?;
        from.push(path);
    }
    add(&state, id, &from).await
}

/// Asks for files and copies them into the conversation's workspace; none when cancelled.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "workspace_add_picked"))]
pub async fn workspace_add_picked(
    app: AppHandle,
    state: State<'_, AppState>,
    conversation_id: String,
    dialog_title: String,
) -> Result<Vec<AddedFileView>, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    let mut dialog = app
        .dialog()
        .file()
        .set_title(dialog_title_or(&dialog_title, "Add files to the workspace"));
    if let Some(documents) = directories::UserDirs::new()
        .and_then(|u| u.document_dir().map(Path::to_path_buf))
        .filter(|d| d.is_dir())
    {
        dialog = dialog.set_directory(documents);
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    dialog.pick_files(move |picked| {
        let _ = tx.send(picked);
    });
    let picked = rx
        .await
        .map_err(|_| AppError::internal("the open dialog closed without an answer"))?;
    let Some(picked) = picked else {
        return Ok(Vec::new());
    };
    let from = picked
        .into_iter()
        .take(MAX_ADDED)
        .map(|p| {
            p.into_path()
                .map_err(|e| AppError::invalid(format!("that is not a file on this computer: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    add(&state, id, &from).await
}

/// Copies `from` into the workspace, and says what landed where.
async fn add(
    state: &AppState,
    conversation: decima_core::ConversationId,
    from: &[PathBuf],
) -> Result<Vec<AddedFileView>, AppError> {
    let place = open(state, conversation).await?;
    let added = workspace::add_files(&state.store, &place, conversation, from).await?;
    #[allow(clippy::cast_precision_loss)]
    Ok(added
        .into_iter()
        .map(|a| AddedFileView {
            path: a.path,
            size: a.size as f64,
        })
        .collect())
}

/// The conversation's workspace.
async fn open(
    state: &AppState,
    conversation: decima_core::ConversationId,
) -> Result<WorkspacePlace, AppError> {
    Ok(workspace::place(&state.store, &state.data_dir, conversation).await?)
}

/// Refuses what cannot be a workspace path before anything reads it.
fn check_path(path: &str) -> Result<(), AppError> {
    if path.is_empty() || path.len() > MAX_PATH || path.contains('\0') {
        return Err(AppError::invalid(
            "a workspace path is between 1 and 4096 bytes, without NUL",
        ));
    }
    Ok(())
}

/// Who wrote a file, for the panel.
fn writer_view(writer: Writer) -> WriterView {
    #[allow(clippy::cast_precision_loss)]
    match writer {
        Writer::Call {
            call_id,
            message_seq,
            tool,
            conversation_id,
            at,
            ..
        } => WriterView::Call {
            call_id,
            message_seq: message_seq.and_then(|s| u32::try_from(s).ok()),
            tool,
            conversation_id: conversation_id.map(|c| c.to_string()),
            at_ms: at.0 as f64,
        },
        Writer::Analyst { name, at } => WriterView::Analyst {
            name,
            at_ms: at.0 as f64,
        },
    }
}
