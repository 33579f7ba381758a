//! The plans of executions. Pinned todos are part of every request's session context, verbatim:
//! they are not messages, so no compression can summarise them away.

use decima_core::names::echo_untrusted;
use decima_core::{ConversationId, ExecutionId, Timestamp};
use sqlx::FromRow;

use crate::BeginWrite;
use crate::on_pool;
use crate::rows::corrupt;
use crate::{Result, Store, StoreError};

/// A todo as the context pipeline renders it.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct PinnedTodo {
    /// What to do.
    pub title: String,
    /// pending, in_progress, completed, failed or skipped.
    pub status: String,
    /// The phase it belongs to, if the plan has phases.
    pub phase: Option<String>,
}

/// Todo operations, borrowed from a [`Store`].
pub struct Todos<'s> {
    store: &'s Store,
}

impl<'s> Todos<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// The pinned, live todos of every execution of a conversation, in plan order.
    pub async fn pinned_in_conversation(
        &self,
        conversation: ConversationId,
    ) -> Result<Vec<PinnedTodo>> {
        Ok(on_pool!(self.store, |pool, d| {
            sqlx::query_as(
            "SELECT t.title, t.status, t.phase FROM todos t JOIN executions e ON e.id = t.execution_id \
             WHERE e.conversation_id = $1 AND t.pinned AND t.deleted_at IS NULL \
             ORDER BY e.created_at, e.id, t.position",
        )
        .bind(conversation.to_string())
        .fetch_all(pool)
        .await
        })?)
    }
}

/// A todo's progress, as stored in `todos.status`.
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
    parse_err_fn = not_a_todo_status
)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
    /// Gave up on it; the todo's `reason` says why.
    Failed,
    /// Deliberately not done.
    Skipped,
    /// In progress when the analyst stopped the run or aborted it: set by Decima, never by the
    /// model. The todo's `reason` says how the run ended.
    Cancelled,
}

impl TodoStatus {
    /// Every status.
    pub const ALL: [TodoStatus; 6] = [
        Self::Pending,
        Self::InProgress,
        Self::Completed,
        Self::Failed,
        Self::Skipped,
        Self::Cancelled,
    ];

    /// The text stored in `todos.status` and used by the todo_write tool.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The error for a name that is not a todo status, listing the statuses.
fn not_a_todo_status(s: &str) -> StoreError {
    StoreError::InvalidInput(format!(
        "{:?} is not a todo status (pending, in_progress, completed, failed, skipped, cancelled)",
        echo_untrusted(s)
    ))
}

/// One entry of a todo_write call: the whole plan is sent every time, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TodoInput {
    /// The id of a todo of this execution to keep (and update), or `None` for a new one. Ids
    /// come from the model, so an id that is not this execution's is refused, never created.
    pub id: Option<String>,
    /// What to do.
    pub title: String,
    /// Its progress.
    pub status: TodoStatus,
    /// The phase it belongs to, if the plan has phases.
    pub phase: Option<String>,
    /// Finishing it is a checkpoint: a snapshot and a compaction point.
    pub checkpoint: bool,
    /// Shown in every request's session context, never compressed.
    pub pinned: bool,
    /// Why it failed; only a failed todo has one.
    pub reason: Option<String>,
}

/// A stored todo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Todo {
    /// Its id (UUIDv7 text).
    pub id: String,
    /// The execution whose plan it is part of.
    pub execution_id: ExecutionId,
    /// Its place in the plan, from 0.
    pub position: i64,
    /// What to do.
    pub title: String,
    /// Its progress.
    pub status: TodoStatus,
    /// Its phase.
    pub phase: Option<String>,
    /// Whether finishing it is a checkpoint.
    pub checkpoint: bool,
    /// Whether it is pinned into the session context.
    pub pinned: bool,
    /// Why it failed.
    pub reason: Option<String>,
    /// When it first entered the plan.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

#[derive(FromRow)]
struct TodoRow {
    id: String,
    execution_id: String,
    position: i64,
    title: String,
    status: String,
    phase: Option<String>,
    checkpoint: bool,
    pinned: bool,
    reason: Option<String>,
    created_at: i64,
    updated_at: i64,
}

impl TryFrom<TodoRow> for Todo {
    type Error = StoreError;

    fn try_from(row: TodoRow) -> Result<Self> {
        Ok(Todo {
            execution_id: row
                .execution_id
                .parse()
                .map_err(|e| corrupt("execution id", e))?,
            status: row.status.parse().map_err(|e| corrupt("todo status", e))?,
            id: row.id,
            position: row.position,
            title: row.title,
            phase: row.phase,
            checkpoint: row.checkpoint,
            pinned: row.pinned,
            reason: row.reason,
            created_at: Timestamp(row.created_at),
            updated_at: Timestamp(row.updated_at),
        })
    }
}

impl Todos<'_> {
    /// Replaces an execution's whole plan, todo_write style, in one write transaction: entries
    /// with an id update that todo, entries without one are new, and live todos left out are
    /// soft-deleted (snapshots and failures still point at them). Any refused entry rolls the
    /// whole call back, so the old plan stays exactly as it was. Returns the new plan.
    pub async fn replace_plan(
        &self,
        execution: ExecutionId,
        plan: &[TodoInput],
    ) -> Result<Vec<Todo>> {
        let mut seen = std::collections::HashSet::new();
        for item in plan {
            if item.title.trim().is_empty() {
                return Err(StoreError::InvalidInput("a todo needs a title".into()));
            }
            if item.reason.is_some() && item.status != TodoStatus::Failed {
                return Err(StoreError::InvalidInput(format!(
                    "only a failed todo has a reason, not a {} one",
                    item.status
                )));
            }
            if let Some(id) = &item.id
                && !seen.insert(id.as_str())
            {
                return Err(StoreError::InvalidInput(format!(
                    "todo {} appears twice in the plan",
                    echo_untrusted(id)
                )));
            }
        }
        let execution_id = execution.to_string();
        let now = Timestamp::now().0;
        on_pool!(self.store, |pool, dialect| {
            let mut tx = pool.begin_write().await?;
            let exists: Option<i64> =
                sqlx::query_scalar("SELECT CAST(1 AS BIGINT) FROM executions WHERE id = $1")
                    .bind(&execution_id)
                    .fetch_optional(&mut *tx)
                    .await?;
            if exists.is_none() {
                return Err(StoreError::not_found("execution", execution));
            }
            sqlx::query(
                "UPDATE todos SET deleted_at = $1, updated_at = $2 \
                 WHERE execution_id = $3 AND deleted_at IS NULL",
            )
            .bind(now)
            .bind(now)
            .bind(&execution_id)
            .execute(&mut *tx)
            .await?;
            for (position, item) in (0_i64..).zip(plan) {
                match &item.id {
                    Some(id) => {
                        let done = sqlx::query(
                            "UPDATE todos SET position = $1, title = $2, status = $3, phase = $4, \
                             checkpoint = $5, pinned = $6, reason = $7, updated_at = $8, deleted_at = NULL \
                             WHERE id = $9 AND execution_id = $10",
                        )
                        .bind(position)
                        .bind(&item.title)
                        .bind(item.status.as_str())
                        .bind(item.phase.as_deref())
                        .bind(item.checkpoint)
                        .bind(item.pinned)
                        .bind(item.reason.as_deref())
                        .bind(now)
                        .bind(id)
                        .bind(&execution_id)
                        .execute(&mut *tx)
                        .await?;
                        if done.rows_affected() == 0 {
                            return Err(StoreError::not_found(
                                "todo",
                                format!("{} of execution {execution}", echo_untrusted(id)),
                            ));
                        }
                    }
                    None => {
                        sqlx::query(
                            "INSERT INTO todos (id, execution_id, position, title, status, phase, \
                             checkpoint, pinned, reason, created_at, updated_at) \
                             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                        )
                        .bind(uuid::Uuid::now_v7().to_string())
                        .bind(&execution_id)
                        .bind(position)
                        .bind(&item.title)
                        .bind(item.status.as_str())
                        .bind(item.phase.as_deref())
                        .bind(item.checkpoint)
                        .bind(item.pinned)
                        .bind(item.reason.as_deref())
                        .bind(now)
                        .bind(now)
                        .execute(&mut *tx)
                        .await?;
                    }
                }
            }
            tx.commit().await?;
        });
        self.plan(execution).await
    }

    /// Marks the execution's todos still in progress `cancelled`, with `reason`: the run ended
    /// at the analyst's word, so nothing is being worked on any more. Returns how many.
    pub async fn cancel_open(&self, execution: ExecutionId, reason: &str) -> Result<u64> {
        let done = on_pool!(self.store, |pool, d| sqlx::query(
            "UPDATE todos SET status = 'cancelled', reason = $1, updated_at = $2 \
             WHERE execution_id = $3 AND status = 'in_progress' AND deleted_at IS NULL",
        )
        .bind(reason)
        .bind(Timestamp::now().0)
        .bind(execution.to_string())
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))?;
        Ok(done)
    }

    /// The live plan of an execution, in order.
    pub async fn plan(&self, execution: ExecutionId) -> Result<Vec<Todo>> {
        let rows: Vec<TodoRow> = on_pool!(self.store, |pool, d| {
            sqlx::query_as(
            "SELECT id, execution_id, position, title, status, phase, checkpoint, pinned, reason, \
             created_at, updated_at FROM todos WHERE execution_id = $1 AND deleted_at IS NULL \
             ORDER BY position, id",
        )
        .bind(execution.to_string())
        .fetch_all(pool)
        .await
        })?;
        rows.into_iter().map(Todo::try_from).collect()
    }
}
