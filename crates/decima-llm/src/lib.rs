//! Decima's LLM providers.
//!
//! Hand-rolled on reqwest and eventsource-stream with types Decima owns: a stream-first
//! [`Provider`] trait, the OpenAI-compatible, Anthropic and native Ollama wire protocols, one
//! error type whose every value maps to a [`decima_core::FailureClass`], retry with backoff for
//! transient failures, token counting with tiktoken, and API keys kept out of everything Decima
//! writes.

// Unit tests read as the story they check: the line limit is for production code.
#![cfg_attr(test, allow(clippy::too_many_lines))]
#![warn(missing_docs)]

pub mod anthropic;
pub mod discovery;
mod error;
mod http_text;
pub mod images;
pub mod models;
mod ndjson;
pub mod ollama;
pub mod openai;
mod pairing;
pub mod presets;
mod provider;
mod reasoning;
pub mod repetition;
mod retry;
pub mod secrets;
pub mod summarize;
pub mod text_tool_calls;
pub mod tokens;
mod tool_calls;
mod transport;
pub mod types;

pub use discovery::{Served, ServerFamily, discover};
pub use error::{
    LlmError, classify_error_kind, classify_status, is_context_overflow, served_limit,
};
pub use pairing::check_tool_pairing;
pub use presets::{Prices, ReasoningField};
pub use provider::{EventStream, HttpProvider, Provider, ProviderConfig, Timeouts, collect};
pub use reasoning::ReasoningBlock;
pub use retry::{RetryPolicy, with_retry};
pub use text_tool_calls::{Recovered, TextCallForm, recover as recover_text_tool_calls};
pub use tool_calls::{
    PartialToolCall, ToolCallAssembler, ToolCallDelta, invalid_arguments, valid_json_arguments,
};
pub use transport::{parse_retry_after, replay};

pub use types::{
    CacheTtl, ChatMessage, ChatRequest, Completion, CutOffToolCall, FinishReason, JsonSchemaFormat,
    MAX_BREAKPOINTS, PromptCache, Protocol, StreamEvent, ToolChoice, ToolSpec, Usage,
};
