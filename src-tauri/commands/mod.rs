//! Tauri commands, one module per domain. Each parses its ids, calls the store and returns DTOs.

pub mod context;
pub mod conversations;
pub mod messages;

use decima_core::ConversationId;

use crate::AppError;

/// Parses an id coming from the webview; hostile or mistyped ids become `invalid_input`.
fn conversation_id(text: &str) -> Result<ConversationId, AppError> {
    Ok(text.parse()?)
}
