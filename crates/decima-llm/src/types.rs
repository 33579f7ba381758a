//! Wire-neutral request and stream types. Each protocol module translates to and from these, so
//! the runtime never sees a provider's JSON.

use std::sync::Arc;

use decima_core::{NewMessage, Role, ToolCall};
use serde::{Deserialize, Serialize};

use crate::reasoning::{self, ReasoningBlock};

/// Which wire protocol a provider speaks.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Protocol {
    /// OpenAI-compatible chat completions (`POST {base}/chat/completions`).
    OpenAi,
    /// Anthropic Messages (`POST {base}/v1/messages`).
    Anthropic,
    /// Ollama's native chat (`POST {root}/api/chat`, NDJSON), the only Ollama endpoint that
    /// takes `options.num_ctx`: its OpenAI-compatible one drops `options`, so the server's small
    /// default window silently cuts long prompts from the front.
    Ollama,
}

impl Protocol {
    /// The name used in config, presets and the CLI: `openai`, `anthropic` or `ollama`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One message of a request: a message draft, the type the context pipeline assembles. A request
/// holds its messages shared ([`ChatRequest::messages`]), so an agent step sends the thousand
/// messages of its window without copying them; `execution_id` and `pinned` are the store's and
/// never go on the wire.
pub type ChatMessage = NewMessage;

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
    /// The conversation, system messages included (Anthropic's go to its `system` parameter),
    /// shared with the caller.
    pub messages: Vec<Arc<ChatMessage>>,
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
    /// Where the request's stable prefix ends and what changes at every request begins, so the
    /// providers' prompt caches can serve the prefix again.
    pub cache: PromptCache,
}

/// The request's shape as prompt caches see it. Providers cache a repeated prefix (Anthropic at
/// marked breakpoints, OpenAI, DeepSeek and local servers on their own), so a request lists
/// where its stable parts end and which trailing messages change at every request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PromptCache {
    /// A key shared by the requests of one conversation: OpenAI's `prompt_cache_key`, which
    /// routes them to the machine that holds their prefix. Sent only where the provider takes it.
    pub key: Option<String>,
    /// Indices of messages at whose end a cache breakpoint goes, most stable first: the end of
    /// the preset's text, of the summaries, and of the last history messages. Anthropic takes
    /// at most [`MAX_BREAKPOINTS`]; the others need none.
    pub breakpoints: Vec<usize>,
    /// How many messages at the end are the volatile tail (the step history, the todos, this
    /// request's report): never cached, and on Anthropic sent after the history, not in
    /// `system`.
    pub volatile_tail: usize,
}

/// Anthropic's limit on `cache_control` breakpoints per request.
pub const MAX_BREAKPOINTS: usize = 4;

/// How long Anthropic keeps a cached prefix: five minutes by default, an hour at twice the
/// write price, for runs whose steps wait longer (a long tool, a person's answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum CacheTtl {
    /// `"5m"`, the default.
    #[default]
    #[serde(rename = "5m")]
    FiveMinutes,
    /// `"1h"`.
    #[serde(rename = "1h")]
    OneHour,
}

/// Token usage as the provider reports it: the ground truth for budgets and calibration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens of the request (Anthropic: input plus cache reads and writes).
    pub prompt_tokens: u32,
    /// Tokens generated.
    pub completion_tokens: u32,
    /// Of the request, the tokens read from the provider's prompt cache, which cost a fraction
    /// of the input price: Anthropic's `cache_read_input_tokens`, OpenAI's
    /// `prompt_tokens_details.cached_tokens`, DeepSeek's `prompt_cache_hit_tokens`.
    #[serde(default)]
    pub cache_read_tokens: u32,
    /// Of the request, the tokens written to the cache, which cost more than plain input
    /// (Anthropic's `cache_creation_input_tokens`; the others do not charge for writes).
    #[serde(default)]
    pub cache_write_tokens: u32,
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
    /// Decima ended the stream because its text kept repeating one run (a small model's
    /// loop): never a provider's reason, set by the client that watched the stream.
    Repetition,
    /// The analyst stopped the stream; what had arrived is kept. Set by the client, never a
    /// provider's reason.
    Stopped,
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
    /// Closes an Anthropic thinking block: the reasoning streamed since the previous block is
    /// one block, and this is its signature (empty when the provider sent none).
    ReasoningSignature(String),
    /// An Anthropic `redacted_thinking` block's opaque data: not shown, but sent back unchanged
    /// in its place among the thinking blocks.
    RedactedReasoning(String),
    /// A complete tool call, assembled from its deltas, with arguments that parse as JSON.
    ToolCall(ToolCall),
    /// A tool call the output limit cut off: the answer ended on [`FinishReason::Length`] while
    /// the model was still writing it. It is never run: "repairing" its arguments would run a
    /// call the model did not finish (a truncated file written as if whole).
    ToolCallCutOff(CutOffToolCall),
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

/// A tool call from an answer the output limit cut off, kept apart from the calls to run so that
/// the runtime can tell the person and the model what was lost instead of running half a call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CutOffToolCall {
    /// The provider's call id (generated when the server sent none).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The argument text as it arrived: usually not valid JSON, never repaired.
    pub arguments: String,
}

/// A collected completion.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Completion {
    /// The visible text.
    pub text: String,
    /// Reasoning, if any.
    pub reasoning: Option<String>,
    /// What Anthropic needs back to accept the reasoning: a plain signature when one signed
    /// block holds all of `reasoning`, else the blocks as JSON (see [`ReasoningBlock`]). Stored
    /// as it is in the message's `reasoning_signature`.
    pub reasoning_signature: Option<String>,
    /// The thinking and redacted-thinking blocks, in the order they arrived.
    pub reasoning_blocks: Vec<ReasoningBlock>,
    /// Tool calls, in order. Never holds a call of an answer that ended on
    /// [`FinishReason::Length`]: those are in `cut_off_tool_calls`.
    pub tool_calls: Vec<ToolCall>,
    /// Calls the output limit cut off, in order: not to be run (see [`StreamEvent::ToolCallCutOff`]).
    pub cut_off_tool_calls: Vec<CutOffToolCall>,
    /// Usage, if reported.
    pub usage: Option<Usage>,
    /// Why it stopped, if reported.
    pub finish: Option<FinishReason>,
}

impl Completion {
    /// Applies one event; `Discarded` resets everything collected so far. A finish on
    /// [`FinishReason::Length`] moves the calls collected so far to `cut_off_tool_calls`, whatever
    /// the protocol's order of calls and finish, so no call of a cut-off answer is ever run.
    pub fn apply(&mut self, event: StreamEvent) {
        match event {
            StreamEvent::TextDelta(t) => self.text.push_str(&t),
            StreamEvent::ReasoningDelta(t) => {
                self.reasoning.get_or_insert_with(String::new).push_str(&t)
            }
            StreamEvent::ReasoningSignature(signature) => {
                // The block is the reasoning streamed since the previous thinking block.
                let before: usize = self
                    .reasoning_blocks
                    .iter()
                    .map(|b| match b {
                        ReasoningBlock::Thinking { thinking, .. } => thinking.len(),
                        ReasoningBlock::RedactedThinking { .. } => 0,
                    })
                    .sum();
                let reasoning = self.reasoning.get_or_insert_with(String::new);
                let thinking = reasoning.get(before..).unwrap_or_default().to_string();
                self.reasoning_blocks.push(ReasoningBlock::Thinking {
                    thinking,
                    signature,
                });
                self.encode_blocks();
            }
            StreamEvent::RedactedReasoning(data) => {
                self.reasoning.get_or_insert_with(String::new);
                self.reasoning_blocks
                    .push(ReasoningBlock::RedactedThinking { data });
                self.encode_blocks();
            }
            StreamEvent::ToolCall(call) if self.is_cut_off() => {
                self.cut_off_tool_calls.push(CutOffToolCall::from(call))
            }
            StreamEvent::ToolCall(call) => self.tool_calls.push(call),
            StreamEvent::ToolCallCutOff(call) => self.cut_off_tool_calls.push(call),
            StreamEvent::Usage(u) => self.usage = Some(u),
            StreamEvent::Finish(f) => {
                self.finish = Some(f);
                if self.is_cut_off() {
                    let calls = std::mem::take(&mut self.tool_calls);
                    self.cut_off_tool_calls
                        .extend(calls.into_iter().map(CutOffToolCall::from));
                }
            }
            StreamEvent::Discarded { .. } => *self = Completion::default(),
        }
    }

    /// True when the output limit ended the answer: its text may stop mid-sentence and its
    /// calls (in `cut_off_tool_calls`) must not run.
    pub fn is_cut_off(&self) -> bool {
        self.finish == Some(FinishReason::Length)
    }

    /// Keeps `reasoning_signature` in step with the blocks.
    fn encode_blocks(&mut self) {
        let reasoning = self.reasoning.as_deref().unwrap_or_default();
        self.reasoning_signature = reasoning::encode(&self.reasoning_blocks, reasoning);
    }

    /// The assistant message to store and to send back on the next turn. Cut-off calls are not
    /// in it: their arguments are not JSON, which servers refuse when they come back.
    pub fn to_message(&self) -> ChatMessage {
        ChatMessage {
            role: Role::Assistant,
            content: self.text.clone(),
            reasoning: self.reasoning.clone(),
            reasoning_signature: self.reasoning_signature.clone(),
            tool_calls: self.tool_calls.clone(),
            ..ChatMessage::default()
        }
    }
}

impl From<ToolCall> for CutOffToolCall {
    fn from(call: ToolCall) -> Self {
        Self {
            id: call.id,
            name: call.name,
            arguments: call.arguments,
        }
    }
}
