//! Chat messages as Decima stores them, and the drafts that become them.

use serde::{Deserialize, Serialize};

use crate::{ConversationId, CoreError, ExecutionId, MessageId, Timestamp};

/// Who said a message. Tool results are their own role, as in the OpenAI wire format.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Default,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[serde(rename_all = "lowercase")]
#[strum(
    serialize_all = "lowercase",
    parse_err_ty = CoreError,
    parse_err_fn = unknown_role
)]
pub enum Role {
    /// Instructions from the operator or preset.
    System,
    /// The analyst.
    #[default]
    User,
    /// The model.
    Assistant,
    /// The result of a tool call, linked by `tool_call_id`.
    Tool,
}

impl Role {
    /// The lowercase name used in SQLite, on the wire and in exports.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The error for a role name outside the four, with the name shortened.
fn unknown_role(name: &str) -> CoreError {
    CoreError::UnknownRole(name.chars().take(40).collect())
}

/// One tool invocation requested by the model. `arguments` is kept as the raw text the model
/// produced, even when it is not valid JSON, so history is never rewritten.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's call id, echoed by the matching tool result.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as JSON text.
    pub arguments: String,
    /// An opaque token the provider attached to the call and wants back with it: Gemini's
    /// `thought_signature`, without which Gemini 3 refuses the next request of the turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// A message before it is stored: the store assigns its id, seq, token count and time.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NewMessage {
    /// Who said it.
    pub role: Role,
    /// The optional participant name of the OpenAI format.
    pub name: Option<String>,
    /// The text. Empty for an assistant turn that only calls tools.
    pub content: String,
    /// Reasoning text streamed by reasoning models.
    pub reasoning: Option<String>,
    /// Anthropic's thinking, sent back unchanged: one block's signature, or a JSON array of the
    /// turn's `thinking` and `redacted_thinking` blocks in order (see decima-llm's `reasoning`).
    pub reasoning_signature: Option<String>,
    /// Tool calls, on assistant messages only.
    pub tool_calls: Vec<ToolCall>,
    /// The call a tool message answers.
    pub tool_call_id: Option<String>,
    /// The execution that produced it, if any.
    pub execution_id: Option<ExecutionId>,
    /// Pinned messages are never compressed away.
    pub pinned: bool,
    /// Images a tool returned, on a tool message, shown to a model that takes them in a tool
    /// result. A stored message keeps them apart (the store's `message_images`); its draft has
    /// none until the runtime attaches them for such a model.
    pub images: Vec<ImagePart>,
}

/// An image a tool returned. It is kept with its message, so the history shows what the model
/// saw even after the workspace file it was saved to is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImagePart {
    /// Its MIME type, such as `image/png`.
    pub media_type: String,
    /// Its bytes, base64 (the form every provider takes).
    pub data: std::sync::Arc<str>,
    /// What it costs in a request that shows it to the model; 0 where the model is not shown
    /// it (it reads the text naming the saved file instead).
    pub tokens: u32,
}

impl NewMessage {
    /// A plain message with the given role and text.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            ..Self::default()
        }
    }

    /// Checks the invariants every stored message holds, so that bad input is refused before it
    /// reaches the database rather than surfacing later as a broken prompt.
    pub fn validate(&self) -> Result<(), CoreError> {
        if self.role == Role::Tool {
            match &self.tool_call_id {
                Some(id) if !id.is_empty() => {}
                _ => {
                    return Err(CoreError::InvalidMessage(
                        "a tool message needs a non-empty tool_call_id".into(),
                    ));
                }
            }
        } else if self.tool_call_id.is_some() {
            return Err(CoreError::InvalidMessage(format!(
                "tool_call_id is only allowed on tool messages, not on {}",
                self.role
            )));
        }
        if !self.tool_calls.is_empty() && self.role != Role::Assistant {
            return Err(CoreError::InvalidMessage(format!(
                "tool_calls are only allowed on assistant messages, not on {}",
                self.role
            )));
        }
        if !self.images.is_empty() && self.role != Role::Tool {
            return Err(CoreError::InvalidMessage(format!(
                "images are only kept on tool messages, not on {}",
                self.role
            )));
        }
        for (i, image) in self.images.iter().enumerate() {
            let kind = &image.media_type;
            if !kind.starts_with("image/") || kind.len() > 100 || image.data.is_empty() {
                return Err(CoreError::InvalidMessage(format!(
                    "image {} needs an image/* media type of at most 100 characters and data",
                    i + 1
                )));
            }
        }
        for (i, call) in self.tool_calls.iter().enumerate() {
            if call.id.is_empty() || call.name.is_empty() {
                return Err(CoreError::InvalidMessage(format!(
                    "tool call {} needs a non-empty id and function name",
                    i + 1
                )));
            }
        }
        if self.reasoning_signature.is_some() && self.reasoning.is_none() {
            return Err(CoreError::InvalidMessage(
                "a reasoning signature needs the reasoning it signs".into(),
            ));
        }
        Ok(())
    }
}

/// A stored message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Its id.
    pub id: MessageId,
    /// The conversation it belongs to.
    pub conversation_id: ConversationId,
    /// The execution that produced it, if any.
    pub execution_id: Option<ExecutionId>,
    /// Its position: monotonic and gapless per conversation, starting at 1.
    pub seq: i64,
    /// Who said it.
    pub role: Role,
    /// The optional participant name.
    pub name: Option<String>,
    /// The text.
    pub content: String,
    /// Reasoning text, if the model streamed any.
    pub reasoning: Option<String>,
    /// Anthropic's thinking: a signature, or the turn's thinking blocks as a JSON array.
    pub reasoning_signature: Option<String>,
    /// Tool calls, on assistant messages.
    pub tool_calls: Vec<ToolCall>,
    /// The call a tool message answers.
    pub tool_call_id: Option<String>,
    /// Tokens, counted once at insert.
    pub tokens: u32,
    /// Never compressed away when set.
    pub pinned: bool,
    /// When it was stored.
    pub created_at: Timestamp,
    /// Set when a rollback or the user removed it; the row stays.
    pub deleted_at: Option<Timestamp>,
}

impl From<&Message> for NewMessage {
    /// A stored message as a draft again: what the context pipeline assembles and counts.
    fn from(m: &Message) -> Self {
        NewMessage {
            role: m.role,
            name: m.name.clone(),
            content: m.content.clone(),
            reasoning: m.reasoning.clone(),
            reasoning_signature: m.reasoning_signature.clone(),
            tool_calls: m.tool_calls.clone(),
            tool_call_id: m.tool_call_id.clone(),
            execution_id: m.execution_id,
            pinned: m.pinned,
            images: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_messages_need_a_call_id() {
        let msg = NewMessage::new(Role::Tool, "ok");
        assert!(msg.validate().is_err());
        let msg = NewMessage {
            tool_call_id: Some("call_1".into()),
            ..msg
        };
        assert!(msg.validate().is_ok());
    }

    #[test]
    fn only_assistants_call_tools() {
        let mut msg = NewMessage::new(Role::User, "hi");
        msg.tool_calls.push(ToolCall {
            id: "c".into(),
            name: "shell".into(),
            arguments: "{}".into(),
            signature: None,
        });
        assert!(
            msg.validate()
                .unwrap_err()
                .to_string()
                .contains("assistant")
        );
        msg.role = Role::Assistant;
        assert!(msg.validate().is_ok());
    }

    #[test]
    fn a_stored_message_becomes_the_same_draft() {
        let draft = NewMessage {
            name: Some("agent".into()),
            reasoning: Some("r".into()),
            reasoning_signature: Some("sig".into()),
            tool_calls: vec![ToolCall {
                id: "c".into(),
                name: "shell".into(),
                arguments: "{}".into(),
                signature: None,
            }],
            pinned: true,
            ..NewMessage::new(Role::Assistant, "text")
        };
        let stored = Message {
            id: MessageId::new(),
            conversation_id: ConversationId::new(),
            execution_id: draft.execution_id,
            seq: 3,
            role: draft.role,
            name: draft.name.clone(),
            content: draft.content.clone(),
            reasoning: draft.reasoning.clone(),
            reasoning_signature: draft.reasoning_signature.clone(),
            tool_calls: draft.tool_calls.clone(),
            tool_call_id: draft.tool_call_id.clone(),
            tokens: 9,
            pinned: draft.pinned,
            created_at: Timestamp(0),
            deleted_at: None,
        };
        assert_eq!(NewMessage::from(&stored), draft);
    }

    #[test]
    fn roles_round_trip() {
        for role in [Role::System, Role::User, Role::Assistant, Role::Tool] {
            assert_eq!(role.as_str().parse::<Role>().unwrap(), role);
        }
        assert!("developer".parse::<Role>().is_err());
    }
}
