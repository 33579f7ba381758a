//! Shared test support for Decima.
//!
//! Today: a deterministic builder of long conversations with planted facts, so store, export and
//! context tests can check that nothing important gets lost. The wire-level LLM server arrives
//! with the providers.

#![warn(missing_docs)]

mod conversation;

pub use conversation::{BuiltConversation, ConversationBuilder, FactKind, PlantedFact};
