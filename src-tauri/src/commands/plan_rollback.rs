//! Rolling an ended run back to the start of a todo, from the Plan panel: what it would undo,
//! the rollback, and its Undo. The rules live in `decima_runtime::agent::plan_rollback`.

use decima_runtime::agent::plan_rollback;
use tauri::State;

use crate::dto::{PlanRollbackView, TodoChangesView};
use crate::{AppError, AppState};

/// The longest todo id the webview may name.
const MAX_TODO_ID: usize = 200;

/// What rolling the run back to the start of `todo_id` would undo; nothing changes.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "plan_rollback_preview"))]
pub async fn plan_rollback_preview(
    state: State<'_, AppState>,
    execution_id: String,
    todo_id: String,
) -> Result<TodoChangesView, AppError> {
    let execution = super::execution_id(&execution_id)?;
    check_todo(&todo_id)?;
    let changes =
        plan_rollback::preview(&state.store, &state.data_dir, execution, &todo_id).await?;
    Ok(changes.into())
}

/// Rolls the ended run back to the start of `todo_id`: its files, its plan and the messages
/// after. Returns what Undo needs.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "plan_rollback"))]
pub async fn plan_rollback(
    state: State<'_, AppState>,
    execution_id: String,
    todo_id: String,
) -> Result<PlanRollbackView, AppError> {
    let execution = super::execution_id(&execution_id)?;
    check_todo(&todo_id)?;
    let done = plan_rollback::roll_back(&state.store, &state.data_dir, execution, &todo_id).await?;
    let count = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
    Ok(PlanRollbackView {
        undo: u32::try_from(done.undo).unwrap_or(u32::MAX),
        files_restored: count(done.rolled.files_restored),
        files_removed: count(done.rolled.files_removed),
        messages_removed: count(done.rolled.messages_removed),
        workspace_error: done.rolled.workspace_error,
    })
}

/// Undoes the rollback `undo` names; returns the messages brought back.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "plan_rollback_undo"))]
pub async fn plan_rollback_undo(
    state: State<'_, AppState>,
    execution_id: String,
    undo: u32,
) -> Result<u32, AppError> {
    let execution = super::execution_id(&execution_id)?;
    let restored =
        plan_rollback::undo(&state.store, &state.data_dir, execution, i64::from(undo)).await?;
    Ok(u32::try_from(restored).unwrap_or(u32::MAX))
}

/// Refuses what cannot be a todo's id before anything reads it.
fn check_todo(id: &str) -> Result<(), AppError> {
    if id.is_empty() || id.len() > MAX_TODO_ID || id.chars().any(char::is_control) {
        return Err(AppError::invalid(
            "a todo's id is between 1 and 200 characters, without control characters",
        ));
    }
    Ok(())
}
