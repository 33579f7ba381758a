//! [`ProcessTree`]: the one interface over a process group (Unix) and a job object (Windows).

use std::io;

use crate::sys;

/// A started command and every process it starts. Dropping it ends them all: at the end of a
/// call, and when the future that owned the call is dropped part way (tokio's `kill_on_drop`
/// alone would end only the first process, not its children).
#[derive(Debug)]
pub struct ProcessTree {
    inner: sys::Tree,
}

/// Ends a tree from elsewhere (a registry of live servers, an exit that skips destructors).
/// Killing a tree that already ended does nothing.
#[derive(Debug, Clone)]
pub struct TreeKiller {
    inner: sys::Killer,
}

impl ProcessTree {
    /// Sets `cmd` up so that what it starts can be ended as one: a process group of its own
    /// on Unix; no console window of its own on Windows (a desktop app's children would
    /// otherwise each flash one).
    pub fn prepare(cmd: &mut tokio::process::Command) {
        sys::prepare(cmd);
    }

    /// [`ProcessTree::prepare`] for a `std` command (test servers, synchronous helpers).
    pub fn prepare_std(cmd: &mut std::process::Command) {
        sys::prepare_std(cmd);
    }

    /// Takes hold of the tree of a child spawned from a prepared command. Call it right after
    /// `spawn`: on Windows a process the child starts before it is adopted is not in the tree.
    pub fn adopt(child: &tokio::process::Child) -> io::Result<Self> {
        sys::adopt(child).map(|inner| Self { inner })
    }

    /// [`ProcessTree::adopt`] for a `std` child.
    pub fn adopt_std(child: &std::process::Child) -> io::Result<Self> {
        sys::adopt_std(child).map(|inner| Self { inner })
    }

    /// Ends every process in the tree now. Later calls, and the drop, do nothing more.
    pub fn kill(&mut self) {
        self.inner.kill();
    }

    /// Lets the tree go once its first process has been reaped. On Unix the group's id may
    /// name another group from then on, so nothing is signalled; on Windows the job still
    /// holds whatever is left of the tree, and closing it ends that.
    pub fn release_reaped(mut self) {
        self.inner.release_reaped();
    }

    /// A handle that can end this tree from elsewhere.
    pub fn killer(&self) -> TreeKiller {
        TreeKiller {
            inner: self.inner.killer(),
        }
    }
}

impl Drop for ProcessTree {
    fn drop(&mut self) {
        self.inner.kill();
    }
}

impl TreeKiller {
    /// Ends every process of the tree, if it still runs.
    pub fn kill(&self) {
        self.inner.kill();
    }
}

/// The signal that ended a process, where the system has signals (Unix); `None` on Windows,
/// where a killed process has an exit code like any other.
pub fn exit_signal(status: &std::process::ExitStatus) -> Option<i32> {
    sys::exit_signal(status)
}
