//! Switching where a conversation's runs work, with its files: what the other place holds (the
//! window asks before a switch, so nothing is left behind without a word) and copying it across
//! afterwards. The rules live in `decima_runtime::workspace::transfer`.

use decima_runtime::workspace;
use decima_store::SandboxKind;
use tauri::State;

use crate::dto::{WorkspaceCensusView, WorkspaceTransferView};
use crate::{AppError, AppState};

/// How many files (and bytes) the conversation's workspace of `sandbox` ("host" or "docker")
/// holds, wherever its runs work now.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "workspace_census"))]
pub async fn workspace_census(
    state: State<'_, AppState>,
    conversation_id: String,
    sandbox: String,
) -> Result<WorkspaceCensusView, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    let kind = sandbox_kind(&sandbox)?;
    let (files, bytes) = workspace::census(&state.store, &state.data_dir, id, kind).await?;
    #[allow(clippy::cast_precision_loss)] // counts and sizes far below 2^53
    Ok(WorkspaceCensusView {
        files: u32::try_from(files).unwrap_or(u32::MAX),
        bytes: bytes as f64,
    })
}

/// Copies the files of the conversation's workspace of `from` into the one its runs work in
/// now, never over a file already there.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "workspace_copy_across"))]
pub async fn workspace_copy_across(
    state: State<'_, AppState>,
    conversation_id: String,
    from: String,
) -> Result<WorkspaceTransferView, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    let kind = sandbox_kind(&from)?;
    let done = workspace::copy_across(&state.store, &state.data_dir, id, kind).await?;
    #[allow(clippy::cast_precision_loss)]
    Ok(WorkspaceTransferView {
        copied: done.copied,
        kept: done.kept,
        bytes: done.bytes as f64,
    })
}

/// "host" or "docker", from the webview.
fn sandbox_kind(text: &str) -> Result<SandboxKind, AppError> {
    text.parse::<SandboxKind>().map_err(|_| {
        AppError::invalid(format!(
            "a workspace is on the host or in docker, not '{}'",
            decima_core::names::echo_untrusted(text)
        ))
    })
}
