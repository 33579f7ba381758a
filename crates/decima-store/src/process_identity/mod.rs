//! Which process holds a claim or a lease, named well enough that another process on the same
//! machine can tell whether it still runs.
//!
//! A conversation's claim and a run's lease lapse on their own when their holder stops renewing
//! them, which keeps a conversation busy for up to a minute after a `decima chat` was killed.
//! On the holder's own machine the kernel knows better: so a holder records its pid, the
//! machine's boot id and the process's start time, and a later claimant on the same boot asks.
//! No such process (or only its zombie), or a pid that now names a process started at another
//! time (the pid was reused), means the holder is gone and its claim may be taken at once.
//!
//! A holder on another machine (another boot id), or a holder or a machine without a boot id
//! (old rows, Unix systems other than Linux), is never judged: its time to live decides, as
//! before. Windows names its boot by the kernel's boot time and a process by its creation time.
//! The boot id includes the pid namespace, because two containers on one kernel share a boot
//! id while a pid means a different process in each.

use std::fmt;
use std::sync::OnceLock;

#[cfg(unix)]
mod signal;
#[cfg(target_os = "linux")]
#[path = "linux.rs"]
mod sys;
#[cfg(all(unix, not(target_os = "linux")))]
#[path = "unix.rs"]
mod sys;
#[cfg(windows)]
#[path = "windows.rs"]
mod sys;
#[cfg(not(any(unix, windows)))]
#[path = "other.rs"]
mod sys;

/// What the kernel says about a pid on this machine.
#[cfg_attr(not(any(unix, windows)), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    /// A live process has this pid; its start time when the system tells it.
    Running { start_time: Option<u64> },
    /// No live process has this pid (a zombie counts as gone: it holds nothing).
    Gone,
    /// The system cannot tell.
    Unknown,
}

/// A process, named so that a process on the same machine can tell whether it still runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProcessIdentity {
    /// Its process id.
    pub pid: u32,
    /// The boot (and pid namespace) it ran in; `None` where the system has no boot id, and then
    /// it is never judged from elsewhere.
    pub boot_id: Option<String>,
    /// When it started, in the kernel's clock ticks since boot (Linux), to tell a reused pid
    /// from the same process.
    pub start_time: Option<u64>,
}

/// Whether a recorded process still runs, as judged from this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// It runs (or a process with its pid runs and nothing says it is another one).
    Alive,
    /// No process has its pid any more.
    Ended,
    /// Its pid now names another process (one with another start time).
    Reused,
    /// It ran on another machine or boot, or this system cannot tell.
    Unknown,
}

impl Liveness {
    /// True when the process is known to be gone, so what it held may be taken at once.
    pub fn is_gone(self) -> bool {
        matches!(self, Self::Ended | Self::Reused)
    }
}

impl ProcessIdentity {
    /// This process: what a claim or lease it takes records.
    pub fn current() -> &'static ProcessIdentity {
        static CURRENT: OnceLock<ProcessIdentity> = OnceLock::new();
        CURRENT.get_or_init(|| {
            let pid = std::process::id();
            Self::of(pid).unwrap_or(ProcessIdentity {
                pid,
                boot_id: this_boot_id().map(str::to_owned),
                start_time: None,
            })
        })
    }

    /// The running process `pid` of this machine, named as [`ProcessIdentity::current`] names
    /// this one; `None` when no process has that pid (or the system cannot tell). For a process
    /// that claims on another's behalf, and for tests.
    pub fn of(pid: u32) -> Option<Self> {
        match sys::probe(pid) {
            Probe::Running { start_time } => Some(Self {
                pid,
                boot_id: this_boot_id().map(str::to_owned),
                start_time,
            }),
            Probe::Gone | Probe::Unknown => None,
        }
    }

    /// Whether this process still runs, judged from this machine: only a process recorded on
    /// this very boot is ever judged gone.
    pub fn liveness(&self) -> Liveness {
        judge(self, this_boot_id(), sys::probe)
    }

    /// The identity from a row's nullable columns; `None` when the row names no process (a
    /// row an older Decima wrote) or names one no system has.
    pub(crate) fn from_columns(
        pid: Option<i64>,
        boot_id: Option<String>,
        start_time: Option<i64>,
    ) -> Option<Self> {
        let pid = u32::try_from(pid?).ok().filter(|p| *p > 0)?;
        Some(Self {
            pid,
            boot_id,
            start_time: start_time.and_then(|t| u64::try_from(t).ok()),
        })
    }

    /// The pid as the `pid` column stores it.
    pub(crate) fn pid_column(&self) -> i64 {
        i64::from(self.pid)
    }

    /// The start time as the `start_time` column stores it.
    pub(crate) fn start_time_column(&self) -> Option<i64> {
        self.start_time.and_then(|t| i64::try_from(t).ok())
    }
}

/// This machine's boot id (with its pid namespace), read once; `None` where there is none.
pub fn this_boot_id() -> Option<&'static str> {
    static BOOT: OnceLock<Option<String>> = OnceLock::new();
    BOOT.get_or_init(sys::boot_id).as_deref()
}

/// The rule, apart from the system: judged only on the same boot, a missing pid is gone, and
/// a pid whose start time differs from the recorded one was reused.
fn judge(holder: &ProcessIdentity, here: Option<&str>, probe: impl Fn(u32) -> Probe) -> Liveness {
    let same_boot = matches!((holder.boot_id.as_deref(), here), (Some(a), Some(b)) if a == b);
    if !same_boot {
        return Liveness::Unknown;
    }
    match probe(holder.pid) {
        Probe::Gone => Liveness::Ended,
        Probe::Running {
            start_time: Some(now),
        } if holder.start_time.is_some_and(|then| then != now) => Liveness::Reused,
        Probe::Running { .. } => Liveness::Alive,
        Probe::Unknown => Liveness::Unknown,
    }
}

/// A holder found gone from this machine, whose claim or lease was taken over: what the person
/// is told ("took over … from process 4242, which is no longer running").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoneHolder {
    /// Its pid.
    pub pid: u32,
    /// How it described itself.
    pub owner: String,
    /// Its pid now names another process (rather than none).
    pub pid_reused: bool,
}

impl fmt::Display for GoneHolder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "process {}, which is no longer running", self.pid)?;
        if self.pid_reused {
            write!(f, " (its process id now belongs to another process)")?;
        }
        Ok(())
    }
}

impl GoneHolder {
    /// The holder `identity` (described as `owner`) when it is gone from this machine.
    pub(crate) fn judged(identity: &ProcessIdentity, owner: String) -> Option<Self> {
        let liveness = identity.liveness();
        liveness.is_gone().then(|| Self {
            pid: identity.pid,
            owner,
            pid_reused: liveness == Liveness::Reused,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(boot: Option<&str>, start_time: Option<u64>) -> ProcessIdentity {
        ProcessIdentity {
            pid: 4242,
            boot_id: boot.map(str::to_owned),
            start_time,
        }
    }

    #[test]
    fn only_a_holder_of_this_boot_is_judged() {
        let gone = |_| Probe::Gone;
        assert_eq!(
            judge(&holder(Some("a"), None), Some("a"), gone),
            Liveness::Ended
        );
        assert_eq!(
            judge(&holder(Some("b"), None), Some("a"), gone),
            Liveness::Unknown
        );
        assert_eq!(
            judge(&holder(None, None), Some("a"), gone),
            Liveness::Unknown
        );
        assert_eq!(judge(&holder(None, None), None, gone), Liveness::Unknown);
        assert_eq!(
            judge(&holder(Some("a"), None), None, gone),
            Liveness::Unknown
        );
    }

    #[test]
    fn a_different_start_time_is_a_reused_pid() {
        let running = |t| move |_| Probe::Running { start_time: t };
        let h = holder(Some("a"), Some(100));
        assert_eq!(judge(&h, Some("a"), running(Some(100))), Liveness::Alive);
        assert_eq!(judge(&h, Some("a"), running(Some(101))), Liveness::Reused);
        assert_eq!(judge(&h, Some("a"), running(None)), Liveness::Alive);
        let unknown_start = holder(Some("a"), None);
        assert_eq!(
            judge(&unknown_start, Some("a"), running(Some(5))),
            Liveness::Alive
        );
        assert_eq!(judge(&h, Some("a"), |_| Probe::Unknown), Liveness::Unknown);
    }

    #[test]
    fn this_process_is_alive_and_reads_back_from_its_columns() {
        let me = ProcessIdentity::current();
        assert_eq!(me.pid, std::process::id());
        assert_ne!(me.liveness(), Liveness::Ended);
        let back = ProcessIdentity::from_columns(
            Some(me.pid_column()),
            me.boot_id.clone(),
            me.start_time_column(),
        );
        assert_eq!(back.as_ref(), Some(me));
        assert_eq!(ProcessIdentity::from_columns(None, None, None), None);
        assert_eq!(ProcessIdentity::from_columns(Some(-1), None, None), None);
    }
}
