//! A server's last known state, as the last run or check that started it left it: starting,
//! ready with its tools and what their schemas cost, or failed with why and the last lines of
//! its stderr. It is kept in a small file beside the server's stderr log
//! (`logs/mcp/<name>.state.json`), so Settings shows it whichever process started the server
//! (a CLI run, the window's own runs, a check) without starting it again.

use std::path::{Path, PathBuf};
use std::time::Duration;

use decima_core::Timestamp;
use decima_mcp::McpTool;
use serde::{Deserialize, Serialize};
use tracing::debug;

/// Lines of the stderr log kept with a failed state.
const STDERR_LINES: usize = 10;
/// Bytes read from the end of the stderr log for them.
const STDERR_TAIL_BYTES: u64 = 16 * 1024;
/// A "starting" state older than the server's startup timeout and this much more was left by
/// a process that ended before it could say how the start went.
const STALE_AFTER: Duration = Duration::from_secs(10);

/// How a server's last start went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ServerState {
    /// A run or a check is starting it.
    Starting {
        /// When the start began.
        since: Timestamp,
        /// Its startup timeout, after which a start still "starting" is stale.
        timeout_secs: u64,
    },
    /// It started and listed its tools.
    Ready {
        /// When.
        at: Timestamp,
        /// Its tools.
        tools: u32,
        /// The tokens their schemas take, offered as an OpenAI-compatible request sends them.
        tokens: u32,
        /// How long the start and the listing took.
        started_ms: u64,
    },
    /// It did not start.
    Failed {
        /// When.
        at: Timestamp,
        /// Why, as the run's warning said it.
        error: String,
        /// The last lines of its stderr log.
        stderr: Vec<String>,
    },
}

/// Where the state of server `name` is kept.
pub fn path(data_dir: &Path, name: &str) -> PathBuf {
    data_dir
        .join("logs")
        .join("mcp")
        .join(format!("{name}.state.json"))
}

/// Records a server's state: written whole beside and renamed, so a reader never sees half of
/// it. Best effort: a state that cannot be written costs Settings its line, never the run.
pub fn record(data_dir: &Path, name: &str, state: &ServerState) {
    let target = path(data_dir, name);
    let written = (|| -> std::io::Result<()> {
        if let Some(dir) = target.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = target.with_extension(format!("json.{}.tmp", std::process::id()));
        std::fs::write(&tmp, serde_json::to_vec(state).unwrap_or_default())?;
        std::fs::rename(&tmp, &target)
    })();
    if let Err(e) = written {
        debug!(error = %e, "an MCP server's state could not be recorded");
    }
}

/// The state recorded for server `name`: `None` when none was, when it cannot be read, or when
/// a start still "starting" outlived its timeout (its process ended mid-start).
pub fn read(data_dir: &Path, name: &str) -> Option<ServerState> {
    let bytes = std::fs::read(path(data_dir, name)).ok()?;
    let state: ServerState = serde_json::from_slice(&bytes).ok()?;
    if let ServerState::Starting {
        since,
        timeout_secs,
    } = &state
    {
        let limit = Duration::from_secs(*timeout_secs) + STALE_AFTER;
        let age = Timestamp::now().0.saturating_sub(since.0);
        if u128::try_from(age).unwrap_or(0) > limit.as_millis() {
            return None;
        }
    }
    Some(state)
}

/// A start beginning now.
pub fn starting(timeout: Duration) -> ServerState {
    ServerState::Starting {
        since: Timestamp::now(),
        timeout_secs: timeout.as_secs(),
    }
}

/// A start that listed `tools` (each with the tokens its offer takes) in `started`.
pub fn ready(tools: &[(McpTool, u32)], started: Duration) -> ServerState {
    ServerState::Ready {
        at: Timestamp::now(),
        tools: u32::try_from(tools.len()).unwrap_or(u32::MAX),
        tokens: tools.iter().map(|(_, t)| *t).sum(),
        started_ms: u64::try_from(started.as_millis()).unwrap_or(u64::MAX),
    }
}

/// A start that failed with `error`, with the last lines of the server's stderr `log`.
pub fn failed(error: &str, log: &Path) -> ServerState {
    ServerState::Failed {
        at: Timestamp::now(),
        error: error.to_owned(),
        stderr: last_lines(log, STDERR_LINES),
    }
}

/// The last `n` lines of a log, read from its end only.
fn last_lines(log: &Path, n: usize) -> Vec<String> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let Ok(mut file) = std::fs::File::open(log) else {
        return Vec::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let from = len.saturating_sub(STDERR_TAIL_BYTES);
    let mut tail = Vec::new();
    if file.seek(SeekFrom::Start(from)).is_err() || file.read_to_end(&mut tail).is_err() {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(&tail);
    let mut lines: Vec<&str> = text.lines().collect();
    // A read that starts mid-file starts mid-line.
    if from > 0 && !lines.is_empty() {
        lines.remove(0);
    }
    let start = lines.len().saturating_sub(n);
    lines[start..].iter().map(|l| (*l).to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_reads_back_as_recorded_and_a_stale_start_reads_as_unknown() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path(), "db"), None);
        let log = dir.path().join("db.stderr.log");
        let lines: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&log, lines).unwrap();
        let state = failed("it did not finish the MCP handshake within 30 s", &log);
        record(dir.path(), "db", &state);
        let ServerState::Failed { stderr, error, .. } = read(dir.path(), "db").unwrap() else {
            panic!("not failed");
        };
        assert!(error.contains("handshake"));
        assert_eq!(stderr.first().map(String::as_str), Some("line 21"));
        assert_eq!(stderr.last().map(String::as_str), Some("line 30"));

        record(dir.path(), "db", &starting(Duration::from_secs(30)));
        assert!(matches!(
            read(dir.path(), "db"),
            Some(ServerState::Starting { .. })
        ));
        let left_behind = ServerState::Starting {
            since: Timestamp(Timestamp::now().0 - 60_000),
            timeout_secs: 30,
        };
        record(dir.path(), "db", &left_behind);
        assert_eq!(read(dir.path(), "db"), None);
    }
}
