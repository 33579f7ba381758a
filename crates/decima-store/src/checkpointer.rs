//! WAL checkpoints in the background, off the writers' path.
//!
//! By default SQLite checkpoints inside the commit that pushes the WAL past 1,000 pages: that
//! writer copies the pages back and syncs the database file, and its statement takes several
//! milliseconds instead of a fraction of one. In an agent run that is one step in thirty or so
//! stalling on the store. SQLite's documentation suggests the alternative used here: automatic
//! checkpoints are off on every connection (`wal_autocheckpoint = 0`), and a task of the store
//! runs passive checkpoints on a pooled connection (its own worker thread) once writes pause or
//! enough commits have piled up. A passive checkpoint never blocks readers or writers.
//!
//! The task ends with the last handle on the store. Whatever it has not checkpointed by then,
//! SQLite checkpoints when the last connection closes.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use sqlx::SqlitePool;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// Writes that pause this long are done for now: checkpoint.
const QUIET_FOR: Duration = Duration::from_millis(500);
/// Checkpoint after this many commits even when writes do not pause, so the WAL stays small
/// in a long busy run (a step commits a handful of times).
const COMMITS_PER_CHECKPOINT: u32 = 200;

/// What the connections' commit hooks tell the task.
#[derive(Default)]
pub(crate) struct Commits {
    since_checkpoint: AtomicU32,
    notify: Notify,
}

impl Commits {
    /// Called by SQLite on the connection's worker thread as a transaction commits: it must
    /// not touch the connection, and only counts.
    pub(crate) fn committed(&self) {
        self.since_checkpoint.fetch_add(1, Ordering::Relaxed);
        self.notify.notify_one();
    }
}

/// The running task; aborted when the last store handle drops.
pub(crate) struct Checkpointer {
    task: JoinHandle<()>,
}

impl Checkpointer {
    /// Starts checkpointing `pool` as its connections report commits.
    pub(crate) fn start(pool: SqlitePool, commits: Arc<Commits>) -> Self {
        let task = tokio::spawn(async move {
            loop {
                commits.notify.notified().await;
                // Wait for the writes to pause, or for enough of them.
                while commits.since_checkpoint.load(Ordering::Relaxed) < COMMITS_PER_CHECKPOINT
                    && tokio::time::timeout(QUIET_FOR, commits.notify.notified())
                        .await
                        .is_ok()
                {}
                if pool.is_closed() {
                    return;
                }
                commits.since_checkpoint.store(0, Ordering::Relaxed);
                let started = std::time::Instant::now();
                match sqlx::query_as::<_, (i64, i64, i64)>("PRAGMA wal_checkpoint(PASSIVE)")
                    .fetch_one(&pool)
                    .await
                {
                    Ok((busy, wal_pages, copied)) => tracing::debug!(
                        busy,
                        wal_pages,
                        copied,
                        elapsed_us = started.elapsed().as_micros(),
                        "wal checkpoint"
                    ),
                    // A closed pool ends the task; anything else is tried again at the next
                    // pause, and SQLite checkpoints at close whatever is left.
                    Err(sqlx::Error::PoolClosed) => return,
                    Err(e) => tracing::warn!(error = %e, "wal checkpoint failed"),
                }
            }
        });
        Self { task }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.task.abort();
    }
}
