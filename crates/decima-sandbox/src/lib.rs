//! Where Decima's tools run. The host sandbox runs commands in an execution's workspace, in
//! their own process group, with a timeout, an output cap and a scrubbed environment, and keeps
//! every file path inside the workspace. Snapshots store a workspace by content, outside it, so
//! a rollback can put it back byte for byte. The Docker sandbox runs the same tools in one
//! locked-down container per conversation, its workspace a named volume.

// Unit tests read as the story they check: the line limit is for production code.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod docker;
pub mod error;
pub mod host;
pub mod kernel;
mod output;
pub mod snapshot;

/// The shell host commands run in on this system, chosen once (Settings names it).
pub use decima_process::HostShell;
/// The language a sandbox's shell commands are written in (the model is told which).
pub use decima_process::ShellKind;
pub use docker::{DockerConfig, DockerEngine, DockerSandbox};
pub use error::{Result, SandboxError};
pub use host::{HostLimits, HostSandbox, Sandbox, ToolError};
pub use snapshot::{SnapshotId, SnapshotStore};
