//! Unix: owner-only by mode. The file is created 0600 and a folder Decima creates 0700; a file
//! whose mode lets the group or others in is set back to 0600 before its keys are used.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Creates `path`, which must not exist, for writing, with mode 0600 from the start: never
/// readable by anyone else, even briefly.
pub(in crate::secrets) fn create_new(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

/// Opens the lock file for reading and writing, created 0600 when missing.
pub(in crate::secrets) fn open_lock(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
}

/// Creates `dir` (and the folders above it) 0700 when it is missing; an existing one is left
/// as it is.
pub(in crate::secrets) fn create_private_dir(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Makes a file someone loosened (by hand, or by copying) 0600 again; a failure names what
/// it was doing.
pub(in crate::secrets) fn tighten(path: &Path) -> Result<(), (&'static str, io::Error)> {
    let meta = fs::metadata(path).map_err(|e| ("inspect", e))?;
    if meta.permissions().mode() & 0o077 != 0 {
        fs::set_permissions(path, fs::Permissions::from_mode(0o600))
            .map_err(|e| ("restrict the permissions of", e))?;
    }
    Ok(())
}

/// Makes a rename in `dir` durable. Best effort: some filesystems refuse to sync a directory.
pub(in crate::secrets) fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}
