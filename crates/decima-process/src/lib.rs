//! A command and every process it starts, ended together.
//!
//! A shell call or an MCP server often runs its real work in a child (`npx`, a script, a pipe),
//! and killing only the process Decima started leaves those running. Unix puts the tree in a
//! process group of its own and signals the group; Windows assigns it to a job object whose
//! processes all end when the job's last handle closes. Callers see one interface,
//! [`ProcessTree`], and never a `cfg`.
//!
//! The shell a host command runs in differs as much ([`HostShell`]): `/bin/sh` on Unix;
//! PowerShell where it exists on Windows, else `cmd.exe`.

mod environment;
mod pipe;
mod program;
mod shell;
mod tree;

#[cfg(unix)]
#[path = "unix.rs"]
mod sys;
#[cfg(windows)]
#[path = "windows.rs"]
mod sys;

pub use environment::{ESSENTIAL_VARIABLES, shell_environment};
pub use pipe::OutputPipe;
pub use program::resolve_program;
pub use shell::{HostShell, ShellCommand, ShellKind};
pub use tree::{ProcessTree, TreeKiller, exit_signal};
