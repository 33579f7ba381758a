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
use decima_sandbox::docker::address::EngineAddress;
use decima_sandbox::host::{
    BoxFuture, FileContent, ReadFileRequest, ShellOutcome, ShellRequest, WriteFileRequest,
    WriteOutcome,
};
use decima_sandbox::{DockerConfig, DockerEngine, DockerSandbox, Sandbox, SandboxError, ToolError};
use decima_store::Store;
use tokio::sync::Mutex;
use tracing::{info, warn};

use crate::error::Result;
use crate::history_file::{Exported, history_file_name};
use crate::lease::Lease;

/// The engines connected by this process, per data directory, with the lease that marks their
/// containers live.
static ENGINES: Mutex<Option<HashMap<PathBuf, ConnectedEngine>>> = Mutex::const_new(None);

/// An engine and the lease that marks its containers as this live process's.
type ConnectedEngine = (DockerEngine, Arc<Lease>);

fn lock_name(run: &str) -> String {
    format!("docker-{run}")
}

/// Where this desktop's engine choice is kept in the data folder: beside the certificates it
/// names, on this machine (a shared store would not know this machine's files).
const ENGINE_FILE: &str = "docker-engine.json";

/// The engine this data folder's runs use, as Settings chose it: a remote one over mutual TLS,
/// or (none) this computer's. `DOCKER_HOST` in the environment wins over it, as for the docker
/// CLI.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EngineChoice {
    /// `tcp://HOST:PORT`; `None`: this computer's engine.
    pub host: Option<String>,
    /// The folder of `ca.pem`, `cert.pem` and `key.pem`.
    pub cert_path: Option<PathBuf>,
}

/// The engine choice Settings saved, or none.
pub fn engine_choice(data_dir: &Path) -> EngineChoice {
    std::fs::read(data_dir.join(ENGINE_FILE))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// Where the engine is: `DOCKER_HOST` and its companions when set, else the saved choice, else
/// this computer's socket.
pub fn engine_address(data_dir: &Path) -> std::result::Result<EngineAddress, SandboxError> {
    if std::env::var_os("DOCKER_HOST").is_some_and(|h| !h.is_empty()) {
        return EngineAddress::from_env();
    }
    address_of(engine_choice(data_dir))
}

/// The address a saved choice names.
fn address_of(choice: EngineChoice) -> std::result::Result<EngineAddress, SandboxError> {
    match choice.host.as_deref().filter(|h| !h.trim().is_empty()) {
        None => EngineAddress::parse(None, None, None, None),
        Some(host) => EngineAddress::parse(Some(host.trim()), Some("1"), choice.cert_path, None),
    }
}

/// Saves the engine choice (checked: a remote engine needs a certificate folder), and forgets
/// this process's connection so the next use connects to the engine chosen.
pub async fn save_engine_choice(
    data_dir: &Path,
    choice: &EngineChoice,
) -> std::result::Result<(), SandboxError> {
    let host = choice
        .host
        .as_deref()
        .map(str::trim)
        .filter(|h| !h.is_empty());
    if let Some(host) = host {
        if host.starts_with("tcp://") && choice.cert_path.is_none() {
            return Err(SandboxError::EngineRefused {
                detail: format!(
                    "{host} is reached over mutual TLS: choose the folder that holds ca.pem, \
                     cert.pem and key.pem"
                ),
            });
        }
        if let EngineAddress::Tls { certs, .. } =
            EngineAddress::parse(Some(host), Some("1"), choice.cert_path.clone(), None)?
        {
            decima_sandbox::docker::address::check_cert_files(&certs)?;
        }
    }
    let saved = EngineChoice {
        host: host.map(str::to_owned),
        cert_path: host.and(choice.cert_path.clone()),
    };
    let io = |e: std::io::Error| SandboxError::Io {
        action: "save",
        path: data_dir.join(ENGINE_FILE).display().to_string(),
        source: e,
    };
    std::fs::create_dir_all(data_dir).map_err(io)?;
    let tmp = data_dir.join(format!("{ENGINE_FILE}.tmp"));
    let bytes = serde_json::to_vec_pretty(&saved).unwrap_or_default();
    std::fs::write(&tmp, bytes).map_err(io)?;
    std::fs::rename(&tmp, data_dir.join(ENGINE_FILE)).map_err(io)?;
    if let Some(engines) = ENGINES.lock().await.as_mut() {
        engines.remove(data_dir);
    }
    info!(
        remote = saved.host.is_some(),
        "the Docker engine choice was saved"
    );
    Ok(())
}

/// This process's engine for `data_dir`, connected (and stale containers removed) on first use.
pub async fn engine(data_dir: &Path) -> std::result::Result<DockerEngine, SandboxError> {
    let mut engines = ENGINES.lock().await;
    let engines = engines.get_or_insert_with(HashMap::new);
    if let Some((engine, _)) = engines.get(data_dir) {
        return Ok(engine.clone());
    }
    let engine = DockerEngine::connect_to(
        &engine_address(data_dir)?,
        &DockerEngine::instance_for_data_dir(data_dir),
    )
    .await?;
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
    /// A host run's folder, bound at `/workspace` (see [`LazyDocker::beside_host`]).
    host_folder: Option<PathBuf>,
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
            host_folder: None,
            ready: Mutex::new(None),
        })
    }

    /// A container beside a run on the host, for its MCP servers placed in Docker: the
    /// conversation's settings (image, limits, no network), but `/workspace` is the run's host
    /// `folder`, so a server sees the files `shell` and `write_file` see. It is its own
    /// container (`<root>-host`), never the conversation's Docker workspace, and it needs the
    /// engine on this computer: a remote one cannot bind this computer's folders.
    pub async fn beside_host(
        store: &Store,
        data_dir: &Path,
        root_conversation: ConversationId,
        folder: &Path,
    ) -> Result<Self> {
        Ok(Self {
            host_folder: Some(dunce::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf())),
            ..Self::new(store, data_dir, root_conversation).await?
        })
    }

    /// The connected sandbox.
    pub async fn get(&self) -> std::result::Result<Arc<DockerSandbox>, SandboxError> {
        let mut ready = self.ready.lock().await;
        if let Some(sandbox) = ready.as_ref() {
            return Ok(Arc::clone(sandbox));
        }
        let sandbox = match &self.host_folder {
            None => DockerSandbox::new(
                engine(&self.data_dir).await?,
                self.config.clone(),
                &self.key.to_string(),
            )?,
            Some(folder) => {
                if !engine_address(&self.data_dir)?.is_local() {
                    return Err(SandboxError::DockerUnavailable {
                        detail: "the Docker engine is on another machine, which cannot see \
                                 this run's folder; run in the Docker sandbox, or place the \
                                 server on this computer (\"on this machine\" in Settings > \
                                 MCP, --where host on the command line)"
                            .into(),
                    });
                }
                DockerSandbox::new(
                    engine(&self.data_dir).await?,
                    self.config.clone(),
                    &format!("{}-host", self.key),
                )?
                .with_host_folder(folder.to_path_buf())
            }
        };
        let sandbox = Arc::new(sandbox);
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

    fn python_unavailable(&self) -> Option<String> {
        None
    }

    fn python(
        &self,
        kernel: String,
        request: decima_sandbox::kernel::PythonRequest,
    ) -> BoxFuture<'_, std::result::Result<decima_sandbox::kernel::PythonOutcome, ToolError>> {
        Box::pin(async move { self.get().await?.python_in(&kernel, &request).await })
    }

    fn python_variables(
        &self,
        kernel: String,
    ) -> BoxFuture<'_, std::result::Result<Option<Vec<decima_sandbox::kernel::Variable>>, ToolError>>
    {
        Box::pin(async move {
            // A sandbox not yet connected has started no kernel in this run.
            let ready = self.ready.lock().await.clone();
            match ready {
                Some(sandbox) => sandbox.python_variables_in(&kernel).await,
                None => Ok(None),
            }
        })
    }
}

/// The host folder a container's workspace is mirrored into for snapshots.
pub fn mirror_dir(data_dir: &Path, root_conversation: ConversationId) -> PathBuf {
    data_dir.join("mirrors").join(root_conversation.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_engine_choice_is_checked_saved_and_read_back() {
        let data = tempfile::tempdir().unwrap();
        assert_eq!(engine_choice(data.path()), EngineChoice::default());
        // No choice: this computer's engine, as its platform has it.
        assert_eq!(
            address_of(engine_choice(data.path())).ok(),
            EngineAddress::local().ok()
        );
        // A remote engine needs its certificates, all three.
        let remote = |certs: Option<PathBuf>| EngineChoice {
            host: Some(" tcp://engine.lab:2376 ".into()),
            cert_path: certs,
        };
        let none = save_engine_choice(data.path(), &remote(None))
            .await
            .unwrap_err();
        assert!(none.to_string().contains("choose the folder"), "{none}");
        let certs = data.path().join("certs");
        std::fs::create_dir(&certs).unwrap();
        for file in ["ca.pem", "key.pem"] {
            std::fs::write(certs.join(file), "pem").unwrap();
        }
        let partial = save_engine_choice(data.path(), &remote(Some(certs.clone())))
            .await
            .unwrap_err();
        let missing = certs.join("cert.pem").display().to_string();
        assert!(partial.to_string().contains(&missing), "{partial}");
        assert_eq!(
            engine_choice(data.path()),
            EngineChoice::default(),
            "nothing saved"
        );
        std::fs::write(certs.join("cert.pem"), "pem").unwrap();
        save_engine_choice(data.path(), &remote(Some(certs.clone())))
            .await
            .unwrap();
        let saved = engine_choice(data.path());
        assert_eq!(saved.host.as_deref(), Some("tcp://engine.lab:2376"));
        assert_eq!(
            address_of(saved).unwrap(),
            EngineAddress::Tls {
                addr: "engine.lab:2376".into(),
                certs: certs.clone()
            }
        );
        // A plain address is refused; blank goes back to this computer's engine.
        let plain = save_engine_choice(
            data.path(),
            &EngineChoice {
                host: Some("engine.lab:2376".into()),
                cert_path: Some(certs.clone()),
            },
        )
        .await
        .unwrap_err();
        assert!(plain.to_string().contains("tcp://"), "{plain}");
        save_engine_choice(
            data.path(),
            &EngineChoice {
                host: Some("  ".into()),
                cert_path: Some(certs),
            },
        )
        .await
        .unwrap();
        assert_eq!(engine_choice(data.path()), EngineChoice::default());
    }
}
