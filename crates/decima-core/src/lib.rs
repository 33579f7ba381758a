//! Decima's domain types and context engine.
//!
//! Everything here is pure: no I/O, no async runtime, no Tauri. That keeps the logic that decides
//! what an agent sees testable on its own and fast to build.

// Unit tests read as the story they check: the line limit is for production code.
#![cfg_attr(test, allow(clippy::too_many_lines))]
#![warn(missing_docs)]

pub mod context;
pub mod error;
pub mod export;
pub mod failure;
pub mod ids;
pub mod message;
pub mod names;
pub mod openai_jsonl;
pub mod prompt;
pub mod risk;
pub mod time;
pub mod tokens;

pub use error::CoreError;
pub use failure::FailureClass;
pub use ids::{ConversationId, ExecutionId, MessageId};
pub use message::{ImagePart, Message, NewMessage, Role, ToolCall};
pub use risk::{RiskLevel, Severity};
pub use time::Timestamp;
pub use tokens::{EstimateCounter, TokenCounter};
