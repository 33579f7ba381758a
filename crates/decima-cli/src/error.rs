//! The one error type of the CLI, and how it maps to exit codes.

use std::path::PathBuf;

use decima_core::CoreError;
use decima_runtime::RuntimeError;
use decima_store::{Busy, ExecutionStatus, Holder, StoreError};
use thiserror::Error;

/// Something failed that is not covered below.
pub const EXIT_FAILURE: u8 = 1;
/// The input was refused: a malformed file, a bad id, an invalid title. (clap also uses 2.)
pub const EXIT_INVALID_INPUT: u8 = 2;
/// The conversation or message does not exist.
pub const EXIT_NOT_FOUND: u8 = 3;
/// The data directory or database cannot be used.
pub const EXIT_STORAGE: u8 = 4;
/// The LLM provider failed; the message names the failure class. An agent run that ended
/// `failed` exits with it too.
pub const EXIT_PROVIDER: u8 = 5;
/// The agent run stopped on a failure and waits for `decima recover` (`--on-failure stop`).
pub const EXIT_AWAITING_USER: u8 = 6;
/// The run was cancelled (Ctrl-C): 128 + SIGINT, as shells report it.
pub const EXIT_CANCELLED: u8 = 130;

/// Why a command failed. Every variant renders as one line a person can act on.
#[derive(Debug, Error)]
pub enum CliError {
    /// A problem in a file the user gave us, located by line.
    #[error("{}: line {line}: {problem}", path.display())]
    BadLine {
        /// The input file.
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
    /// No data directory was given and the OS has none.
    #[error("no data directory: pass --data-dir DIR or set DECIMA_DATA_DIR")]
    NoDataDir,
    /// Writing to stdout failed.
    #[error("cannot write output: {0}")]
    Output(std::io::Error),
    /// A provider request failed; the class tells the user what kind of failure it was.
    #[error("[{}] {}", .0.class(), .0)]
    Llm(#[from] decima_llm::LlmError),
    /// Provider configuration that cannot work (no provider, unknown preset, missing key).
    #[error("{0}")]
    Provider(String),
    /// Input refused by the domain rules (bad ids, invalid messages).
    #[error(transparent)]
    Core(#[from] CoreError),
    /// A store failure.
    #[error(transparent)]
    Store(StoreError),
    /// The model answered with nothing, or with nothing usable (a review that stayed invalid
    /// after its repair); nothing was stored.
    #[error("{0}")]
    EmptyAnswer(String),
    /// Another process runs that execution, or the conversation is in use (an active
    /// execution, a chat turn, a compression); going ahead would interleave two writers.
    #[error("{0}")]
    Busy(String),
    /// A choice the failure does not offer; nothing was changed.
    #[error("{0}")]
    ChoiceNotOffered(String),
    /// The execution is not in a state that allows this: resuming a finished run, recovering
    /// one that does not wait.
    #[error("{0}")]
    Conflict(String),
    /// The workspace sandbox or the snapshot store failed.
    #[error("{0}")]
    Sandbox(String),
    /// An MCP server did not start or answer.
    #[error("{0}")]
    Mcp(String),
    /// An agent execution ended `failed`; the message is its stored error.
    #[error("execution {execution} failed: {message}")]
    RunFailed {
        /// The execution.
        execution: decima_core::ExecutionId,
        /// Why, as stored.
        message: String,
    },
    /// An agent execution stopped on a failure and waits for the analyst's choice.
    #[error(
        "execution {execution} waits on a failure: {failure}; continue it with \
         `decima recover {execution} --choice {choices}`"
    )]
    AwaitingUser {
        /// The execution.
        execution: decima_core::ExecutionId,
        /// The failure it waits on, as `[class] message`.
        failure: String,
        /// The choices, suggested ones first, joined by `|`.
        choices: String,
    },
    /// An agent execution was cancelled (Ctrl-C) and stopped cleanly.
    #[error("execution {execution} was {how}")]
    Cancelled {
        /// The execution.
        execution: decima_core::ExecutionId,
        /// "cancelled" (Ctrl-C) or "aborted" (the analyst's choice).
        how: &'static str,
    },
    /// An agent execution stopped in a status a run should not end in.
    #[error("execution {execution} stopped as {status}")]
    Stopped {
        /// The execution.
        execution: decima_core::ExecutionId,
        /// Its status.
        status: &'static str,
    },
}

impl From<StoreError> for CliError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Busy(busy) => CliError::Busy(busy_message(&busy)),
            e => CliError::Store(e),
        }
    }
}

/// Who holds a busy conversation, and the commands that free it.
fn busy_message(busy: &Busy) -> String {
    match &busy.holder {
        Holder::Execution {
            id,
            status: ExecutionStatus::AwaitingUser,
            ..
        } => format!(
            "conversation {} is busy: execution {id} waits for your choice on a failure. Answer \
             it first with `decima recover {id} --choice CHOICE`, using one of the choices \
             `decima execution show {id}` lists (abort ends it), or in the window's recovery \
             panel; nothing was stored",
            busy.conversation
        ),
        Holder::Execution {
            id,
            task,
            started_at,
            ..
        } => format!(
            "conversation {} is busy: execution {id} is running{} (task: {}). Wait for it to \
             end, or stop it: Ctrl-C in the terminal that runs it, or Stop in the window; \
             nothing was stored",
            busy.conversation,
            started_at
                .map(|t| format!(" since {}", t.to_rfc3339()))
                .unwrap_or_default(),
            decima_core::names::echo_untrusted(&task.chars().take(80).collect::<String>())
        ),
        Holder::Claim { .. } => format!("{busy}; nothing was stored"),
    }
}

impl From<RuntimeError> for CliError {
    fn from(e: RuntimeError) -> Self {
        match e {
            RuntimeError::Core(e) => CliError::Core(e),
            RuntimeError::Store(e) => e.into(),
            RuntimeError::ChoiceNotOffered(message) => CliError::ChoiceNotOffered(message),
            RuntimeError::Llm(e) => CliError::Llm(e),
            RuntimeError::Config(message) => CliError::Provider(message),
            RuntimeError::ImportLine {
                path,
                line,
                problem,
            } => CliError::BadLine {
                path,
                line,
                problem,
            },
            RuntimeError::Io {
                action,
                path,
                source,
            } => CliError::Io {
                action,
                path,
                source,
            },
            e @ (RuntimeError::EmptyAnswer { .. }
            | RuntimeError::CutOff { .. }
            | RuntimeError::Review(_)) => CliError::EmptyAnswer(e.to_string()),
            RuntimeError::Busy(message) => CliError::Busy(message),
            RuntimeError::Conflict(message) => CliError::Conflict(message),
            e @ (RuntimeError::Sandbox(_) | RuntimeError::Workspace(_)) => {
                CliError::Sandbox(e.to_string())
            }
            RuntimeError::Mcp(e @ decima_mcp::McpError::Config(_)) => {
                CliError::Provider(e.to_string())
            }
            RuntimeError::Mcp(e) => CliError::Mcp(e.to_string()),
        }
    }
}

impl CliError {
    /// The process exit code for this failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::BadLine { .. } | CliError::Core(_) => EXIT_INVALID_INPUT,
            CliError::Store(StoreError::NotFound { .. }) => EXIT_NOT_FOUND,
            CliError::Store(
                StoreError::Invalid(_) | StoreError::InvalidInput(_) | StoreError::Conflict(_),
            ) => EXIT_INVALID_INPUT,
            CliError::Store(
                StoreError::Open { .. } | StoreError::Migrate(_) | StoreError::DataDir { .. },
            ) => EXIT_STORAGE,
            CliError::NoDataDir => EXIT_STORAGE,
            CliError::Llm(_) | CliError::EmptyAnswer(_) | CliError::RunFailed { .. } => {
                EXIT_PROVIDER
            }
            CliError::AwaitingUser { .. } => EXIT_AWAITING_USER,
            CliError::Cancelled { .. } => EXIT_CANCELLED,
            CliError::Conflict(_) | CliError::ChoiceNotOffered(_) => EXIT_INVALID_INPUT,
            CliError::Sandbox(_) => EXIT_STORAGE,
            CliError::Mcp(_) => EXIT_FAILURE,
            CliError::Busy(_) | CliError::Stopped { .. } => EXIT_FAILURE,
            CliError::Provider(_) => EXIT_INVALID_INPUT,
            CliError::Io { .. } | CliError::Output(_) | CliError::Store(_) => EXIT_FAILURE,
        }
    }

    /// True when stdout was closed by the reader (`decima export ID | head`): not a failure.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, CliError::Output(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }

    /// The message on a single line, however the underlying errors were worded.
    pub fn one_line(&self) -> String {
        self.to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }
}
