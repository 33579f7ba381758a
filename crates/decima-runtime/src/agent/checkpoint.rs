//! Snapshots and rollback. A snapshot holds three things: the workspace (content-addressed, in
//! a store outside the workspace so the agent cannot touch it), the conversation's last seq, and
//! the plan. A rollback puts all three back: the files byte for byte, the plan as it was, and
//! the messages after the seq soft-deleted with the summaries over them retired.

use std::path::{Path, PathBuf};

use decima_core::{ConversationId, ExecutionId};
use decima_sandbox::{SnapshotId, SnapshotStore};
use decima_store::{NewSnapshot, Snapshot, SnapshotReason, Store, Todo, TodoInput, TodoStatus};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tracing::info;

use crate::error::{Result, RuntimeError};

/// The plan as a snapshot stores it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct StoredTodo {
    id: String,
    title: String,
    status: String,
    phase: Option<String>,
    checkpoint: bool,
    pinned: bool,
    reason: Option<String>,
}

fn plan_to_json(plan: &[Todo]) -> serde_json::Value {
    let todos: Vec<StoredTodo> = plan
        .iter()
        .map(|t| StoredTodo {
            id: t.id.clone(),
            title: t.title.clone(),
            status: t.status.as_str().to_owned(),
            phase: t.phase.clone(),
            checkpoint: t.checkpoint,
            pinned: t.pinned,
            reason: t.reason.clone(),
        })
        .collect();
    json!(todos)
}

fn plan_from_json(snapshot: &Snapshot) -> Result<Vec<TodoInput>> {
    let todos: Vec<StoredTodo> =
        serde_json::from_value(snapshot.todo_state.clone()).map_err(|e| {
            RuntimeError::Config(format!("snapshot {} has a damaged plan: {e}", snapshot.id))
        })?;
    todos
        .into_iter()
        .map(|t| {
            let status: TodoStatus = t.status.parse()?;
            Ok(TodoInput {
                id: Some(t.id),
                title: t.title,
                status,
                phase: t.phase,
                checkpoint: t.checkpoint,
                pinned: t.pinned,
                reason: t.reason,
            })
        })
        .collect()
}

/// The snapshot store of a data directory: `DATA_DIR/snapshots`, outside every workspace.
pub fn snapshot_store(data_dir: &Path) -> Result<SnapshotStore> {
    Ok(SnapshotStore::open(data_dir.join("snapshots"))?)
}

/// Where snapshots are taken and restored for one execution.
pub struct Checkpoints {
    store: std::sync::Arc<SnapshotStore>,
    /// `None`: checkpoints hold the plan and the history only (a subagent, whose workspace is
    /// its parent's).
    workspace: Option<PathBuf>,
    execution: ExecutionId,
}

/// What a rollback undid, as stored in the failure report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RolledBack {
    /// The snapshot returned to.
    pub snapshot_id: String,
    /// The todo it belonged to.
    pub todo_id: Option<String>,
    /// The last message seq kept.
    pub message_seq: i64,
    /// Files written back (changed or deleted since).
    pub files_restored: u64,
    /// Files created since and removed.
    pub files_removed: u64,
    /// Messages soft-deleted.
    pub messages_removed: u64,
    /// Whether the plan was put back as it was.
    pub plan_restored: bool,
}

impl Checkpoints {
    /// Snapshots of `workspace` for `execution`.
    pub fn new(store: SnapshotStore, workspace: Option<PathBuf>, execution: ExecutionId) -> Self {
        Self {
            store: std::sync::Arc::new(store),
            workspace,
            execution,
        }
    }

    /// Takes a snapshot of the workspace now, and records it with the seq and the plan.
    pub async fn take(
        &self,
        db: &Store,
        todo_id: Option<&str>,
        reason: SnapshotReason,
        message_seq: i64,
        plan: &[Todo],
    ) -> Result<Snapshot> {
        let taken = match &self.workspace {
            Some(workspace) => {
                let store = std::sync::Arc::clone(&self.store);
                let workspace = workspace.clone();
                Some(
                    tokio::task::spawn_blocking(move || store.snapshot(&workspace))
                        .await
                        .map_err(|e| {
                            RuntimeError::Config(format!("the snapshot task failed: {e}"))
                        })??,
                )
            }
            None => None,
        };
        let recorded = db
            .snapshots()
            .record(&NewSnapshot {
                execution_id: self.execution,
                todo_id: todo_id.map(str::to_owned),
                reason,
                message_seq,
                todo_state: plan_to_json(plan),
                workspace_archive: taken.as_ref().map(|t| t.id.as_str().to_owned()),
            })
            .await?;
        info!(
            execution = %self.execution,
            snapshot = %recorded.id,
            files = taken.as_ref().map_or(0, |t| t.stats.files),
            "snapshot taken"
        );
        Ok(recorded)
    }

    /// Rolls the workspace, the plan and the conversation back to `snapshot`.
    pub async fn roll_back(
        &self,
        db: &Store,
        conversation: ConversationId,
        snapshot: &Snapshot,
    ) -> Result<RolledBack> {
        let mut done = RolledBack {
            snapshot_id: snapshot.id.clone(),
            todo_id: snapshot.todo_id.clone(),
            message_seq: snapshot.message_seq,
            ..RolledBack::default()
        };
        if let (Some(archive), Some(workspace)) = (&snapshot.workspace_archive, &self.workspace) {
            let id = SnapshotId::parse(archive)?;
            let store = std::sync::Arc::clone(&self.store);
            let workspace = workspace.clone();
            let stats = tokio::task::spawn_blocking(move || store.restore(&id, &workspace))
                .await
                .map_err(|e| RuntimeError::Config(format!("the restore task failed: {e}")))??;
            done.files_restored = stats.files_written;
            done.files_removed = stats.removed;
        }
        let plan = plan_from_json(snapshot)?;
        db.todos().replace_plan(self.execution, &plan).await?;
        done.plan_restored = true;
        done.messages_removed = db
            .messages()
            .soft_delete_after(conversation, snapshot.message_seq)
            .await?;
        db.events()
            .append(
                Some(self.execution),
                Some(conversation),
                "execution.rolled_back",
                &serde_json::to_value(&done).unwrap_or_default(),
            )
            .await?;
        info!(
            execution = %self.execution,
            snapshot = %snapshot.id,
            messages = done.messages_removed,
            "rolled back"
        );
        Ok(done)
    }
}

/// The snapshot a failure of `todo` rolls back to: the one taken when it last started.
pub async fn rollback_target(db: &Store, todo_id: Option<&str>) -> Result<Option<Snapshot>> {
    match todo_id {
        Some(todo) => Ok(db.snapshots().latest_for_todo(todo).await?),
        None => Ok(None),
    }
}
