//! Who owns a running execution. Each running loop holds an exclusive `flock` on a file named
//! after its execution; the kernel drops the lock when the process dies, SIGKILL included. At
//! start-up, a `running` execution whose lock can be taken has no live owner: it is marked
//! `interrupted`. Two `decima` processes can therefore run side by side without one marking the
//! other's execution interrupted, which a blanket "every running row is dead" rule would do.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use decima_core::ExecutionId;
use decima_store::{ExecutionStatus, Store};
use rustix::fs::{FlockOperation, flock};
use tracing::info;

use crate::error::{Result, RuntimeError};

/// The held lock of one running execution; released on drop (or by the kernel at exit).
#[derive(Debug)]
pub struct Lease {
    _file: File,
    path: PathBuf,
}

impl Lease {
    /// Takes the lease of `execution`, or says who holds it.
    pub fn acquire(data_dir: &Path, execution: ExecutionId) -> Result<Self> {
        match try_lock(data_dir, execution)? {
            Some(lease) => Ok(lease),
            None => Err(RuntimeError::Busy(format!(
                "execution {execution} is being run by another Decima process; wait for it to \
                 stop, or stop that process first"
            ))),
        }
    }

    /// Takes the lock named `name` under `DATA_DIR/run/`, or `None` when another holder has
    /// it: for what else a process must own while it lives (its Docker containers).
    pub(crate) fn try_named(data_dir: &Path, name: &str) -> Result<Option<Self>> {
        lock_file(data_dir.join("run").join(format!("{name}.lock")))
    }

    /// Whether some live process holds the lock named `name` (taking and dropping it if not).
    pub(crate) fn is_held(data_dir: &Path, name: &str) -> bool {
        let path = data_dir.join("run").join(format!("{name}.lock"));
        if !path.exists() {
            return false;
        }
        matches!(lock_file(path), Ok(None))
    }

    /// The lock file, for diagnostics.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn lock_path(data_dir: &Path, execution: ExecutionId) -> PathBuf {
    data_dir.join("run").join(format!("{execution}.lock"))
}

fn try_lock(data_dir: &Path, execution: ExecutionId) -> Result<Option<Lease>> {
    lock_file(lock_path(data_dir, execution))
}

fn lock_file(path: PathBuf) -> Result<Option<Lease>> {
    let io = |action, source| RuntimeError::Io {
        action,
        path: path.clone(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io("create", e))?;
    }
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| io("open", e))?;
    match flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Some(Lease { _file: file, path })),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
        Err(e) => Err(io("lock", e.into())),
    }
}

/// Marks every `running` execution whose owner is gone as `interrupted`, and returns them: the
/// first thing a process that runs or shows executions does.
pub async fn interrupt_orphans(store: &Store, data_dir: &Path) -> Result<Vec<ExecutionId>> {
    let mut marked = Vec::new();
    for execution in store
        .executions()
        .list_by_status(ExecutionStatus::Running)
        .await?
    {
        // Holding the lock while marking keeps a process that just started the same execution
        // from racing the update.
        let Some(_lease) = try_lock(data_dir, execution.id)? else {
            continue;
        };
        if store
            .executions()
            .interrupt_if_running(execution.id)
            .await?
        {
            info!(execution = %execution.id, "marked interrupted: its process is gone");
            marked.push(execution.id);
        }
    }
    Ok(marked)
}
