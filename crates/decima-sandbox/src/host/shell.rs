//! The `shell` tool on the host: one process tree per call (a process group on Unix, a job
//! object on Windows), a timeout, an output cap.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use decima_process::{HostShell, OutputPipe, ProcessTree};

use super::HostLimits;
use super::paths::Workspace;
use crate::error::ToolError;
use crate::output::{OutputSink, Spill};

/// A `shell` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellRequest {
    /// Run as `sh -c COMMAND` (on Windows, by PowerShell or `cmd.exe`: see [`HostShell`]).
    pub command: String,
    /// `None` = the default (120 s). Longer than the maximum (1 h) is cut to the maximum.
    pub timeout: Option<Duration>,
    /// A directory inside the workspace to run in, relative to it. `None` = the workspace.
    pub cwd: Option<String>,
}

impl ShellRequest {
    /// A request with the default timeout, run in the workspace.
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            timeout: None,
            cwd: None,
        }
    }

    /// The same request with a timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

/// What a command did. A failing or killed command is still an outcome, not an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellOutcome {
    /// The exit code, when the shell exited normally.
    pub exit_code: Option<i32>,
    /// The signal that ended the shell, when one did (9 after a timeout; never on Windows).
    pub signal: Option<i32>,
    /// Stdout and stderr interleaved in the order written (one pipe), UTF-8 lossily. When
    /// `truncated`, a head and a tail around a marker naming the saved file and a grep hint.
    pub output: String,
    /// Total bytes the command wrote.
    pub output_bytes: u64,
    /// True when `output` is not the whole output.
    pub truncated: bool,
    /// True when the timeout ended the command (its whole process group was killed).
    pub timed_out: bool,
    /// Wall time from spawn to the end of output.
    pub duration: Duration,
    /// Where the whole output was saved, when it was over the cap.
    pub full_output_path: Option<PathBuf>,
    /// The timeout that applied.
    pub timeout: Duration,
}

impl ShellOutcome {
    /// The tool result text for the model: the output, then one status line.
    pub fn to_tool_text(&self) -> String {
        let status = if self.timed_out {
            format!(
                "[timed out after {} s; the command and its children were killed]",
                self.timeout.as_secs_f64()
            )
        } else if let Some(code) = self.exit_code {
            format!("[exit code {code}]")
        } else if let Some(sig) = self.signal {
            format!("[killed by signal {sig}]")
        } else {
            "[ended]".to_owned()
        };
        let mut text = self.output.clone();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&status);
        text
    }
}

/// Reads the pipe to its end (EOF comes when every process holding it is gone).
async fn drain(mut rx: OutputPipe, sink: &mut OutputSink) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match rx.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => sink.push(&buf[..n]).await,
        }
    }
}

/// The checks both sandboxes make before running a command: it is not empty, and its timeout
/// (the default when none is given, cut to the maximum) is at least a second.
pub(crate) fn checked_timeout(
    req: &ShellRequest,
    limits: &HostLimits,
) -> Result<Duration, ToolError> {
    if req.command.trim().is_empty() {
        return Err(ToolError::data("the command is empty"));
    }
    let timeout = req
        .timeout
        .unwrap_or(limits.default_timeout)
        .min(limits.max_timeout);
    if timeout.is_zero() {
        return Err(ToolError::data("the timeout must be at least 1 second"));
    }
    Ok(timeout)
}

/// The system's shell running the command in `cwd`, in a process tree of its own, with an
/// environment of its own (see [`decima_process::shell_environment`]).
fn shell_command(
    ws: &Workspace,
    req: &ShellRequest,
    limits: &HostLimits,
    cwd: &std::path::Path,
) -> Result<decima_process::ShellCommand, ToolError> {
    let shell = HostShell::system().map_err(ToolError::system)?;
    if let Some(why) = shell.cannot_start_in(cwd) {
        return Err(ToolError::system(why));
    }
    let scratch = ws.root().join(&limits.output_dir);
    let mut call = shell
        .command(&req.command, &scratch)
        .map_err(|e| ToolError::system(format!("cannot prepare the command: {e}")))?;
    call.command
        .current_dir(cwd)
        .env_clear()
        .envs(decima_process::shell_environment(ws.root(), &limits.path))
        .stdin(Stdio::null())
        .kill_on_drop(true);
    ProcessTree::prepare(&mut call.command);
    Ok(call)
}

/// Removes the script file a call needed, once the call ended.
struct ScriptFile(Option<PathBuf>);

impl Drop for ScriptFile {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The folder a command starts in: the workspace, or a folder inside it that exists.
fn working_dir(ws: &Workspace, req: &ShellRequest) -> Result<std::path::PathBuf, ToolError> {
    let Some(dir) = &req.cwd else {
        return Ok(ws.root().to_path_buf());
    };
    let real = ws.resolve_existing(dir)?;
    if !real.is_dir() {
        return Err(ToolError::data(format!("{dir} is not a directory")));
    }
    Ok(real)
}

pub(crate) async fn run(
    ws: &Workspace,
    req: &ShellRequest,
    limits: &HostLimits,
) -> Result<ShellOutcome, ToolError> {
    let timeout = checked_timeout(req, limits)?;
    let cwd = working_dir(ws, req)?;
    let spill_name = limits
        .output_dir
        .join(format!("{}.log", uuid::Uuid::now_v7().simple()));
    let mut sink = OutputSink::new(limits, Spill::Workspace(ws.clone(), spill_name));

    let (rx, writer) =
        OutputPipe::new().map_err(|e| ToolError::system(format!("cannot create a pipe: {e}")))?;
    let writer_err = writer
        .try_clone()
        .map_err(|e| ToolError::system(format!("cannot duplicate a pipe: {e}")))?;
    let call = shell_command(ws, req, limits, &cwd)?;
    let _script = ScriptFile(call.script_file);
    let mut cmd = call.command;
    cmd.stdout(writer).stderr(writer_err);
    let started = Instant::now();
    let spawned = cmd.spawn();
    // The command holds our copies of the pipe's write end: drop it so EOF can come.
    drop(cmd);
    let mut child =
        spawned.map_err(|e| ToolError::system(format!("cannot start the shell: {e}")))?;
    // Nothing a call started outlives it: the tree is killed when it drops.
    let mut tree = ProcessTree::adopt(&child)
        .map_err(|e| ToolError::system(format!("cannot hold the command's processes: {e}")))?;

    let mut timed_out = false;
    let status;
    {
        let reading = drain(rx, &mut sink);
        tokio::pin!(reading);
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let mut read_all = false;
        loop {
            tokio::select! {
                () = &mut reading, if !read_all => read_all = true,
                st = child.wait() => {
                    status = st;
                    break;
                }
                () = &mut deadline => {
                    timed_out = true;
                    tree.kill();
                    status = child.wait().await;
                    break;
                }
            }
        }
        if !read_all {
            // Background children may still hold the pipe: give them a moment, then kill
            // the group so the pipe closes.
            if tokio::time::timeout(limits.drain_grace, &mut reading)
                .await
                .is_err()
            {
                tree.kill();
                // A process that left the group could keep the pipe open: stop waiting.
                let _ = tokio::time::timeout(limits.drain_grace, &mut reading).await;
            }
        }
    }
    let duration = started.elapsed();
    drop(tree);
    let status =
        status.map_err(|e| ToolError::system(format!("cannot wait for the shell: {e}")))?;
    let output_bytes = sink.total();
    let (output, truncated, full_output_path) = sink.finish().await;
    Ok(ShellOutcome {
        exit_code: status.code(),
        signal: decima_process::exit_signal(&status),
        output,
        output_bytes,
        truncated,
        timed_out,
        duration,
        full_output_path,
        timeout,
    })
}
