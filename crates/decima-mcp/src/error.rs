//! One error for the MCP client. Every message says which server and what to do about it.

use decima_core::FailureClass;

/// What went wrong with a server or a call.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The configuration is not usable as given.
    #[error("{0}")]
    Config(String),
    /// The server could not be started.
    #[error("MCP server {server:?} could not be started: {message}")]
    Start {
        /// The server's name.
        server: String,
        /// Why, with what to check.
        message: String,
    },
    /// The server did not finish the handshake in time, or broke it off.
    #[error("MCP server {server:?} did not start: {message}")]
    Handshake {
        /// The server's name.
        server: String,
        /// Why, with what the server last wrote to stderr when there is any.
        message: String,
    },
    /// A call did not come back in time.
    #[error(
        "MCP server {server:?} did not answer {tool} within {seconds} s; the call was cancelled"
    )]
    CallTimeout {
        /// The server's name.
        server: String,
        /// The tool called.
        tool: String,
        /// The call timeout.
        seconds: u64,
    },
    /// The run was stopped while the call ran; the server was told.
    #[error("the call to {tool} on MCP server {server:?} was cancelled")]
    Cancelled {
        /// The server's name.
        server: String,
        /// The tool called.
        tool: String,
    },
    /// The connection closed or the server answered with a protocol error.
    #[error("MCP server {server:?}: {message}")]
    Protocol {
        /// The server's name.
        server: String,
        /// What happened.
        message: String,
    },
    /// A file of the client's own (a server's log) could not be written.
    #[error("{0}")]
    Io(String),
}

impl McpError {
    /// The class recovery keys on when a call fails this way.
    pub fn class(&self) -> FailureClass {
        match self {
            McpError::Config(_) => FailureClass::Data,
            McpError::CallTimeout { .. } => FailureClass::Transient,
            McpError::Cancelled { .. } => FailureClass::Cancelled,
            McpError::Start { .. } | McpError::Handshake { .. } | McpError::Io(_) => {
                FailureClass::System
            }
            McpError::Protocol { .. } => FailureClass::Transient,
        }
    }
}

/// The crate's result.
pub type Result<T> = std::result::Result<T, McpError>;
