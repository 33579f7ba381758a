//! Who owns a running execution.
//!
//! On a SQLite file, each running loop holds an exclusive lock on a file named after its
//! execution (`flock` on unix, `LockFileEx` on Windows, through std's `File::try_lock`); the
//! system drops the lock when the process dies, SIGKILL included. At start-up, a
//! `running` execution whose lock can be taken has no live owner: it is marked `interrupted`.
//! Two `decima` processes can therefore run side by side without one marking the other's
//! execution interrupted, which a blanket "every running row is dead" rule would do.
//!
//! On a shared PostgreSQL store, machines cannot see each other's lock files, so a run holds a
//! lease in the store instead (`decima_store::Leases`): claimed atomically, renewed at a third
//! of its time to live (`DECIMA_LEASE_TTL_SECS`, 30 s by default), and lapsing when its process
//! dies or stalls. The lease names its process, so on the runner's own machine a dead runner's
//! lease is taken at once, as the lock file would be, instead of after its time to live. The
//! runner writes through a store fenced by the lease's epoch: once another process took the
//! run over, the old runner's next write is refused, whatever it was.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::Duration;

use decima_core::ExecutionId;
use decima_store::{ExecutionStatus, LeaseClaim, Store};
use tokio::task::JoinHandle;
use tracing::{debug, info, warn};

use crate::error::{Result, RuntimeError};

/// Tries of a lock file before its execution is called busy, and the pause between them.
const LOCK_ATTEMPTS: u32 = 20;
const LOCK_RETRY: Duration = Duration::from_millis(50);

/// A run's lease lives this long unless renewed, by default.
const DEFAULT_TTL: Duration = Duration::from_secs(30);

/// The held ownership of one running execution: a lock file on one machine, or a lease in a
/// shared store. Released on drop (in the background for a lease), or by the kernel at exit.
#[derive(Debug)]
pub struct Lease {
    held: Held,
}

#[derive(Debug)]
enum Held {
    File { _file: File, path: PathBuf },
    Store(StoreLease),
}

/// A lease in a shared store, the store fenced by it, and the task that renews it.
struct StoreLease {
    base: Store,
    fenced: Store,
    claim: Option<LeaseClaim>,
    heartbeat: JoinHandle<()>,
}

impl Lease {
    /// Takes the lease of `execution`, or says who holds it.
    pub async fn acquire(store: &Store, data_dir: &Path, execution: ExecutionId) -> Result<Self> {
        if !store.is_postgres() {
            // A lock released a moment ago can still be held by a child that another thread of
            // this process forked before its exec closed the descriptor (flock locks follow the
            // open file, which a fork shares): ask again for a moment before calling it busy.
            for attempt in 1..=LOCK_ATTEMPTS {
                if let Some(lease) = try_lock(data_dir, execution)? {
                    return Ok(lease);
                }
                if attempt < LOCK_ATTEMPTS {
                    tokio::time::sleep(LOCK_RETRY).await;
                }
            }
            return Err(RuntimeError::Busy(format!(
                "execution {execution} is being run by another Decima process; wait for it \
                 to stop, or stop that process first"
            )));
        }
        let ttl = ttl()?;
        let owner = crate::busy::owner();
        let Some(claim) = store.leases().claim(execution, &owner, ttl).await? else {
            let holder = store.leases().holder(execution).await?;
            return Err(RuntimeError::Busy(match holder {
                Some(h) => format!(
                    "execution {execution} is being run by {} (its lease lapses in {} s unless \
                     renewed); wait for it to stop, or stop that process. If its machine is \
                     gone, the lease lapses by itself and the run can then be resumed",
                    h.owner,
                    h.lapses_in.as_secs().max(1)
                ),
                None => {
                    format!("execution {execution} was just taken by another process; try again")
                }
            }));
        };
        let fenced = match store.fenced(&claim).await {
            Ok(fenced) => fenced,
            Err(e) => {
                let _ = store.leases().release(&claim).await;
                return Err(e.into());
            }
        };
        info!(%execution, epoch = claim.epoch, from_gone_process = claim.took_over.is_some(),
            "run lease taken");
        let heartbeat = tokio::spawn(renew(store.clone(), claim.clone(), ttl));
        Ok(Self {
            held: Held::Store(StoreLease {
                base: store.clone(),
                fenced,
                claim: Some(claim),
                heartbeat,
            }),
        })
    }

    /// The store a runner holding this lease writes through: fenced by the lease on a shared
    /// store, `None` where the lock file is the fence.
    pub fn store(&self) -> Option<&Store> {
        match &self.held {
            Held::Store(lease) => Some(&lease.fenced),
            Held::File { .. } => None,
        }
    }

    /// Gives the run up now, so another process may continue it at once (a lock file is
    /// released when dropped).
    pub async fn release(mut self) {
        if let Held::Store(lease) = &mut self.held {
            lease.heartbeat.abort();
            if let Some(claim) = lease.claim.take() {
                // The fenced pool closes when its last clone goes (a digest the run started in
                // the background may still be writing through it).
                if let Err(e) = lease.base.leases().release(&claim).await {
                    warn!(error = %e, "cannot release the run's lease; it lapses on its own");
                }
            }
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

    /// The lock file, for diagnostics; `None` for a lease in the store.
    pub fn path(&self) -> Option<&Path> {
        match &self.held {
            Held::File { path, .. } => Some(path),
            Held::Store(_) => None,
        }
    }
}

impl std::fmt::Debug for StoreLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreLease")
            .field("claim", &self.claim)
            .finish_non_exhaustive()
    }
}

impl Drop for StoreLease {
    fn drop(&mut self) {
        self.heartbeat.abort();
        // An early return or a panic: give the lease back in the background if a runtime is
        // there to do it; otherwise it lapses.
        if let Some(claim) = self.claim.take()
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            let store = self.base.clone();
            handle.spawn(async move {
                if let Err(e) = store.leases().release(&claim).await {
                    debug!(error = %e, "run lease left to lapse");
                }
            });
        }
    }
}

/// The lease's time to live: `DECIMA_LEASE_TTL_SECS`, else 30 s.
fn ttl() -> Result<Duration> {
    match std::env::var("DECIMA_LEASE_TTL_SECS") {
        Err(_) => Ok(DEFAULT_TTL),
        Ok(text) => match text.trim().parse::<u64>() {
            Ok(secs) if secs > 0 => Ok(Duration::from_secs(secs)),
            _ => Err(RuntimeError::Config(format!(
                "DECIMA_LEASE_TTL_SECS is {text:?}: give a whole number of seconds, at least 1"
            ))),
        },
    }
}

/// Renews the lease at a third of its life until the run ends (the task is aborted) or the
/// lease is found taken over; the fence then refuses the runner's next write.
async fn renew(store: Store, claim: LeaseClaim, ttl: Duration) {
    loop {
        tokio::time::sleep(ttl / 3).await;
        match store.leases().renew(&claim, ttl).await {
            Ok(true) => {}
            Ok(false) => {
                warn!(execution = %claim.execution, "the run's lease was taken over by another process");
                return;
            }
            Err(e) => warn!(error = %e, "cannot renew the run's lease"),
        }
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
    match file.try_lock() {
        Ok(()) => Ok(Some(Lease {
            held: Held::File { _file: file, path },
        })),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(io("lock", e)),
    }
}

/// Marks every `running` execution whose owner is gone as `interrupted`, and returns them: the
/// first thing a process that runs or shows executions does. On a shared store the owner is
/// gone when its lease lapsed: taking the lease to mark the run also fences out a runner that
/// was only paused.
pub async fn interrupt_orphans(store: &Store, data_dir: &Path) -> Result<Vec<ExecutionId>> {
    let mut marked = Vec::new();
    let ttl = if store.is_postgres() {
        ttl()?
    } else {
        DEFAULT_TTL
    };
    for execution in store
        .executions()
        .list_by_status(ExecutionStatus::Running)
        .await?
    {
        // Holding the lock or lease while marking keeps a process that just started the same
        // execution from racing the update.
        let claim = if store.is_postgres() {
            match store
                .leases()
                .claim(execution.id, &crate::busy::owner(), ttl)
                .await?
            {
                Some(claim) => Some(claim),
                None => continue,
            }
        } else {
            None
        };
        let _lock = match claim {
            Some(_) => None,
            None => match try_lock(data_dir, execution.id)? {
                Some(lock) => Some(lock),
                None => continue,
            },
        };
        let interrupted = store.executions().interrupt_if_running(execution.id).await;
        if let Some(claim) = &claim {
            store.leases().release(claim).await?;
        }
        if interrupted? {
            info!(execution = %execution.id, "marked interrupted: its process is gone");
            marked.push(execution.id);
        }
    }
    Ok(marked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_file_is_held_by_one_holder_until_it_is_dropped() {
        let data = tempfile::tempdir().unwrap();
        assert!(!Lease::is_held(data.path(), "engine"), "no file yet");
        let held = Lease::try_named(data.path(), "engine").unwrap().unwrap();
        assert!(held.path().is_some_and(|p| p.ends_with("run/engine.lock")));
        // A second open of the same file, as another process would make: refused, not blocked.
        assert!(Lease::try_named(data.path(), "engine").unwrap().is_none());
        assert!(Lease::is_held(data.path(), "engine"));
        drop(held);
        assert!(!Lease::is_held(data.path(), "engine"));
        assert!(Lease::try_named(data.path(), "engine").unwrap().is_some());
    }
}
