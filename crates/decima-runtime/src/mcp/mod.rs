//! The analyst's MCP servers inside Decima: their settings ([`servers`]), a run's running
//! servers and their tools in the registry ([`session`]), and the approval every MCP call
//! needs before it runs ([`approval`]), and each server's last known state ([`status`]).

pub mod approval;
pub mod search;
pub mod servers;
pub mod session;
pub mod status;

pub use approval::{Approval, ApprovalRequest, pattern_matches};
pub use session::{McpSession, StartRequest};
