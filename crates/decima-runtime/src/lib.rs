//! Decima's runtime: everything one model step needs, in one place that the CLI and the desktop
//! app both call. It builds the request through the context pipeline, decides and runs
//! compression, streams and stores a chat turn, exports history, and reports progress through one
//! [`events::EventSink`] instead of printing.

// Unit tests read as the story they check: the line limit is for production code.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod agent;
pub mod answer;
pub mod busy;
pub mod chat;
pub mod compression;
pub mod context;
pub mod conversation_options;
pub mod database;
pub mod docker;
pub mod error;
pub mod events;
pub mod export;
pub mod figures;
pub(crate) mod fresh_sandbox;
pub mod history_file;
pub mod import;
mod lease;
pub mod logging;
pub mod mcp;
pub mod memo;
pub mod model_call;
pub mod notebook;
pub(crate) mod plan;
pub mod preferences;
pub mod presets;
pub mod providers;
pub mod python_tool;
pub mod report;
pub mod rerun;
pub mod review;
pub mod served_window;
pub mod settings;
pub mod titles;
pub mod tools;
pub mod workspace;

pub use error::{Result, RuntimeError};
pub use events::{CollectEvents, Event, EventSink, NoEvents, RunStart};
