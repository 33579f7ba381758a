//! The one error type of the test server.

/// Why the test LLM server could not start, or why it gave up on a connection.
#[derive(Debug, thiserror::Error)]
pub enum LlmServerError {
    /// Binding 127.0.0.1:0 failed (no free port, no loopback).
    #[error("could not bind the test LLM server on 127.0.0.1: {0}")]
    Bind(#[source] std::io::Error),
    /// Reading from or writing to a client failed.
    #[error("test LLM server connection error: {0}")]
    Io(#[from] std::io::Error),
    /// The client sent something the server does not accept (answered with 400).
    #[error("bad request to the test LLM server: {0}")]
    BadRequest(String),
    /// The client closed the connection in the middle of a request.
    #[error("the client closed the connection in the middle of a request")]
    Truncated,
}
