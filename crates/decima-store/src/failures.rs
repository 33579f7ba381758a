//! Failures: what went wrong, what was rolled back, what the user may do about it, and what
//! they chose. A failure is resolved once; a second answer is refused, not overwritten, so a
//! double click can never both retry and abort.

use decima_core::names::echo_untrusted;
use decima_core::{ExecutionId, FailureClass, Timestamp};
use sqlx::FromRow;

use crate::BeginWrite;
use crate::on_pool;
use crate::rows::{corrupt, named};
use crate::snapshots::check_execution_and_todo;
use crate::{Result, Store, StoreError};

/// The user's answer to a failure, as stored in `failures.resolution`. The recovery panel
/// offers exactly the ones a failure names, so it crosses to the webview as a union.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum Resolution {
    /// Run the failed todo again from its snapshot.
    Retry,
    /// Leave the todo undone and go on.
    Skip,
    /// Ask the model for a new plan.
    Replan,
    /// Stop the execution.
    Abort,
    /// Put the workspace, the plan and the history back to the failed todo's snapshot, then
    /// choose again: for a failure that did not roll back on its own (the step budget).
    Rollback,
    /// Fit the run to the window the server says it serves, compress the conversation deeply,
    /// and try the step again: for a request too long for the model, where a plain retry
    /// would be refused again.
    Compress,
    /// Ask the agent to compute the answer's unlinked figures with a tool, then match them
    /// again.
    Verify,
    /// Keep the unlinked figures, each marked as an estimate in the answer.
    Estimate,
    /// Replace an unlinked figure with the value the analyst typed.
    Correct,
    /// Keep the unlinked figures as they are: the analyst vouches for them.
    Accept,
}

impl Resolution {
    /// Every answer, in the order a person reads them.
    pub const ALL: [Resolution; 10] = [
        Self::Compress,
        Self::Verify,
        Self::Estimate,
        Self::Correct,
        Self::Accept,
        Self::Retry,
        Self::Skip,
        Self::Replan,
        Self::Rollback,
        Self::Abort,
    ];

    /// The text stored in `failures.resolution`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Reads an answer a person typed or a row holds, with an error that lists the answers.
    pub fn parse(text: &str) -> Result<Self> {
        text.parse().map_err(|_| {
            StoreError::InvalidInput(format!(
                "{:?} is not a resolution (compress, verify, estimate, correct, accept, retry, skip, \
                 replan, abort, rollback)",
                echo_untrusted(text)
            ))
        })
    }
}

/// Who answered a failure: the conversation says "You chose" only for the analyst's answers.
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
pub enum ResolvedBy {
    /// The analyst chose, in the window or the CLI.
    Analyst,
    /// The run chose by itself: a logic failure's one automatic replan.
    Automatic,
}

impl ResolvedBy {
    /// The text stored in `failures.resolved_by`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What recording a failure needs.
#[derive(Debug, Clone, PartialEq)]
pub struct NewFailure {
    /// The execution that failed.
    pub execution_id: ExecutionId,
    /// The todo it was working on.
    pub todo_id: Option<String>,
    /// What kind of failure, which decides the recovery offered.
    pub class: FailureClass,
    /// The error, for the user.
    pub message: String,
    /// Structured details (status codes, tool output), a JSON object.
    pub details: serde_json::Value,
    /// The snapshot rolled back to, if any.
    pub snapshot_id: Option<String>,
    /// What the rollback undid (messages, files, todos), JSON.
    pub rolled_back: serde_json::Value,
    /// The actions offered to the user, a JSON array.
    pub suggested_actions: serde_json::Value,
}

/// A stored failure.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// Its id (UUIDv7 text).
    pub id: String,
    /// The execution that failed.
    pub execution_id: ExecutionId,
    /// The todo it was working on.
    pub todo_id: Option<String>,
    /// What kind of failure.
    pub class: FailureClass,
    /// The error.
    pub message: String,
    /// Structured details.
    pub details: serde_json::Value,
    /// The snapshot rolled back to.
    pub snapshot_id: Option<String>,
    /// What the rollback undid.
    pub rolled_back: serde_json::Value,
    /// The actions offered.
    pub suggested_actions: serde_json::Value,
    /// The user's answer, once given.
    pub resolution: Option<Resolution>,
    /// When they answered.
    pub resolved_at: Option<Timestamp>,
    /// Who answered: the analyst or the run itself.
    pub resolved_by: Option<ResolvedBy>,
    /// When it failed.
    pub created_at: Timestamp,
}

#[derive(FromRow)]
struct FailureRow {
    id: String,
    execution_id: String,
    todo_id: Option<String>,
    class: String,
    message: String,
    details: String,
    snapshot_id: Option<String>,
    rolled_back: String,
    suggested_actions: String,
    resolution: Option<String>,
    resolved_at: Option<i64>,
    resolved_by: Option<String>,
    created_at: i64,
}

macro_rules! failure_select {
    () => {
        "SELECT id, execution_id, todo_id, class, message, details, \
     snapshot_id, rolled_back, suggested_actions, resolution, resolved_at, resolved_by, created_at FROM failures"
    };
}

impl TryFrom<FailureRow> for Failure {
    type Error = StoreError;

    fn try_from(row: FailureRow) -> Result<Self> {
        let json = |what: &'static str, text: &str| {
            serde_json::from_str::<serde_json::Value>(text).map_err(|e| corrupt(what, e))
        };
        Ok(Failure {
            execution_id: row
                .execution_id
                .parse()
                .map_err(|e| corrupt("execution id", e))?,
            class: named("failure class", &row.class)?,
            details: json("failure details", &row.details)?,
            rolled_back: json("failure rolled_back", &row.rolled_back)?,
            suggested_actions: json("failure suggested_actions", &row.suggested_actions)?,
            resolution: row
                .resolution
                .as_deref()
                .map(|r| named("failure resolution", r))
                .transpose()?,
            id: row.id,
            todo_id: row.todo_id,
            message: row.message,
            snapshot_id: row.snapshot_id,
            resolved_at: row.resolved_at.map(Timestamp),
            resolved_by: row
                .resolved_by
                .as_deref()
                .map(|by| named("failure resolved_by", by))
                .transpose()?,
            created_at: Timestamp(row.created_at),
        })
    }
}

/// Failure operations, borrowed from a [`Store`].
pub struct Failures<'s> {
    store: &'s Store,
}

impl<'s> Failures<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Records a failure, unresolved, and returns it. The todo and snapshot, if given, must
    /// belong to the same execution.
    pub async fn record(&self, new: &NewFailure) -> Result<Failure> {
        if !new.details.is_object() {
            return Err(StoreError::InvalidInput(
                "a failure's details must be a JSON object".into(),
            ));
        }
        if !new.suggested_actions.is_array() {
            return Err(StoreError::InvalidInput(
                "a failure's suggested actions must be a JSON array".into(),
            ));
        }
        let id = uuid::Uuid::now_v7().to_string();
        on_pool!(self.store, |pool, dialect| {
            let mut tx = pool.begin_write().await?;
            check_execution_and_todo(&mut *tx, new.execution_id, new.todo_id.as_deref()).await?;
            if let Some(snapshot) = &new.snapshot_id {
                let exists: Option<i64> = sqlx::query_scalar(
                    "SELECT CAST(1 AS BIGINT) FROM snapshots WHERE id = $1 AND execution_id = $2",
                )
                .bind(snapshot)
                .bind(new.execution_id.to_string())
                .fetch_optional(&mut *tx)
                .await?;
                if exists.is_none() {
                    return Err(StoreError::not_found(
                        "snapshot",
                        format!(
                            "{} of execution {}",
                            echo_untrusted(snapshot),
                            new.execution_id
                        ),
                    ));
                }
            }
            sqlx::query(
                "INSERT INTO failures (id, execution_id, todo_id, class, message, details, snapshot_id, \
                 rolled_back, suggested_actions, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            )
            .bind(&id)
            .bind(new.execution_id.to_string())
            .bind(new.todo_id.as_deref())
            .bind(new.class.as_str())
            .bind(&new.message)
            .bind(new.details.to_string())
            .bind(new.snapshot_id.as_deref())
            .bind(new.rolled_back.to_string())
            .bind(new.suggested_actions.to_string())
            .bind(Timestamp::now().0)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
        });
        self.get(&id).await
    }

    /// One failure by id.
    pub async fn get(&self, id: &str) -> Result<Failure> {
        let sql = concat!(failure_select!(), " WHERE id = $1");
        let row: Option<FailureRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .bind(id)
            .fetch_optional(pool)
            .await)?;
        row.ok_or_else(|| StoreError::not_found("failure", echo_untrusted(id)))?
            .try_into()
    }

    /// Every failure of an execution, oldest first.
    pub async fn list(&self, execution: ExecutionId) -> Result<Vec<Failure>> {
        let sql = concat!(
            failure_select!(),
            " WHERE execution_id = $1 ORDER BY created_at, id"
        );
        let rows: Vec<FailureRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .bind(execution.to_string())
            .fetch_all(pool)
            .await)?;
        rows.into_iter().map(Failure::try_from).collect()
    }

    /// Records the analyst's answer. Only the first answer counts: a failure already resolved
    /// is refused with [`StoreError::Conflict`] naming the earlier answer.
    pub async fn resolve(&self, id: &str, resolution: Resolution) -> Result<Failure> {
        self.resolve_as(id, resolution, ResolvedBy::Analyst).await
    }

    /// Records an answer the run gave by itself (the automatic replan), so that nobody reads
    /// it as the analyst's; otherwise as [`Self::resolve`].
    pub async fn resolve_automatically(&self, id: &str, resolution: Resolution) -> Result<Failure> {
        self.resolve_as(id, resolution, ResolvedBy::Automatic).await
    }

    async fn resolve_as(
        &self,
        id: &str,
        resolution: Resolution,
        by: ResolvedBy,
    ) -> Result<Failure> {
        let done = on_pool!(self.store, |pool, d| {
            sqlx::query(
                "UPDATE failures SET resolution = $1, resolved_at = $2, resolved_by = $3 \
             WHERE id = $4 AND resolution IS NULL",
            )
            .bind(resolution.as_str())
            .bind(Timestamp::now().0)
            .bind(by.as_str())
            .bind(id)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
        })?;
        let failure = self.get(id).await?;
        if done == 0 {
            let earlier = failure.resolution.map_or("?", Resolution::as_str);
            return Err(StoreError::Conflict(format!(
                "failure {} was already resolved ({earlier})",
                echo_untrusted(id)
            )));
        }
        Ok(failure)
    }
}
