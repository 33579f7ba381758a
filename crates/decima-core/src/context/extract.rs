//! Where the domain meets the extract strategy's rules (the `decima-extract` crate): a message
//! read as a source, a role as a speaker, a tool call read as it is, the model's token counter
//! as the budgets' unit, and the summary of a list of messages.

pub use decima_extract::{
    CountTokens, Detail, Digest, Literal, LiteralKind, Note, Operation, Origin, Source, Speaker,
    Statement, StatementKind, ToolCallText,
};

use crate::{Message, Role, TokenCounter, ToolCall};

impl From<Role> for Speaker {
    fn from(role: Role) -> Self {
        match role {
            Role::System => Speaker::System,
            Role::User => Speaker::User,
            Role::Assistant => Speaker::Assistant,
            Role::Tool => Speaker::Tool,
        }
    }
}

impl ToolCallText for ToolCall {
    fn id(&self) -> &str {
        &self.id
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn arguments(&self) -> &str {
        &self.arguments
    }
}

impl<'a> From<&'a Message> for Source<'a, ToolCall> {
    fn from(m: &'a Message) -> Self {
        Source {
            role: m.role.into(),
            content: &m.content,
            tool_calls: &m.tool_calls,
            tool_call_id: m.tool_call_id.as_deref(),
            seq: Some(m.seq),
        }
    }
}

/// A model's token counter as the unit of a digest's budget.
pub struct Counting<'c>(pub &'c dyn TokenCounter);

impl CountTokens for Counting<'_> {
    fn count_text(&self, text: &str) -> u32 {
        self.0.count_text(text)
    }

    fn message_overhead(&self) -> u32 {
        self.0.message_overhead()
    }
}

/// Renders the extract summary of messages at the given detail.
pub fn extract_messages(messages: &[Message], detail: Detail) -> String {
    Digest::from_sources(messages.iter().map(Source::from)).render(detail)
}
