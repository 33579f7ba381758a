//! Snapshots and rollback. A snapshot holds three things: the workspace (content-addressed, in
//! a store outside the workspace so the agent cannot touch it), the conversation's last seq, and
//! the plan. A rollback puts all three back: the files byte for byte, the plan as it was, and
//! the messages after the seq soft-deleted with the summaries over them retired.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use decima_core::{ConversationId, ExecutionId};
use decima_sandbox::{SnapshotId, SnapshotStore};
use decima_store::{NewSnapshot, Snapshot, SnapshotReason, Store, Todo, TodoInput, TodoStatus};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tracing::{info, warn};

use super::report::TodoChanges;
use crate::docker::LazyDocker;

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

/// How long a snapshot nobody has recorded yet is kept: one taken by a run in another process a
/// moment before it writes its row.
const UNRECORDED_GRACE: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// Reclaims the workspace snapshots no rollback can need any more: every one but those of the
/// executions that have not finished and each run's inputs (see `Snapshots::archives_in_use`;
/// content-addressed, a run's inputs share their objects with the next run's). Run when a run ends
/// and when the app starts, so `DATA_DIR/snapshots` does not grow with every todo ever run.
/// Skips (returning `busy`) while another process is snapshotting or restoring.
///
/// # Errors
/// When the store cannot be read, or the snapshot folder cannot be listed or changed.
pub async fn collect_snapshots(
    store: &Store,
    data_dir: &Path,
) -> Result<decima_sandbox::snapshot::GcStats> {
    let live: Vec<SnapshotId> = store
        .snapshots()
        .archives_in_use()
        .await?
        .iter()
        .filter_map(|id| SnapshotId::parse(id).ok())
        .collect();
    let snapshots = snapshot_store(data_dir)?;
    let stats = tokio::task::spawn_blocking(move || snapshots.gc(&live, UNRECORDED_GRACE))
        .await
        .map_err(|e| RuntimeError::Config(format!("the snapshot collection task failed: {e}")))??;
    info!(
        manifests = stats.manifests_removed,
        objects = stats.objects_removed,
        bytes = stats.bytes_freed,
        busy = stats.busy,
        "workspace snapshots collected"
    );
    Ok(stats)
}

/// Where snapshots are taken and restored for one execution.
pub struct Checkpoints {
    store: std::sync::Arc<SnapshotStore>,
    workspace: SnapshotSource,
    execution: ExecutionId,
}

/// Where the workspace a checkpoint snapshots lives.
pub enum SnapshotSource {
    /// Checkpoints hold the plan and the history only: a subagent, whose workspace is its
    /// parent's (the parent's snapshot covers it, and siblings share it).
    None,
    /// A folder on this machine.
    Host(PathBuf),
    /// A container's `/workspace`, copied into a host mirror and snapshotted there; a rollback
    /// restores the mirror and copies it back. When the engine cannot be reached, the snapshot
    /// holds no workspace (a warning says so) and a rollback reports what it could not restore.
    Container(Arc<LazyDocker>),
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
    /// Why the workspace could not be put back, when it could not (a container whose engine
    /// is down): the plan and the history were rolled back all the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_error: Option<String>,
    /// The `python` cells run again on a restarted kernel, so that its memory matches the
    /// files put back; `None` when the conversation has no kernel to match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_cells_rerun: Option<u32>,
    /// Why the kernel does not match the files (a cell that failed on the rerun, a kernel
    /// that could not start): the model and the analyst are told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_error: Option<String>,
}

impl Checkpoints {
    /// Snapshots of `workspace` for `execution`.
    pub fn new(store: SnapshotStore, workspace: SnapshotSource, execution: ExecutionId) -> Self {
        Self {
            store: Arc::new(store),
            workspace,
            execution,
        }
    }

    /// The store its snapshots are in: the run's inputs are read from its first one.
    pub fn store(&self) -> Arc<SnapshotStore> {
        Arc::clone(&self.store)
    }

    /// Whether its snapshots hold the workspace (a subagent's, or a run with snapshots turned
    /// off, hold the plan and the history only).
    pub fn holds_workspace(&self) -> bool {
        !matches!(self.workspace, SnapshotSource::None)
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
            SnapshotSource::Host(workspace) => Some(self.snapshot_dir(workspace.clone()).await?),
            SnapshotSource::Container(docker) => {
                let mirror = docker.mirror();
                let copied = match docker.get().await {
                    Ok(sandbox) => sandbox.download_workspace(&mirror).await,
                    Err(e) => Err(e),
                };
                match copied {
                    Ok(()) => Some(self.snapshot_dir(mirror).await?),
                    Err(e) => {
                        warn!(error = %e, "the container's workspace was not snapshotted");
                        None
                    }
                }
            }
            SnapshotSource::None => None,
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

    async fn snapshot_dir(&self, dir: PathBuf) -> Result<decima_sandbox::snapshot::Snapshot> {
        let store = Arc::clone(&self.store);
        Ok(tokio::task::spawn_blocking(move || store.snapshot(&dir))
            .await
            .map_err(|e| RuntimeError::Config(format!("the snapshot task failed: {e}")))??)
    }

    async fn restore_dir(
        &self,
        id: SnapshotId,
        dir: PathBuf,
    ) -> Result<decima_sandbox::snapshot::RestoreStats> {
        let store = Arc::clone(&self.store);
        Ok(
            tokio::task::spawn_blocking(move || store.restore(&id, &dir))
                .await
                .map_err(|e| RuntimeError::Config(format!("the restore task failed: {e}")))??,
        )
    }

    /// What the workspace and the history gained since `snapshot`: what a rollback to it would
    /// undo. The workspace is snapshotted now (cheaply: unchanged files come from the stat
    /// cache) and the two manifests compared; nothing is recorded.
    pub async fn changes_since(
        &self,
        db: &Store,
        conversation: ConversationId,
        snapshot: &Snapshot,
    ) -> Result<TodoChanges> {
        let mut changes = TodoChanges {
            snapshot_id: snapshot.id.clone(),
            messages_since: db
                .messages()
                .totals_between(conversation, snapshot.message_seq, i64::MAX)
                .await?
                .count,
            ..TodoChanges::default()
        };
        let compared = match (&snapshot.workspace_archive, &self.workspace) {
            (_, SnapshotSource::None) => Err("this run keeps no workspace snapshots".to_owned()),
            (None, _) => Err("the snapshot holds no workspace".to_owned()),
            (Some(archive), SnapshotSource::Host(workspace)) => {
                self.compare(archive, workspace.clone()).await
            }
            (Some(archive), SnapshotSource::Container(docker)) => {
                let mirror = docker.mirror();
                match docker.get().await {
                    Ok(sandbox) => match sandbox.download_workspace(&mirror).await {
                        Ok(()) => self.compare(archive, mirror).await,
                        Err(e) => Err(e.to_string()),
                    },
                    Err(e) => Err(e.to_string()),
                }
            }
        };
        match compared {
            Ok(diff) => {
                changes.counts = [
                    diff.added.len() as u64,
                    diff.changed.len() as u64,
                    diff.removed.len() as u64,
                ];
                let listed = |mut v: Vec<String>| {
                    v.truncate(TodoChanges::LISTED);
                    v
                };
                changes.added = listed(diff.added);
                changes.changed = listed(diff.changed);
                changes.removed = listed(diff.removed);
            }
            Err(why) => changes.workspace_unknown = Some(why),
        }
        Ok(changes)
    }

    async fn compare(
        &self,
        archive: &str,
        dir: PathBuf,
    ) -> std::result::Result<decima_sandbox::snapshot::Changes, String> {
        let store = Arc::clone(&self.store);
        let id = SnapshotId::parse(archive).map_err(|e| e.to_string())?;
        tokio::task::spawn_blocking(move || {
            let then = store.manifest(&id)?;
            let now = store.snapshot(&dir)?;
            Ok::<_, decima_sandbox::SandboxError>(now.manifest.changes_since(&then))
        })
        .await
        .map_err(|e| format!("the comparison task failed: {e}"))?
        .map_err(|e| e.to_string())
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
        if let Some(archive) = &snapshot.workspace_archive {
            let id = SnapshotId::parse(archive)?;
            match &self.workspace {
                SnapshotSource::Host(workspace) => {
                    let stats = self.restore_dir(id, workspace.clone()).await?;
                    done.files_restored = stats.files_written;
                    done.files_removed = stats.removed;
                }
                SnapshotSource::Container(docker) => {
                    let mirror = docker.mirror();
                    let stats = self.restore_dir(id, mirror.clone()).await?;
                    let copied = match docker.get().await {
                        Ok(sandbox) => sandbox.upload_workspace(&mirror).await,
                        Err(e) => Err(e),
                    };
                    match copied {
                        Ok(()) => {
                            done.files_restored = stats.files_written;
                            done.files_removed = stats.removed;
                            crate::python_tool::realign_kernel(
                                docker,
                                db,
                                conversation,
                                snapshot.message_seq,
                                &mut done,
                            )
                            .await?;
                        }
                        Err(e) => {
                            warn!(error = %e, "the container's workspace was not restored");
                            done.workspace_error = Some(e.to_string());
                        }
                    }
                }
                SnapshotSource::None => {}
            }
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
