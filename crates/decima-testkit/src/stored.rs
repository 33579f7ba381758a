//! Drafts as the store would hand them back, for tests of the pure context stages that run
//! without a database.

use decima_core::{
    ConversationId, EstimateCounter, Message, MessageId, NewMessage, Timestamp, TokenCounter,
};

/// The message `draft` as stored at `seq`, its tokens counted with the estimate the store
/// caches when no tokenizer is configured.
pub fn stored(seq: i64, draft: NewMessage) -> Message {
    let tokens = EstimateCounter.count_message(&draft);
    Message {
        id: MessageId::new(),
        conversation_id: ConversationId::new(),
        execution_id: draft.execution_id,
        seq,
        role: draft.role,
        name: draft.name,
        content: draft.content,
        reasoning: draft.reasoning,
        reasoning_signature: draft.reasoning_signature,
        tool_calls: draft.tool_calls,
        tool_call_id: draft.tool_call_id,
        tokens,
        pinned: draft.pinned,
        created_at: Timestamp(0),
        deleted_at: None,
    }
}
