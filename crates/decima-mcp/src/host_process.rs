//! A stdio server run on the host: in a process tree of its own (a process group on Unix, a
//! job object on Windows, so a shutdown reaches every child it started), with the environment cleared but for a short whitelist and the
//! variables the analyst set, and its stderr written to a capped log file whose last lines
//! explain a failed start.

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use decima_process::{ProcessTree, TreeKiller};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tracing::debug;

use crate::error::{McpError, Result};

/// Variables a host server keeps from Decima's own environment: what programs need to run
/// at all on this system, nothing that names a credential.
const INHERITED: &[&str] = decima_process::ESSENTIAL_VARIABLES;
/// Bytes of stderr kept in a server's log file; what comes after is counted, not written.
const LOG_CAP: u64 = 1024 * 1024;
/// Lines of stderr kept in memory for error messages.
const TAIL_LINES: usize = 20;
/// How long a server may take to exit after its stdin closed, before its tree is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// The process trees of the host servers this process started and has not stopped yet: what
/// [`kill_every_host_server`] stops when the process must end without unwinding.
static LIVE_TREES: Mutex<BTreeMap<u64, TreeKiller>> = Mutex::new(BTreeMap::new());

/// Keys of [`LIVE_TREES`], one per started server.
static NEXT_TREE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn live_trees() -> std::sync::MutexGuard<'static, BTreeMap<u64, TreeKiller>> {
    LIVE_TREES.lock().unwrap_or_else(|p| p.into_inner())
}

/// Kills the process tree of every host server still running. For an exit that skips
/// destructors (`std::process::exit` on a second Ctrl-C, an app closing with runs live):
/// a server's tree is its own, so nothing else would stop it or its children.
pub fn kill_every_host_server() -> usize {
    let trees = std::mem::take(&mut *live_trees());
    for killer in trees.values() {
        killer.kill();
    }
    trees.len()
}

/// The last lines a server wrote to stderr, for error messages.
#[derive(Debug, Clone, Default)]
pub struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    /// Set once the stream ended and the log file holds everything it will.
    ended: Arc<std::sync::atomic::AtomicBool>,
}

impl StderrTail {
    /// Waits up to `limit` for the stream to end: a server that exited may still have lines
    /// on their way, and an error should name them (and the log hold them) when it is made.
    pub async fn settle(&self, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        while !self.ended.load(std::sync::atomic::Ordering::Acquire)
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    fn push(&self, line: String) {
        if let Ok(mut lines) = self.lines.lock() {
            if lines.len() == TAIL_LINES {
                lines.pop_front();
            }
            lines.push_back(line);
        }
    }

    /// The kept lines, oldest first.
    pub fn lines(&self) -> Vec<String> {
        self.lines
            .lock()
            .map(|l| l.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The last lines as a suffix for an error message, or nothing.
    pub fn explain(&self) -> String {
        let lines = self.lines();
        let last: Vec<&str> = lines
            .iter()
            .rev()
            .take(3)
            .rev()
            .map(String::as_str)
            .collect();
        if last.is_empty() {
            String::new()
        } else {
            format!("; its stderr ended with: {}", last.join(" | "))
        }
    }
}

/// A running server process. Dropping it kills its whole process tree.
pub(crate) struct HostProcess {
    child: Child,
    tree: Option<ProcessTree>,
    /// Its key in [`LIVE_TREES`].
    key: u64,
}

/// What [`spawn`] hands back: the process, and its stdout and stdin for the transport.
pub(crate) type Spawned = (HostProcess, ChildStdout, ChildStdin, StderrTail);

/// Starts `command` in `cwd` with only the whitelisted variables and `env`.
pub(crate) fn spawn(
    server: &str,
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: &Path,
    log: Option<PathBuf>,
) -> Result<Spawned> {
    let search_path = env
        .get("PATH")
        .map(std::ffi::OsString::from)
        .or_else(|| std::env::var_os("PATH"));
    let mut cmd = Command::new(decima_process::resolve_program(
        command,
        search_path.as_deref(),
    ));
    cmd.args(args)
        .current_dir(cwd)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    ProcessTree::prepare(&mut cmd);
    for key in INHERITED {
        if let Some(value) = std::env::var_os(key) {
            cmd.env(key, value);
        }
    }
    cmd.envs(env);
    let mut child = cmd.spawn().map_err(|e| McpError::Start {
        server: server.to_owned(),
        message: format!(
            "{command:?} did not run in {} ({e}); check the command and that it is installed",
            cwd.display()
        ),
    })?;
    let tree = ProcessTree::adopt(&child).map_err(|e| McpError::Start {
        server: server.to_owned(),
        message: format!("its processes could not be held together ({e})"),
    })?;
    let key = NEXT_TREE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    live_trees().insert(key, tree.killer());
    let (Some(stdout), Some(stdin), Some(stderr)) =
        (child.stdout.take(), child.stdin.take(), child.stderr.take())
    else {
        return Err(McpError::Start {
            server: server.to_owned(),
            message: "its standard streams could not be opened".into(),
        });
    };
    let tail = keep_stderr(stderr, log);
    let process = HostProcess {
        child,
        tree: Some(tree),
        key,
    };
    Ok((process, stdout, stdin, tail))
}

/// Copies a server's stderr to its log file (up to the cap) and keeps its last lines, on a
/// task of its own until the stream ends.
pub fn keep_stderr<R>(stderr: R, log: Option<PathBuf>) -> StderrTail
where
    R: AsyncRead + Send + Unpin + 'static,
{
    let tail = StderrTail::default();
    tokio::spawn(copy_stderr(stderr, log, tail.clone()));
    tail
}

async fn copy_stderr<R>(stderr: R, log: Option<PathBuf>, tail: StderrTail)
where
    R: AsyncRead + Send + Unpin + 'static,
{
    let mut file = match log {
        Some(path) => {
            if let Some(dir) = path.parent() {
                let _ = tokio::fs::create_dir_all(dir).await;
            }
            rotate_full_log(&path).await;
            tokio::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .await
                .ok()
        }
        None => None,
    };
    // The cap is the file's, not this start's: every run, subagent and check of a server
    // appends to the same log.
    let mut written = match &file {
        Some(f) => f.metadata().await.map(|m| m.len()).unwrap_or(0),
        None => 0,
    };
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some(f) = &mut file
            && written < LOG_CAP
        {
            written += line.len() as u64 + 1;
            let _ = f.write_all(line.as_bytes()).await;
            let _ = f.write_all(b"\n").await;
            if written >= LOG_CAP {
                let _ = f
                    .write_all(b"[decima: the log reached its cap; later lines are not kept]\n")
                    .await;
            }
        }
        tail.push(line.chars().take(400).collect());
    }
    if let Some(f) = &mut file {
        let _ = f.flush().await;
    }
    tail.ended.store(true, std::sync::atomic::Ordering::Release);
}

/// A log that reached its cap is moved to `<log>.1` (replacing the one before), so a server's
/// logs hold its latest lines and never more than twice the cap.
async fn rotate_full_log(path: &Path) {
    let full = tokio::fs::metadata(path)
        .await
        .is_ok_and(|m| m.len() >= LOG_CAP);
    if full {
        let mut old = path.as_os_str().to_owned();
        old.push(".1");
        let _ = tokio::fs::rename(path, PathBuf::from(old)).await;
    }
}

/// What is left to stop of a server once its connection is closed: a host process, or a
/// process in a sandbox container.
pub trait ServerProcess: Send {
    /// Stops it: waits a moment for it to exit on its own, then kills what is left.
    fn stop(self: Box<Self>) -> Pin<Box<dyn Future<Output = ()> + Send>>;
    /// Whether it has exited already.
    fn exited(&mut self) -> bool;
}

impl ServerProcess for HostProcess {
    fn stop(self: Box<Self>) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        Box::pin(self.shutdown())
    }

    fn exited(&mut self) -> bool {
        HostProcess::exited(self)
    }
}

impl HostProcess {
    /// Waits a moment for the server to exit on its own (its stdin is closed by now), then
    /// kills its process tree, and reaps it.
    pub(crate) async fn shutdown(mut self) {
        if tokio::time::timeout(EXIT_GRACE, self.child.wait())
            .await
            .is_err()
        {
            debug!("an MCP server did not exit after its stdin closed; killing its tree");
        }
        if let Some(tree) = self.tree.as_mut() {
            tree.kill();
        }
        let _ = self.child.wait().await;
        // Reaped: the id may be reused from here on, so the drop must not signal it.
        self.forget_tree();
    }

    /// Takes the tree out of the registry and lets it go without signalling anyone.
    fn forget_tree(&mut self) {
        live_trees().remove(&self.key);
        if let Some(tree) = self.tree.take() {
            tree.release_reaped();
        }
    }

    /// Whether the process has exited.
    pub(crate) fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }
}

impl Drop for HostProcess {
    fn drop(&mut self) {
        // The tree, not only the first process: a server started through `npx` or a shell
        // script runs its real process as a child.
        live_trees().remove(&self.key);
        if let Some(mut tree) = self.tree.take() {
            tree.kill();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Waits for the copy task to write `needle` into `path`.
    async fn logged(path: &Path, needle: &str) -> String {
        for _ in 0..200 {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            if text.contains(needle) {
                return text;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("{needle:?} never reached {}", path.display());
    }

    #[tokio::test]
    async fn the_cap_holds_across_starts_and_a_full_log_moves_aside() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("db.stderr.log");
        // An earlier start left the log just under its cap.
        let earlier = "x".repeat(LOG_CAP as usize - 10) + "\n";
        std::fs::write(&log, &earlier).unwrap();
        keep_stderr(
            &b"second start says hello\nand more\n"[..],
            Some(log.clone()),
        );
        let text = logged(&log, "reached its cap").await;
        assert!(
            text.contains("second start says hello"),
            "the line that crosses the cap"
        );
        assert!(!text.contains("and more"), "nothing past the cap");
        // The next start finds it full: it is moved aside and a new log begins.
        keep_stderr(&b"third start\n"[..], Some(log.clone()));
        let text = logged(&log, "third start").await;
        assert_eq!(text, "third start\n");
        let old = std::fs::read_to_string(dir.path().join("db.stderr.log.1")).unwrap();
        assert!(old.starts_with(&earlier), "the full log kept whole");
    }
}
