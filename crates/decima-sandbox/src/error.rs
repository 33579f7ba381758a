//! The sandbox's one error type.

use thiserror::Error;

/// Why a sandbox operation failed. Every variant renders as one line a person can act on.
#[derive(Debug, Error)]
pub enum SandboxError {
    /// An I/O failure outside the tool's own result (the workspace or snapshot store).
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// "read", "write", "create", ...
        action: &'static str,
        /// What was being touched.
        path: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The snapshot store has no manifest with this id.
    #[error("snapshot {id} is not in the snapshot store")]
    SnapshotNotFound {
        /// The id asked for.
        id: String,
    },
    /// A snapshot's manifest or one of its objects is missing or damaged.
    #[error("snapshot {id} is damaged: {reason}")]
    CorruptSnapshot {
        /// The snapshot.
        id: String,
        /// What is wrong, in one line.
        reason: String,
    },
    /// Text that is not a snapshot id (64 lowercase hex digits).
    #[error("{id:?} is not a snapshot id")]
    InvalidSnapshotId {
        /// The text given.
        id: String,
    },
    /// The Docker engine cannot be reached (no socket or pipe, connection refused) or stopped
    /// answering part way. The message says what to do, in the platform's terms (`dockerd` on
    /// Linux, the desktop engines on macOS and Windows).
    #[error(
        "the Docker engine is not reachable ({detail}); {}",
        crate::docker::address::HostOs::CURRENT.start_hint()
    )]
    DockerUnavailable {
        /// What failed, in one line.
        detail: String,
    },
    /// The engine named could not be used as named: a remote engine without TLS, TLS that
    /// failed (a certificate, a host name), or an engine older than Decima was tested with.
    /// The message names what to check; nothing fell back to another engine.
    #[error("{detail}; nothing was run (or run with --sandbox host)")]
    EngineRefused {
        /// What failed and what to check, in one line.
        detail: String,
    },
    /// The Docker engine answered, with an error.
    #[error("Docker could not {action}: {message}")]
    Docker {
        /// What was being done: "create the container", ...
        action: String,
        /// What the engine said.
        message: String,
    },
    /// The sandbox image is not in the engine (nothing can be pulled here).
    #[error(
        "the Docker image {image} is missing; build the sandbox image with `decima sandbox image build` (scripts/run.sh starts it) or choose another image in the sandbox settings"
    )]
    DockerImageMissing {
        /// The image asked for.
        image: String,
    },
    /// A conversation key or instance id that cannot name a container.
    #[error(
        "{key:?} cannot name a Docker sandbox: use 1 to 64 letters, digits, `_`, `.` or `-`, starting with a letter or digit"
    )]
    InvalidSandboxKey {
        /// The text given.
        key: String,
    },
    /// A Docker sandbox setting that cannot work.
    #[error("invalid Docker sandbox setting: {0}")]
    InvalidDockerConfig(String),
}

impl From<SandboxError> for ToolError {
    /// A sandbox failure under a tool call: bad keys and settings are `Data`; the engine, the
    /// image and I/O are `System` (the run cannot go on until a person acts).
    fn from(err: SandboxError) -> Self {
        match err {
            SandboxError::InvalidSandboxKey { .. } | SandboxError::InvalidDockerConfig(_) => {
                ToolError::data(err.to_string())
            }
            _ => ToolError::system(err.to_string()),
        }
    }
}

/// Results of sandbox operations.
pub type Result<T, E = SandboxError> = std::result::Result<T, E>;

/// Why a tool call (shell, read_file, write_file) failed, with the class recovery keys on.
///
/// A timeout is `Transient`; bad arguments and missing files are `Data`; a path that leaves the
/// workspace or a permission the OS refuses is `Permission`; a workspace that is gone or a
/// process that cannot be started is `System`. The message is one line for the model and the
/// person.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{message}")]
pub struct ToolError {
    /// What kind of failure this is.
    pub class: decima_core::FailureClass,
    /// What happened, in one line.
    pub message: String,
    /// True when the call was refused before it touched anything (a path outside the
    /// workspace): the model can correct its arguments, so the runtime answers it as a tool
    /// error and does not start the failure path, as it does for a permission the OS refused.
    pub refused: bool,
}

impl ToolError {
    /// A tool error of the given class.
    pub fn new(class: decima_core::FailureClass, message: impl Into<String>) -> Self {
        Self {
            class,
            message: message.into(),
            refused: false,
        }
    }

    /// A path that leads outside the workspace, refused before anything was touched.
    pub fn outside_workspace(message: impl Into<String>) -> Self {
        Self {
            refused: true,
            ..Self::permission(message)
        }
    }

    /// Bad arguments, a missing file, a path that is not a directory.
    pub fn data(message: impl Into<String>) -> Self {
        Self::new(decima_core::FailureClass::Data, message)
    }

    /// A permission the OS refused.
    pub fn permission(message: impl Into<String>) -> Self {
        Self::new(decima_core::FailureClass::Permission, message)
    }

    /// The machine: the workspace is gone, a process cannot be spawned, the disk failed.
    pub fn system(message: impl Into<String>) -> Self {
        Self::new(decima_core::FailureClass::System, message)
    }

    /// An OS error while doing `action` on `path`, classed by its kind: not found and
    /// not-a-directory are `Data`, permission denied is `Permission`, the rest `System`.
    pub fn io(action: &str, path: &std::path::Path, err: &std::io::Error) -> Self {
        use std::io::ErrorKind;
        let message = format!("cannot {action} {}: {err}", path.display());
        match err.kind() {
            ErrorKind::NotFound
            | ErrorKind::NotADirectory
            | ErrorKind::IsADirectory
            | ErrorKind::InvalidInput
            | ErrorKind::InvalidData
            | ErrorKind::AlreadyExists => Self::data(message),
            ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => {
                Self::permission(message)
            }
            _ => Self::system(message),
        }
    }
}
