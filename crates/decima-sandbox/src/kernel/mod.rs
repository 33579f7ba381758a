//! A Python kernel per conversation, for the `python` tool: variables, imports and loaded data
//! frames persist from call to call. The kernel is an IPython kernel (ipykernel) started by a
//! small bridge program ([`BRIDGE`]) that talks to it over Jupyter's own messaging protocol,
//! through the connection file jupyter_client writes, and to Decima in JSON lines over its
//! stdin and stdout. The bridge runs where the kernel runs (in the sandbox container), so
//! nothing but the exec's streams crosses to the engine: no kernel port is published, and a
//! remote engine works as a local one does.

mod driver;
mod reply;

pub use driver::KernelBridge;
pub use reply::{KernelFault, PythonOutcome, PythonStatus, Variable};

use std::time::Duration;

/// The bridge program, run with `python3 -c`.
pub const BRIDGE: &str = include_str!("bridge.py");

/// One `python` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonRequest {
    /// The code, run as one cell.
    pub code: String,
    /// After this the kernel is interrupted, and restarted if it does not stop.
    pub timeout: Duration,
    /// Where its charts are saved, workspace-relative, without the `-N.png` each one gets.
    pub charts: String,
}
