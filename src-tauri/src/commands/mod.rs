//! Tauri commands, one module per domain. Each parses its ids, calls the store and returns DTOs.

pub mod about;
pub mod compression;
pub mod context;
pub mod conversations;
pub mod database;
mod dialogs;
pub mod engine;
pub mod executions;
pub mod export;
pub mod import;
pub mod library;
pub mod mcp;
pub mod messages;
pub mod plan_rollback;
pub mod report;
pub mod reviews;
pub mod run_options;
pub mod runs;
pub mod search;
pub mod settings;
pub mod startup;
pub mod tables;
pub mod titles;
pub mod workspace;
pub mod workspace_switch;

use decima_core::{ConversationId, ExecutionId};

use crate::AppError;

/// Parses an id coming from the webview; hostile or mistyped ids become `invalid_input`.
fn conversation_id(text: &str) -> Result<ConversationId, AppError> {
    Ok(text.parse()?)
}

/// Parses an execution id coming from the webview.
fn execution_id(text: &str) -> Result<ExecutionId, AppError> {
    Ok(text.parse()?)
}
