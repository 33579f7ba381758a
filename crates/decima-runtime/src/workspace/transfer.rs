//! Copying a conversation's files between its host folder and its Docker container, when the
//! analyst switches where its runs work: a run in the container cannot see the host folder,
//! nor the other way round, and the agent's next `pandas.read_csv` would fail on a file the
//! analyst can see in the window. A copy never replaces a file already at the destination,
//! and the source is left as it was.

use decima_core::ConversationId;
use decima_store::{SandboxKind, Store};

use super::place::{WorkspacePlace, place, place_as};
use crate::error::{Result, RuntimeError};

/// What a copy across did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transfer {
    /// The files copied, relative to the workspace.
    pub copied: Vec<String>,
    /// Files already at the destination under the same path, left as they were there.
    pub kept: Vec<String>,
    /// The bytes copied.
    pub bytes: u64,
}

/// What is in `conversation`'s workspace of `kind` (which may not be where its runs work
/// now): how many files and bytes. The window asks before a switch, to say what stays behind.
pub async fn census(
    store: &Store,
    data_dir: &std::path::Path,
    conversation: ConversationId,
    kind: SandboxKind,
) -> Result<(u64, u64)> {
    let source = place_as(store, data_dir, conversation, kind).await?;
    let files = source
        .sandbox
        .list_files()
        .await
        .map_err(RuntimeError::Workspace)?;
    let bytes = files.iter().map(|f| f.size).sum();
    Ok((files.len() as u64, bytes))
}

/// The files of `conversation`'s host folder its runs in Docker cannot see: those changed since
/// they were last copied into the container (all of them, before any copy). The window's
/// workspace panel says how many, and offers to copy them.
pub async fn left_on_host(
    store: &Store,
    data_dir: &std::path::Path,
    conversation: ConversationId,
) -> Result<u64> {
    let since = store
        .app_settings()
        .get(&copied_key(conversation))
        .await?
        .and_then(|v| v.get("host").and_then(serde_json::Value::as_i64))
        .unwrap_or(i64::MIN);
    let host = place_as(store, data_dir, conversation, SandboxKind::Host).await?;
    let files = host
        .sandbox
        .list_files()
        .await
        .map_err(RuntimeError::Workspace)?;
    Ok(files.iter().filter(|f| f.modified >= since).count() as u64)
}

/// Where the time of the last copy out of a conversation's host folder is kept.
fn copied_key(conversation: ConversationId) -> String {
    format!(
        "workspace_copied.{}",
        conversation.to_string().replace('-', "_")
    )
}

/// Copies every file of `conversation`'s workspace of kind `from` into the workspace its runs
/// work in now, which must be of the other kind.
#[tracing::instrument(skip(store, data_dir), fields(%conversation, from = from.as_str()))]
pub async fn copy_across(
    store: &Store,
    data_dir: &std::path::Path,
    conversation: ConversationId,
    from: SandboxKind,
) -> Result<Transfer> {
    let to = place(store, data_dir, conversation).await?;
    if to.owner.is_some() {
        return Err(RuntimeError::Conflict(
            "a subagent works in the workspace of the conversation it serves; copy the files \
             from that conversation instead"
                .to_owned(),
        ));
    }
    if to.kind == from {
        return Err(RuntimeError::Conflict(format!(
            "this conversation's runs already work {}; switch where they run first, then copy \
             the files across",
            where_(from)
        )));
    }
    let source = place_as(store, data_dir, conversation, from).await?;
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let done = copy_files(&source, &to).await?;
    if from == SandboxKind::Host {
        // A file changed in the same second as the copy still counts as left behind.
        store
            .app_settings()
            .put(
                &copied_key(conversation),
                &serde_json::json!({ "host": started.saturating_add(1) }),
            )
            .await?;
    }
    Ok(done)
}

/// Copies `source`'s files into `to`, each through a temporary host file (a container's file
/// is streamed out, then in), skipping those `to` already has.
async fn copy_files(source: &WorkspacePlace, to: &WorkspacePlace) -> Result<Transfer> {
    let there: std::collections::HashSet<String> = to
        .sandbox
        .list_files()
        .await
        .map_err(RuntimeError::Workspace)?
        .into_iter()
        .map(|f| f.path)
        .collect();
    let files = source
        .sandbox
        .list_files()
        .await
        .map_err(RuntimeError::Workspace)?;
    let staging = tempfile::tempdir().map_err(|source| RuntimeError::Io {
        action: "create",
        path: std::env::temp_dir(),
        source,
    })?;
    let mut done = Transfer::default();
    for file in files {
        if there.contains(&file.path) {
            done.kept.push(file.path);
            continue;
        }
        let staged = staging.path().join("file");
        source
            .sandbox
            .copy_out(file.path.clone(), staged.clone())
            .await
            .map_err(RuntimeError::Workspace)?;
        let written = to
            .sandbox
            .copy_in(staged.clone(), file.path.clone())
            .await
            .map_err(RuntimeError::Workspace)?;
        let _ = std::fs::remove_file(&staged);
        done.bytes += u64::try_from(written.bytes).unwrap_or(u64::MAX);
        done.copied.push(file.path);
    }
    tracing::info!(
        copied = done.copied.len(),
        kept = done.kept.len(),
        bytes = done.bytes,
        "workspace copied across"
    );
    Ok(done)
}

/// "on this computer" / "in Docker", for the errors.
fn where_(kind: SandboxKind) -> &'static str {
    match kind {
        SandboxKind::Host => "on this computer",
        SandboxKind::Docker => "in Docker",
    }
}
