//! Message commands: reading a conversation.

use tauri::State;

use crate::dto::MessagePage;
use crate::{AppError, AppState, MessageView};

/// The most a page may hold: a screenful many times over, and still a small IPC message.
const MAX_PAGE: u32 = 1_000;

/// A page of the conversation's live messages: the newest `limit` before `before_seq` (the
/// newest of all when absent). The view opens at the end and reads upwards page by page, so a
/// conversation of 100k messages opens as fast as one of a hundred.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "message_page"))]
pub async fn message_page(
    state: State<'_, AppState>,
    conversation_id: String,
    before_seq: Option<u32>,
    limit: u32,
) -> Result<MessagePage, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    let conversation = state.store.conversations().get(id).await?;
    let limit = limit.clamp(1, MAX_PAGE);
    // One more than asked tells whether anything is left above.
    let mut messages = state
        .store
        .messages()
        .page_before(id, 0, before_seq.map_or(i64::MAX, i64::from), limit + 1)
        .await?;
    let has_more = messages.len() > limit as usize;
    if has_more {
        messages.remove(0);
    }
    Ok(MessagePage {
        messages: messages.into_iter().map(MessageView::from).collect(),
        has_more,
        total: u32::try_from(conversation.message_count).unwrap_or(u32::MAX),
    })
}
