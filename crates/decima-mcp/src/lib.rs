//! The MCP client behind Decima's tools: analysts already reach their databases, notebooks and
//! files through MCP servers, so a run can offer those servers' tools beside the built-in ones.
//!
//! - [`config`]: a server as the analyst configured it, and the import of Claude Desktop's file.
//! - [`names`]: the names tools are offered under (`mcp__<server>__<tool>`), mapped back by
//!   table, never by prefix.
//! - [`schema`]: a server's input schema as each provider will accept it.
//! - [`content`]: a tool result as text (and images) a model can read.
//! - [`client`]: a running server: the handshake, its tools, calls with timeouts and
//!   cancellation, and a shutdown that leaves no process behind.

// Unit tests read as the story they check: the line limit is for production code.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod claude_desktop;
pub mod client;
pub mod config;
pub mod content;
mod error;
pub mod host_process;
pub mod names;
pub mod schema;

pub use client::{McpClient, McpTool};
pub use config::{Place, ServerConfig, Transport};
pub use content::{McpImage, McpOutput};
pub use error::{McpError, Result};
pub use names::ToolTable;
