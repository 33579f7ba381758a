//! Message commands: reading a conversation.

use tauri::State;

use crate::{AppError, AppState, MessageView};

/// Every live message of a conversation, in seq order.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "message_list"))]
pub async fn message_list(
    state: State<'_, AppState>,
    conversation_id: String,
) -> Result<Vec<MessageView>, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    // Not found when the conversation itself is missing or deleted, rather than an empty list.
    state.store.conversations().get(id).await?;
    let messages = state.store.messages().all(id).await?;
    Ok(messages.into_iter().map(MessageView::from).collect())
}
