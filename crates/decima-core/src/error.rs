//! The one error type of decima-core.

use thiserror::Error;

/// Why a pure operation of the core rejected its input. Each message is written for a person who
/// has to fix the input, so it names the field and the problem.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CoreError {
    /// An id that is not a well-formed UUID: hostile or mistyped ids stop here, before any query.
    #[error(
        "'{value}' is not a valid {kind} id (expected a UUID such as 0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a6b)"
    )]
    InvalidId {
        /// What the id was meant to identify, e.g. "conversation".
        kind: &'static str,
        /// The rejected text, shortened so a huge input cannot flood a terminal.
        value: String,
    },
    /// A role name outside system/user/assistant/tool.
    #[error("unknown role '{0}' (expected system, user, assistant or tool)")]
    UnknownRole(String),
    /// A name outside a closed set (a risk level, a severity): the message lists the set.
    #[error("unknown {what} {value:?} (expected one of {expected})")]
    UnknownName {
        /// What the name was meant to be, e.g. "severity".
        what: &'static str,
        /// The rejected text, shortened by `names::echo_untrusted`.
        value: String,
        /// The accepted names, comma-separated.
        expected: String,
    },
    /// A chat message that cannot be represented, e.g. a tool result with no tool_call_id.
    #[error("{0}")]
    InvalidMessage(String),
    /// Context-pipeline input that breaks an invariant, e.g. summaries that leave a gap in the
    /// history, or a tool call without its result among the pinned messages.
    #[error("{0}")]
    InvalidContext(String),
    /// A character card or prompt preset that cannot be imported: the reason says what is wrong
    /// with the file, so the user can pick the right one or repair it.
    #[error("cannot import {what}: {reason}")]
    ImportRejected {
        /// What was being read, e.g. "PNG character card".
        what: &'static str,
        /// Why, with any quoted input shortened by `names::echo_untrusted`.
        reason: String,
    },
    /// One line of a JSONL history that cannot be read: the caller names the file.
    #[error("line {line}: {problem}")]
    BadLine {
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        problem: String,
    },
}
