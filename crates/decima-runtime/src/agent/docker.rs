//! The Docker engine as the runtime uses it.
//!
//! One connection per data directory per process. On the first connection, the process takes a
//! lock named after its engine run id (`DATA_DIR/run/docker-<run>.lock`, held until it exits)
//! and removes the sandbox containers of this data directory whose run is not live: those of
//! earlier processes, stopped or crashed. Containers of another process still running are left
//! alone, so two `decima` processes can use Docker side by side.
//!
//! A tree of subagents shares one container: the key is the root execution's conversation, so
//! a child sees its parent's `/workspace`. The sandbox settings (image, network, user, limits)
//! are that conversation's, or the defaults.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use decima_core::{ConversationId, ExecutionId};
use decima_sandbox::docker::AppendedFile;
use decima_sandbox::host::{
    BoxFuture, FileContent, ReadFileRequest, ShellOutcome, ShellRequest, WriteFileRequest,
    WriteOutcome,
};
use decima_sandbox::{DockerConfig, DockerEngine, DockerSandbox, Sandbox, SandboxError, ToolError};
use decima_store::Store;
use tokio::sync::Mutex;
use tracing::{info, warn};

use super::lease::Lease;
use super::subagent::{Exported, history_file_name};
use crate::error::Result;

/// The engines connected by this process, per data directory, with the lease that marks their
/// containers live.
static ENGINES: Mutex<Option<HashMap<PathBuf, ConnectedEngine>>> = Mutex::const_new(None);

/// An engine and the lease that marks its containers as this live process's.
type ConnectedEngine = (DockerEngine, Arc<Lease>);

fn lock_name(run: &str) -> String {
    format!("docker-{run}")
}

/// This process's engine for `data_dir`, connected (and stale containers removed) on first use.
pub async fn engine(data_dir: &Path) -> std::result::Result<DockerEngine, SandboxError> {
    let mut engines = ENGINES.lock().await;
    let engines = engines.get_or_insert_with(HashMap::new);
    if let Some((engine, _)) = engines.get(data_dir) {
        return Ok(engine.clone());
    }
    let engine = DockerEngine::connect(&DockerEngine::instance_for_data_dir(data_dir)).await?;
    let lease = Lease::try_named(data_dir, &lock_name(engine.run_id()))
        .map_err(|e| SandboxError::DockerUnavailable {
            detail: format!("cannot take the lock of this process's containers: {e}"),
        })?
        .ok_or_else(|| SandboxError::DockerUnavailable {
            detail: "another process holds this engine run's lock".into(),
        })?;
    match engine
        .remove_stale(|run| Lease::is_held(data_dir, &lock_name(run)))
        .await
    {
        Ok(removed) if !removed.is_empty() => {
            info!(count = removed.len(), "removed stale sandbox containers");
        }
        Ok(_) => {}
        Err(e) => warn!(error = %e, "could not remove stale sandbox containers"),
    }
    engines.insert(data_dir.to_path_buf(), (engine.clone(), Arc::new(lease)));
    Ok(engine)
}

/// Where history files go, relative to `/workspace`.
const CONTEXT_DIR: &str = "context";

/// How many bytes of each history file this process copied into each tree's container: the
/// next spawn sends only what was appended since.
static UPLOADED: std::sync::Mutex<Option<HashMap<(ConversationId, ExecutionId), u64>>> =
    std::sync::Mutex::new(None);

fn uploaded(key: ConversationId, execution: ExecutionId) -> u64 {
    let guard = UPLOADED.lock().unwrap_or_else(|p| p.into_inner());
    guard
        .as_ref()
        .and_then(|m| m.get(&(key, execution)).copied())
        .unwrap_or(0)
}

fn remember_upload(key: ConversationId, execution: ExecutionId, size: u64) {
    let mut guard = UPLOADED.lock().unwrap_or_else(|p| p.into_inner());
    guard
        .get_or_insert_with(HashMap::new)
        .insert((key, execution), size);
}

/// The sandbox settings of `conversation`: what `decima conversation sandbox` stored, else the
/// defaults.
pub async fn config_of(store: &Store, conversation: ConversationId) -> Result<DockerConfig> {
    Ok(
        match store.conversations().sandbox_config(conversation).await? {
            Some(value) => serde_json::from_value(value).unwrap_or_else(|e| {
                warn!(error = %e, "the stored sandbox settings are unreadable; using the defaults");
                DockerConfig::default()
            }),
            None => DockerConfig::default(),
        },
    )
}

/// The Docker sandbox of a tree of executions, connected on first use and again after a failed
/// connection: an engine that is down when a run starts, or stops mid-run, fails the call that
/// needs it as a System failure (the failure path, with its report), and a retry once the
/// engine is back goes on in the same container and workspace.
pub struct LazyDocker {
    data_dir: PathBuf,
    config: DockerConfig,
    key: ConversationId,
    ready: Mutex<Option<Arc<DockerSandbox>>>,
}

impl LazyDocker {
    /// The sandbox of the tree whose root works in `root_conversation`, with its settings.
    pub async fn new(
        store: &Store,
        data_dir: &Path,
        root_conversation: ConversationId,
    ) -> Result<Self> {
        Ok(Self {
            data_dir: data_dir.to_path_buf(),
            config: config_of(store, root_conversation).await?,
            key: root_conversation,
            ready: Mutex::new(None),
        })
    }

    /// The connected sandbox.
    pub async fn get(&self) -> std::result::Result<Arc<DockerSandbox>, SandboxError> {
        let mut ready = self.ready.lock().await;
        if let Some(sandbox) = ready.as_ref() {
            return Ok(Arc::clone(sandbox));
        }
        let engine = engine(&self.data_dir).await?;
        let sandbox = Arc::new(DockerSandbox::new(
            engine,
            self.config.clone(),
            &self.key.to_string(),
        )?);
        *ready = Some(Arc::clone(&sandbox));
        Ok(sandbox)
    }

    /// The host folder its workspace is mirrored into for snapshots.
    pub fn mirror(&self) -> PathBuf {
        mirror_dir(&self.data_dir, self.key)
    }

    /// Brings the history files into the container, under `/workspace/context/`: a file that
    /// only gained messages since its last copy sends just the new bytes; one rewritten (a
    /// rollback) or not yet copied is streamed whole (a 50 MB history is never held in memory).
    pub async fn upload_histories(&self, files: &[Exported]) -> std::result::Result<(), String> {
        let sandbox = self.get().await.map_err(|e| e.to_string())?;
        let appended: Vec<AppendedFile> = files
            .iter()
            .map(|f| AppendedFile {
                name: history_file_name(f.execution),
                host: f.path.clone(),
                uploaded: if f.appended {
                    uploaded(self.key, f.execution)
                } else {
                    0
                },
            })
            .collect();
        let sizes = sandbox
            .sync_appended(CONTEXT_DIR, &appended)
            .await
            .map_err(|e| e.message)?;
        for (file, size) in files.iter().zip(sizes) {
            remember_upload(self.key, file.execution, size);
        }
        Ok(())
    }
}

impl Sandbox for LazyDocker {
    fn exec(
        &self,
        request: ShellRequest,
    ) -> BoxFuture<'_, std::result::Result<ShellOutcome, ToolError>> {
        Box::pin(async move { self.get().await?.exec(request).await })
    }

    fn read_file(
        &self,
        request: ReadFileRequest,
    ) -> BoxFuture<'_, std::result::Result<FileContent, ToolError>> {
        Box::pin(async move { self.get().await?.read_file(request).await })
    }

    fn write_file(
        &self,
        request: WriteFileRequest,
    ) -> BoxFuture<'_, std::result::Result<WriteOutcome, ToolError>> {
        Box::pin(async move { self.get().await?.write_file(request).await })
    }

    fn write_bytes(
        &self,
        path: String,
        bytes: Vec<u8>,
    ) -> BoxFuture<'_, std::result::Result<WriteOutcome, ToolError>> {
        Box::pin(async move { self.get().await?.write_bytes(path, bytes).await })
    }

    fn list_files(
        &self,
    ) -> BoxFuture<
        '_,
        std::result::Result<Vec<decima_sandbox::host::listing::WorkspaceFile>, ToolError>,
    > {
        Box::pin(async move { self.get().await?.list_files().await })
    }

    fn read_bytes(
        &self,
        path: String,
        max: u64,
    ) -> BoxFuture<'_, std::result::Result<Vec<u8>, ToolError>> {
        Box::pin(async move { self.get().await?.read_bytes(path, max).await })
    }

    fn read_head(
        &self,
        path: String,
        max: u64,
    ) -> BoxFuture<'_, std::result::Result<Vec<u8>, ToolError>> {
        Box::pin(async move { self.get().await?.read_head(path, max).await })
    }

    fn copy_out(
        &self,
        path: String,
        to: PathBuf,
    ) -> BoxFuture<'_, std::result::Result<u64, ToolError>> {
        Box::pin(async move { self.get().await?.copy_out(path, to).await })
    }

    fn copy_in(
        &self,
        from: PathBuf,
        path: String,
    ) -> BoxFuture<'_, std::result::Result<WriteOutcome, ToolError>> {
        Box::pin(async move { self.get().await?.copy_in(from, path).await })
    }
}

/// The host folder a container's workspace is mirrored into for snapshots.
pub fn mirror_dir(data_dir: &Path, root_conversation: ConversationId) -> PathBuf {
    data_dir.join("mirrors").join(root_conversation.to_string())
}
