//! What the CLI prints: JSON shapes and a stdout writer that treats a closed pipe as the end.

use std::io::Write;

use decima_core::{Message, ToolCall};
use decima_store::Conversation;
use serde::Serialize;

use crate::error::CliError;

/// One row of `conversation list --json`.
#[derive(Serialize)]
pub struct ConversationJson {
    pub id: String,
    pub title: String,
    pub message_count: u64,
    pub tokens: u64,
    pub created_at: String,
    pub updated_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deleted_at: Option<String>,
}

impl From<&Conversation> for ConversationJson {
    fn from(c: &Conversation) -> Self {
        Self {
            id: c.id.to_string(),
            title: c.title.clone(),
            message_count: c.message_count,
            tokens: c.tokens,
            created_at: c.created_at.to_rfc3339(),
            updated_at: c.updated_at.to_rfc3339(),
            deleted_at: c.deleted_at.map(|t| t.to_rfc3339()),
        }
    }
}

/// `conversation show --json`: the conversation and its live messages.
#[derive(Serialize)]
pub struct ConversationDetailJson<'a> {
    #[serde(flatten)]
    pub conversation: ConversationJson,
    pub messages: Vec<MessageJson<'a>>,
}

/// One message in `conversation show --json`.
#[derive(Serialize)]
pub struct MessageJson<'a> {
    pub seq: i64,
    pub role: &'static str,
    pub name: Option<&'a str>,
    pub content: &'a str,
    pub reasoning: Option<&'a str>,
    pub tool_calls: &'a [ToolCall],
    pub tool_call_id: Option<&'a str>,
    pub tokens: u32,
    pub pinned: bool,
    pub created_at: String,
    /// An answer's end and usage; absent on other messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<AnswerJson>,
}

/// How an answer ended and what the provider reported for it, in `conversation show --json`.
#[derive(Serialize)]
pub struct AnswerJson {
    pub ended: decima_store::AnswerEnd,
    pub tokens_in: Option<u32>,
    pub tokens_out: Option<u32>,
    pub cache_read_tokens: Option<u32>,
    pub cache_write_tokens: Option<u32>,
    pub cost_usd: Option<f64>,
    pub prompt_truncated: bool,
    pub calls_from_text: Option<String>,
}

impl From<decima_store::AnswerRecord> for AnswerJson {
    fn from(r: decima_store::AnswerRecord) -> Self {
        Self {
            ended: r.ended,
            tokens_in: r.usage.map(|u| u.tokens_in),
            tokens_out: r.usage.map(|u| u.tokens_out),
            cache_read_tokens: r.usage.map(|u| u.cache_read_tokens),
            cache_write_tokens: r.usage.map(|u| u.cache_write_tokens),
            cost_usd: r.cost_microdollars.map(|c| c as f64 / 1_000_000.0),
            prompt_truncated: r.prompt_truncated,
            calls_from_text: r.calls_from_text,
        }
    }
}

impl<'a> From<&'a Message> for MessageJson<'a> {
    fn from(m: &'a Message) -> Self {
        Self {
            seq: m.seq,
            role: m.role.as_str(),
            name: m.name.as_deref(),
            content: &m.content,
            reasoning: m.reasoning.as_deref(),
            tool_calls: &m.tool_calls,
            tool_call_id: m.tool_call_id.as_deref(),
            tokens: m.tokens,
            pinned: m.pinned,
            created_at: m.created_at.to_rfc3339(),
            answer: None,
        }
    }
}

/// Writes to stdout in one piece and flushes, so a closed pipe surfaces as an error the caller
/// can recognise.
pub fn print(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).map_err(CliError::Output)?;
    out.flush().map_err(CliError::Output)
}

/// Serialises to pretty JSON and prints it with a trailing newline.
pub fn print_json(value: &impl Serialize) -> Result<(), CliError> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| CliError::Output(std::io::Error::other(e)))?;
    text.push('\n');
    print(&text)
}
