//! Shared test support for Decima.
//!
//! A deterministic builder of long conversations with planted facts, so store, export and
//! context tests can check that nothing important gets lost; sessions whose facts are
//! statements (a subject with its value) and a checker that scores summaries by statement
//! ([`fact_sessions`]); and the wire-level LLM server
//! ([`LlmServer`]), the project's one test double, which speaks the OpenAI and Anthropic streaming
//! protocols from scripts and injects faults; workspaces for agent tests ([`workspace`]); and a
//! remote Docker engine behind mutual TLS on loopback ([`tls`]).

// Test support: fixtures, their tables and scripted servers read as wholes; the line limit
// is for production code.
#![allow(clippy::too_many_lines)]
#![warn(missing_docs)]

pub mod analyst_conversation;
mod conversation;
pub mod fact_sessions;
pub mod llamacpp;
pub mod llm_server;
pub mod mcp_servers;
pub mod postgres;
pub mod processes;
pub mod ssh;
mod stored;
pub mod tls;
pub mod workspace;

pub use conversation::{BuiltConversation, ConversationBuilder, FactKind, PlantedFact};
pub use llm_server::{
    CacheUsage, ErrorReply, LlmServer, LlmServerError, PromptCacheModel, ReasoningField,
    RecordedRequest, Reply, ScriptedToolCall, StreamFault, StreamOptions, Turn, refused_base_url,
};
pub use stored::stored;
