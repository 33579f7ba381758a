//! Finding the program a server's command names, as a shell would.

use std::ffi::OsStr;
use std::path::PathBuf;

/// The program `name` means, searched on `path` (the `PATH` the child gets) where the system
/// needs it. Unix's `exec` searches the path itself, so the name stays as it is. Windows'
/// process creation finds only `.exe` files: `npx`, `uvx` and most Node.js tools are
/// `npx.cmd` and the like, found here through `PATHEXT` as `cmd.exe` would. A name that is
/// not found stays as it is, so that the start fails with the system's own error.
pub fn resolve_program(name: &str, path: Option<&OsStr>) -> PathBuf {
    crate::sys::resolve_program(name, path)
}
