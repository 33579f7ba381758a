//! Where a conversation's workspace is: where its next run will work. A conversation whose
//! runs are subagents' works where its newest run did (its parent's workspace, or the tree's
//! container); any other follows its run options over the settings, as a run would.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use decima_core::ConversationId;
use decima_sandbox::{HostLimits, HostSandbox, Sandbox};
use decima_store::{SandboxKind, Store};

use crate::docker::LazyDocker;
use crate::error::{Result, RuntimeError};
use crate::history_file::lineage;
use crate::{conversation_options, preferences};

/// The default workspace of a conversation: `DATA_DIR/workspaces/<conversation id>`.
pub fn default_workspace(data_dir: &Path, conversation: ConversationId) -> PathBuf {
    data_dir.join("workspaces").join(conversation.to_string())
}

/// A conversation's workspace, opened.
pub struct WorkspacePlace {
    /// Host folder or container.
    pub kind: SandboxKind,
    /// The host folder, for a host workspace: what "Open folder" shows.
    pub host_dir: Option<PathBuf>,
    /// The files, read and written as the tools do (paths checked, symlinks leading out
    /// refused).
    pub sandbox: Arc<dyn Sandbox>,
    /// The conversation whose workspace this is, when it is another's: a subagent works in
    /// the workspace of the analyst's run it serves, and the window says so.
    pub owner: Option<ConversationId>,
}

/// Opens the workspace of `conversation` in the data directory `data_dir`. A host folder is
/// made when missing (a run would make it too); a container is only connected on first use.
pub async fn place(
    store: &Store,
    data_dir: &std::path::Path,
    conversation: ConversationId,
) -> Result<WorkspacePlace> {
    let newest = store
        .executions()
        .list_by_conversation(conversation)
        .await?
        .pop();
    let (kind, host_dir, root) = match newest {
        Some(execution) if execution.depth > 0 => {
            let root = lineage(store, &execution)
                .await?
                .last()
                .map_or(execution.conversation_id, |r| r.conversation_id);
            let dir = execution
                .workspace
                .map(PathBuf::from)
                .unwrap_or_else(|| default_workspace(data_dir, conversation));
            (execution.sandbox, dir, root)
        }
        _ => {
            let own = conversation_options::load(store, conversation).await?;
            let settings = preferences::load(store).await?;
            let (kind, chosen) = own.place(&settings)?;
            let dir = chosen.unwrap_or_else(|| default_workspace(data_dir, conversation));
            (kind, dir, conversation)
        }
    };
    opened(store, data_dir, conversation, kind, host_dir, root).await
}

/// Opens `conversation`'s workspace of the given kind, whatever its run options say: the
/// place it works in with the other sandbox, for copying its files across when the analyst
/// switches. A subagent's conversation has no place of its own to copy to or from.
pub async fn place_as(
    store: &Store,
    data_dir: &std::path::Path,
    conversation: ConversationId,
    kind: SandboxKind,
) -> Result<WorkspacePlace> {
    let newest = store
        .executions()
        .list_by_conversation(conversation)
        .await?
        .pop();
    if newest.is_some_and(|e| e.depth > 0) {
        return Err(RuntimeError::Conflict(
            "a subagent works in the workspace of the conversation it serves; copy the files \
             from that conversation instead"
                .to_owned(),
        ));
    }
    let own = conversation_options::load(store, conversation).await?;
    let dir = own
        .workspace
        .map(PathBuf::from)
        .unwrap_or_else(|| default_workspace(data_dir, conversation));
    opened(store, data_dir, conversation, kind, dir, conversation).await
}

/// The workspace of `kind` at `host_dir` (host) or in `root`'s container (Docker).
async fn opened(
    store: &Store,
    data_dir: &std::path::Path,
    conversation: ConversationId,
    kind: SandboxKind,
    host_dir: PathBuf,
    root: ConversationId,
) -> Result<WorkspacePlace> {
    Ok(match kind {
        SandboxKind::Host => {
            std::fs::create_dir_all(&host_dir).map_err(|source| RuntimeError::Io {
                action: "create",
                path: host_dir.clone(),
                source,
            })?;
            WorkspacePlace {
                kind,
                sandbox: Arc::new(HostSandbox::new(host_dir.clone(), HostLimits::default())),
                host_dir: Some(host_dir),
                owner: (root != conversation).then_some(root),
            }
        }
        SandboxKind::Docker => WorkspacePlace {
            kind,
            host_dir: None,
            sandbox: Arc::new(LazyDocker::new(store, data_dir, root).await?),
            owner: (root != conversation).then_some(root),
        },
    })
}
