//! Real paths as Decima shows and stores them. On Windows the system's canonical form is the
//! verbatim one (`\\?\C:\...`), which shells refuse as a working folder, Docker refuses in a
//! bind mount and people do not write; `dunce` gives the plain form (`C:\...`,
//! `\\server\share\...`) wherever it names the same file, and keeps the verbatim one where only
//! it does (past 260 characters, reserved names such as `NUL`). Elsewhere the system's form is
//! the only one. Since a workspace's real path may be plain while a deep file's is verbatim, a
//! path is compared with its workspace as either form.

use std::ffi::OsStr;
use std::io;
use std::path::{Component, Path, PathBuf, Prefix};

/// The real path of `path`, every symlink resolved, in the plain form where there is one.
pub(crate) fn canonical(path: &Path) -> io::Result<PathBuf> {
    dunce::canonicalize(path)
}

/// `path` relative to `root` when it is `root` or below it, whether either is written in the
/// verbatim form or the plain one; `None` when it is elsewhere.
pub(crate) fn relative_to(path: &Path, root: &Path) -> Option<PathBuf> {
    if let Ok(rest) = path.strip_prefix(root) {
        return Some(rest.to_path_buf());
    }
    let mut rest = path.components();
    for part in root.components() {
        match rest.next() {
            Some(own) if same(own, part) => {}
            _ => return None,
        }
    }
    Some(rest.as_path().to_path_buf())
}

/// A volume, whichever form names it.
#[derive(PartialEq, Eq)]
enum Volume<'a> {
    /// A drive letter, upper case.
    Disk(u8),
    /// A server's share.
    Share(&'a OsStr, &'a OsStr),
    /// Any other prefix (a device, a verbatim path that is neither), compared as written.
    Other(Prefix<'a>),
}

impl<'a> From<Prefix<'a>> for Volume<'a> {
    fn from(prefix: Prefix<'a>) -> Self {
        match prefix {
            Prefix::Disk(letter) | Prefix::VerbatimDisk(letter) => {
                Self::Disk(letter.to_ascii_uppercase())
            }
            Prefix::UNC(server, share) | Prefix::VerbatimUNC(server, share) => {
                Self::Share(server, share)
            }
            other => Self::Other(other),
        }
    }
}

/// Whether two parts of real paths name the same thing: a volume in either form, or the same
/// name.
fn same(a: Component<'_>, b: Component<'_>) -> bool {
    match (a, b) {
        (Component::Prefix(a), Component::Prefix(b)) => {
            Volume::from(a.kind()) == Volume::from(b.kind())
        }
        (a, b) => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_below_its_root_is_found_relative_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = canonical(dir.path()).unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        let sub = canonical(&root.join("sub")).unwrap();
        assert_eq!(relative_to(&sub, &root), Some(PathBuf::from("sub")));
        assert_eq!(relative_to(&root, &root), Some(PathBuf::new()));
        assert_eq!(relative_to(&root, &sub), None);
        assert_eq!(
            relative_to(Path::new("/elsewhere/sub"), Path::new("/work")),
            None
        );
        assert_eq!(
            relative_to(Path::new("/workshop/a"), Path::new("/work")),
            None,
            "a longer name is not below the root"
        );
    }

    #[cfg(windows)]
    #[test]
    fn windows_paths_are_plain_and_either_form_is_below_the_other() {
        let dir = tempfile::tempdir().unwrap();
        let root = canonical(dir.path()).unwrap();
        let shown = root.display().to_string();
        assert!(!shown.starts_with(r"\\?\"), "{shown}");
        assert!(root.is_absolute(), "{shown}");
        let verbatim = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(
            relative_to(&verbatim.join("a").join("b"), &root),
            Some(PathBuf::from(r"a\b"))
        );
        assert_eq!(
            relative_to(Path::new(r"C:\work\a"), Path::new(r"\\?\C:\work")),
            Some(PathBuf::from("a"))
        );
        assert_eq!(
            relative_to(
                Path::new(r"\\?\UNC\server\share\work\a"),
                Path::new(r"\\server\share\work")
            ),
            Some(PathBuf::from("a"))
        );
        assert_eq!(
            relative_to(Path::new(r"\\?\D:\work\a"), Path::new(r"C:\work")),
            None
        );
        assert_eq!(
            relative_to(
                Path::new(r"\\?\UNC\server\other\work"),
                Path::new(r"\\server\share")
            ),
            None
        );
    }
}
