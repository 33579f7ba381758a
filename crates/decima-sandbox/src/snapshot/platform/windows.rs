//! The Windows side of [`super`]: file ids, attributes and times instead of inodes and modes;
//! WTF-8 names; reparse points (symbolic links, junctions) opened as themselves, never followed;
//! the read-only attribute; files other programs hold open.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, FileType, Metadata, OpenOptions};
use std::io;
use std::os::windows::ffi::OsStringExt;
use std::os::windows::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

// Values from the Windows SDK (winnt.h, winbase.h, winerror.h).
/// `FILE_FLAG_OPEN_REPARSE_POINT`: open a symbolic link or junction itself, not its target.
const OPEN_REPARSE_POINT: u32 = 0x0020_0000;
/// `FILE_FLAG_BACKUP_SEMANTICS`: lets `CreateFile` open directories (and directory links).
const BACKUP_SEMANTICS: u32 = 0x0200_0000;
/// `FILE_READ_ATTRIBUTES`: an access right that no sharing mode denies.
const READ_ATTRIBUTES: u32 = 0x0080;
/// `FILE_WRITE_ATTRIBUTES`: likewise; enough to set times and attributes.
const WRITE_ATTRIBUTES: u32 = 0x0100;
/// `DELETE`: the access a rename over or a removal of the file needs.
const DELETE: u32 = 0x0001_0000;
/// `FILE_ATTRIBUTE_DIRECTORY`: set on directories and on directory links.
const ATTRIBUTE_DIRECTORY: u32 = 0x0010;
/// `FILE_ATTRIBUTE_REPARSE_POINT`: a link, or a file a file system filter serves.
const ATTRIBUTE_REPARSE_POINT: u32 = 0x0400;
/// `ERROR_SHARING_VIOLATION`: another program opened the file without sharing it.
const ERROR_SHARING_VIOLATION: i32 = 32;
/// `ERROR_LOCK_VIOLATION`: another program locked part of the file.
const ERROR_LOCK_VIOLATION: i32 = 33;
/// `ERROR_PRIVILEGE_NOT_HELD`: this account may not create symbolic links.
const ERROR_PRIVILEGE_NOT_HELD: i32 = 1314;

/// 100-nanosecond intervals from 1601-01-01 (the `FILETIME` epoch) to 1970-01-01.
const FILETIME_UNIX_EPOCH: i128 = 116_444_736_000_000_000;

/// A Windows program can hold a file open so that it cannot be replaced or removed (Excel does
/// with its workbooks), and creating a symbolic link needs Developer Mode or an administrator: a
/// restore checks both before it changes anything.
pub(crate) const PREFLIGHT: bool = true;

/// A Windows folder holds one of two names that differ only in case.
pub(crate) const FOLDS_CASE: bool = true;

/// A Windows symbolic link is made either for a file or for a directory.
pub(crate) const LINK_KIND_MATTERS: bool = true;

/// One version of a regular file as its handle describes it: size, last-write time, creation
/// time, attributes and the file id (volume serial number and file index). Windows keeps no
/// ctime readable without unsafe code; the creation time and the attributes (a write sets the
/// archive bit) stand in for it, and the file id tells a replaced file from the one it replaced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stamp {
    size: u64,
    mtime_ns: i64,
    created_ns: i64,
    attributes: u32,
    volume: u64,
    index: u64,
}

impl Stamp {
    /// The stamp of the regular file at `path`, read from a handle on the entry itself (the
    /// directory listing's copy can lag behind a file another program is writing).
    pub(crate) fn of(path: &Path, _meta: &Metadata) -> io::Result<Self> {
        Self::of_file(&open_info(path)?)
    }

    /// The stamp of an open file.
    pub(crate) fn of_file(file: &File) -> io::Result<Self> {
        let info = winapi_util::file::information(file)?;
        Ok(Self {
            size: info.file_size(),
            mtime_ns: filetime_ns(info.last_write_time().unwrap_or(0)),
            created_ns: filetime_ns(info.creation_time().unwrap_or(0)),
            attributes: u32::try_from(info.file_attributes()).unwrap_or(u32::MAX),
            volume: info.volume_serial_number(),
            index: info.file_index(),
        })
    }

    /// Length in bytes.
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// Last-write time, nanoseconds since the Unix epoch (what the manifest records).
    pub(crate) fn mtime_ns(&self) -> i64 {
        self.mtime_ns
    }

    /// The later of the last-write and creation times: a stamp this recent is not trusted.
    pub(crate) fn settled_ns(&self) -> i64 {
        self.mtime_ns.max(self.created_ns)
    }
}

/// A `FILETIME` (100 ns since 1601) as nanoseconds since the Unix epoch.
fn filetime_ns(ft: u64) -> i64 {
    let ns = (i128::from(ft) - FILETIME_UNIX_EPOCH) * 100;
    i64::try_from(ns).unwrap_or(if ns < 0 { i64::MIN } else { i64::MAX })
}

/// Last-write time, nanoseconds since the Unix epoch.
pub(crate) fn mtime_ns(meta: &Metadata) -> i64 {
    filetime_ns(meta.last_write_time())
}

/// The recorded mode: `0o444` for a read-only file, `0o644` for another, `0o755` for a
/// directory (the read-only attribute means nothing on a Windows directory).
pub(crate) fn mode_of(meta: &Metadata) -> u32 {
    if meta.is_dir() {
        0o755
    } else if meta.permissions().readonly() {
        0o444
    } else {
        0o644
    }
}

/// Whether the entry already has what Windows can hold of the recorded mode: for a file, its
/// read-only attribute set exactly when the mode has no write bit; a directory always matches.
pub(crate) fn mode_matches(meta: &Metadata, recorded: u32) -> bool {
    meta.is_dir() || meta.permissions().readonly() == (recorded & 0o222 == 0)
}

/// Sets or clears the read-only attribute of the regular file at `path` (open as `_file`) as
/// `mode` says. By path: `SetFileAttributesW` acts on a link itself, never its target, and
/// (unlike setting the attributes on a handle, where zero means "leave them") it can clear the
/// last attribute a file has.
pub(crate) fn set_file_mode(_file: &File, path: &Path, mode: u32) -> io::Result<()> {
    set_readonly(path, mode & 0o222 == 0)
}

fn set_readonly(path: &Path, readonly: bool) -> io::Result<()> {
    let meta = fs::symlink_metadata(path)?;
    if meta.file_type().is_symlink() {
        return Err(through_link(path));
    }
    let mut perm = meta.permissions();
    if perm.readonly() == readonly {
        return Ok(());
    }
    perm.set_readonly(readonly);
    fs::set_permissions(path, perm)
}

/// Directories have no mode on Windows.
#[allow(clippy::unnecessary_wraps)]
pub(crate) fn set_dir_mode(_path: &Path, _mode: u32) -> io::Result<()> {
    Ok(())
}

/// Creates a directory.
pub(crate) fn create_dir(path: &Path) -> io::Result<()> {
    fs::create_dir(path)
}

/// Windows directories need nothing to be listed and filled.
#[allow(clippy::unnecessary_wraps)]
pub(crate) fn make_traversable(_path: &Path) -> io::Result<()> {
    Ok(())
}

/// Clears the read-only attribute of a regular file so it can be removed.
pub(crate) fn make_removable(path: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(path)?;
    if meta.is_file() && meta.permissions().readonly() {
        set_readonly(path, false)?;
    }
    Ok(())
}

/// A name from a manifest's bytes, which are WTF-8: UTF-8 plus the three-byte form
/// (`ED A0..BF 80..BF`) of an unpaired surrogate. `None` for anything else, including a
/// surrogate pair spelled as two such escapes (it has one spelling, as the character).
pub(crate) fn os_from_bytes(bytes: Vec<u8>) -> Option<OsString> {
    let mut wide: Vec<u16> = Vec::with_capacity(bytes.len());
    let mut rest = bytes.as_slice();
    loop {
        let (valid, after) = match std::str::from_utf8(rest) {
            Ok(all) => (all, &[][..]),
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                (std::str::from_utf8(valid).ok()?, after)
            }
        };
        wide.extend(valid.encode_utf16());
        match after {
            [] => break,
            [0xED, b1 @ 0xA0..=0xBF, b2 @ 0x80..=0xBF, tail @ ..] => {
                let unit = 0xD000 | (u16::from(b1 & 0x3F) << 6) | u16::from(b2 & 0x3F);
                let low = (0xDC00..=0xDFFF).contains(&unit);
                if low && wide.last().is_some_and(|u| (0xD800..=0xDBFF).contains(u)) {
                    return None;
                }
                wide.push(unit);
                rest = tail;
            }
            _ => return None,
        }
    }
    Some(OsString::from_wide(&wide))
}

/// Whether a decoded name names one entry of its directory: not empty, and no `\` or `/`
/// (separators), `:` (a drive, or an alternate data stream of another file) or NUL. Reserved
/// device names and trailing dots are safe: a restore works on `\\?\` paths (the workspace is
/// canonicalised), which Windows takes literally.
pub(crate) fn name_allowed(name: &OsStr) -> bool {
    let raw = name.as_encoded_bytes();
    !raw.is_empty() && !raw.iter().any(|b| matches!(b, b'\\' | b'/' | b':' | 0))
}

/// Windows lists nothing but directories, files and links.
pub(crate) fn special_kind(_ft: &FileType) -> (&'static str, &'static str) {
    ("unknown", "an unknown file type")
}

/// Opens a regular file for reading without following a symbolic link or junction (an error
/// names it). Another kind of reparse point (a cloud placeholder, a deduplicated file) is a
/// regular file whose content comes through its file system filter: it is opened again, the
/// way any program reads it, and checked to be a regular file.
pub(crate) fn open_read(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(OPEN_REPARSE_POINT)
        .open(path)?;
    let meta = file.metadata()?;
    if meta.file_type().is_symlink() {
        return Err(through_link(path));
    }
    if meta.file_attributes() & ATTRIBUTE_REPARSE_POINT == 0 {
        return Ok(file);
    }
    let file = File::open(path)?;
    if !file.metadata()?.is_file() {
        return Err(through_link(path));
    }
    Ok(file)
}

/// Opens a regular file (never a link) to set its times: attribute access only, which no
/// sharing mode denies, so a file another program holds can still have its time put back.
pub(crate) fn open_attributes(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .access_mode(READ_ATTRIBUTES | WRITE_ATTRIBUTES)
        .custom_flags(OPEN_REPARSE_POINT)
        .open(path)?;
    if file.metadata()?.file_type().is_symlink() {
        return Err(through_link(path));
    }
    Ok(file)
}

/// A handle on the entry itself (a link is not followed) that can only read its attributes.
fn open_info(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .access_mode(READ_ATTRIBUTES)
        .custom_flags(OPEN_REPARSE_POINT | BACKUP_SEMANTICS)
        .open(path)
}

/// Creates a new file, failing if anything (a link included: std adds
/// `FILE_FLAG_OPEN_REPARSE_POINT` to `create_new`) has the name. Opened for reading too, so its
/// attributes can be read back.
pub(crate) fn create_new(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(OPEN_REPARSE_POINT)
        .open(path)
}

/// Renames a finished temp file over `path`, never writing through what is there: a link
/// (symbolic or junction) is removed first, and a hard link's other names keep their old
/// content. A read-only file has its attribute cleared first (and set again if the rename
/// fails); one with other names, which share the attribute, is instead removed the way
/// [`remove_non_dir`] does before the rename. When another program holds `path`, the error is a
/// sharing violation ([`in_use`]).
pub(crate) fn replace(tmp: &Path, path: &Path) -> io::Result<()> {
    let mut cleared = false;
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => remove_link(path, &meta)?,
        Ok(meta) if meta.is_file() && meta.permissions().readonly() => {
            if link_count(path, &meta)? > 1 {
                remove_non_dir(path)?;
            } else {
                set_readonly(path, false)?;
                cleared = true;
            }
        }
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    fs::rename(tmp, path).map_err(|e| {
        if cleared {
            let _ = set_readonly(path, true);
        }
        held_or(e, path)
    })
}

/// Removes a file or a link (a directory link with `RemoveDirectory`, which removes the link and
/// leaves its target alone). A read-only file is removed as it is where Windows can (std deletes
/// it with POSIX semantics, ignoring the attribute, so other hard links keep it); elsewhere (an
/// older file system, Wine) its attribute is cleared first.
pub(crate) fn remove_non_dir(path: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(path)?;
    if meta.file_type().is_symlink() {
        return remove_link(path, &meta);
    }
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e)
            if meta.permissions().readonly()
                && e.kind() == io::ErrorKind::PermissionDenied
                && !probe_in_use(path) =>
        {
            set_readonly(path, false)?;
            fs::remove_file(path).map_err(|e| {
                let _ = set_readonly(path, true);
                held_or(e, path)
            })
        }
        Err(e) => Err(held_or(e, path)),
    }
}

fn remove_link(path: &Path, meta: &Metadata) -> io::Result<()> {
    if meta.file_attributes() & ATTRIBUTE_DIRECTORY != 0 {
        fs::remove_dir(path)
    } else {
        fs::remove_file(path)
    }
}

/// Creates a symbolic link for a directory (`to_dir`) or a file. A junction is recorded as a
/// link and comes back as a directory symbolic link.
pub(crate) fn symlink(target: &OsStr, link: &Path, to_dir: bool) -> io::Result<()> {
    let made = if to_dir {
        std::os::windows::fs::symlink_dir(target, link)
    } else {
        std::os::windows::fs::symlink_file(target, link)
    };
    made.map_err(explain_link_error)
}

/// Checks that this account may create symbolic links, by making (and removing) one in `dir`.
pub(crate) fn check_link_creation(dir: &Path) -> io::Result<()> {
    static PROBES: AtomicU64 = AtomicU64::new(0);
    let probe = dir.join(format!(
        ".tmp-link-probe-{}-{}",
        std::process::id(),
        PROBES.fetch_add(1, Ordering::Relaxed)
    ));
    std::os::windows::fs::symlink_file("probe", &probe).map_err(explain_link_error)?;
    // Some systems (Wine) report links as made without making them.
    let made = fs::symlink_metadata(&probe).is_ok_and(|m| m.file_type().is_symlink());
    let _ = fs::remove_file(&probe);
    if made {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this system reports symbolic links as created but does not create them",
        ))
    }
}

fn explain_link_error(e: io::Error) -> io::Error {
    if e.raw_os_error() == Some(ERROR_PRIVILEGE_NOT_HELD) {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{e}: Windows lets only administrators, or accounts with Developer Mode turned \
                 on (Settings, For developers), create symbolic links"
            ),
        )
    } else {
        e
    }
}

/// How many names the file has, read from a handle on the entry itself.
pub(crate) fn link_count(path: &Path, _meta: &Metadata) -> io::Result<u64> {
    Ok(winapi_util::file::information(open_info(path)?)?.number_of_links())
}

/// Whether an error says another program has the file open without sharing it, or has locked
/// part of it.
pub(crate) fn in_use(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(ERROR_SHARING_VIOLATION | ERROR_LOCK_VIOLATION)
    )
}

/// Whether another program holds `path` (a file, a directory or a link, not followed) so that
/// it could not be renamed over or removed now: asks for the delete access both need, sharing
/// everything, and closes the handle at once.
pub(crate) fn probe_in_use(path: &Path) -> bool {
    OpenOptions::new()
        .access_mode(DELETE)
        .custom_flags(OPEN_REPARSE_POINT | BACKUP_SEMANTICS)
        .open(path)
        .is_err_and(|e| in_use(&e))
}

/// A failed rename or removal of a file another program holds says so: Windows answers "access
/// denied" there, as for a file this account may not change.
fn held_or(e: io::Error, path: &Path) -> io::Error {
    if !in_use(&e) && e.kind() == io::ErrorKind::PermissionDenied && probe_in_use(path) {
        io::Error::from_raw_os_error(ERROR_SHARING_VIOLATION)
    } else {
        e
    }
}

fn through_link(path: &Path) -> io::Error {
    io::Error::other(format!(
        "{} is a symbolic link or junction, which is never followed",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use std::os::windows::ffi::OsStrExt;

    use super::*;

    #[test]
    fn unpaired_surrogates_round_trip_through_wtf8() {
        for units in [
            vec![0x61, 0xD800, 0x62],
            vec![0xDC00],
            vec![0xDBFF, 0x41, 0xDC00],
            vec![0xD83D, 0xDE00], // a pair: the character U+1F600
        ] {
            let name = OsString::from_wide(&units);
            let bytes = name.as_encoded_bytes().to_vec();
            let back = os_from_bytes(bytes).unwrap();
            assert_eq!(back.encode_wide().collect::<Vec<_>>(), units);
        }
    }

    #[test]
    fn malformed_wtf8_is_refused() {
        // A pair spelled as two surrogates, a stray byte, a truncated escape.
        for bad in [
            vec![0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80],
            vec![0x61, 0xFF],
            vec![0xED, 0xA0],
        ] {
            assert!(os_from_bytes(bad.clone()).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn windows_names_that_would_reach_elsewhere_are_refused() {
        for bad in ["a\\b", "C:", "file:stream", "..\\x"] {
            assert!(!name_allowed(OsStr::new(bad)), "{bad}");
        }
        for good in ["con", "trailing.", "名前.txt"] {
            assert!(name_allowed(OsStr::new(good)), "{good}");
        }
    }

    #[test]
    fn filetimes_convert_to_unix_nanoseconds() {
        assert_eq!(filetime_ns(116_444_736_000_000_000), 0);
        assert_eq!(filetime_ns(116_444_736_000_000_001), 100);
        assert!(filetime_ns(0) < 0);
    }

    #[test]
    fn a_file_held_without_sharing_is_in_use() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("book.xlsx");
        fs::write(&path, b"cells").unwrap();
        let holder = OpenOptions::new()
            .read(true)
            .write(true)
            .share_mode(0)
            .open(&path)
            .unwrap();
        assert!(probe_in_use(&path));
        let tmp = dir.path().join("tmp");
        fs::write(&tmp, b"other").unwrap();
        let err = replace(&tmp, &path).unwrap_err();
        assert!(in_use(&err), "{err}");
        let err = remove_non_dir(&path).unwrap_err();
        assert!(in_use(&err), "{err}");
        // Attribute access is still allowed.
        let meta = fs::symlink_metadata(&path).unwrap();
        Stamp::of(&path, &meta).unwrap();
        drop(holder);
        assert!(!probe_in_use(&path));
        replace(&tmp, &path).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"other");
    }
}
