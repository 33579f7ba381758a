//! Wire-neutral request and stream types. Each protocol module translates to and from these, so
//! the runtime never sees a provider's JSON.

use decima_core::{Message, NewMessage, Role, ToolCall};
use serde::{Deserialize, Serialize};

/// Which wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// OpenAI-compatible chat completions (`POST {base}/chat/completions`).
    OpenAi,
    /// Anthropic Messages (`POST {base}/v1/messages`).
    Anthropic,
}

impl Protocol {
    /// The name used in config, presets and the CLI: `openai` or `anthropic`.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::OpenAi => "openai",
            Protocol::Anthropic => "anthropic",
        }
    }
}

/// One message of a request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChatMessage {
    /// Who said it.
    pub role: Role,
    /// The text.
    pub content: String,
    /// The optional participant name (OpenAI only).
    pub name: Option<String>,
    /// Reasoning of an earlier assistant turn, echoed back where the provider wants it.
    pub reasoning: Option<String>,
    /// Anthropic's thinking signature, sent back unchanged with the reasoning.
    pub reasoning_signature: Option<String>,
    /// Tool calls of an assistant turn.
    pub tool_calls: Vec<ToolCall>,
    /// The call a tool message answers.
    pub tool_call_id: Option<String>,
}

impl ChatMessage {
    /// A plain message.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            ..Self::default()
        }
    }
}

impl From<&Message> for ChatMessage {
    fn from(m: &Message) -> Self {
        Self {
            role: m.role,
            content: m.content.clone(),
            name: m.name.clone(),
            reasoning: m.reasoning.clone(),
            reasoning_signature: m.reasoning_signature.clone(),
            tool_calls: m.tool_calls.clone(),
            tool_call_id: m.tool_call_id.clone(),
        }
    }
}

impl From<&NewMessage> for ChatMessage {
    fn from(m: &NewMessage) -> Self {
        Self {
            role: m.role,
            content: m.content.clone(),
            name: m.name.clone(),
            reasoning: m.reasoning.clone(),
            reasoning_signature: m.reasoning_signature.clone(),
            tool_calls: m.tool_calls.clone(),
            tool_call_id: m.tool_call_id.clone(),
        }
    }
}

impl From<&ChatMessage> for NewMessage {
    fn from(m: &ChatMessage) -> Self {
        NewMessage {
            role: m.role,
            name: m.name.clone(),
            content: m.content.clone(),
            reasoning: m.reasoning.clone(),
            reasoning_signature: m.reasoning_signature.clone(),
            tool_calls: m.tool_calls.clone(),
            tool_call_id: m.tool_call_id.clone(),
            execution_id: None,
            pinned: false,
        }
    }
}

/// A tool the model may call, described by a JSON schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model uses to call it.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// Whether and which tool the model must call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// No tool calls.
    None,
    /// At least one tool call.
    Required,
    /// This tool.
    Tool(String),
}

/// A JSON-schema constrained answer, where the provider supports it.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonSchemaFormat {
    /// A name for the schema.
    pub name: String,
    /// The schema.
    pub schema: serde_json::Value,
    /// Ask the provider to enforce it strictly.
    pub strict: bool,
}

/// Everything one completion needs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatRequest {
    /// The model id.
    pub model: String,
    /// The conversation, system messages included (Anthropic's go to its `system` parameter).
    pub messages: Vec<ChatMessage>,
    /// Tools on offer.
    pub tools: Vec<ToolSpec>,
    /// Tool choice; `None` leaves the provider's default.
    pub tool_choice: Option<ToolChoice>,
    /// Allow several tool calls in one turn (OpenAI `parallel_tool_calls`).
    pub parallel_tool_calls: Option<bool>,
    /// Output cap. Anthropic requires one; a default applies there.
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Structured output.
    pub response_format: Option<JsonSchemaFormat>,
    /// Anthropic extended thinking budget in tokens.
    pub thinking_budget: Option<u32>,
}

/// Token usage as the provider reports it: the ground truth for budgets and calibration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens of the request (Anthropic: input plus cache reads and writes).
    pub prompt_tokens: u32,
    /// Tokens generated.
    pub completion_tokens: u32,
}

/// Why generation stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A natural stop or a stop sequence.
    Stop,
    /// The output cap was reached.
    Length,
    /// The model is waiting for tool results.
    ToolCalls,
    /// The provider filtered the output.
    ContentFilter,
    /// Anything else, verbatim.
    Other(String),
}

/// One event of a streamed completion.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// Visible text.
    TextDelta(String),
    /// Reasoning text.
    ReasoningDelta(String),
    /// The signature of the reasoning so far (Anthropic thinking blocks).
    ReasoningSignature(String),
    /// A complete tool call, assembled from its deltas, with arguments that parse as JSON.
    ToolCall(ToolCall),
    /// Token usage.
    Usage(Usage),
    /// Generation finished.
    Finish(FinishReason),
    /// Everything streamed so far is void: a retry starts over. Consumers drop their partial
    /// text, reasoning and tool calls; nothing half-written may be persisted.
    Discarded {
        /// Why, for the person watching.
        reason: String,
    },
}

/// A collected completion.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Completion {
    /// The visible text.
    pub text: String,
    /// Reasoning, if any.
    pub reasoning: Option<String>,
    /// Anthropic thinking signature.
    pub reasoning_signature: Option<String>,
    /// Tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Usage, if reported.
    pub usage: Option<Usage>,
    /// Why it stopped, if reported.
    pub finish: Option<FinishReason>,
}

impl Completion {
    /// Applies one event; `Discarded` resets everything collected so far.
    pub fn apply(&mut self, event: StreamEvent) {
        match event {
            StreamEvent::TextDelta(t) => self.text.push_str(&t),
            StreamEvent::ReasoningDelta(t) => {
                self.reasoning.get_or_insert_with(String::new).push_str(&t)
            }
            StreamEvent::ReasoningSignature(s) => self.reasoning_signature = Some(s),
            StreamEvent::ToolCall(call) => self.tool_calls.push(call),
            StreamEvent::Usage(u) => self.usage = Some(u),
            StreamEvent::Finish(f) => self.finish = Some(f),
            StreamEvent::Discarded { .. } => *self = Completion::default(),
        }
    }

    /// The assistant message to store and to send back on the next turn.
    pub fn to_message(&self) -> ChatMessage {
        ChatMessage {
            role: Role::Assistant,
            content: self.text.clone(),
            name: None,
            reasoning: self.reasoning.clone(),
            reasoning_signature: self.reasoning_signature.clone(),
            tool_calls: self.tool_calls.clone(),
            tool_call_id: None,
        }
    }
}
