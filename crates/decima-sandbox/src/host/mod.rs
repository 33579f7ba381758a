//! The host sandbox: tools run directly on this machine, inside one execution's workspace.
//!
//! [`Sandbox`] is the one trait both sandboxes implement (the Docker one is [`crate::docker`]);
//! [`HostSandbox`] is the host implementation. The three tools it serves are `shell`,
//! `read_file` and `write_file`; their JSON schemas and argument parsing are in [`tools`].
//!
//! What the host sandbox guarantees:
//! - `shell` runs `sh -c COMMAND` in the workspace (or a directory inside it), in its own
//!   process group, with stdin from `/dev/null` and a scrubbed environment (only `PATH`,
//!   `HOME` = the workspace, `LANG`/`LC_ALL` = `C.UTF-8`, `TERM` = `dumb`). At the timeout the
//!   whole process group is killed. When the main process exits, output still arriving from
//!   background children is drained for a short grace period, then the group is killed: no
//!   process started by a call outlives it.
//! - Output is stdout and stderr interleaved in the order the command wrote them (both go to
//!   one pipe, as in a terminal), converted from UTF-8 lossily. Beyond the output cap it is
//!   streamed to `.decima/output/<id>.log` in the workspace and the result keeps a head and a
//!   tail with a grep hint.
//! - Every file path stays inside the workspace: `..`, absolute paths elsewhere and symlinks
//!   that lead out are refused before anything is touched. (The check resolves paths, then
//!   uses them: a process racing to swap a directory for a symlink in between is not defended
//!   against; the Docker sandbox is the isolation boundary for that.)

pub(crate) mod file_transfer;
pub(crate) mod files;
pub mod listing;
pub(crate) mod paths;
pub(crate) mod shell;
pub mod tools;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::Duration;

pub use crate::error::ToolError;
pub use files::{FileContent, ReadFileRequest, WriteFileRequest, WriteOutcome};
pub use shell::{ShellOutcome, ShellRequest};

use paths::Workspace;

/// A boxed future, so [`Sandbox`] stays object-safe (`Box<dyn Sandbox>`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where tools run. One trait, two implementations: [`HostSandbox`] and
/// [`crate::docker::DockerSandbox`].
pub trait Sandbox: Send + Sync {
    /// Runs a shell command. A command that fails (non-zero exit, killed, timed out) is an
    /// `Ok` outcome that says so; `Err` means the command could not be run at all.
    fn exec(&self, request: ShellRequest) -> BoxFuture<'_, Result<ShellOutcome, ToolError>>;

    /// Reads lines of a text file inside the workspace.
    fn read_file(&self, request: ReadFileRequest) -> BoxFuture<'_, Result<FileContent, ToolError>>;

    /// Writes a file inside the workspace atomically, creating parent directories.
    fn write_file(
        &self,
        request: WriteFileRequest,
    ) -> BoxFuture<'_, Result<WriteOutcome, ToolError>>;

    /// Writes bytes the same way: what a tool returned that is not text (an image an MCP
    /// server made) is saved where the model can find it.
    fn write_bytes(
        &self,
        path: String,
        bytes: Vec<u8>,
    ) -> BoxFuture<'_, Result<WriteOutcome, ToolError>>;

    /// The workspace's files with their sizes and times, without reading them: what a call
    /// created or changed is the difference between two listings.
    fn list_files(&self) -> BoxFuture<'_, Result<Vec<listing::WorkspaceFile>, ToolError>>;

    /// A file of the workspace read whole, refused when larger than `max` bytes: a chart a
    /// command saved, for the model and the window.
    fn read_bytes(&self, path: String, max: u64) -> BoxFuture<'_, Result<Vec<u8>, ToolError>>;

    /// Up to `max` bytes from the start of a file of the workspace: a preview reads a few MB of
    /// a file of any size (a 2 GB CSV shows its first rows and is never read whole).
    fn read_head(&self, path: String, max: u64) -> BoxFuture<'_, Result<Vec<u8>, ToolError>>;

    /// Copies a file of the workspace to a host path the analyst picked, streamed ("save
    /// as"); a failed copy leaves nothing there. Returns the bytes copied.
    fn copy_out(&self, path: String, to: PathBuf) -> BoxFuture<'_, Result<u64, ToolError>>;

    /// Copies a host file into the workspace as `path`, streamed and never over a file already
    /// there: a file the analyst dropped on the conversation.
    fn copy_in(
        &self,
        from: PathBuf,
        path: String,
    ) -> BoxFuture<'_, Result<WriteOutcome, ToolError>>;

    /// The language `exec` runs commands in, for the model's tool description: `sh` in a
    /// container, the system's shell on the host.
    fn shell_kind(&self) -> decima_process::ShellKind {
        decima_process::ShellKind::Posix
    }

    /// Why this sandbox offers no `python` tool; `None` when it does. A sandbox without a
    /// kernel says so in Settings, and the model is never offered the tool.
    fn python_unavailable(&self) -> Option<String> {
        Some(
            "the host sandbox has no Python kernel: run in the Docker sandbox, whose analyst \
             image has one"
                .to_owned(),
        )
    }

    /// Runs one cell in the kernel named `kernel` (a conversation's id): its variables persist
    /// from call to call.
    fn python(
        &self,
        kernel: String,
        request: crate::kernel::PythonRequest,
    ) -> BoxFuture<'_, Result<crate::kernel::PythonOutcome, ToolError>> {
        let _ = (kernel, request);
        let why = self.python_unavailable().unwrap_or_default();
        Box::pin(async move { Err(ToolError::system(why)) })
    }

    /// The variables in kernel `kernel`'s memory; `None` when no kernel of it is running.
    fn python_variables(
        &self,
        kernel: String,
    ) -> BoxFuture<'_, Result<Option<Vec<crate::kernel::Variable>>, ToolError>> {
        let _ = kernel;
        Box::pin(async { Ok(None) })
    }
}

/// The host sandbox's limits. `Default` gives the documented values.
#[derive(Debug, Clone)]
pub struct HostLimits {
    /// Timeout when the call gives none: 120 s.
    pub default_timeout: Duration,
    /// Longest timeout a call may ask for; longer requests are cut to this: 1 h.
    pub max_timeout: Duration,
    /// Output up to this many bytes is returned whole and kept in memory; beyond it the output
    /// is saved to a file and the result is a head and a tail: 1 MiB.
    pub output_cap: usize,
    /// Bytes of the head kept in the preview of a capped output: 16 KiB.
    pub preview_head: usize,
    /// Bytes of the tail kept in the preview of a capped output: 16 KiB.
    pub preview_tail: usize,
    /// How long output is still read after the main process exits (background children may
    /// hold the pipe) before the process group is killed: 250 ms.
    pub drain_grace: Duration,
    /// Where capped output is saved, relative to the workspace: `.decima/output`.
    pub output_dir: PathBuf,
    /// `PATH` for commands: the parent's `PATH`, or `/usr/local/bin:/usr/bin:/bin`.
    pub path: String,
    /// `read_file` returns at most this many lines when the call gives no limit: 2000.
    pub read_default_lines: usize,
    /// `read_file` returns at most this many bytes of text: 256 KiB.
    pub read_max_bytes: usize,
    /// Longer lines are cut by `read_file`: 4 KiB.
    pub read_max_line_bytes: usize,
}

impl Default for HostLimits {
    fn default() -> Self {
        Self {
            default_timeout: Duration::from_secs(120),
            max_timeout: Duration::from_secs(3600),
            output_cap: 1024 * 1024,
            preview_head: 16 * 1024,
            preview_tail: 16 * 1024,
            drain_grace: Duration::from_millis(250),
            output_dir: PathBuf::from(".decima/output"),
            path: std::env::var("PATH")
                .ok()
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".to_owned()),
            read_default_lines: 2000,
            read_max_bytes: 256 * 1024,
            read_max_line_bytes: 4 * 1024,
        }
    }
}

/// Runs tools directly on this machine, inside one workspace directory.
#[derive(Debug, Clone)]
pub struct HostSandbox {
    workspace: PathBuf,
    limits: HostLimits,
}

impl HostSandbox {
    /// A sandbox for `workspace` (which should exist; every call checks it still does).
    pub fn new(workspace: PathBuf, limits: HostLimits) -> Self {
        Self { workspace, limits }
    }

    /// The workspace directory as given.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The limits in force.
    pub fn limits(&self) -> &HostLimits {
        &self.limits
    }

    fn open_workspace(&self) -> Result<Workspace, ToolError> {
        Workspace::open(&self.workspace)
    }
}

impl Sandbox for HostSandbox {
    fn shell_kind(&self) -> decima_process::ShellKind {
        decima_process::HostShell::system().map_or(
            decima_process::ShellKind::Posix,
            decima_process::HostShell::kind,
        )
    }

    fn exec(&self, request: ShellRequest) -> BoxFuture<'_, Result<ShellOutcome, ToolError>> {
        Box::pin(async move {
            let ws = self.open_workspace()?;
            shell::run(&ws, &request, &self.limits).await
        })
    }

    fn read_file(&self, request: ReadFileRequest) -> BoxFuture<'_, Result<FileContent, ToolError>> {
        Box::pin(async move {
            let ws = self.open_workspace()?;
            let limits = self.limits.clone();
            tokio::task::spawn_blocking(move || files::read(&ws, &request, &limits))
                .await
                .map_err(|e| ToolError::system(format!("read_file task failed: {e}")))?
        })
    }

    fn write_file(
        &self,
        request: WriteFileRequest,
    ) -> BoxFuture<'_, Result<WriteOutcome, ToolError>> {
        Box::pin(async move {
            let ws = self.open_workspace()?;
            tokio::task::spawn_blocking(move || files::write(&ws, &request))
                .await
                .map_err(|e| ToolError::system(format!("write_file task failed: {e}")))?
        })
    }

    fn write_bytes(
        &self,
        path: String,
        bytes: Vec<u8>,
    ) -> BoxFuture<'_, Result<WriteOutcome, ToolError>> {
        Box::pin(async move {
            let ws = self.open_workspace()?;
            tokio::task::spawn_blocking(move || files::write_bytes(&ws, &path, &bytes))
                .await
                .map_err(|e| ToolError::system(format!("write task failed: {e}")))?
        })
    }

    fn list_files(&self) -> BoxFuture<'_, Result<Vec<listing::WorkspaceFile>, ToolError>> {
        Box::pin(async move {
            let ws = self.open_workspace()?;
            tokio::task::spawn_blocking(move || listing::list(&ws))
                .await
                .map_err(|e| ToolError::system(format!("list task failed: {e}")))?
        })
    }

    fn read_bytes(&self, path: String, max: u64) -> BoxFuture<'_, Result<Vec<u8>, ToolError>> {
        Box::pin(async move {
            let ws = self.open_workspace()?;
            tokio::task::spawn_blocking(move || listing::read_bytes(&ws, &path, max))
                .await
                .map_err(|e| ToolError::system(format!("read task failed: {e}")))?
        })
    }

    fn read_head(&self, path: String, max: u64) -> BoxFuture<'_, Result<Vec<u8>, ToolError>> {
        Box::pin(async move {
            let ws = self.open_workspace()?;
            tokio::task::spawn_blocking(move || file_transfer::read_head(&ws, &path, max))
                .await
                .map_err(|e| ToolError::system(format!("read task failed: {e}")))?
        })
    }

    fn copy_out(&self, path: String, to: PathBuf) -> BoxFuture<'_, Result<u64, ToolError>> {
        Box::pin(async move {
            let ws = self.open_workspace()?;
            tokio::task::spawn_blocking(move || file_transfer::copy_out(&ws, &path, &to))
                .await
                .map_err(|e| ToolError::system(format!("copy task failed: {e}")))?
        })
    }

    fn copy_in(
        &self,
        from: PathBuf,
        path: String,
    ) -> BoxFuture<'_, Result<WriteOutcome, ToolError>> {
        Box::pin(async move {
            let ws = self.open_workspace()?;
            tokio::task::spawn_blocking(move || file_transfer::copy_in(&ws, &from, &path))
                .await
                .map_err(|e| ToolError::system(format!("copy task failed: {e}")))?
        })
    }
}
