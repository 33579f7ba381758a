//! Opening the SQLite file with the settings every connection needs, and its schema.

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::checkpointer::Commits;
use crate::{Result, StoreError};

/// How long a writer waits for the write lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// WAL allows many readers beside the one writer; a handful of connections is plenty for a
/// desktop app and keeps memory small.
const MAX_CONNECTIONS: u32 = 8;

/// Opens the pool. Every connection reports its commits to `commits`, for the background
/// checkpointer (see [`crate::checkpointer`]), and never checkpoints inside a commit itself.
pub(crate) async fn open(path: &Path, commits: Arc<Commits>) -> Result<SqlitePool> {
    let open_error = |source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    };
    let options = SqliteConnectOptions::from_str("sqlite:")
        .map_err(open_error)?
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .foreign_keys(true)
        .busy_timeout(BUSY_TIMEOUT)
        .pragma("wal_autocheckpoint", "0");
    let pool = SqlitePoolOptions::new()
        .max_connections(MAX_CONNECTIONS)
        // sqlx pings a connection before handing it out, by default, to catch a server that
        // dropped it. A SQLite file cannot drop a connection; the ping was one more round trip
        // to the connection's worker thread on every query (see docs/PERFORMANCE.md).
        .test_before_acquire(false)
        .after_connect(move |conn, _| {
            let commits = Arc::clone(&commits);
            Box::pin(async move {
                conn.lock_handle().await?.set_commit_hook(move || {
                    commits.committed();
                    true
                });
                Ok(())
            })
        })
        .connect_with(options)
        .await
        .map_err(open_error)?;
    // A file that is not SQLite at all fails on the first query, which is this one.
    let state = match crate::schema::sqlite_state(&pool).await {
        Ok(state) => state,
        Err(e) => return Err(closed(pool, e, open_error).await),
    };
    if state.pending > 0
        && let Err(e) = crate::schema::migrate_sqlite(&pool).await
    {
        return Err(closed(pool, e, open_error).await);
    }
    Ok(pool)
}

/// The error of a database that is not opened after all (not SQLite, from a newer Decima, a
/// migration that failed), once its pool is closed: a pool merely dropped closes its
/// connections on their own threads, and a process that exits first leaves the `-wal` and
/// `-shm` files beside a database it promised not to touch.
async fn closed(
    pool: SqlitePool,
    error: StoreError,
    open_error: impl Fn(sqlx::Error) -> StoreError,
) -> StoreError {
    pool.close().await;
    match error {
        StoreError::Database(source) => open_error(source),
        StoreError::Migrate(sqlx::migrate::MigrateError::Execute(source)) => open_error(source),
        other => other,
    }
}
