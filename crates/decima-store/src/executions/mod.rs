//! Executions: one agent run each, subagents included. Their status moves only along the
//! transitions the agent loop may take, so a finished run can never be revived by a stale task.

use std::fmt;

use decima_core::names::echo_untrusted;
use decima_core::{ConversationId, ExecutionId, Timestamp};
use sqlx::FromRow;

use crate::BeginWrite;
use crate::claims::busy_in;
use crate::on_pool;
use crate::rows::{corrupt, named};
use crate::{Result, Store, StoreError};

mod usage;

pub use usage::{CallUsage, EndedBy, ModelCall, RunEnding, RunUsage};

/// Where an execution is in its life, as stored in `executions.status`.
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
    strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(
    serialize_all = "snake_case",
    parse_err_ty = StoreError,
    parse_err_fn = not_an_execution_status
)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum ExecutionStatus {
    /// Created, not started.
    Queued,
    /// The loop is working on it.
    Running,
    /// Paused on the user (a failure to resolve, a question); survives a restart as is.
    AwaitingUser,
    /// Finished with a result.
    Succeeded,
    /// Finished with an error.
    Failed,
    /// Stopped on purpose.
    Cancelled,
    /// Was running when the process died; can be resumed.
    Interrupted,
}

impl ExecutionStatus {
    /// Every status, in life order.
    pub const ALL: [ExecutionStatus; 7] = [
        Self::Queued,
        Self::Running,
        Self::AwaitingUser,
        Self::Succeeded,
        Self::Failed,
        Self::Cancelled,
        Self::Interrupted,
    ];

    /// The text stored in `executions.status`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Finished for good: nothing may change the status again.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Succeeded | Self::Failed | Self::Cancelled)
    }

    /// Whether the loop may move an execution from `self` to `next`. Terminal statuses go
    /// nowhere; only a running execution can finish successfully, wait for the user or be
    /// interrupted; a waiting or interrupted one can only resume, fail or be cancelled.
    pub fn can_become(self, next: ExecutionStatus) -> bool {
        use ExecutionStatus::*;
        matches!(
            (self, next),
            (Queued, Running | Failed | Cancelled)
                | (
                    Running,
                    AwaitingUser | Succeeded | Failed | Cancelled | Interrupted
                )
                | (AwaitingUser | Interrupted, Running | Failed | Cancelled)
        )
    }
}

/// The error for a name that is not an execution status.
fn not_an_execution_status(s: &str) -> StoreError {
    StoreError::InvalidInput(format!(
        "{:?} is not an execution status",
        echo_untrusted(s)
    ))
}

/// Where an execution's tools run, as stored in `executions.sandbox_kind`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, strum::IntoStaticStr, strum::EnumString,
)]
#[strum(
    serialize_all = "snake_case",
    parse_err_ty = StoreError,
    parse_err_fn = not_a_sandbox_kind
)]
pub enum SandboxKind {
    /// On the user's machine, inside the workspace.
    #[default]
    Host,
    /// In a Docker container.
    Docker,
}

impl SandboxKind {
    /// The text stored in `executions.sandbox_kind`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The error for a name that is not a sandbox kind.
fn not_a_sandbox_kind(s: &str) -> StoreError {
    StoreError::InvalidInput(format!(
        "{:?} is not a sandbox kind (host or docker)",
        echo_untrusted(s)
    ))
}

/// What creating an execution needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewExecution {
    /// The conversation it works for.
    pub conversation_id: ConversationId,
    /// The execution that spawned it, for subagents.
    pub parent_id: Option<ExecutionId>,
    /// 0 for a top-level run, the parent's depth + 1 for a subagent: bounds recursion.
    pub depth: u32,
    /// What it was asked to do.
    pub task: String,
    /// Where its tools run.
    pub sandbox: SandboxKind,
    /// The provider row it talks to, if pinned to one.
    pub provider_id: Option<String>,
    /// The directory its tools work in, so a resumed run finds its files again.
    pub workspace: Option<String>,
    /// The options it was started with (step budget, compression switches), as the runtime
    /// wrote them: resume and recover continue under the same rules.
    pub options: serde_json::Value,
}

/// A stored execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Execution {
    /// Its id.
    pub id: ExecutionId,
    /// The conversation it works for.
    pub conversation_id: ConversationId,
    /// The spawning execution, for subagents.
    pub parent_id: Option<ExecutionId>,
    /// Nesting depth, 0 at the top.
    pub depth: u32,
    /// What it was asked to do.
    pub task: String,
    /// Where it is in its life.
    pub status: ExecutionStatus,
    /// Where its tools run.
    pub sandbox: SandboxKind,
    /// The provider row it talks to.
    pub provider_id: Option<String>,
    /// The directory its tools work in.
    pub workspace: Option<String>,
    /// The options it was started with.
    pub options: serde_json::Value,
    /// Its final answer, once succeeded.
    pub result: Option<String>,
    /// Why it failed, once failed.
    pub error: Option<String>,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it first ran.
    pub started_at: Option<Timestamp>,
    /// When it reached a terminal status.
    pub finished_at: Option<Timestamp>,
    /// When its row last changed.
    pub updated_at: Timestamp,
    /// A high or critical final review argued against its result (which stays as it was).
    pub contested: bool,
    /// How the analyst ended it, where they did: the conversation shows it in place.
    pub ending: Option<RunEnding>,
    /// What it cost: model calls and the tokens they carried.
    pub usage: RunUsage,
}

#[derive(FromRow)]
struct ExecutionRow {
    id: String,
    conversation_id: String,
    parent_id: Option<String>,
    depth: i64,
    task: String,
    status: String,
    sandbox_kind: String,
    provider_id: Option<String>,
    workspace: Option<String>,
    options: String,
    result: Option<String>,
    error: Option<String>,
    created_at: i64,
    started_at: Option<i64>,
    finished_at: Option<i64>,
    updated_at: i64,
    contested: bool,
    ended_by: Option<String>,
    ended_at_step: Option<i64>,
    ended_after_seq: Option<i64>,
    model_calls: i64,
    tokens_in: i64,
    tokens_out: i64,
    cache_read_tokens: i64,
    cache_write_tokens: i64,
    cost_microdollars: Option<i64>,
}

macro_rules! execution_columns {
    () => {
        "id, conversation_id, parent_id, depth, task, status, sandbox_kind, \
     provider_id, workspace, options, result, error, created_at, started_at, finished_at, \
     updated_at, contested, ended_by, ended_at_step, ended_after_seq, model_calls, tokens_in, \
     tokens_out, cache_read_tokens, cache_write_tokens, cost_microdollars"
    };
}

impl TryFrom<ExecutionRow> for Execution {
    type Error = StoreError;

    fn try_from(row: ExecutionRow) -> Result<Self> {
        Ok(Execution {
            id: row.id.parse().map_err(|e| corrupt("execution id", e))?,
            conversation_id: row
                .conversation_id
                .parse()
                .map_err(|e| corrupt("conversation id", e))?,
            parent_id: row
                .parent_id
                .map(|p| p.parse::<ExecutionId>())
                .transpose()
                .map_err(|e| corrupt("parent execution id", e))?,
            depth: u32::try_from(row.depth).map_err(|e| corrupt("execution depth", e))?,
            task: row.task,
            status: row
                .status
                .parse()
                .map_err(|e| corrupt("execution status", e))?,
            sandbox: row
                .sandbox_kind
                .parse()
                .map_err(|e| corrupt("sandbox kind", e))?,
            provider_id: row.provider_id,
            workspace: row.workspace,
            options: serde_json::from_str(&row.options)
                .map_err(|e| corrupt("execution options", e))?,
            result: row.result,
            error: row.error,
            created_at: Timestamp(row.created_at),
            started_at: row.started_at.map(Timestamp),
            finished_at: row.finished_at.map(Timestamp),
            updated_at: Timestamp(row.updated_at),
            contested: row.contested,
            ending: match (
                row.ended_by.as_deref(),
                row.ended_at_step,
                row.ended_after_seq,
            ) {
                (Some(by), Some(step), Some(after_seq)) => Some(RunEnding {
                    by: named("run ending", by)?,
                    step: u32::try_from(step).map_err(|e| corrupt("run ending step", e))?,
                    after_seq,
                }),
                _ => None,
            },
            usage: RunUsage {
                model_calls: u32::try_from(row.model_calls)
                    .map_err(|e| corrupt("model call count", e))?,
                tokens_in: u64::try_from(row.tokens_in).map_err(|e| corrupt("tokens in", e))?,
                tokens_out: u64::try_from(row.tokens_out).map_err(|e| corrupt("tokens out", e))?,
                cache_read_tokens: u64::try_from(row.cache_read_tokens)
                    .map_err(|e| corrupt("cache read tokens", e))?,
                cache_write_tokens: u64::try_from(row.cache_write_tokens)
                    .map_err(|e| corrupt("cache write tokens", e))?,
                cost_microdollars: row
                    .cost_microdollars
                    .map(u64::try_from)
                    .transpose()
                    .map_err(|e| corrupt("run cost", e))?,
            },
        })
    }
}

/// Execution operations, borrowed from a [`Store`].
pub struct Executions<'s> {
    store: &'s Store,
}

impl<'s> Executions<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Creates a queued execution. A subagent must sit one level below its parent, so depth
    /// limits cannot be dodged by lying about the depth. It has a conversation of its own (its
    /// own context window and compression); its parent's history reaches it as a file.
    pub async fn create(&self, new: &NewExecution) -> Result<Execution> {
        self.insert(ExecutionId::new(), new, ExecutionStatus::Queued)
            .await
    }

    /// Creates an execution that is running from the start, under the id whose lease the
    /// caller already holds (so no other process can take it for an orphan in between).
    /// Refused with [`StoreError::Busy`], before anything is written, while the conversation
    /// has another active execution, or a chat turn or compression holds it.
    pub async fn start(&self, id: ExecutionId, new: &NewExecution) -> Result<Execution> {
        self.insert(id, new, ExecutionStatus::Running).await
    }

    async fn insert(
        &self,
        id: ExecutionId,
        new: &NewExecution,
        status: ExecutionStatus,
    ) -> Result<Execution> {
        if new.task.trim().is_empty() {
            return Err(StoreError::InvalidInput("an execution needs a task".into()));
        }
        let now = Timestamp::now().0;
        on_pool!(self.store, |pool, dialect| {
            let mut tx = pool.begin_write().await?;
            if status == ExecutionStatus::Running
                && let Some(busy) =
                    busy_in(&mut *tx, dialect, new.conversation_id, None, Timestamp(now)).await?
            {
                return Err(StoreError::Busy(Box::new(busy)));
            }
            match new.parent_id {
                None if new.depth != 0 => {
                    return Err(StoreError::InvalidInput(format!(
                        "a top-level execution has depth 0, not {}",
                        new.depth
                    )));
                }
                None => {}
                Some(parent) => {
                    let found: Option<i64> =
                        sqlx::query_scalar("SELECT depth FROM executions WHERE id = $1")
                            .bind(parent.to_string())
                            .fetch_optional(&mut *tx)
                            .await?;
                    let depth =
                        found.ok_or_else(|| StoreError::not_found("parent execution", parent))?;
                    if i64::from(new.depth) != depth + 1 {
                        return Err(StoreError::InvalidInput(format!(
                            "a subagent of an execution at depth {depth} has depth {}, not {}",
                            depth + 1,
                            new.depth
                        )));
                    }
                }
            }
            let done = sqlx::query(
                "INSERT INTO executions (id, conversation_id, parent_id, depth, task, status, \
                 sandbox_kind, provider_id, workspace, options, created_at, updated_at, started_at) \
                 SELECT $1, id, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 FROM conversations \
                 WHERE id = $13 AND deleted_at IS NULL",
            )
            .bind(id.to_string())
            .bind(new.parent_id.map(|p| p.to_string()))
            .bind(i64::from(new.depth))
            .bind(&new.task)
            .bind(status.as_str())
            .bind(new.sandbox.as_str())
            .bind(new.provider_id.as_deref())
            .bind(new.workspace.as_deref())
            .bind(new.options.to_string())
            .bind(now)
            .bind(now)
            .bind((status == ExecutionStatus::Running).then_some(now))
            .bind(new.conversation_id.to_string())
            .execute(&mut *tx)
            .await
            .map_err(|e| match &e {
                sqlx::Error::Database(db) if db.is_foreign_key_violation() => {
                    // The conversation and parent were checked: only the provider is left.
                    StoreError::not_found(
                        "provider",
                        echo_untrusted(new.provider_id.as_deref().unwrap_or("")),
                    )
                }
                _ => one_active(e, new.conversation_id),
            })?;
            if done.rows_affected() == 0 {
                return Err(StoreError::not_found("conversation", new.conversation_id));
            }
            tx.commit().await?;
        });
        self.get(id).await
    }

    /// One execution.
    pub async fn get(&self, id: ExecutionId) -> Result<Execution> {
        let sql = concat!(
            "SELECT ",
            execution_columns!(),
            " FROM executions WHERE id = $1"
        );
        let row: Option<ExecutionRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .bind(id.to_string())
            .fetch_optional(pool)
            .await)?;
        row.ok_or_else(|| StoreError::not_found("execution", id))?
            .try_into()
    }

    /// Every execution of a conversation, subagents included, oldest first.
    pub async fn list_by_conversation(
        &self,
        conversation: ConversationId,
    ) -> Result<Vec<Execution>> {
        let sql = concat!(
            "SELECT ",
            execution_columns!(),
            " FROM executions WHERE conversation_id = $1 \
             ORDER BY created_at, id"
        );
        let rows: Vec<ExecutionRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .bind(conversation.to_string())
            .fetch_all(pool)
            .await)?;
        rows.into_iter().map(Execution::try_from).collect()
    }

    /// The subagents an execution spawned, oldest first: the tree view and the per-parent
    /// limit read them.
    pub async fn children(&self, parent: ExecutionId) -> Result<Vec<Execution>> {
        let sql = concat!(
            "SELECT ",
            execution_columns!(),
            " FROM executions WHERE parent_id = $1 ORDER BY created_at, id"
        );
        let rows: Vec<ExecutionRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .bind(parent.to_string())
            .fetch_all(pool)
            .await)?;
        rows.into_iter().map(Execution::try_from).collect()
    }

    /// The newest executions of every conversation, newest first, at most `limit`.
    pub async fn list_recent(&self, limit: u32) -> Result<Vec<Execution>> {
        let sql = concat!(
            "SELECT ",
            execution_columns!(),
            " FROM executions ORDER BY created_at DESC, id DESC LIMIT $1"
        );
        let rows: Vec<ExecutionRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await)?;
        rows.into_iter().map(Execution::try_from).collect()
    }

    /// Every execution in one status, oldest first: start-up looks for `running` ones whose
    /// process is gone.
    pub async fn list_by_status(&self, status: ExecutionStatus) -> Result<Vec<Execution>> {
        let sql = concat!(
            "SELECT ",
            execution_columns!(),
            " FROM executions WHERE status = $1 ORDER BY created_at, id"
        );
        let rows: Vec<ExecutionRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .bind(status.as_str())
            .fetch_all(pool)
            .await)?;
        rows.into_iter().map(Execution::try_from).collect()
    }

    /// Marks one `running` execution `interrupted`, if it still is: for the process that found
    /// its owner gone. Returns whether it was marked.
    pub async fn interrupt_if_running(&self, id: ExecutionId) -> Result<bool> {
        let done = on_pool!(self.store, |pool, d| sqlx::query(
            "UPDATE executions SET status = 'interrupted', updated_at = $1 \
             WHERE id = $2 AND status = 'running'",
        )
        .bind(Timestamp::now().0)
        .bind(id.to_string())
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))?;
        Ok(done == 1)
    }

    /// Moves an execution to `next` if [`ExecutionStatus::can_become`] allows it, and refuses
    /// with [`StoreError::Conflict`] otherwise. Stamps `started_at` on the first run and
    /// `finished_at` on a terminal status.
    pub async fn set_status(&self, id: ExecutionId, next: ExecutionStatus) -> Result<Execution> {
        self.transition(id, next, None, None).await
    }

    /// Finishes an execution with its answer or its error, in the same write as the status, so
    /// a reader never sees `succeeded` without the result.
    pub async fn finish(
        &self,
        id: ExecutionId,
        next: ExecutionStatus,
        result: Option<&str>,
        error: Option<&str>,
    ) -> Result<Execution> {
        if !next.is_terminal() {
            return Err(StoreError::InvalidInput(format!(
                "an execution finishes as succeeded, failed or cancelled, not {next}"
            )));
        }
        self.transition(id, next, result, error).await
    }

    async fn transition(
        &self,
        id: ExecutionId,
        next: ExecutionStatus,
        result: Option<&str>,
        error: Option<&str>,
    ) -> Result<Execution> {
        on_pool!(self.store, |pool, dialect| {
            let mut tx = pool.begin_write().await?;
            let current: Option<String> =
                sqlx::query_scalar("SELECT status FROM executions WHERE id = $1")
                    .bind(id.to_string())
                    .fetch_optional(&mut *tx)
                    .await?;
            let current: ExecutionStatus = current
                .ok_or_else(|| StoreError::not_found("execution", id))?
                .parse()
                .map_err(|e| corrupt("execution status", e))?;
            if !current.can_become(next) {
                return Err(StoreError::Conflict(format!(
                    "execution {id} is {current} and cannot become {next}"
                )));
            }
            let now = Timestamp::now().0;
            if next == ExecutionStatus::Running && current != ExecutionStatus::AwaitingUser {
                // Starting or resuming takes the conversation; one that waited already held it.
                let conversation: String =
                    sqlx::query_scalar("SELECT conversation_id FROM executions WHERE id = $1")
                        .bind(id.to_string())
                        .fetch_one(&mut *tx)
                        .await?;
                let conversation = conversation
                    .parse()
                    .map_err(|e| corrupt("conversation id", e))?;
                if let Some(busy) =
                    busy_in(&mut *tx, dialect, conversation, Some(id), Timestamp(now)).await?
                {
                    return Err(StoreError::Busy(Box::new(busy)));
                }
            }
            sqlx::query(
                "UPDATE executions SET status = $1, updated_at = $2, \
                 started_at = CASE WHEN $3 = 'running' THEN COALESCE(started_at, $4) ELSE started_at END, \
                 finished_at = CASE WHEN $5 THEN $6 ELSE finished_at END, \
                 result = COALESCE($7, result), error = COALESCE($8, error) WHERE id = $9",
            )
            .bind(next.as_str())
            .bind(now)
            .bind(next.as_str())
            .bind(now)
            .bind(next.is_terminal())
            .bind(now)
            .bind(result)
            .bind(error)
            .bind(id.to_string())
            .execute(&mut *tx)
            .await
            .map_err(|e| one_active(e, id))?;
            tx.commit().await?;
        });
        self.get(id).await
    }

    /// Marks every `running` execution `interrupted`: the first thing start-up does, since no
    /// loop survived the last process. Executions awaiting the user keep waiting. Returns how
    /// many were marked.
    pub async fn interrupt_running(&self) -> Result<u64> {
        let done = on_pool!(self.store, |pool, d| {
            sqlx::query(
            "UPDATE executions SET status = 'interrupted', updated_at = $1 WHERE status = 'running'",
        )
        .bind(Timestamp::now().0)
        .execute(pool)
        .await.map(|r| r.rows_affected())
        })?;
        Ok(done)
    }
}

/// The index `executions_one_active` refused a second active execution: the check before the
/// write found none, so another writer got there first (a store without `BEGIN IMMEDIATE`'s
/// serialisation). Said as a conflict, not a database fault.
fn one_active(e: sqlx::Error, of: impl fmt::Display) -> StoreError {
    match &e {
        sqlx::Error::Database(db)
            if db.is_unique_violation() && db.message().contains("executions.conversation_id") =>
        {
            StoreError::Conflict(format!(
                "another execution became active in the conversation of {of} at the same \
                 moment; only one may run at a time"
            ))
        }
        _ => StoreError::from(e),
    }
}
