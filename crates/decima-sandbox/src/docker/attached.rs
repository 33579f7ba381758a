//! A long-lived process in the sandbox container, spoken to over its stdin and stdout: how an
//! MCP server placed in the sandbox runs. It sees `/workspace` as `shell` does, under the
//! container's limits and network setting, as the sandbox user.
//!
//! The Docker API cannot kill an exec, so the process gets its own session under a small
//! wrapper and reports its process group (`decima:pgid N` on stderr, which is taken out of
//! what the caller reads); [`AttachedHandle::kill`] kills that group from a second exec.

use std::pin::Pin;
use std::sync::Arc;

use bollard::container::LogOutput;
use bollard::exec::{CreateExecOptions, StartExecOptions, StartExecResults};
use futures_util::StreamExt;
use tokio::io::{AsyncWrite, AsyncWriteExt, DuplexStream};
use tokio::sync::watch;

use super::DockerSandbox;
use super::exec::scrubbed_env;
use super::paths::{WORKSPACE, container_relative};
use crate::error::SandboxError;

/// Runs `$2…` in directory `$1` in a session of its own, with the wrapper's stdin. The
/// session's first process reports its own id (which is the group's) before it becomes the
/// command, so the report precedes anything the command writes: reported by the wrapper
/// after the fork, it could follow the command's first line and be missed. A background job
/// of a shell without job control would get `/dev/null` as stdin, so the stdin is kept on
/// fd 3 first.
const ATTACHED_WRAPPER: &str = r#"d=$1; shift
cd "$d" 2>/dev/null || { echo decima:cwd-missing >&2; exit 125; }
exec 3<&0
setsid sh -c 'echo "decima:pgid $$" >&2; exec "$@"' decima-session "$@" <&3 3<&- &
p=$!
exec 3<&-
wait "$p"
"#;

/// How long [`AttachedHandle::kill`] waits for a process that has not reported its group yet.
const REPORT_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Bytes buffered between the engine's stream and the reader of stdout or stderr.
const PIPE_BYTES: usize = 256 * 1024;

/// A process started by [`DockerSandbox::spawn_attached`].
pub struct AttachedProcess {
    /// Its stdout.
    pub stdout: DuplexStream,
    /// Its stdin.
    pub stdin: Pin<Box<dyn AsyncWrite + Send>>,
    /// Its stderr (the wrapper's own lines taken out).
    pub stderr: DuplexStream,
    /// What stops it.
    pub handle: AttachedHandle,
}

/// Stops an attached process: its whole process group, from a second exec.
#[derive(Clone)]
pub struct AttachedHandle {
    sandbox: Arc<DockerSandbox>,
    container: String,
    pgid: watch::Receiver<Option<i64>>,
    ended: watch::Receiver<bool>,
}

impl AttachedHandle {
    /// Whether the exec's output ended (the process exited).
    pub fn exited(&self) -> bool {
        *self.ended.borrow()
    }

    /// Kills the process's group inside the container. A group already gone is not an error;
    /// a process that is still starting is waited for, so a kill right after the start is not
    /// lost.
    pub async fn kill(&self) -> Result<(), SandboxError> {
        let Some(pgid) = self.reported_group().await? else {
            return Ok(());
        };
        self.sandbox
            .helper(
                &self.container,
                "stop an attached process",
                vec![
                    "kill".to_owned(),
                    "-s".to_owned(),
                    "KILL".to_owned(),
                    format!("-{pgid}"),
                ],
            )
            .await
            .map(|_| ())
    }
}

impl AttachedHandle {
    /// The process group, once reported; `None` when the exec ended without a report.
    async fn reported_group(&self) -> Result<Option<i64>, SandboxError> {
        let mut pgid = self.pgid.clone();
        let mut ended = self.ended.clone();
        let wait = async {
            loop {
                if let Some(n) = *pgid.borrow_and_update() {
                    return Some(n);
                }
                if *ended.borrow_and_update() {
                    return None;
                }
                tokio::select! {
                    changed = pgid.changed() => if changed.is_err() { return *pgid.borrow(); },
                    changed = ended.changed() => if changed.is_err() { return None; },
                }
            }
        };
        tokio::time::timeout(REPORT_WAIT, wait)
            .await
            .map_err(|_| SandboxError::Docker {
                action: "stop an attached process".to_owned(),
                message: format!(
                    "the process did not report its process group within {} s; \
                     restart the sandbox container to stop it",
                    REPORT_WAIT.as_secs()
                ),
            })
    }
}

/// An attached process as started, before anything holds the sandbox to stop it: the kernel
/// the sandbox keeps for itself stops its process with the sandbox it is part of.
pub(crate) struct Started {
    pub(crate) stdout: DuplexStream,
    pub(crate) stdin: Pin<Box<dyn AsyncWrite + Send>>,
    pub(crate) stderr: DuplexStream,
    pub(crate) container: String,
    pub(crate) pgid: watch::Receiver<Option<i64>>,
    pub(crate) ended: watch::Receiver<bool>,
}

impl DockerSandbox {
    /// Starts `argv` in the container with stdin, stdout and stderr attached, in `cwd` (relative
    /// to the workspace; the workspace when `None`), with the scrubbed environment plus `env`.
    pub async fn spawn_attached(
        self: &Arc<Self>,
        argv: &[String],
        env: &[(String, String)],
        cwd: Option<&str>,
    ) -> Result<AttachedProcess, SandboxError> {
        let started = self.start_attached(argv, env, cwd).await?;
        Ok(AttachedProcess {
            stdout: started.stdout,
            stdin: started.stdin,
            stderr: started.stderr,
            handle: AttachedHandle {
                sandbox: self.clone(),
                container: started.container,
                pgid: started.pgid,
                ended: started.ended,
            },
        })
    }

    /// [`DockerSandbox::spawn_attached`] without the handle that stops it.
    pub(crate) async fn start_attached(
        &self,
        argv: &[String],
        env: &[(String, String)],
        cwd: Option<&str>,
    ) -> Result<Started, SandboxError> {
        let dir = attached_dir(cwd)?;
        let container = self.container().await?;
        let mut cmd = vec![
            "sh".to_owned(),
            "-c".to_owned(),
            ATTACHED_WRAPPER.to_owned(),
            "decima-attached".to_owned(),
            dir,
        ];
        cmd.extend(argv.iter().cloned());
        let mut environment = scrubbed_env();
        environment.extend(env.iter().map(|(k, v)| format!("{k}={v}")));
        let docker = self.engine.client();
        let options = CreateExecOptions {
            attach_stdin: Some(true),
            attach_stdout: Some(true),
            attach_stderr: Some(true),
            tty: Some(false),
            env: Some(environment),
            cmd: Some(cmd),
            privileged: Some(false),
            user: Some(self.config.user.clone()),
            working_dir: Some(WORKSPACE.to_owned()),
            ..Default::default()
        };
        let created = self
            .engine
            .call("create an exec", docker.create_exec(&container, options))
            .await?;
        let start = StartExecOptions {
            detach: false,
            tty: false,
            output_capacity: Some(64 * 1024),
        };
        let started = self
            .engine
            .call("start an exec", docker.start_exec(&created.id, Some(start)))
            .await?;
        let StartExecResults::Attached { output, input } = started else {
            return Err(SandboxError::Docker {
                action: "start an attached process".to_owned(),
                message: "the engine detached the exec".to_owned(),
            });
        };
        let (out_tx, stdout) = tokio::io::duplex(PIPE_BYTES);
        let (err_tx, stderr) = tokio::io::duplex(PIPE_BYTES);
        let (pgid_tx, pgid) = watch::channel(None);
        let (ended_tx, ended) = watch::channel(false);
        tokio::spawn(split_output(output, out_tx, err_tx, pgid_tx, ended_tx));
        Ok(Started {
            stdout,
            stdin: input,
            stderr,
            container,
            pgid,
            ended,
        })
    }
}

/// Where the attached process starts: `cwd` inside the workspace, or the workspace itself.
fn attached_dir(cwd: Option<&str>) -> Result<String, SandboxError> {
    let Some(c) = cwd else {
        return Ok(WORKSPACE.to_owned());
    };
    let rel = container_relative(c).map_err(|e| SandboxError::Docker {
        action: "start an attached process".to_owned(),
        message: e.message,
    })?;
    Ok(if rel.is_empty() {
        WORKSPACE.to_owned()
    } else {
        format!("{WORKSPACE}/{rel}")
    })
}

/// Copies the exec's output to the process's stdout and stderr pipes. The wrapper's first
/// stderr line reports the process group; stderr is held until it has, then passes through.
async fn split_output<S>(
    mut output: S,
    mut out_tx: DuplexStream,
    mut err_tx: DuplexStream,
    pgid_tx: watch::Sender<Option<i64>>,
    ended_tx: watch::Sender<bool>,
) where
    S: futures_util::Stream<Item = Result<LogOutput, bollard::errors::Error>> + Unpin,
{
    let mut pending = Vec::new();
    let mut reported = false;
    while let Some(Ok(chunk)) = output.next().await {
        match chunk {
            LogOutput::StdOut { message } | LogOutput::Console { message } => {
                if out_tx.write_all(&message).await.is_err() {
                    break;
                }
            }
            LogOutput::StdErr { message } => {
                if reported {
                    let _ = err_tx.write_all(&message).await;
                    continue;
                }
                pending.extend_from_slice(&message);
                if let Some(end) = pending.iter().position(|b| *b == b'\n') {
                    let line = String::from_utf8_lossy(&pending[..end]).into_owned();
                    if let Some(n) = line.strip_prefix("decima:pgid ") {
                        let _ = pgid_tx.send(n.trim().parse().ok());
                        pending.drain(..=end);
                    }
                    reported = true;
                    let _ = err_tx.write_all(&pending).await;
                    pending.clear();
                }
            }
            LogOutput::StdIn { .. } => {}
        }
    }
    let _ = err_tx.write_all(&pending).await;
    let _ = ended_tx.send(true);
}
