//! The `shell` tool on the host: one process group per call, a timeout, an output cap.

use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufWriter};
use tokio::net::unix::pipe;

use super::HostLimits;
use super::paths::Workspace;
use crate::error::ToolError;

/// A `shell` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellRequest {
    /// Run as `sh -c COMMAND`.
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
    /// The signal that ended the shell, when one did (9 after a timeout).
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

/// Sends SIGKILL to a whole process group; "no such group" is fine.
///
/// The group's id is `sh`'s pid. While any member lives the id cannot be reused; once all are
/// gone and `sh` is reaped it could be in theory, but the kill follows the reap by
/// microseconds, long before Linux's sequential pids wrap around.
fn kill_group(pgid: Option<Pid>) {
    if let Some(pgid) = pgid {
        let _ = kill_process_group(pgid, Signal::KILL);
    }
}

/// Kills the process group when dropped: at the end of a call, and when the call's future is
/// dropped part way (`kill_on_drop` alone would kill only `sh`, not its children).
struct GroupGuard(Option<Pid>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        kill_group(self.0);
    }
}

/// Collects output: whole in memory up to the cap; past it, streamed to a file with only a head
/// and a tail kept in memory.
struct OutputSink {
    cap: usize,
    head_len: usize,
    tail_len: usize,
    total: u64,
    /// The whole output while it fits under the cap.
    mem: Vec<u8>,
    /// Set once the output went over the cap.
    capped: Option<Capped>,
    /// The workspace and the relative path where the output is saved if it goes over the cap
    /// (checked and its directory created only then).
    spill_to: (Workspace, PathBuf),
}

struct Capped {
    head: Vec<u8>,
    tail: Vec<u8>,
    file: Option<BufWriter<tokio::fs::File>>,
    path: Option<PathBuf>,
    error: Option<String>,
}

impl Capped {
    async fn write(&mut self, bytes: &[u8]) {
        if let Some(file) = &mut self.file
            && let Err(e) = file.write_all(bytes).await
        {
            self.error = Some(format!("saving the output failed part way: {e}"));
            self.file = None;
        }
    }

    fn keep_tail(&mut self, bytes: &[u8], tail_len: usize) {
        if bytes.len() >= tail_len {
            self.tail.clear();
            self.tail
                .extend_from_slice(&bytes[bytes.len() - tail_len..]);
        } else {
            self.tail.extend_from_slice(bytes);
            if self.tail.len() > 2 * tail_len {
                let cut = self.tail.len() - tail_len;
                self.tail.drain(..cut);
            }
        }
    }
}

impl OutputSink {
    async fn push(&mut self, chunk: &[u8]) {
        self.total += chunk.len() as u64;
        if self.capped.is_none() {
            if self.mem.len() + chunk.len() <= self.cap {
                self.mem.extend_from_slice(chunk);
                return;
            }
            let mem = std::mem::take(&mut self.mem);
            let mut capped = Capped {
                head: mem[..mem.len().min(self.head_len)].to_vec(),
                tail: Vec::new(),
                file: None,
                path: None,
                error: None,
            };
            let (ws, name) = &self.spill_to;
            match ws.resolve_for_write(&name.to_string_lossy()) {
                Ok(path) => {
                    match tokio::fs::OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .open(&path)
                        .await
                    {
                        Ok(file) => {
                            capped.file = Some(BufWriter::with_capacity(256 * 1024, file));
                            capped.path = Some(path.clone());
                        }
                        Err(e) => {
                            capped.error =
                                Some(format!("cannot save the output to {}: {e}", path.display()));
                        }
                    }
                }
                Err(why) => capped.error = Some(why.message),
            }
            capped.write(&mem).await;
            capped.keep_tail(&mem, self.tail_len);
            self.capped = Some(capped);
        }
        if let Some(capped) = &mut self.capped {
            if capped.head.len() < self.head_len {
                let take = (self.head_len - capped.head.len()).min(chunk.len());
                capped.head.extend_from_slice(&chunk[..take]);
            }
            capped.write(chunk).await;
            capped.keep_tail(chunk, self.tail_len);
        }
    }

    /// Flushes the file and builds the output text: `(output, truncated, saved file)`.
    async fn finish(self) -> (String, bool, Option<PathBuf>) {
        let Some(mut capped) = self.capped else {
            return (String::from_utf8_lossy(&self.mem).into_owned(), false, None);
        };
        if let Some(file) = &mut capped.file
            && let Err(e) = file.flush().await
        {
            capped.error = Some(format!("saving the output failed at the end: {e}"));
        }
        if capped.error.is_some() {
            capped.path = None;
        }
        let head = utf8_head(&capped.head);
        let tail_start = capped.tail.len().saturating_sub(self.tail_len);
        let tail = utf8_tail(&capped.tail[tail_start..]);
        let omitted = self.total.saturating_sub((head.len() + tail.len()) as u64);
        let note = match (&capped.path, &capped.error) {
            (Some(path), _) => format!(
                "output truncated: {omitted} bytes omitted here; full output ({} bytes) saved to {p}; grep it, e.g. `grep -n PATTERN {p}`",
                self.total,
                p = path.display()
            ),
            (None, Some(err)) => format!(
                "output truncated: {omitted} of {} bytes omitted and not saved ({err})",
                self.total
            ),
            (None, None) => format!(
                "output truncated: {omitted} of {} bytes omitted",
                self.total
            ),
        };
        let mut out = String::from_utf8_lossy(head).into_owned();
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("\n[... {note} ...]\n\n"));
        out.push_str(&String::from_utf8_lossy(tail));
        (out, true, capped.path)
    }
}

/// The head without a UTF-8 sequence cut at its end.
fn utf8_head(bytes: &[u8]) -> &[u8] {
    match std::str::from_utf8(bytes) {
        Err(e) if e.error_len().is_none() => &bytes[..e.valid_up_to()],
        _ => bytes,
    }
}

/// The tail without continuation bytes of a UTF-8 sequence cut at its start.
fn utf8_tail(bytes: &[u8]) -> &[u8] {
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|&&b| (0x80..0xC0).contains(&b))
        .count();
    &bytes[skip..]
}

/// Reads the pipe to its end (EOF comes when every process holding it is gone).
async fn drain(mut rx: pipe::Receiver, sink: &mut OutputSink) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match rx.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => sink.push(&buf[..n]).await,
        }
    }
}

pub(crate) async fn run(
    ws: &Workspace,
    req: &ShellRequest,
    limits: &HostLimits,
) -> Result<ShellOutcome, ToolError> {
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
    let cwd = match &req.cwd {
        None => ws.root().to_path_buf(),
        Some(dir) => {
            let real = ws.resolve_existing(dir)?;
            if !real.is_dir() {
                return Err(ToolError::data(format!("{dir} is not a directory")));
            }
            real
        }
    };
    let spill_name = limits
        .output_dir
        .join(format!("{}.log", uuid::Uuid::now_v7().simple()));
    let mut sink = OutputSink {
        cap: limits.output_cap,
        head_len: limits.preview_head.min(limits.output_cap),
        tail_len: limits.preview_tail.min(limits.output_cap),
        total: 0,
        mem: Vec::new(),
        capped: None,
        spill_to: (ws.clone(), spill_name),
    };

    let (reader, writer) =
        std::io::pipe().map_err(|e| ToolError::system(format!("cannot create a pipe: {e}")))?;
    let writer_err = writer
        .try_clone()
        .map_err(|e| ToolError::system(format!("cannot duplicate a pipe: {e}")))?;
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(&req.command)
        .current_dir(&cwd)
        .env_clear()
        .env("PATH", &limits.path)
        .env("HOME", ws.root())
        .env("LANG", "C.UTF-8")
        .env("LC_ALL", "C.UTF-8")
        .env("TERM", "dumb")
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(writer_err)
        .process_group(0)
        .kill_on_drop(true);
    let started = Instant::now();
    let spawned = cmd.spawn();
    // The command holds our copies of the pipe's write end: drop it so EOF can come.
    drop(cmd);
    let mut child = spawned.map_err(|e| ToolError::system(format!("cannot start sh: {e}")))?;
    let pgid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .and_then(Pid::from_raw);
    // Nothing a call started outlives it: the group is killed when this guard drops.
    let _group = GroupGuard(pgid);
    let rx = pipe::Receiver::from_owned_fd(OwnedFd::from(reader))
        .map_err(|e| ToolError::system(format!("cannot read the command's output: {e}")))?;

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
                    kill_group(pgid);
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
                kill_group(pgid);
                // A process that left the group could keep the pipe open: stop waiting.
                let _ = tokio::time::timeout(limits.drain_grace, &mut reading).await;
            }
        }
    }
    let duration = started.elapsed();
    let status = status.map_err(|e| ToolError::system(format!("cannot wait for sh: {e}")))?;
    let output_bytes = sink.total;
    let (output, truncated, full_output_path) = sink.finish().await;
    Ok(ShellOutcome {
        exit_code: status.code(),
        signal: status.signal(),
        output,
        output_bytes,
        truncated,
        timed_out,
        duration,
        full_output_path,
        timeout,
    })
}
