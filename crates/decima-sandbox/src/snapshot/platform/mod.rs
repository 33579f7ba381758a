//! Where snapshots meet the operating system: one interface, one implementation per platform
//! (`unix.rs`, `windows.rs`), so the walk, the stat cache, the manifest and the restore never
//! name a platform themselves.
//!
//! Both implementations provide the same items:
//!
//! * [`Stamp`]: what the stat cache trusts to say a file is unchanged. Unix: size, mtime, ctime
//!   and inode (the stat cache's format is the same as before). Windows: size, last-write time,
//!   creation time, file attributes, and the file id (volume serial number and file index), read
//!   from a handle opened on the entry itself, never through a link.
//! * Modes: [`mode_of`], [`mode_matches`], [`set_file_mode`], [`set_dir_mode`], [`create_dir`],
//!   [`make_traversable`], [`make_removable`]. Unix records and restores `mode & 0o7777`. Windows
//!   has no mode: a file is recorded as `0o444` when its read-only attribute is set and `0o644`
//!   otherwise, a directory as `0o755`, and a restore puts back only the read-only attribute.
//! * Names: [`os_from_bytes`] turns the bytes a manifest spells back into a name, and
//!   [`name_allowed`] refuses a decoded name that would not name one entry of its directory.
//!   Names are spelled from [`std::ffi::OsStr::as_encoded_bytes`]: raw bytes on Unix, WTF-8 on
//!   Windows (UTF-8, plus the three-byte form of an unpaired UTF-16 surrogate), so a Windows name
//!   that is not valid Unicode still round-trips exactly (its surrogate is escaped as
//!   `%ED%XX%XX`).
//! * Files, never through a link: [`open_read`], [`open_attributes`], [`create_new`],
//!   [`replace`] (rename a finished temp file over a path), [`remove_non_dir`], [`symlink`],
//!   [`link_count`].
//! * What can stop a restore half way, so it is checked before anything changes:
//!   [`PREFLIGHT`], [`probe_in_use`], [`in_use`], [`check_link_creation`]; and [`FOLDS_CASE`],
//!   [`LINK_KIND_MATTERS`], [`special_kind`].

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as imp;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as imp;

pub(crate) use imp::{
    FOLDS_CASE, LINK_KIND_MATTERS, PREFLIGHT, Stamp, check_link_creation, create_dir, create_new,
    in_use, link_count, make_removable, make_traversable, mode_matches, mode_of, mtime_ns,
    name_allowed, open_attributes, open_read, os_from_bytes, probe_in_use, remove_non_dir, replace,
    set_dir_mode, set_file_mode, special_kind, symlink,
};

#[cfg(test)]
mod tests {
    //! The interface's promises, checked the same way on every platform.

    use std::ffi::OsStr;
    use std::fs;
    use std::io::Write;
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_stamp_is_the_same_until_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        fs::write(&path, b"one").unwrap();
        let meta = fs::symlink_metadata(&path).unwrap();
        let first = Stamp::of(&path, &meta).unwrap();
        assert_eq!(first.size(), 3);
        assert_eq!(first, Stamp::of(&path, &meta).unwrap());
        assert_eq!(first, Stamp::of_file(&open_read(&path).unwrap()).unwrap());
        assert_eq!(first.mtime_ns(), mtime_ns(&meta));
        assert!(first.settled_ns() >= first.mtime_ns());

        // A stamp survives the cache's JSON.
        let json = serde_json::to_string(&first).unwrap();
        assert_eq!(serde_json::from_str::<Stamp>(&json).unwrap(), first);

        std::thread::sleep(Duration::from_millis(20));
        fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"!")
            .unwrap();
        let meta = fs::symlink_metadata(&path).unwrap();
        assert_ne!(first, Stamp::of(&path, &meta).unwrap());

        // Another file with the same size and time is another file.
        let other = dir.path().join("b.txt");
        fs::write(&other, b"one!").unwrap();
        let file = open_attributes(&other).unwrap();
        file.set_modified(meta.modified().unwrap()).unwrap();
        drop(file);
        let other_meta = fs::symlink_metadata(&other).unwrap();
        assert_ne!(
            Stamp::of(&path, &meta).unwrap(),
            Stamp::of(&other, &other_meta).unwrap()
        );
    }

    #[test]
    fn a_read_only_file_is_recorded_and_restored_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ro.txt");
        let file = create_new(&path).unwrap();
        set_file_mode(&file, &path, 0o444).unwrap();
        drop(file);
        let meta = fs::symlink_metadata(&path).unwrap();
        assert!(meta.permissions().readonly());
        assert_eq!(mode_of(&meta), 0o444);
        assert!(mode_matches(&meta, 0o444));
        assert!(!mode_matches(&meta, 0o644));

        // Replacing and removing a read-only file work and say nothing about the attribute.
        let tmp = dir.path().join("tmp");
        fs::write(&tmp, b"new").unwrap();
        replace(&tmp, &path).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        let file = open_attributes(&path).unwrap();
        set_file_mode(&file, &path, 0o444).unwrap();
        drop(file);
        remove_non_dir(&path).unwrap();
        assert!(fs::symlink_metadata(&path).is_err());
    }

    #[test]
    fn create_new_never_opens_an_existing_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x");
        fs::write(&path, b"there").unwrap();
        assert_eq!(
            create_new(&path).unwrap_err().kind(),
            std::io::ErrorKind::AlreadyExists
        );
        assert_eq!(fs::read(&path).unwrap(), b"there");
    }

    #[test]
    fn names_with_separators_or_nul_are_refused() {
        assert!(name_allowed(OsStr::new("report.csv")));
        assert!(name_allowed(OsStr::new("with space and %")));
        for bad in ["", "a/b", "a\0b"] {
            assert!(!name_allowed(OsStr::new(bad)), "{bad:?}");
        }
        assert_eq!(
            os_from_bytes("naïve.txt".as_bytes().to_vec()).unwrap(),
            OsStr::new("naïve.txt")
        );
    }

    #[test]
    fn a_removed_symlink_leaves_its_target_alone() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.txt");
        fs::write(&target, b"kept").unwrap();
        let link = dir.path().join("link");
        let made = symlink(target.as_os_str(), &link, false);
        if made.is_err() || fs::symlink_metadata(&link).is_err() {
            // Windows without Developer Mode, or Wine (which makes no links): nothing to check
            // but that the restore would know before it starts.
            assert!(check_link_creation(dir.path()).is_err(), "{made:?}");
            return;
        }
        check_link_creation(dir.path()).unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(open_read(&link).is_err(), "never opened through a link");
        remove_non_dir(&link).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"kept");
    }

    #[test]
    fn nothing_is_in_use_in_a_fresh_folder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("free.txt");
        fs::write(&path, b"free").unwrap();
        assert!(!probe_in_use(&path));
        assert!(!in_use(&std::io::Error::other("unrelated")));
        assert_eq!(
            link_count(&path, &fs::symlink_metadata(&path).unwrap()).unwrap(),
            1
        );
        fs::hard_link(&path, dir.path().join("second")).unwrap();
        assert_eq!(
            link_count(&path, &fs::symlink_metadata(&path).unwrap()).unwrap(),
            2
        );
    }
}
