//! Unix: whether a pid exists, asked with a null signal (`kill(pid, 0)`), which tells nothing of
//! when the process started.

use rustix::io::Errno;
use rustix::process::{Pid, test_kill_process};

use super::Probe;

/// A pid that no process has is gone; one that exists, even another user's, runs.
pub(super) fn probe(pid: u32) -> Probe {
    let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return Probe::Unknown;
    };
    match test_kill_process(pid) {
        Ok(()) | Err(Errno::PERM) => Probe::Running { start_time: None },
        Err(Errno::SRCH) => Probe::Gone,
        Err(_) => Probe::Unknown,
    }
}
