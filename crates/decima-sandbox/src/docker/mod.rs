//! The Docker sandbox: tools run in one locked-down container per conversation.
//!
//! What it guarantees, on top of what [`crate::host`] does:
//! - One container per conversation key, named `decima-<instance>-<key>` and labelled
//!   (`decima.sandbox=1`, `decima.conversation`, `decima.instance`, `decima.run`). It is created
//!   on first use, reused by every later call and every [`DockerSandbox`] for the same key
//!   (found by name; started if stopped), and runs a sleep loop as PID 1.
//! - The container has no network (`network_mode: none`) unless the config asks, a read-only
//!   root filesystem, a memory limit (no extra swap), a CPU limit, a pids limit, every
//!   capability dropped, `no-new-privileges`, and runs as a non-root user (default
//!   `1000:1000`). `/workspace` is a named volume per conversation (labelled like the
//!   container), so it outlives the container; `/tmp` is a tmpfs.
//! - A fresh container's `/workspace` is chowned to the sandbox user if it is not already
//!   (a new volume takes the image's `/workspace`, which may be root's). The sandbox
//!   container cannot do it (no capabilities, and an exec cannot add any), so a one-shot
//!   container on the same volume runs `chown` as root with only `CAP_CHOWN`.
//! - `shell` runs `sh -c COMMAND` as the sandbox user with a scrubbed environment; at the
//!   timeout the command's whole process group is killed inside the container (see
//!   `exec.rs`). Output is capped like the host's: past the cap it is saved to
//!   `/workspace/.decima/output/<id>.log` (collected on the host, then copied in as a tar).
//!   A command killed by a signal it did not get from the timeout reports `128 + signal` as
//!   its exit code (the shell's convention): the engine gives only the wrapper's exit status.
//! - `read_file` / `write_file` take paths relative to `/workspace`; `..`, absolute paths
//!   elsewhere and symlinks that lead out are refused (see [`paths`]). Contents move as tar
//!   archives, never through argv.
//! - Every engine call has a timeout and every stream read its own: a missing or dead engine
//!   is a `System` tool error saying how to start it, never a hang.

pub mod address;
mod attached;
mod engine;
mod exec;
mod file_transfer;
pub mod image;
mod kernel;
mod listing;
pub mod paths;
mod platform;
mod ssh_tunnel;
mod sync;
mod transfer;

pub use attached::{AttachedHandle, AttachedProcess};
pub use sync::AppendedFile;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use bollard::models::{
    ContainerCreateBody, ContainerStateStatusEnum, HostConfig, Mount, MountType,
    VolumeCreateRequest,
};
use bollard::query_parameters::{
    CreateContainerOptions, CreateContainerOptionsBuilder, InspectContainerOptions,
    RemoveContainerOptionsBuilder, WaitContainerOptions,
};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

pub use engine::{
    DEFAULT_SOCKET, DockerEngine, LABEL_CONVERSATION, LABEL_INSTANCE, LABEL_RUN, LABEL_SANDBOX,
};

use crate::error::{SandboxError, ToolError};
use crate::host::{
    BoxFuture, FileContent, HostLimits, ReadFileRequest, Sandbox, ShellOutcome, ShellRequest,
    WriteFileRequest, WriteOutcome,
};
use engine::status;
use paths::WORKSPACE;

/// PID 1 of a sandbox container: sleeps until stopped, exiting at once on SIGTERM (the sleep
/// runs in the background so the trap fires without waiting for it), and reaping orphans.
const PID1: &str = r#"trap "exit 0" TERM; while :; do sleep 3600 & wait $!; done"#;

/// How a conversation's container is set up. Stored per conversation (serde), so a
/// conversation keeps its settings; missing fields take the defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DockerConfig {
    /// The image to run. Default [`DockerConfig::DEFAULT_IMAGE`] (`decima-sandbox:latest`),
    /// the analyst's image Decima builds from its recipe ([`image`]). Most tests use the small
    /// `decima-test:busybox`. An image needs `sh`, `setsid`, `sleep`, `kill`, `realpath`,
    /// `mkdir`, `rm`, `stat` and `chown`.
    pub image: String,
    /// Network access. `false` (the default) runs with `network_mode: none`.
    pub network: bool,
    /// `uid:gid` (numbers) the tools run as. Default `1000:1000`. Numbers, because the uid and
    /// gid go into the headers of uploaded files.
    pub user: String,
    /// Memory limit in bytes (swap not allowed beyond it). Default 1 GiB.
    pub memory_bytes: u64,
    /// CPU limit in billionths of a CPU. Default one CPU.
    pub nano_cpus: u64,
    /// Most processes at once. Default 256.
    pub pids_limit: u64,
    /// Read-only root filesystem (only `/workspace` and `/tmp` writable). Default true.
    pub read_only_root: bool,
    /// Size of the `/tmp` tmpfs in bytes. Default 256 MiB.
    pub tmp_bytes: u64,
}

impl DockerConfig {
    /// The image used when none is configured.
    pub const DEFAULT_IMAGE: &'static str = "decima-sandbox:latest";

    /// The default settings with another image (tests use `decima-test:busybox`).
    pub fn with_image(image: impl Into<String>) -> Self {
        Self {
            image: image.into(),
            ..Self::default()
        }
    }

    /// The workspace path inside the container (fixed).
    pub fn workspace_dir(&self) -> &'static str {
        WORKSPACE
    }

    /// The configured `uid:gid` as numbers.
    pub fn uid_gid(&self) -> Result<(u64, u64), SandboxError> {
        let bad = || {
            SandboxError::InvalidDockerConfig(format!(
                "user {:?} is not `uid` or `uid:gid` in numbers",
                self.user
            ))
        };
        let (uid, gid) = match self.user.split_once(':') {
            Some((u, g)) => (u, g),
            None => (self.user.as_str(), self.user.as_str()),
        };
        let uid = uid.parse().map_err(|_| bad())?;
        let gid = gid.parse().map_err(|_| bad())?;
        Ok((uid, gid))
    }

    /// Checks the settings before they are stored or used: a numeric user that is not root
    /// (the sandbox's isolation assumes it), an image name, limits above zero that the engine
    /// can take.
    pub fn validate(&self) -> Result<(), SandboxError> {
        if self.uid_gid()?.0 == 0 {
            return Err(SandboxError::InvalidDockerConfig(
                "the sandbox user may not be root (uid 0); use a numeric uid such as 1000:1000"
                    .into(),
            ));
        }
        if self.memory_bytes == 0 || self.nano_cpus == 0 || self.pids_limit == 0 {
            return Err(SandboxError::InvalidDockerConfig(
                "memory, CPU and process limits must be above zero".into(),
            ));
        }
        if self.image.trim().is_empty() {
            return Err(SandboxError::InvalidDockerConfig(
                "the image is empty".into(),
            ));
        }
        let as_i64 = |name: &str, v: u64| {
            i64::try_from(v)
                .map_err(|_| SandboxError::InvalidDockerConfig(format!("{name} is too large")))
        };
        as_i64("memory_bytes", self.memory_bytes)?;
        as_i64("nano_cpus", self.nano_cpus)?;
        as_i64("pids_limit", self.pids_limit)?;
        Ok(())
    }
}

impl Default for DockerConfig {
    fn default() -> Self {
        Self {
            image: Self::DEFAULT_IMAGE.to_owned(),
            network: false,
            user: "1000:1000".to_owned(),
            memory_bytes: 1024 * 1024 * 1024,
            nano_cpus: 1_000_000_000,
            pids_limit: 256,
            read_only_root: true,
            tmp_bytes: 256 * 1024 * 1024,
        }
    }
}

/// Runs tools in the Docker container of one conversation.
#[derive(Debug)]
pub struct DockerSandbox {
    engine: DockerEngine,
    config: DockerConfig,
    key: String,
    limits: HostLimits,
    /// A folder of this computer bound at `/workspace` in place of the volume.
    host_folder: Option<PathBuf>,
    /// The container's id once known (cleared when the container turns out to be gone).
    container: tokio::sync::Mutex<Option<String>>,
    /// Bridges to the conversations' Python kernels, started on their first `python` call.
    kernels: kernel::Kernels,
}

impl DockerSandbox {
    /// Connects to the local engine (`DOCKER_HOST` or the default socket) and makes a sandbox
    /// for `conversation_key` in `instance` (see [`DockerEngine::instance_for_data_dir`]). The
    /// container itself is created on first use.
    pub async fn connect(
        config: DockerConfig,
        instance: &str,
        conversation_key: &str,
    ) -> Result<Self, SandboxError> {
        let engine = DockerEngine::connect(instance).await?;
        Self::new(engine, config, conversation_key)
    }

    /// A sandbox for `conversation_key` on an engine already connected. Checks the key and the
    /// config; touches nothing.
    pub fn new(
        engine: DockerEngine,
        config: DockerConfig,
        conversation_key: &str,
    ) -> Result<Self, SandboxError> {
        engine.container_name(conversation_key)?;
        config.validate()?;
        Ok(Self {
            engine,
            config,
            key: conversation_key.to_owned(),
            limits: HostLimits::default(),
            host_folder: None,
            container: tokio::sync::Mutex::new(None),
            kernels: kernel::Kernels::default(),
        })
    }

    /// The same sandbox with `/workspace` bound to `folder` of this computer instead of a
    /// volume, its tools running as this process's user where the platform has one (unix), so
    /// that what they write there is the analyst's (no owner is changed). For MCP servers placed
    /// in Docker beside a run on the host: they must see the files the host tools see. Only an
    /// engine on this computer can bind its folders, so the caller checks that; the key should
    /// differ from the conversation's own sandbox, whose container has the volume.
    pub fn with_host_folder(mut self, folder: PathBuf) -> Self {
        if let Some(user) = platform::host_user() {
            self.config.user = user;
        }
        self.host_folder = Some(folder);
        self
    }

    /// The same sandbox with other tool limits (timeouts, output cap, read caps; `path` and
    /// `output_dir` are not used: the container has its own).
    pub fn with_limits(mut self, limits: HostLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The engine handle.
    pub fn engine(&self) -> &DockerEngine {
        &self.engine
    }

    /// The settings in force.
    pub fn config(&self) -> &DockerConfig {
        &self.config
    }

    /// The conversation key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The container's name.
    pub fn container_name(&self) -> String {
        format!("decima-{}-{}", self.engine.instance(), self.key)
    }

    /// The workspace volume's name.
    pub fn volume_name(&self) -> String {
        format!("decima-{}-{}-ws", self.engine.instance(), self.key)
    }

    /// The running container's id, creating or starting it if needed.
    pub async fn container(&self) -> Result<String, SandboxError> {
        let mut cached = self.container.lock().await;
        if let Some(id) = cached.as_ref() {
            return Ok(id.clone());
        }
        let id = self.ensure_container().await?;
        *cached = Some(id.clone());
        Ok(id)
    }

    /// Forgets the cached container id, so the next call finds (or recreates) it.
    async fn forget_container(&self) {
        *self.container.lock().await = None;
    }

    /// Removes this conversation's container and, when `remove_volume`, its workspace volume.
    pub async fn remove(&self, remove_volume: bool) -> Result<(), SandboxError> {
        self.forget_container().await;
        self.engine
            .remove_conversation(&self.key, remove_volume)
            .await
    }

    async fn ensure_container(&self) -> Result<String, SandboxError> {
        let name = self.container_name();
        let docker = self.engine.client();
        for _ in 0..3 {
            let found = self
                .engine
                .answer(
                    "inspect the sandbox container",
                    docker.inspect_container(&name, None::<InspectContainerOptions>),
                )
                .await?;
            match found {
                Ok(info) => {
                    let id = info.id.unwrap_or_else(|| name.clone());
                    let state = info.state.and_then(|s| s.status);
                    match state {
                        Some(ContainerStateStatusEnum::RUNNING) => return Ok(id),
                        Some(ContainerStateStatusEnum::PAUSED) => {
                            self.engine
                                .call(
                                    "unpause the sandbox container",
                                    docker.unpause_container(&id),
                                )
                                .await?;
                            return Ok(id);
                        }
                        Some(ContainerStateStatusEnum::REMOVING) => {
                            tokio::time::sleep(Duration::from_millis(200)).await;
                            continue;
                        }
                        _ => {
                            tracing::info!(container = %name, "starting the sandbox container");
                            self.start(&id).await?;
                            return Ok(id);
                        }
                    }
                }
                Err(e) if status(&e) == Some(404) => {}
                Err(e) => return Err(engine::engine_error("inspect the sandbox container", e)),
            }
            match self.create(&name).await? {
                Some(id) => {
                    self.start(&id).await?;
                    if self.host_folder.is_none() {
                        self.fix_workspace_owner(&id).await?;
                    }
                    return Ok(id);
                }
                // Someone else created it meanwhile: inspect again.
                None => continue,
            }
        }
        Err(SandboxError::Docker {
            action: "create the sandbox container".to_owned(),
            message: format!("{name} keeps changing state; try again"),
        })
    }

    async fn start(&self, id: &str) -> Result<(), SandboxError> {
        let docker = self.engine.client();
        match self
            .engine
            .answer(
                "start the sandbox container",
                docker.start_container(id, None),
            )
            .await?
        {
            Ok(()) => Ok(()),
            // 304: already started.
            Err(e) if status(&e) == Some(304) => Ok(()),
            Err(e) => Err(engine::engine_error("start the sandbox container", e)),
        }
    }

    /// Creates the volume and the container. `None` when a container of that name appeared
    /// meanwhile (409).
    async fn create(&self, name: &str) -> Result<Option<String>, SandboxError> {
        let docker = self.engine.client();
        let labels = self.engine.labels(&self.key);
        let volume = self.volume_name();
        let (binds, mounts) = match &self.host_folder {
            Some(folder) => (
                None,
                Some(vec![Mount {
                    target: Some(WORKSPACE.to_owned()),
                    source: Some(folder.display().to_string()),
                    typ: Some(MountType::BIND),
                    ..Default::default()
                }]),
            ),
            None => {
                self.engine
                    .call(
                        "create the workspace volume",
                        docker.create_volume(VolumeCreateRequest {
                            name: Some(volume.clone()),
                            labels: Some(labels.clone()),
                            ..Default::default()
                        }),
                    )
                    .await?;
                (Some(vec![format!("{volume}:{WORKSPACE}")]), None)
            }
        };
        let c = &self.config;
        let to_i64 = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        let host_config = HostConfig {
            network_mode: Some(if c.network { "bridge" } else { "none" }.to_owned()),
            readonly_rootfs: Some(c.read_only_root),
            memory: Some(to_i64(c.memory_bytes)),
            memory_swap: Some(to_i64(c.memory_bytes)),
            nano_cpus: Some(to_i64(c.nano_cpus)),
            pids_limit: Some(to_i64(c.pids_limit)),
            cap_drop: Some(vec!["ALL".to_owned()]),
            security_opt: Some(vec!["no-new-privileges".to_owned()]),
            binds,
            mounts,
            tmpfs: Some(HashMap::from([(
                "/tmp".to_owned(),
                format!("rw,nosuid,nodev,size={},mode=1777", c.tmp_bytes),
            )])),
            ..Default::default()
        };
        let body = ContainerCreateBody {
            image: Some(c.image.clone()),
            user: Some(c.user.clone()),
            entrypoint: Some(vec!["sh".to_owned(), "-c".to_owned()]),
            cmd: Some(vec![PID1.to_owned()]),
            env: Some(exec::scrubbed_env()),
            working_dir: Some(WORKSPACE.to_owned()),
            labels: Some(labels),
            network_disabled: Some(!c.network),
            stop_timeout: Some(2),
            host_config: Some(host_config),
            ..Default::default()
        };
        let options = CreateContainerOptionsBuilder::new().name(name).build();
        match self
            .engine
            .answer(
                "create the sandbox container",
                docker.create_container(Some(options), body),
            )
            .await?
        {
            Ok(created) => {
                tracing::info!(container = %name, image = %c.image, "created a sandbox container");
                Ok(Some(created.id))
            }
            Err(e) if status(&e) == Some(409) => Ok(None),
            Err(e) if status(&e) == Some(404) => Err(SandboxError::DockerImageMissing {
                image: c.image.clone(),
            }),
            Err(e) => Err(engine::engine_error("create the sandbox container", e)),
        }
    }

    /// Gives `/workspace` to the sandbox user when it is not theirs yet (see the module doc):
    /// the sandbox container has no capabilities at all (not even for an exec as root), so a
    /// one-shot container on the same volume, as root with only `CAP_CHOWN`, does the chown.
    async fn fix_workspace_owner(&self, id: &str) -> Result<(), SandboxError> {
        let (uid, gid) = self.config.uid_gid()?;
        let owner = format!("{uid}:{gid}");
        let (code, out, err) = self
            .helper(
                id,
                "check who owns the workspace",
                vec!["stat".into(), "-c".into(), "%u:%g".into(), WORKSPACE.into()],
            )
            .await?;
        if code == 0 && out.trim() == owner {
            return Ok(());
        }
        if code != 0 {
            tracing::warn!(error = %err.trim(), "cannot stat the workspace; fixing its owner");
        }
        let docker = self.engine.client();
        let mut labels = self.engine.labels(&self.key);
        labels.insert("decima.role".to_owned(), "chown".to_owned());
        let body = ContainerCreateBody {
            image: Some(self.config.image.clone()),
            user: Some("0:0".to_owned()),
            entrypoint: Some(vec![
                "chown".to_owned(),
                owner.clone(),
                WORKSPACE.to_owned(),
            ]),
            cmd: Some(Vec::new()),
            labels: Some(labels),
            network_disabled: Some(true),
            host_config: Some(HostConfig {
                network_mode: Some("none".to_owned()),
                readonly_rootfs: Some(true),
                cap_drop: Some(vec!["ALL".to_owned()]),
                cap_add: Some(vec!["CHOWN".to_owned()]),
                security_opt: Some(vec!["no-new-privileges".to_owned()]),
                binds: Some(vec![format!("{}:{WORKSPACE}", self.volume_name())]),
                ..Default::default()
            }),
            ..Default::default()
        };
        let fixer = self
            .engine
            .call(
                "create the workspace owner fixer",
                docker.create_container(None::<CreateContainerOptions>, body),
            )
            .await?
            .id;
        let ran = async {
            self.start(&fixer).await?;
            let mut wait = docker.wait_container(&fixer, None::<WaitContainerOptions>);
            match tokio::time::timeout(Duration::from_secs(30), wait.next()).await {
                Err(_) => Err(SandboxError::DockerUnavailable {
                    detail: "no answer within 30 s while fixing the workspace owner".to_owned(),
                }),
                Ok(Some(Ok(done))) if done.status_code == 0 => Ok(()),
                Ok(Some(Ok(done))) => Err(SandboxError::Docker {
                    action: "give the workspace to the sandbox user".to_owned(),
                    message: format!("chown exited with {}", done.status_code),
                }),
                Ok(Some(Err(e))) => Err(engine::engine_error(
                    "give the workspace to the sandbox user",
                    e,
                )),
                Ok(None) => Ok(()),
            }
        }
        .await;
        let removed = self
            .engine
            .call(
                "remove the workspace owner fixer",
                docker.remove_container(
                    &fixer,
                    Some(RemoveContainerOptionsBuilder::new().force(true).build()),
                ),
            )
            .await;
        ran?;
        removed?;
        tracing::info!(container = %self.container_name(), owner, "gave the workspace to the sandbox user");
        Ok(())
    }

    /// Runs `f`; when it fails because the container is gone or stopped (a 404 or 409 from
    /// the engine), forgets the cached id and runs it once more (recreating or restarting the
    /// container).
    async fn retrying<'a, T, F>(&'a self, f: impl Fn() -> F) -> Result<T, ToolError>
    where
        F: std::future::Future<Output = Result<T, ToolError>> + 'a,
    {
        match f().await {
            Err(e) if is_gone(&e) => {
                tracing::info!(container = %self.container_name(), "the sandbox container was gone; recreating it");
                self.forget_container().await;
                f().await
            }
            other => other,
        }
    }
}

/// True when an error says the container is missing or not running.
fn is_gone(err: &ToolError) -> bool {
    let m = &err.message;
    m.contains("(HTTP 404)") || (m.contains("(HTTP 409)") && m.contains("not running"))
}

impl Sandbox for DockerSandbox {
    fn exec(&self, request: ShellRequest) -> BoxFuture<'_, Result<ShellOutcome, ToolError>> {
        Box::pin(async move { self.retrying(|| self.shell(&request)).await })
    }

    fn read_file(&self, request: ReadFileRequest) -> BoxFuture<'_, Result<FileContent, ToolError>> {
        Box::pin(async move { self.retrying(|| self.read_file_impl(&request)).await })
    }

    fn write_file(
        &self,
        request: WriteFileRequest,
    ) -> BoxFuture<'_, Result<WriteOutcome, ToolError>> {
        Box::pin(async move { self.retrying(|| self.write_file_impl(&request)).await })
    }

    fn write_bytes(
        &self,
        path: String,
        bytes: Vec<u8>,
    ) -> BoxFuture<'_, Result<WriteOutcome, ToolError>> {
        Box::pin(async move {
            self.retrying(|| self.write_bytes_impl(&path, bytes.clone()))
                .await
        })
    }

    fn list_files(
        &self,
    ) -> BoxFuture<'_, Result<Vec<crate::host::listing::WorkspaceFile>, ToolError>> {
        Box::pin(async move { self.retrying(|| self.list_files_impl()).await })
    }

    fn read_bytes(&self, path: String, max: u64) -> BoxFuture<'_, Result<Vec<u8>, ToolError>> {
        Box::pin(async move {
            // One byte past the cap says the file is larger, without sending it whole.
            let bytes = self
                .retrying(|| self.read_head_impl(&path, max.saturating_add(1)))
                .await?;
            if bytes.len() as u64 > max {
                return Err(ToolError::data(format!(
                    "{path} is more than the {max} bytes read whole"
                )));
            }
            Ok(bytes)
        })
    }

    fn read_head(&self, path: String, max: u64) -> BoxFuture<'_, Result<Vec<u8>, ToolError>> {
        Box::pin(async move { self.retrying(|| self.read_head_impl(&path, max)).await })
    }

    fn copy_out(&self, path: String, to: PathBuf) -> BoxFuture<'_, Result<u64, ToolError>> {
        Box::pin(async move { self.retrying(|| self.copy_out_impl(&path, &to)).await })
    }

    fn copy_in(
        &self,
        from: PathBuf,
        path: String,
    ) -> BoxFuture<'_, Result<WriteOutcome, ToolError>> {
        Box::pin(async move { self.retrying(|| self.copy_in_impl(&from, &path)).await })
    }

    fn python_unavailable(&self) -> Option<String> {
        None
    }

    fn python(
        &self,
        kernel: String,
        request: crate::kernel::PythonRequest,
    ) -> BoxFuture<'_, Result<crate::kernel::PythonOutcome, ToolError>> {
        Box::pin(async move { self.python_in(&kernel, &request).await })
    }

    fn python_variables(
        &self,
        kernel: String,
    ) -> BoxFuture<'_, Result<Option<Vec<crate::kernel::Variable>>, ToolError>> {
        Box::pin(async move { self.python_variables_in(&kernel).await })
    }
}
