//! A fresh sandbox holding a run's inputs as they were when it started, restored from the run's
//! first snapshot, never the files the agent made: where the tenth man recomputes a run's
//! figures and where a rerun replays its calls. On the host it is a new folder; for a run in
//! Docker, a new container of the conversation's image and settings, with the inputs copied
//! in. Either is removed when its user is done.

use std::path::Path;
use std::sync::Arc;

use decima_core::ConversationId;
use decima_sandbox::host::listing::WorkspaceFile;
use decima_sandbox::{DockerSandbox, HostLimits, HostSandbox, Sandbox, SnapshotId};
use decima_store::{Execution, SandboxKind, Store};
use tracing::{info, warn};

use crate::agent::snapshot_store;
use crate::error::{Result, RuntimeError};

/// A fresh sandbox over a run's inputs, and what it holds.
pub(crate) struct FreshSandbox {
    sandbox: Arc<dyn Sandbox>,
    /// The input files, by workspace path, with their sizes.
    pub(crate) files: Vec<WorkspaceFile>,
    /// The container, for a run in Docker: removed at the end with its volume.
    container: Option<Arc<DockerSandbox>>,
    /// The restored folder: removed when dropped.
    _folder: tempfile::TempDir,
}

impl FreshSandbox {
    /// Restores `execution`'s first snapshot that holds its workspace into a new folder under
    /// the data directory, and opens a sandbox of the run's kind over it. `user` names who it
    /// is for in errors and in the folder's name ("recompute", "rerun").
    pub(crate) async fn open(
        store: &Store,
        data_dir: &Path,
        execution: &Execution,
        user: &str,
    ) -> Result<Self> {
        let first = store
            .snapshots()
            .list(execution.id)
            .await?
            .into_iter()
            .find_map(|s| s.workspace_archive)
            .ok_or_else(|| {
                RuntimeError::Config(format!(
                    "run {} kept no snapshot of its workspace, so its inputs as they were when \
                     it started are gone (runs keep one as they start unless their snapshots \
                     are turned off); run the task again and {user} that run",
                    execution.id
                ))
            })?;
        let archive = SnapshotId::parse(&first)?;
        let parent = data_dir.join("tmp");
        std::fs::create_dir_all(&parent).map_err(|e| {
            RuntimeError::Config(format!("cannot create {}: {e}", parent.display()))
        })?;
        let folder = tempfile::Builder::new()
            .prefix(&format!("{user}-"))
            .tempdir_in(&parent)
            .map_err(|e| {
                RuntimeError::Config(format!(
                    "cannot make the {user}'s folder in {}: {e}",
                    parent.display()
                ))
            })?;
        let workspace = folder.path().join("workspace");
        let snapshots = snapshot_store(data_dir)?;
        let target = workspace.clone();
        let restored = tokio::task::spawn_blocking(move || {
            std::fs::create_dir_all(&target)?;
            snapshots
                .restore(&archive, &target)
                .map_err(std::io::Error::other)
        })
        .await
        .map_err(|e| RuntimeError::Review(format!("restoring the run's inputs failed: {e}")))?;
        restored.map_err(|e| {
            RuntimeError::Review(format!(
                "the run's first snapshot could not be restored for the {user}: {e}"
            ))
        })?;
        let host = Arc::new(HostSandbox::new(workspace, HostLimits::default()));
        let files = host.list_files().await.map_err(RuntimeError::Workspace)?;
        info!(files = files.len(), sandbox = ?execution.sandbox, user, "a run's inputs are restored in a fresh sandbox");
        let (sandbox, container): (Arc<dyn Sandbox>, _) = match execution.sandbox {
            SandboxKind::Host => (host, None),
            SandboxKind::Docker => {
                let container =
                    in_container(store, data_dir, execution, &host, &files, user).await?;
                (container.clone(), Some(container))
            }
        };
        Ok(Self {
            sandbox,
            files,
            container,
            _folder: folder,
        })
    }

    /// Where its tools run.
    pub(crate) fn sandbox(&self) -> Arc<dyn Sandbox> {
        Arc::clone(&self.sandbox)
    }

    /// Removes the container, if any; the folder goes when this is dropped.
    pub(crate) async fn close(self) {
        if let Some(container) = &self.container
            && let Err(e) = container.remove(true).await
        {
            warn!(error = %e, "a fresh sandbox's container could not be removed");
        }
    }
}

/// A new container of the conversation's image and settings, never its workspace volume, with
/// the restored inputs copied in.
async fn in_container(
    store: &Store,
    data_dir: &Path,
    execution: &Execution,
    host: &HostSandbox,
    files: &[WorkspaceFile],
    user: &str,
) -> Result<Arc<DockerSandbox>> {
    let config = crate::docker::config_of(store, execution.conversation_id).await?;
    let engine = crate::docker::engine(data_dir).await?;
    let key = format!("{user}-{}", ConversationId::new());
    let container = Arc::new(DockerSandbox::new(engine, config, &key)?);
    for file in files {
        let from = host.workspace().join(&file.path);
        if let Err(e) = container.copy_in(from, file.path.clone()).await {
            if let Err(removal) = container.remove(true).await {
                warn!(error = %removal, "a fresh sandbox's container could not be removed");
            }
            return Err(RuntimeError::Workspace(e));
        }
    }
    Ok(container)
}
