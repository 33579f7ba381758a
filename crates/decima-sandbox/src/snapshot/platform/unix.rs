//! The Unix side of [`super`]: inodes, ctimes, permission bits, raw byte names, `O_NOFOLLOW`.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, FileType, Metadata, OpenOptions, Permissions};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Unix has no sharing modes that stop a rename or an unlink, and creating a symlink needs no
/// privilege: a restore has nothing to check before it starts.
pub(crate) const PREFLIGHT: bool = false;

/// Names are compared byte for byte (the file systems Decima runs on under Linux are case
/// sensitive), so two names differing only in case are two entries.
pub(crate) const FOLDS_CASE: bool = false;

/// A Unix symlink is one kind whatever it points at.
pub(crate) const LINK_KIND_MATTERS: bool = false;

/// One version of a regular file as `lstat` sees it: a file whose size, mtime, ctime and inode
/// are unchanged is not read again. The field names are the stat cache's on-disk format.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stamp {
    size: u64,
    mtime_ns: i64,
    ctime_ns: i64,
    ino: u64,
}

impl Stamp {
    /// The stamp of the regular file at `path`, from its `lstat` metadata (no I/O here).
    #[allow(clippy::unnecessary_wraps)]
    pub(crate) fn of(_path: &Path, meta: &Metadata) -> io::Result<Self> {
        Ok(Self::from_meta(meta))
    }

    /// The stamp of an open file (after its metadata was put back).
    pub(crate) fn of_file(file: &File) -> io::Result<Self> {
        file.metadata().map(|meta| Self::from_meta(&meta))
    }

    fn from_meta(meta: &Metadata) -> Self {
        Self {
            size: meta.len(),
            mtime_ns: mtime_ns(meta),
            ctime_ns: meta
                .ctime()
                .saturating_mul(1_000_000_000)
                .saturating_add(meta.ctime_nsec()),
            ino: meta.ino(),
        }
    }

    /// Length in bytes.
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// Modification time, nanoseconds since the Unix epoch (what the manifest records).
    pub(crate) fn mtime_ns(&self) -> i64 {
        self.mtime_ns
    }

    /// The last time anything about the file changed (its ctime): a stamp this recent is not
    /// trusted, since a write in the same clock tick would leave it as it is.
    pub(crate) fn settled_ns(&self) -> i64 {
        self.ctime_ns
    }
}

/// Modification time, nanoseconds since the Unix epoch.
pub(crate) fn mtime_ns(meta: &Metadata) -> i64 {
    meta.mtime()
        .saturating_mul(1_000_000_000)
        .saturating_add(meta.mtime_nsec())
}

/// Permission bits, as the manifest records them.
pub(crate) fn mode_of(meta: &Metadata) -> u32 {
    meta.permissions().mode() & 0o7777
}

/// Whether the entry already has the recorded permission bits.
pub(crate) fn mode_matches(meta: &Metadata, recorded: u32) -> bool {
    mode_of(meta) == recorded
}

/// Gives an open regular file (at `_path`) its recorded permission bits, through its descriptor.
pub(crate) fn set_file_mode(file: &File, _path: &Path, mode: u32) -> io::Result<()> {
    file.set_permissions(Permissions::from_mode(mode))
}

/// Gives a directory (checked to be one, not a link) its recorded permission bits.
pub(crate) fn set_dir_mode(path: &Path, mode: u32) -> io::Result<()> {
    fs::set_permissions(path, Permissions::from_mode(mode))
}

/// Creates a directory with owner access only, until the restore's last pass sets its mode.
pub(crate) fn create_dir(path: &Path) -> io::Result<()> {
    fs::create_dir(path)?;
    fs::set_permissions(path, Permissions::from_mode(0o700))
}

/// Gives the owner read, write and search permission on a real directory so it can be pruned
/// and filled; the recorded mode is put back at the end.
pub(crate) fn make_traversable(path: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(path)?;
    let mode = mode_of(&meta);
    if meta.is_dir() && mode & 0o700 != 0o700 {
        fs::set_permissions(path, Permissions::from_mode(mode | 0o700))?;
    }
    Ok(())
}

/// Nothing to do: whether a file can be unlinked depends on its directory, which
/// [`make_traversable`] opens up.
#[allow(clippy::unnecessary_wraps)]
pub(crate) fn make_removable(_path: &Path) -> io::Result<()> {
    Ok(())
}

/// A name from a manifest's bytes: any bytes are a Unix name.
#[allow(clippy::unnecessary_wraps)]
pub(crate) fn os_from_bytes(bytes: Vec<u8>) -> Option<OsString> {
    Some(OsString::from_vec(bytes))
}

/// Whether a decoded name names one entry of its directory: not empty, no `/`, no NUL.
pub(crate) fn name_allowed(name: &OsStr) -> bool {
    let raw = name.as_bytes();
    !raw.is_empty() && !raw.contains(&b'/') && !raw.contains(&0)
}

/// What a file that is neither a directory, a regular file nor a symlink is, as the manifest's
/// `skipped` kind and a phrase for its reason.
pub(crate) fn special_kind(ft: &FileType) -> (&'static str, &'static str) {
    if ft.is_fifo() {
        ("fifo", "a named pipe")
    } else if ft.is_socket() {
        ("socket", "a socket")
    } else if ft.is_block_device() {
        ("block_device", "a block device")
    } else if ft.is_char_device() {
        ("char_device", "a character device")
    } else {
        ("unknown", "an unknown file type")
    }
}

/// Opens a file for reading, failing (`ELOOP`) rather than following a symlink.
pub(crate) fn open_read(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// Opens a file to change its permission bits and mtime, never through a symlink.
pub(crate) fn open_attributes(path: &Path) -> io::Result<File> {
    open_read(path)
}

/// Creates a new file readable and writable by its owner only; fails if anything (a dangling
/// symlink included) has the name.
pub(crate) fn create_new(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

/// Renames a finished temp file over `path`. `rename` replaces a symlink at `path` rather than
/// following it, and a hard link's other names keep their old content.
pub(crate) fn replace(tmp: &Path, path: &Path) -> io::Result<()> {
    fs::rename(tmp, path)
}

/// Removes a file or a symlink (never its target).
pub(crate) fn remove_non_dir(path: &Path) -> io::Result<()> {
    fs::remove_file(path)
}

/// Creates a symlink; `_to_dir` only matters on Windows.
pub(crate) fn symlink(target: &OsStr, link: &Path, _to_dir: bool) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// Always possible on Unix.
#[allow(clippy::unnecessary_wraps)]
pub(crate) fn check_link_creation(_dir: &Path) -> io::Result<()> {
    Ok(())
}

/// How many names the file has (from `lstat`, no I/O here).
#[allow(clippy::unnecessary_wraps)]
pub(crate) fn link_count(_path: &Path, meta: &Metadata) -> io::Result<u64> {
    Ok(meta.nlink())
}

/// Unix files cannot be held open against a rename or an unlink.
pub(crate) fn in_use(_err: &io::Error) -> bool {
    false
}

/// Unix files cannot be held open against a rename or an unlink.
pub(crate) fn probe_in_use(_path: &Path) -> bool {
    false
}
