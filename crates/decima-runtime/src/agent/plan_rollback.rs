//! Rolling an ended run back to the start of one of its todos, from the Plan panel: the same
//! rollback a failure offers (the workspace byte for byte, the plan, the messages after the
//! snapshot's seq set aside), asked for after the run, with a preview of what it undoes and an
//! Undo. Before rolling back, the present is snapshotted too; Undo restores that snapshot and
//! brings the set-aside messages back, as long as nothing was written since.

use std::path::Path;

use decima_core::{ExecutionId, Timestamp};
use decima_store::{ClaimKind, Execution, ExecutionStatus, SnapshotReason, Store};
use serde_json::json;

use super::checkpoint::{Checkpoints, RolledBack, SnapshotSource, rollback_target, snapshot_store};
use super::report::TodoChanges;
use crate::busy::ClaimGuard;
use crate::docker::LazyDocker;
use crate::error::{Result, RuntimeError};

/// The event that records a rollback the analyst asked for: its id is the Undo's handle.
const ROLLED_BACK: &str = "plan.rolled_back";
/// The event that records its undo.
const UNDONE: &str = "plan.rollback_undone";

/// A rollback done from the Plan panel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanRollback {
    /// What it undid.
    pub rolled: RolledBack,
    /// What Undo names to put it back.
    pub undo: i64,
}

/// What rolling `execution` back to the start of `todo` would undo (nothing is changed).
pub async fn preview(
    store: &Store,
    data_dir: &Path,
    execution: ExecutionId,
    todo: &str,
) -> Result<TodoChanges> {
    let (run, checkpoints) = open(store, data_dir, execution).await?;
    let snapshot = target(store, &run, todo).await?;
    checkpoints
        .changes_since(store, run.conversation_id, &snapshot)
        .await
}

/// Rolls `execution` (which has ended) back to the start of `todo`, keeping the present as an
/// undo point.
#[tracing::instrument(skip(store, data_dir), fields(%execution))]
pub async fn roll_back(
    store: &Store,
    data_dir: &Path,
    execution: ExecutionId,
    todo: &str,
) -> Result<PlanRollback> {
    let (run, checkpoints) = open(store, data_dir, execution).await?;
    let snapshot = target(store, &run, todo).await?;
    let claim = ClaimGuard::take(store, run.conversation_id, ClaimKind::Compression).await?;
    let kept_seq = store
        .messages()
        .last_live_seq_at(run.conversation_id, Timestamp::now())
        .await?;
    let plan = store.todos().plan(execution).await?;
    let present = checkpoints
        .take(store, None, SnapshotReason::Manual, kept_seq, &plan)
        .await?;
    let since = Timestamp::now();
    let rolled = checkpoints
        .roll_back(store, run.conversation_id, &snapshot)
        .await;
    claim.release().await;
    let rolled = rolled?;
    let undo = store
        .events()
        .append(
            Some(execution),
            Some(run.conversation_id),
            ROLLED_BACK,
            &json!({
                "present": present.id,
                "since": since.0,
                "to_seq": snapshot.message_seq,
                "todo": todo,
            }),
        )
        .await?;
    tracing::info!(undo, "rolled back from the plan");
    Ok(PlanRollback { rolled, undo })
}

/// Whether the rollback `undo` has its undo recorded: every event after it is read, a page at a
/// time, however many the run wrote in between.
async fn undone_already(store: &Store, execution: ExecutionId, undo: i64) -> Result<bool> {
    const PAGE: u32 = 1000;
    let mut after = undo;
    loop {
        let page = store
            .events()
            .execution_after(execution, after, PAGE)
            .await?;
        if page
            .iter()
            .any(|e| e.kind == UNDONE && e.payload["undo"].as_i64() == Some(undo))
        {
            return Ok(true);
        }
        match page.last() {
            Some(last) if page.len() == PAGE as usize => after = last.id,
            _ => return Ok(false),
        }
    }
}

/// Puts back what the rollback `undo` (its handle) undid: the files and the plan as they were
/// just before it, and the messages it set aside. Refused once anything was written since.
#[tracing::instrument(skip(store, data_dir), fields(%execution))]
pub async fn undo(
    store: &Store,
    data_dir: &Path,
    execution: ExecutionId,
    undo: i64,
) -> Result<u64> {
    let (run, checkpoints) = open(store, data_dir, execution).await?;
    let rollback = store
        .events()
        .execution_after(execution, undo - 1, 1)
        .await?;
    let Some(done) = rollback
        .iter()
        .find(|e| e.id == undo && e.kind == ROLLED_BACK)
    else {
        return Err(RuntimeError::Conflict(
            "there is no such rollback of this run to undo".to_owned(),
        ));
    };
    if undone_already(store, execution, undo).await? {
        return Err(RuntimeError::Conflict(
            "this rollback was undone already".to_owned(),
        ));
    }
    let (Some(present), Some(since), Some(to_seq)) = (
        done.payload["present"].as_str(),
        done.payload["since"].as_i64(),
        done.payload["to_seq"].as_i64(),
    ) else {
        return Err(RuntimeError::Conflict(
            "this rollback's record cannot be read; it cannot be undone".to_owned(),
        ));
    };
    let claim = ClaimGuard::take(store, run.conversation_id, ClaimKind::Compression).await?;
    let now = store
        .messages()
        .last_live_seq_at(run.conversation_id, Timestamp::now())
        .await?;
    if now > to_seq {
        claim.release().await;
        return Err(RuntimeError::Conflict(
            "the conversation moved on since the rollback (new messages were written), so it \
             cannot be undone"
                .to_owned(),
        ));
    }
    let present = store.snapshots().get(present).await?;
    let restored = async {
        checkpoints
            .roll_back(store, run.conversation_id, &present)
            .await?;
        let messages = store
            .messages()
            .restore_deleted_since(run.conversation_id, to_seq, Timestamp(since))
            .await?;
        store
            .events()
            .append(
                Some(execution),
                Some(run.conversation_id),
                UNDONE,
                &json!({ "undo": undo, "messages": messages }),
            )
            .await?;
        Ok::<_, RuntimeError>(messages)
    }
    .await;
    claim.release().await;
    restored
}

/// The ended run and its snapshots, refused while it runs or waits on a failure (whose own
/// panel offers the rollback).
async fn open(
    store: &Store,
    data_dir: &Path,
    execution: ExecutionId,
) -> Result<(Execution, Checkpoints)> {
    let run = store.executions().get(execution).await?;
    match run.status {
        ExecutionStatus::Succeeded
        | ExecutionStatus::Failed
        | ExecutionStatus::Cancelled
        | ExecutionStatus::Interrupted => {}
        ExecutionStatus::AwaitingUser => {
            return Err(RuntimeError::Conflict(
                "this run waits on a failure: roll back from its recovery panel".to_owned(),
            ));
        }
        _ => {
            return Err(RuntimeError::Conflict(
                "this run is still going: stop it first, then roll back".to_owned(),
            ));
        }
    }
    if run.depth > 0 {
        return Err(RuntimeError::Conflict(
            "a subagent shares its parent's workspace: roll back the parent's run".to_owned(),
        ));
    }
    let source = match run.sandbox {
        decima_store::SandboxKind::Host => {
            let dir = run.workspace.clone().ok_or_else(|| {
                RuntimeError::Config(format!("execution {} has no workspace", run.id))
            })?;
            SnapshotSource::Host(dir.into())
        }
        decima_store::SandboxKind::Docker => SnapshotSource::Container(std::sync::Arc::new(
            LazyDocker::new(store, data_dir, run.conversation_id).await?,
        )),
    };
    let checkpoints = Checkpoints::new(snapshot_store(data_dir)?, source, run.id);
    Ok((run, checkpoints))
}

/// The snapshot taken when `todo` of `run` last started.
async fn target(store: &Store, run: &Execution, todo: &str) -> Result<decima_store::Snapshot> {
    let snapshot = rollback_target(store, Some(todo)).await?.ok_or_else(|| {
        RuntimeError::Conflict(
            "this todo has no snapshot to roll back to (it never started, or its run keeps no \
             snapshots)"
                .to_owned(),
        )
    })?;
    if snapshot.execution_id != run.id {
        return Err(RuntimeError::Conflict(
            "that todo belongs to another run".to_owned(),
        ));
    }
    Ok(snapshot)
}
