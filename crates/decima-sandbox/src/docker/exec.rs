//! Running processes in the sandbox container: the exec primitive (every stream read under a
//! deadline) and the `shell` tool on top of it.
//!
//! The shell command runs under a small wrapper script (see [`SHELL_WRAPPER`]) inside the
//! container: the command gets its own session (`setsid`), so its process group id is its pid;
//! a watchdog in another session kills that whole group with SIGKILL at the timeout; when the
//! command exits, children still alive get 250 ms and are then killed, so nothing a call starts
//! outlives it. The kill happens inside the container, so it works even if the engine or this
//! process is slow. The wrapper reports on its stderr (`decima:` lines); the command's stdout
//! and stderr both go to the exec's stdout, interleaved as written.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bollard::container::LogOutput;
use bollard::exec::{CreateExecOptions, StartExecOptions, StartExecResults};
use futures_util::StreamExt;

use super::DockerSandbox;
use super::paths::{WORKSPACE, container_relative};
use crate::error::{SandboxError, ToolError};
use crate::host::{ShellOutcome, ShellRequest};
use crate::output::{OutputSink, Spill};

/// `PATH` inside the container.
pub(crate) const CONTAINER_PATH: &str =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The scrubbed environment every exec gets (the same idea as the host sandbox's).
pub(crate) fn scrubbed_env() -> Vec<String> {
    vec![
        format!("PATH={CONTAINER_PATH}"),
        format!("HOME={WORKSPACE}"),
        "LANG=C.UTF-8".to_owned(),
        "LC_ALL=C.UTF-8".to_owned(),
        "TERM=dumb".to_owned(),
    ]
}

/// Runs `$3` with `sh -c` in directory `$2`, killed with its whole process group after `$1`
/// seconds. The watchdog is killed by pid first, then by group: it may not have reached its
/// `setsid` yet (then the pid kill stops it before it sleeps), or it may have (then the group
/// kill takes its `sleep` too). Exit 125 with a `decima:cwd-*` line when the directory is missing or (through a
/// symlink) outside the workspace. Needs `sh`, `setsid`, `sleep`, `kill` and `rm` in the
/// image (busybox or coreutils + util-linux).
const SHELL_WRAPPER: &str = r#"t=$1; d=$2; c=$3
cd "$d" 2>/dev/null || { echo decima:cwd-missing >&2; exit 125; }
case $(pwd -P) in /workspace|/workspace/*) ;; *) echo decima:cwd-outside >&2; exit 125;; esac
m=/tmp/.decima-timeout.$$
rm -f "$m"
setsid sh -c "$c" </dev/null 2>&1 &
p=$!
echo "decima:pgid $p" >&2
setsid sh -c 'sleep "$1"; : >"$2"; kill -s KILL "-$3"' decima-watchdog "$t" "$m" "$p" </dev/null >/dev/null 2>&1 &
w=$!
wait "$p"; rc=$?
kill -s KILL "$w" 2>/dev/null; kill -s KILL "-$w" 2>/dev/null
if kill -0 "-$p" 2>/dev/null; then sleep 0.25; kill -s KILL "-$p" 2>/dev/null; fi
if [ -e "$m" ]; then rm -f "$m"; echo decima:timeout >&2; fi
exit $rc
"#;

/// Extra time past a command's timeout before we stop waiting for the engine: the in-container
/// watchdog should have ended the exec long before.
const ENGINE_SLACK: Duration = Duration::from_secs(15);

/// Where an exec's stdout goes.
pub(crate) enum Stdout<'a> {
    /// The shell tool's capped collector.
    Sink(&'a mut OutputSink),
    /// A buffer for helper commands; bytes past the cap are dropped.
    Buf(&'a mut Vec<u8>, usize),
}

/// What one exec ended with.
pub(crate) struct ExecEnd {
    /// The exit code from `inspect_exec` (`None` if the engine did not give one).
    pub(crate) exit_code: Option<i64>,
    /// The first 64 KiB of stderr.
    pub(crate) stderr: Vec<u8>,
}

/// One exec to run.
pub(crate) struct ExecSpec<'a> {
    pub(crate) cmd: Vec<String>,
    pub(crate) user: &'a str,
}

impl DockerSandbox {
    /// Runs one exec in the container and waits for it, reading its output until `deadline`.
    /// Past the deadline it gives up with `DockerUnavailable` (the engine stopped answering).
    pub(crate) async fn run_exec(
        &self,
        container: &str,
        spec: ExecSpec<'_>,
        deadline: Instant,
        mut stdout: Stdout<'_>,
    ) -> Result<ExecEnd, SandboxError> {
        let engine = &self.engine;
        let docker = engine.client();
        let options = CreateExecOptions {
            attach_stdin: Some(false),
            attach_stdout: Some(true),
            attach_stderr: Some(true),
            tty: Some(false),
            env: Some(scrubbed_env()),
            cmd: Some(spec.cmd),
            privileged: Some(false),
            user: Some(spec.user.to_owned()),
            working_dir: Some(WORKSPACE.to_owned()),
            ..Default::default()
        };
        let created = engine
            .call("create an exec", docker.create_exec(container, options))
            .await?;
        let start = StartExecOptions {
            detach: false,
            tty: false,
            output_capacity: Some(64 * 1024),
        };
        let started = engine
            .call("start an exec", docker.start_exec(&created.id, Some(start)))
            .await?;
        let StartExecResults::Attached { mut output, input } = started else {
            return Err(SandboxError::Docker {
                action: "start an exec".to_owned(),
                message: "the engine detached the exec".to_owned(),
            });
        };
        drop(input);
        let mut stderr = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let next = match tokio::time::timeout(left, output.next()).await {
                Err(_) => {
                    return Err(SandboxError::DockerUnavailable {
                        detail: "the engine stopped sending an exec's output".to_owned(),
                    });
                }
                Ok(None) => break,
                Ok(Some(next)) => next,
            };
            match next.map_err(|e| super::engine::engine_error("read an exec's output", e))? {
                LogOutput::StdOut { message } | LogOutput::Console { message } => match &mut stdout
                {
                    Stdout::Sink(sink) => sink.push(&message).await,
                    Stdout::Buf(buf, cap) => {
                        let room = cap.saturating_sub(buf.len());
                        buf.extend_from_slice(&message[..message.len().min(room)]);
                    }
                },
                LogOutput::StdErr { message } => {
                    let room = (64 * 1024usize).saturating_sub(stderr.len());
                    stderr.extend_from_slice(&message[..message.len().min(room)]);
                }
                LogOutput::StdIn { .. } => {}
            }
        }
        // The stream ends when the process is gone; the engine may take a moment to record
        // the exit code.
        let mut exit_code = None;
        for attempt in 0..20 {
            let inspected = engine
                .call("inspect an exec", docker.inspect_exec(&created.id))
                .await?;
            if inspected.running != Some(true) {
                exit_code = inspected.exit_code;
                break;
            }
            if attempt == 19 || Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Ok(ExecEnd { exit_code, stderr })
    }

    /// Runs a small helper command as the sandbox user: `(exit code, stdout, stderr)`, each
    /// output up to 64 KiB.
    pub(crate) async fn helper(
        &self,
        container: &str,
        what: &str,
        cmd: Vec<String>,
    ) -> Result<(i64, String, String), SandboxError> {
        let mut out = Vec::new();
        let user = self.config.user.as_str();
        let end = self
            .run_exec(
                container,
                ExecSpec { cmd, user },
                Instant::now() + Duration::from_secs(30),
                Stdout::Buf(&mut out, 64 * 1024),
            )
            .await?;
        let code = end.exit_code.ok_or_else(|| SandboxError::Docker {
            action: what.to_owned(),
            message: "the engine gave no exit code".to_owned(),
        })?;
        Ok((
            code,
            String::from_utf8_lossy(&out).into_owned(),
            String::from_utf8_lossy(&end.stderr).into_owned(),
        ))
    }

    /// The `shell` tool in the container.
    pub(crate) async fn shell(&self, req: &ShellRequest) -> Result<ShellOutcome, ToolError> {
        let limits = &self.limits;
        let timeout = crate::host::shell::checked_timeout(req, limits)?;
        let cwd = match &req.cwd {
            None => WORKSPACE.to_owned(),
            Some(dir) => {
                let rel = container_relative(dir)?;
                if rel.is_empty() {
                    WORKSPACE.to_owned()
                } else {
                    format!("{WORKSPACE}/{rel}")
                }
            }
        };
        let container = self.container().await?;
        let id = uuid::Uuid::now_v7().simple().to_string();
        let spill = TempFile(std::env::temp_dir().join(format!("decima-docker-output-{id}.log")));
        let mut sink = OutputSink::new(limits, Spill::HostFile(spill.0.clone()));
        let cmd = vec![
            "sh".to_owned(),
            "-c".to_owned(),
            SHELL_WRAPPER.to_owned(),
            "decima-shell".to_owned(),
            format!("{:.3}", timeout.as_secs_f64()),
            cwd,
            req.command.clone(),
        ];
        tracing::debug!(container = %container, timeout_s = timeout.as_secs_f64(), "docker shell");
        let started = Instant::now();
        let ran = self
            .run_exec(
                &container,
                ExecSpec {
                    cmd,
                    user: &self.config.user,
                },
                started + timeout + ENGINE_SLACK,
                Stdout::Sink(&mut sink),
            )
            .await;
        let duration = started.elapsed();
        let end = match ran {
            Ok(end) => end,
            Err(e) => {
                tracing::warn!(container = %container, error = %e, "docker shell failed");
                return Err(e.into());
            }
        };
        let report = String::from_utf8_lossy(&end.stderr);
        let mut timed_out = false;
        for line in report.lines() {
            match line.trim() {
                "decima:timeout" => timed_out = true,
                "decima:cwd-missing" => {
                    return Err(ToolError::data(format!(
                        "no such directory in the workspace: {}",
                        req.cwd.as_deref().unwrap_or(".")
                    )));
                }
                "decima:cwd-outside" => {
                    return Err(ToolError::outside_workspace(format!(
                        "{} resolves outside the workspace (through a symlink)",
                        req.cwd.as_deref().unwrap_or(".")
                    )));
                }
                _ => {}
            }
        }
        let output_bytes = sink.total();
        let mut captured = sink.capture().await;
        let mut shown = None;
        if let Some(saved) = captured.saved_file().map(PathBuf::from) {
            let target = format!("{WORKSPACE}/.decima/output/{id}.log");
            match self.upload_host_file(&saved, &target).await {
                Ok(()) => shown = Some(PathBuf::from(target)),
                Err(e) => {
                    captured.set_save_error(format!("cannot copy it into the container: {e}"))
                }
            }
        }
        drop(spill);
        let (output, truncated, full_output_path) = captured.render(shown);
        let exit_code = end.exit_code.and_then(|c| i32::try_from(c).ok());
        Ok(ShellOutcome {
            exit_code: if timed_out { None } else { exit_code },
            signal: if timed_out { Some(9) } else { None },
            output,
            output_bytes,
            truncated,
            timed_out,
            duration,
            full_output_path,
            timeout,
        })
    }
}

/// A host temporary file removed when dropped.
pub(crate) struct TempFile(pub(crate) PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
