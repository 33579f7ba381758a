//! Conversation commands: the sidebar's list, create, rename, delete and restore, and whether
//! a conversation is in use.

use tauri::State;

use super::conversation_id;
use crate::dto::ConversationBusy;
use crate::{AppError, AppState, ConversationSummary};

/// Live conversations, most recently updated first.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "conversation_list"))]
pub async fn conversation_list(
    state: State<'_, AppState>,
) -> Result<Vec<ConversationSummary>, AppError> {
    let conversations = state.store.conversations().list().await?;
    Ok(conversations
        .iter()
        .map(ConversationSummary::from)
        .collect())
}

/// Creates an empty conversation.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "conversation_create"))]
pub async fn conversation_create(
    state: State<'_, AppState>,
    title: String,
) -> Result<ConversationSummary, AppError> {
    let conversation = state.store.conversations().create(&title, None).await?;
    Ok(ConversationSummary::from(&conversation))
}

/// Renames a conversation.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "conversation_rename"))]
pub async fn conversation_rename(
    state: State<'_, AppState>,
    id: String,
    title: String,
) -> Result<ConversationSummary, AppError> {
    let conversation = state
        .store
        .conversations()
        .rename(conversation_id(&id)?, &title)
        .await?;
    Ok(ConversationSummary::from(&conversation))
}

/// Moves a conversation to the trash; `conversation_restore` undoes it.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "conversation_delete"))]
pub async fn conversation_delete(state: State<'_, AppState>, id: String) -> Result<(), AppError> {
    state
        .store
        .conversations()
        .soft_delete(conversation_id(&id)?)
        .await?;
    Ok(())
}

/// Brings a conversation back from the trash.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "conversation_restore"))]
pub async fn conversation_restore(
    state: State<'_, AppState>,
    id: String,
) -> Result<ConversationSummary, AppError> {
    let conversation = state
        .store
        .conversations()
        .restore(conversation_id(&id)?)
        .await?;
    Ok(ConversationSummary::from(&conversation))
}

/// What keeps a conversation busy, if anything: an active run (in this window or another
/// process), a run waiting for a choice, a chat turn or a compression. The composer disables
/// Send and says why while it is.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "conversation_busy"))]
pub async fn conversation_busy(
    state: State<'_, AppState>,
    id: String,
) -> Result<Option<ConversationBusy>, AppError> {
    let busy = state.store.claims().busy(conversation_id(&id)?).await?;
    Ok(busy.as_ref().map(ConversationBusy::from))
}
