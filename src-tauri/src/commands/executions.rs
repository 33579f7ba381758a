//! Executions of a conversation for the workbench: the runs, their subagent trees, plans and
//! the failures they wait on.

use std::collections::VecDeque;

use decima_store::{ExecutionStatus, Store};
use tauri::State;

use crate::dto::ExecutionView;
use crate::{AppError, AppState};

/// Subagent trees are bounded by the runtime's depth limit; this bounds what one call reads
/// even for a corrupt file.
const MAX_TREE: usize = 2_000;

/// The conversation's executions, newest first, each followed by its subagents (depth first,
/// in start order): the run list, the subagent tree and the recovery panel read this.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "execution_list"))]
pub async fn execution_list(
    state: State<'_, AppState>,
    conversation_id: String,
) -> Result<Vec<ExecutionView>, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    let store = &state.store;
    store.conversations().get(id).await?;
    let mut roots = store.executions().list_by_conversation(id).await?;
    roots.retain(|e| e.parent_id.is_none());
    roots.reverse();
    let mut out = Vec::new();
    for root in roots {
        let mut queue = VecDeque::from([root]);
        while let Some(execution) = queue.pop_front() {
            if out.len() >= MAX_TREE {
                return Ok(out);
            }
            let children = store.executions().children(execution.id).await?;
            out.push(view(store, &execution).await?);
            // Depth first: the children right after their parent.
            for child in children.into_iter().rev() {
                queue.push_front(child);
            }
        }
    }
    Ok(out)
}

/// Executions left `interrupted` (the app or the CLI died while they ran): the window offers
/// to resume them on start-up.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "execution_interrupted"))]
pub async fn execution_interrupted(
    state: State<'_, AppState>,
) -> Result<Vec<ExecutionView>, AppError> {
    let store = &state.store;
    let mut out = Vec::new();
    for execution in store
        .executions()
        .list_by_status(ExecutionStatus::Interrupted)
        .await?
        .into_iter()
        .filter(|e| e.parent_id.is_none())
    {
        out.push(view(store, &execution).await?);
    }
    Ok(out)
}

async fn view(
    store: &Store,
    execution: &decima_store::Execution,
) -> Result<ExecutionView, AppError> {
    let todos = store.todos().plan(execution.id).await?;
    let mut snapshot_todos: Vec<String> = store
        .snapshots()
        .list(execution.id)
        .await?
        .into_iter()
        .filter_map(|s| s.todo_id)
        .collect();
    snapshot_todos.sort();
    snapshot_todos.dedup();
    let failures = store.failures().list(execution.id).await?;
    let waiting_on = if execution.status == ExecutionStatus::AwaitingUser {
        failures
            .iter()
            .rev()
            .find(|f| f.resolution.is_none())
            .cloned()
    } else {
        None
    };
    let mut view = ExecutionView::new(execution, &todos, snapshot_todos, waiting_on.as_ref());
    for failure in failures.iter().filter(|f| f.resolution.is_some()) {
        let at = failure.resolved_at.unwrap_or(failure.created_at);
        let after = store
            .messages()
            .last_live_seq_at(execution.conversation_id, at)
            .await?;
        view.answered.push(crate::dto::AnsweredFailure {
            report: crate::dto::FailureReport::from(failure),
            after_seq: u32::try_from(after).unwrap_or(u32::MAX),
        });
    }
    // Only runs the analyst started are in the run history: its risk and first message are
    // read for them, not for every subagent in the tree, on each refresh.
    if execution.parent_id.is_none() {
        view.compressions = store.executions().compressions(execution.id).await?;
        view.review_risk = store
            .reviews()
            .list_for_execution(execution.id)
            .await?
            .into_iter()
            .rev()
            .find(|r| r.trigger == "system")
            .map(|r| r.risk_level);
        view.first_seq = store
            .messages()
            .first_seq_of_execution(execution.id)
            .await?
            .and_then(|seq| u32::try_from(seq).ok());
    }
    // A subagent's conversation can be deleted on its own: the tree then shows it, unopenable.
    if execution.parent_id.is_some() {
        view.conversation_deleted = store
            .conversations()
            .find(execution.conversation_id)
            .await?
            .is_none_or(|c| c.deleted_at.is_some());
    }
    Ok(view)
}
