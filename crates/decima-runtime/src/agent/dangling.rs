//! Tool calls without a result. Providers refuse a history where a call has no answer, so a
//! call left unanswered by a crash, a cancellation or a rollback gets a result that says what
//! happened to it, and the model decides what to do. No call is ever run twice.

use std::collections::HashSet;

use decima_core::{ConversationId, ExecutionId, Message, NewMessage, Role, ToolCall};
use decima_store::Store;

use crate::error::Result;

/// How far back to look for the last assistant message with calls.
const TAIL: u32 = 256;

/// The calls of the newest assistant message that have no live result, in call order.
pub async fn unanswered(store: &Store, conversation: ConversationId) -> Result<Vec<ToolCall>> {
    let tail: Vec<Message> = store
        .messages()
        .page_before(conversation, 0, i64::MAX, TAIL)
        .await?;
    let Some(at) = tail
        .iter()
        .rposition(|m| m.role == Role::Assistant && !m.tool_calls.is_empty())
    else {
        return Ok(Vec::new());
    };
    // A later assistant message without calls closes the exchange: nothing is open.
    if tail[at + 1..].iter().any(|m| m.role == Role::Assistant) {
        return Ok(Vec::new());
    }
    let answered: HashSet<&str> = tail[at + 1..]
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    Ok(tail[at]
        .tool_calls
        .iter()
        .filter(|c| !answered.contains(c.id.as_str()))
        .cloned()
        .collect())
}

/// Stores `text` as the result of `call`.
pub async fn answer(
    store: &Store,
    conversation: ConversationId,
    execution: ExecutionId,
    call: &ToolCall,
    text: String,
) -> Result<Message> {
    Ok(store
        .messages()
        .append(conversation, result_message(execution, call, text))
        .await?)
}

/// The message that answers `call` with `text`.
pub fn result_message(execution: ExecutionId, call: &ToolCall, text: String) -> NewMessage {
    let mut message = NewMessage::new(Role::Tool, text);
    message.tool_call_id = Some(call.id.clone());
    message.name = Some(call.name.clone());
    message.execution_id = Some(execution);
    message
}

/// The ids of calls whose run was started (a `tool.started` event was written before it ran).
pub async fn started_calls(store: &Store, execution: ExecutionId) -> Result<HashSet<String>> {
    let mut started = HashSet::new();
    let mut after = 0;
    loop {
        let page = store
            .events()
            .execution_after(execution, after, 1000)
            .await?;
        let Some(last) = page.last() else {
            return Ok(started);
        };
        after = last.id;
        for event in &page {
            if event.kind == "tool.started"
                && let Some(id) = event.payload.get("call_id").and_then(|v| v.as_str())
            {
                started.insert(id.to_owned());
            }
        }
    }
}
