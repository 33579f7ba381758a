//! The runtime's one error type. Each variant keeps the layer it came from, so the CLI can map
//! it to an exit code and the desktop app to a stable error code without parsing text.

use std::path::PathBuf;

use decima_core::CoreError;
use decima_llm::LlmError;
use decima_store::StoreError;
use thiserror::Error;

/// Why a runtime operation failed. Every variant renders as one line a person can act on.
#[derive(Debug, Error)]
pub enum RuntimeError {
    /// Input refused by the domain rules (bad ids, invalid messages, inconsistent summaries).
    #[error(transparent)]
    Core(#[from] CoreError),
    /// A store failure.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A provider request failed; its class says what kind of failure it was.
    #[error("[{}] {}", .0.class(), .0)]
    Llm(#[from] LlmError),
    /// Configuration that cannot work: no provider, an unreadable preset, a missing window.
    #[error("{0}")]
    Config(String),
    /// The model answered with nothing: no text and no tool call. Nothing was stored.
    #[error(
        "[logic] {provider} returned an empty answer; nothing was stored, send the message again"
    )]
    EmptyAnswer {
        /// The provider's name.
        provider: String,
    },
    /// The answer hit the output limit in the middle of a tool call, and held nothing else.
    /// Nothing was run or stored.
    #[error(
        "[logic] {provider} was cut off by the output limit while writing a call to {calls}; \
         nothing was run or stored: ask for a smaller step, or raise the model's output limit"
    )]
    CutOff {
        /// The provider's name.
        provider: String,
        /// The tools whose calls were cut off.
        calls: String,
    },
    /// An MCP server's configuration, start or call failed outside a tool call.
    #[error(transparent)]
    Mcp(#[from] decima_mcp::McpError),
    /// The sandbox or the snapshot store failed (not a tool call: those are tool results).
    #[error("[system] {0}")]
    Sandbox(#[from] decima_sandbox::SandboxError),
    /// A file of a workspace could not be listed, read or written for the window (not a tool
    /// call): its class says whether the path, the data or the system is at fault.
    #[error("[{}] {}", .0.class, .0.message)]
    Workspace(decima_sandbox::ToolError),
    /// Another process holds the execution.
    #[error("{0}")]
    Busy(String),
    /// The execution is not in a state that allows this (resume a finished run, recover one
    /// that does not wait).
    #[error("{0}")]
    Conflict(String),
    /// The analyst's choice is not one the failure offers; nothing was changed and the failure
    /// still waits.
    #[error("{0}")]
    ChoiceNotOffered(String),
    /// The reviewer's answer could not be used, even after one repair request.
    #[error("[data] {0}")]
    Review(String),
    /// A line of a history file being imported cannot be read; nothing was stored.
    #[error("{}, line {line}: {problem}", path.display())]
    ImportLine {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        problem: String,
    },
    /// A file could not be read or written.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// "read", "write", ...
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
}

/// Results of runtime operations.
pub type Result<T, E = RuntimeError> = std::result::Result<T, E>;
