//! Row shapes as SQLite returns them, and their checked conversion into domain types.

use decima_core::{ConversationId, ExecutionId, Message, MessageId, Role, Timestamp, ToolCall};
use sqlx::FromRow;

use crate::conversations::Conversation;
use crate::{Result, StoreError};

/// The columns of `messages`, in the order of `message_columns!()`. A page of rows also comes
/// as one JSON array of arrays in that order (`message_json!()`), which deserialises into it.
#[derive(FromRow, serde::Deserialize)]
pub(crate) struct MessageRow {
    id: String,
    conversation_id: String,
    execution_id: Option<String>,
    seq: i64,
    role: String,
    name: Option<String>,
    content: String,
    reasoning: Option<String>,
    reasoning_signature: Option<String>,
    tool_calls: Option<String>,
    tool_call_id: Option<String>,
    tokens: i64,
    pinned: bool,
    created_at: i64,
    deleted_at: Option<i64>,
}

/// The column list that [`MessageRow`] decodes, as a macro so queries stay `&'static str`.
macro_rules! message_columns {
    () => {
        "id, conversation_id, execution_id, seq, role, name, content, reasoning, \
         reasoning_signature, tool_calls, tool_call_id, tokens, pinned, created_at, deleted_at"
    };
}
pub(crate) use message_columns;

/// One message's columns as a JSON array in the order of [`MessageRow`]: a page aggregated with
/// `json_group_array` crosses from SQLite's worker as one value, not one row at a time, which
/// makes reading a page of a thousand messages several times cheaper.
macro_rules! message_json {
    () => {
        "json_array(id, conversation_id, execution_id, seq, role, name, content, reasoning, \
         reasoning_signature, tool_calls, tool_call_id, tokens, \
         CASE WHEN pinned THEN json('true') ELSE json('false') END, created_at, deleted_at)"
    };
}
pub(crate) use message_json;

/// The messages of a page aggregated as `json_group_array(message_json!())`, in its order.
pub(crate) fn messages_from_json(json: &str) -> Result<Vec<Message>> {
    let rows: Vec<MessageRow> =
        serde_json::from_str(json).map_err(|e| corrupt("message page", e))?;
    rows.into_iter().map(Message::try_from).collect()
}

/// The same columns qualified by the alias `m`, for joins.
macro_rules! message_columns_m {
    () => {
        "m.id, m.conversation_id, m.execution_id, m.seq, m.role, m.name, m.content, m.reasoning, \
         m.reasoning_signature, m.tool_calls, m.tool_call_id, m.tokens, m.pinned, m.created_at, \
         m.deleted_at"
    };
}
pub(crate) use message_columns_m;

impl TryFrom<MessageRow> for Message {
    type Error = StoreError;

    fn try_from(row: MessageRow) -> Result<Self> {
        let tool_calls = match row.tool_calls.as_deref() {
            None => Vec::new(),
            Some(json) => {
                serde_json::from_str::<Vec<ToolCall>>(json).map_err(|e| corrupt("tool_calls", e))?
            }
        };
        Ok(Message {
            id: row
                .id
                .parse::<MessageId>()
                .map_err(|e| corrupt("message id", e))?,
            conversation_id: row
                .conversation_id
                .parse()
                .map_err(|e| corrupt("conversation id", e))?,
            execution_id: row
                .execution_id
                .map(|id| id.parse::<ExecutionId>())
                .transpose()
                .map_err(|e| corrupt("execution id", e))?,
            seq: row.seq,
            role: row.role.parse::<Role>().map_err(|e| corrupt("role", e))?,
            name: row.name,
            content: row.content,
            reasoning: row.reasoning,
            reasoning_signature: row.reasoning_signature,
            tool_calls,
            tool_call_id: row.tool_call_id,
            tokens: u32::try_from(row.tokens).map_err(|e| corrupt("token count", e))?,
            pinned: row.pinned,
            created_at: Timestamp(row.created_at),
            deleted_at: row.deleted_at.map(Timestamp),
        })
    }
}

/// A conversation with its live message count and tokens.
#[derive(FromRow)]
pub(crate) struct ConversationRow {
    id: String,
    title: String,
    preset_id: Option<String>,
    message_count: i64,
    tokens: i64,
    created_at: i64,
    updated_at: i64,
    deleted_at: Option<i64>,
    parent_id: Option<String>,
}

/// Selects [`ConversationRow`]s; callers append a WHERE clause on `c`.
macro_rules! conversation_select {
    () => {
        "SELECT c.id, c.title, c.preset_id, c.live_messages AS message_count, \
     c.live_tokens AS tokens, c.created_at, c.updated_at, c.deleted_at, \
     (SELECT p.conversation_id FROM executions e JOIN executions p ON p.id = e.parent_id \
       WHERE e.conversation_id = c.id AND e.parent_id IS NOT NULL \
       ORDER BY e.created_at LIMIT 1) AS parent_id \
     FROM conversations c"
    };
}
pub(crate) use conversation_select;

impl TryFrom<ConversationRow> for Conversation {
    type Error = StoreError;

    fn try_from(row: ConversationRow) -> Result<Self> {
        Ok(Conversation {
            id: row
                .id
                .parse::<ConversationId>()
                .map_err(|e| corrupt("conversation id", e))?,
            title: row.title,
            preset_id: row.preset_id,
            message_count: u64::try_from(row.message_count).unwrap_or(0),
            tokens: u64::try_from(row.tokens).unwrap_or(0),
            created_at: Timestamp(row.created_at),
            updated_at: Timestamp(row.updated_at),
            deleted_at: row.deleted_at.map(Timestamp),
            parent_id: row
                .parent_id
                .map(|p| p.parse::<ConversationId>())
                .transpose()
                .map_err(|e| corrupt("parent conversation id", e))?,
        })
    }
}

/// A name stored in a text column read back as its enum: an unknown one is a corrupt row, named
/// as it was found (escaped, shortened).
pub(crate) fn named<T: std::str::FromStr>(
    what: &'static str,
    stored: &str,
) -> Result<T, StoreError> {
    stored
        .parse()
        .map_err(|_| corrupt(what, decima_core::names::echo_untrusted(stored)))
}

pub(crate) fn corrupt(what: &'static str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt {
        what,
        detail: e.to_string(),
    }
}
