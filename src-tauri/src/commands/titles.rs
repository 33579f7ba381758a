//! The title the model writes for a conversation after its first exchange. The rules live in
//! `decima_runtime::titles`.

use tauri::State;

use crate::{AppError, AppState};

/// Asks the conversation's provider for a title from its first question and answer, and gives
/// it to the conversation when its title is still `expected_title` (the one the window gave it
/// by rules). `None` when there is nothing to title yet or the analyst renamed it meanwhile.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(
    name = "command",
    skip_all,
    fields(name = "conversation_title_from_model")
)]
pub async fn conversation_title_from_model(
    state: State<'_, AppState>,
    conversation_id: String,
    expected_title: String,
) -> Result<Option<String>, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    let provider = super::settings::provider_in_force(&state, id).await?;
    Ok(decima_runtime::titles::title_from_model(
        &state.store,
        &state.data_dir,
        provider.as_deref(),
        id,
        &expected_title,
    )
    .await?)
}
