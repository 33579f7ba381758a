//! The one error type of the CLI, and how it maps to exit codes.

use std::path::PathBuf;

use decima_core::CoreError;
use decima_runtime::RuntimeError;
use decima_store::StoreError;
use thiserror::Error;

/// Something failed that is not covered below.
pub const EXIT_FAILURE: u8 = 1;
/// The input was refused: a malformed file, a bad id, an invalid title. (clap also uses 2.)
pub const EXIT_INVALID_INPUT: u8 = 2;
/// The conversation or message does not exist.
pub const EXIT_NOT_FOUND: u8 = 3;
/// The data directory or database cannot be used.
pub const EXIT_STORAGE: u8 = 4;
/// The LLM provider failed; the message names the failure class.
pub const EXIT_PROVIDER: u8 = 5;

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
    Store(#[from] StoreError),
    /// The model answered with nothing; nothing was stored.
    #[error("{0}")]
    EmptyAnswer(String),
}

impl From<RuntimeError> for CliError {
    fn from(e: RuntimeError) -> Self {
        match e {
            RuntimeError::Core(e) => CliError::Core(e),
            RuntimeError::Store(e) => CliError::Store(e),
            RuntimeError::Llm(e) => CliError::Llm(e),
            RuntimeError::Config(message) => CliError::Provider(message),
            RuntimeError::Io {
                action,
                path,
                source,
            } => CliError::Io {
                action,
                path,
                source,
            },
            e @ (RuntimeError::EmptyAnswer { .. } | RuntimeError::CutOff { .. }) => {
                CliError::EmptyAnswer(e.to_string())
            }
        }
    }
}

impl CliError {
    /// The process exit code for this failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::BadLine { .. } | CliError::Core(_) => EXIT_INVALID_INPUT,
            CliError::Store(StoreError::NotFound { .. }) => EXIT_NOT_FOUND,
            CliError::Store(StoreError::Invalid(_) | StoreError::InvalidInput(_)) => {
                EXIT_INVALID_INPUT
            }
            CliError::Store(
                StoreError::Open { .. } | StoreError::Migrate(_) | StoreError::DataDir { .. },
            ) => EXIT_STORAGE,
            CliError::NoDataDir => EXIT_STORAGE,
            CliError::Llm(_) | CliError::EmptyAnswer(_) => EXIT_PROVIDER,
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
