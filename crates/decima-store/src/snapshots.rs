//! Snapshots: what a rollback returns to. Taken when a todo starts and at checkpoints; the
//! workspace itself lives in an archive elsewhere, referred to by id.

use decima_core::names::echo_untrusted;
use decima_core::{ExecutionId, Timestamp};
use sqlx::FromRow;

use crate::BeginWrite;
use crate::on_pool;
use crate::rows::{corrupt, named};
use crate::{Result, Store, StoreError};

/// Why a snapshot was taken, as stored in `snapshots.reason` and sent with its event.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum SnapshotReason {
    /// A run is about to make its first call: its inputs as they were, for the tenth man's
    /// recomputation of its figures.
    RunStart,
    /// A todo is about to start: the state to return to if it fails.
    TodoStart,
    /// A checkpoint todo finished.
    Checkpoint,
    /// The user asked for one.
    Manual,
}

impl SnapshotReason {
    /// The text stored in `snapshots.reason`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What recording a snapshot needs.
#[derive(Debug, Clone, PartialEq)]
pub struct NewSnapshot {
    /// The execution.
    pub execution_id: ExecutionId,
    /// The todo it was taken for, if any.
    pub todo_id: Option<String>,
    /// Why it was taken.
    pub reason: SnapshotReason,
    /// The conversation's last seq at the time: a rollback soft-deletes what came after.
    pub message_seq: i64,
    /// The plan as it was, to restore on rollback.
    pub todo_state: serde_json::Value,
    /// The id of the workspace archive, if the workspace was archived.
    pub workspace_archive: Option<String>,
}

/// A stored snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Its id (UUIDv7 text).
    pub id: String,
    /// The execution.
    pub execution_id: ExecutionId,
    /// The todo it was taken for.
    pub todo_id: Option<String>,
    /// Why it was taken.
    pub reason: SnapshotReason,
    /// The conversation's last seq at the time.
    pub message_seq: i64,
    /// The plan as it was.
    pub todo_state: serde_json::Value,
    /// The workspace archive's id.
    pub workspace_archive: Option<String>,
    /// When it was taken.
    pub created_at: Timestamp,
}

#[derive(FromRow)]
struct SnapshotRow {
    id: String,
    execution_id: String,
    todo_id: Option<String>,
    reason: String,
    message_seq: i64,
    todo_state: String,
    workspace_archive: Option<String>,
    created_at: i64,
}

macro_rules! snapshot_select {
    () => {
        "SELECT id, execution_id, todo_id, reason, message_seq, todo_state, \
     workspace_archive, created_at FROM snapshots"
    };
}

impl TryFrom<SnapshotRow> for Snapshot {
    type Error = StoreError;

    fn try_from(row: SnapshotRow) -> Result<Self> {
        Ok(Snapshot {
            execution_id: row
                .execution_id
                .parse()
                .map_err(|e| corrupt("execution id", e))?,
            reason: named("snapshot reason", &row.reason)?,
            todo_state: serde_json::from_str(&row.todo_state)
                .map_err(|e| corrupt("snapshot todo_state", e))?,
            id: row.id,
            todo_id: row.todo_id,
            message_seq: row.message_seq,
            workspace_archive: row.workspace_archive,
            created_at: Timestamp(row.created_at),
        })
    }
}

/// Snapshot operations, borrowed from a [`Store`].
pub struct Snapshots<'s> {
    store: &'s Store,
}

impl<'s> Snapshots<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Records a snapshot and returns it. The todo, if given, must belong to the execution, so
    /// a rollback can never restore another run's plan.
    pub async fn record(&self, new: &NewSnapshot) -> Result<Snapshot> {
        if new.message_seq < 0 {
            return Err(StoreError::InvalidInput(format!(
                "a snapshot's message seq cannot be negative ({})",
                new.message_seq
            )));
        }
        let id = uuid::Uuid::now_v7().to_string();
        let now = Timestamp::now().0;
        let state = new.todo_state.to_string();
        on_pool!(self.store, |pool, dialect| {
            let mut tx = pool.begin_write().await?;
            check_execution_and_todo(&mut *tx, new.execution_id, new.todo_id.as_deref()).await?;
            sqlx::query(
                "INSERT INTO snapshots (id, execution_id, todo_id, reason, message_seq, todo_state, \
                 workspace_archive, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(&id)
            .bind(new.execution_id.to_string())
            .bind(new.todo_id.as_deref())
            .bind(new.reason.as_str())
            .bind(new.message_seq)
            .bind(&state)
            .bind(new.workspace_archive.as_deref())
            .bind(now)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
        });
        self.get(&id).await
    }

    /// One snapshot by id.
    pub async fn get(&self, id: &str) -> Result<Snapshot> {
        let sql = concat!(snapshot_select!(), " WHERE id = $1");
        let row: Option<SnapshotRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .bind(id)
            .fetch_optional(pool)
            .await)?;
        row.ok_or_else(|| StoreError::not_found("snapshot", echo_untrusted(id)))?
            .try_into()
    }

    /// Every snapshot of an execution, oldest first.
    pub async fn list(&self, execution: ExecutionId) -> Result<Vec<Snapshot>> {
        let sql = concat!(
            snapshot_select!(),
            " WHERE execution_id = $1 ORDER BY created_at, id"
        );
        let rows: Vec<SnapshotRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .bind(execution.to_string())
            .fetch_all(pool)
            .await)?;
        rows.into_iter().map(Snapshot::try_from).collect()
    }

    /// Every snapshot taken for one todo, oldest first.
    pub async fn list_for_todo(&self, todo_id: &str) -> Result<Vec<Snapshot>> {
        let sql = concat!(
            snapshot_select!(),
            " WHERE todo_id = $1 ORDER BY created_at, id"
        );
        let rows: Vec<SnapshotRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .bind(todo_id)
            .fetch_all(pool)
            .await)?;
        rows.into_iter().map(Snapshot::try_from).collect()
    }

    /// The newest snapshot of a todo: what a retry of that todo rolls back to.
    pub async fn latest_for_todo(&self, todo_id: &str) -> Result<Option<Snapshot>> {
        let sql = concat!(
            snapshot_select!(),
            " WHERE todo_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1"
        );
        let row: Option<SnapshotRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .bind(todo_id)
            .fetch_optional(pool)
            .await)?;
        row.map(Snapshot::try_from).transpose()
    }

    /// The workspace snapshots still needed: those of every execution that has not finished
    /// for good (queued, running, waiting for the analyst, or interrupted and so resumable),
    /// which a rollback may need, and every run's inputs (its `run_start` snapshot), which the
    /// tenth man recomputes its figures from. A finished execution is never rolled back, so
    /// its other workspace snapshots are garbage; its rows stay as the record of what was
    /// taken.
    pub async fn archives_in_use(&self) -> Result<Vec<String>> {
        let finished: Vec<&str> = crate::ExecutionStatus::ALL
            .iter()
            .filter(|s| s.is_terminal())
            .map(|s| s.as_str())
            .collect();
        let rows: Vec<(String,)> = on_pool!(self.store, |pool, d| {
            let each = match d {
                crate::Dialect::Sqlite => "SELECT value FROM json_each($1)",
                crate::Dialect::Postgres => "SELECT json_array_elements_text($1::json)",
            };
            let sql = format!(
                "SELECT DISTINCT s.workspace_archive FROM snapshots s \
                 JOIN executions e ON e.id = s.execution_id \
                 WHERE s.workspace_archive IS NOT NULL \
                 AND (e.status NOT IN ({each}) OR s.reason = 'run_start')"
            );
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .bind(serde_json::json!(finished).to_string())
                .fetch_all(pool)
                .await?
        });
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }
}

/// Refuses an unknown execution, or a todo that is not the execution's, naming which.
pub(crate) async fn check_execution_and_todo<C, DB>(
    tx: &mut C,
    execution: ExecutionId,
    todo: Option<&str>,
) -> Result<()>
where
    DB: sqlx::Database,
    for<'c> &'c mut C: sqlx::Executor<'c, Database = DB>,
    DB::Arguments: sqlx::IntoArguments<DB>,
    for<'q> String: sqlx::Encode<'q, DB> + sqlx::Type<DB> + sqlx::Decode<'q, DB>,
    for<'q> &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'r> (String,): sqlx::FromRow<'r, DB::Row>,
{
    let exists: Option<String> = sqlx::query_scalar("SELECT id FROM executions WHERE id = $1")
        .bind(execution.to_string())
        .fetch_optional(&mut *tx)
        .await?;
    if exists.is_none() {
        return Err(StoreError::not_found("execution", execution));
    }
    if let Some(todo) = todo {
        let exists: Option<String> =
            sqlx::query_scalar("SELECT id FROM todos WHERE id = $1 AND execution_id = $2")
                .bind(todo)
                .bind(execution.to_string())
                .fetch_optional(&mut *tx)
                .await?;
        if exists.is_none() {
            return Err(StoreError::not_found(
                "todo",
                format!("{} of execution {execution}", echo_untrusted(todo)),
            ));
        }
    }
    Ok(())
}
