//! What a snapshot records: the manifest, and how paths are spelled in it.

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::platform;

/// The manifest format written by this version.
pub const MANIFEST_FORMAT: u32 = 1;

/// One snapshot: every entry of the workspace, parents before children, plus everything that was
/// left out and why. Serialised as JSON; the snapshot id is the SHA-256 of those bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_FORMAT`] when written.
    pub format: u32,
    /// Directories, files and symlinks, in walk order (a directory precedes its contents).
    pub entries: Vec<Entry>,
    /// What was not recorded, with the reason (special files, the excluded `.decima/`, files
    /// that vanished or could not be read while the snapshot was taken).
    pub skipped: Vec<Skipped>,
}

/// One recorded workspace entry. Paths are relative to the workspace, `/`-separated, with `%`
/// and bytes that are not UTF-8 written as `%XX`. The bytes are a Unix name's own; a Windows name
/// (UTF-16) is spelled as WTF-8 (its UTF-8, where an unpaired surrogate, which is not Unicode,
/// takes the three bytes `ED A0..BF 80..BF`, hence `%ED%XX%XX`), so every name round-trips.
///
/// Modes are Unix permission bits. Windows has none: a file is recorded as `0o444` when its
/// read-only attribute is set and `0o644` otherwise, a directory as `0o755`; a restore sets or
/// clears the read-only attribute from the write bits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Entry {
    /// A directory (empty ones included).
    Dir {
        /// Workspace-relative path.
        path: String,
        /// Permission bits (`mode & 0o7777`; `0o755` on Windows).
        mode: u32,
    },
    /// A regular file, stored as the object named by its hash.
    File {
        /// Workspace-relative path.
        path: String,
        /// Lowercase hex SHA-256 of the content.
        hash: String,
        /// Length in bytes.
        size: u64,
        /// Permission bits (`mode & 0o7777`), executable bits included (on Windows `0o444`
        /// read-only, `0o644` otherwise).
        mode: u32,
        /// Modification time, nanoseconds since the Unix epoch.
        mtime_ns: i64,
    },
    /// A symbolic link, recorded as its target text and never followed. On Windows a junction
    /// is recorded as one too (and restored as a directory symbolic link).
    Symlink {
        /// Workspace-relative path.
        path: String,
        /// The link's target, encoded like paths.
        target: String,
    },
}

impl Entry {
    /// The entry's workspace-relative (encoded) path.
    #[must_use]
    pub fn path(&self) -> &str {
        match self {
            Self::Dir { path, .. } | Self::File { path, .. } | Self::Symlink { path, .. } => path,
        }
    }
}

/// How a workspace differs from an earlier snapshot of it: what a failure report tells the
/// analyst before they choose whether to roll back. Paths are workspace-relative, as spelled in
/// manifests, in manifest order; directories count only when created or removed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Changes {
    /// Files, links and directories that are new.
    pub added: Vec<String>,
    /// Files whose content, mode or kind changed, and links with another target.
    pub changed: Vec<String>,
    /// What the earlier snapshot held and is gone now.
    pub removed: Vec<String>,
}

impl Changes {
    /// Whether nothing changed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.changed.is_empty() && self.removed.is_empty()
    }
}

impl Manifest {
    /// What changed from `earlier` to `self`. Modification times alone are not a change: a
    /// file rewritten with the same bytes and mode is the same file.
    #[must_use]
    pub fn changes_since(&self, earlier: &Manifest) -> Changes {
        let before: std::collections::HashMap<&str, &Entry> =
            earlier.entries.iter().map(|e| (e.path(), e)).collect();
        let now: HashSet<&str> = self.entries.iter().map(Entry::path).collect();
        let mut changes = Changes::default();
        for entry in &self.entries {
            match before.get(entry.path()) {
                None => changes.added.push(entry.path().to_owned()),
                Some(old) if !same_entry(old, entry) => {
                    changes.changed.push(entry.path().to_owned());
                }
                Some(_) => {}
            }
        }
        changes.removed = earlier
            .entries
            .iter()
            .map(Entry::path)
            .filter(|p| !now.contains(p))
            .map(str::to_owned)
            .collect();
        changes
    }
}

fn same_entry(a: &Entry, b: &Entry) -> bool {
    match (a, b) {
        (Entry::Dir { .. }, Entry::Dir { .. }) => true,
        (
            Entry::File {
                hash: h1, mode: m1, ..
            },
            Entry::File {
                hash: h2, mode: m2, ..
            },
        ) => h1 == h2 && m1 == m2,
        (Entry::Symlink { target: t1, .. }, Entry::Symlink { target: t2, .. }) => t1 == t2,
        _ => false,
    }
}

/// Something in the workspace the snapshot does not hold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Workspace-relative (encoded) path.
    pub path: String,
    /// What it is: `fifo`, `socket`, `block_device`, `char_device`, `excluded`, `unreadable`,
    /// `vanished`.
    pub kind: String,
    /// One line for a person.
    pub reason: String,
}

/// Spells a relative path for a manifest: components joined by `/`, each with `%` and non-UTF-8
/// bytes escaped as `%XX`.
pub(crate) fn encode_path(rel: &Path) -> String {
    let mut out = String::new();
    for (i, component) in rel.components().enumerate() {
        if i > 0 {
            out.push('/');
        }
        encode_bytes_into(component.as_os_str(), &mut out);
    }
    out
}

/// Spells arbitrary bytes (a symlink target) the same way as path components.
pub(crate) fn encode_os(s: &OsStr) -> String {
    let mut out = String::new();
    encode_bytes_into(s, &mut out);
    out
}

fn encode_bytes_into(s: &OsStr, out: &mut String) {
    for chunk in s.as_encoded_bytes().utf8_chunks() {
        for c in chunk.valid().chars() {
            if c == '%' {
                out.push_str("%25");
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

/// Reverses [`encode_os`]. `None` when an escape is malformed.
pub(crate) fn decode_os(s: &str) -> Option<OsString> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    platform::os_from_bytes(out)
}

/// Reverses [`encode_path`], refusing anything that could leave the workspace: absolute paths,
/// `.`/`..`, empty components, or a component that decodes to something with a `/` or NUL (on
/// Windows also `\` or `:`).
pub(crate) fn decode_path(s: &str) -> Option<PathBuf> {
    if s.is_empty() {
        return None;
    }
    let mut out = PathBuf::new();
    for part in s.split('/') {
        let name = decode_os(part)?;
        if !platform::name_allowed(&name) {
            return None;
        }
        let mut comps = Path::new(&name).components();
        match (comps.next(), comps.next()) {
            (Some(Component::Normal(_)), None) => out.push(&name),
            _ => return None,
        }
    }
    Some(out)
}

/// Checks that a manifest is safe to restore: known format, decodable and unique paths, every
/// entry's parent a directory recorded before it, hashes well-formed. Returns the decoded paths
/// in entry order.
pub(crate) fn validate(manifest: &Manifest) -> Result<Vec<PathBuf>, String> {
    if manifest.format != MANIFEST_FORMAT {
        return Err(format!("unknown manifest format {}", manifest.format));
    }
    let mut dirs: HashSet<&str> = HashSet::new();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut paths = Vec::with_capacity(manifest.entries.len());
    for entry in &manifest.entries {
        let path = entry.path();
        let decoded = decode_path(path).ok_or_else(|| format!("unsafe path {path:?}"))?;
        // Compared decoded: `a%41` and `aA` are one name.
        if !seen.insert(decoded.clone()) {
            return Err(format!("duplicate path {path:?}"));
        }
        if let Some((parent, _)) = path.rsplit_once('/')
            && !dirs.contains(parent)
        {
            return Err(format!("{path:?} comes before its directory"));
        }
        match entry {
            Entry::Dir { .. } => {
                dirs.insert(path);
            }
            Entry::File { hash, .. } => {
                if !super::is_hex_sha256(hash) {
                    return Err(format!("bad hash {hash:?} for {path:?}"));
                }
            }
            Entry::Symlink { target, .. } => {
                if decode_os(target).is_none_or(|t| t.is_empty()) {
                    return Err(format!("bad symlink target for {path:?}"));
                }
            }
        }
        paths.push(decoded);
    }
    for skipped in &manifest.skipped {
        decode_path(&skipped.path).ok_or_else(|| format!("unsafe path {:?}", skipped.path))?;
    }
    Ok(paths)
}

/// The first two entries whose paths differ only in case (`a.csv` and `A.csv`, or `Data` and
/// `data`): a folder that folds case, as Windows folders do, can hold only one of them, so a
/// restore refuses the snapshot rather than let one overwrite the other. Case is folded one
/// character at a time to its simple uppercase, as NTFS compares names.
pub(crate) fn case_clash(manifest: &Manifest) -> Option<(&str, &str)> {
    let mut seen: HashMap<String, &str> = HashMap::with_capacity(manifest.entries.len());
    for entry in &manifest.entries {
        let path = entry.path();
        if let Some(first) = seen.insert(fold_case(path), path) {
            return Some((first, path));
        }
    }
    None
}

fn fold_case(s: &str) -> String {
    s.chars()
        .map(|c| {
            let mut upper = c.to_uppercase();
            match (upper.next(), upper.next()) {
                (Some(u), None) => u,
                _ => c,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn paths_round_trip_including_odd_bytes() {
        use std::os::unix::ffi::OsStringExt;
        let raw = OsString::from_vec(b"a%b/\xff\x00x".to_vec());
        let rel = PathBuf::from(OsString::from_vec(b"dir/na%me\xfe".to_vec()));
        let enc = encode_path(&rel);
        assert_eq!(enc, "dir/na%25me%FE");
        assert_eq!(decode_path(&enc).unwrap(), rel);
        assert_eq!(decode_os(&encode_os(&raw)).unwrap(), raw);
    }

    fn file(path: &str, hash: char, mode: u32, mtime_ns: i64) -> Entry {
        Entry::File {
            path: path.into(),
            hash: hash.to_string().repeat(64),
            size: 1,
            mode,
            mtime_ns,
        }
    }

    #[test]
    fn changes_name_added_changed_and_removed_entries_but_not_a_touched_file() {
        let dir = |path: &str| Entry::Dir {
            path: path.into(),
            mode: 0o755,
        };
        let earlier = Manifest {
            format: MANIFEST_FORMAT,
            entries: vec![
                dir("out"),
                file("out/a.csv", 'a', 0o644, 1),
                file("out/b.csv", 'b', 0o644, 1),
                file("touched.txt", 'c', 0o644, 1),
                file("script.sh", 'd', 0o644, 1),
                Entry::Symlink {
                    path: "latest".into(),
                    target: "out/a.csv".into(),
                },
                dir("old"),
                file("old/x", 'e', 0o644, 1),
            ],
            skipped: Vec::new(),
        };
        let now = Manifest {
            format: MANIFEST_FORMAT,
            entries: vec![
                dir("out"),
                file("out/a.csv", 'f', 0o644, 2),
                file("out/b.csv", 'b', 0o644, 1),
                file("touched.txt", 'c', 0o644, 99),
                file("script.sh", 'd', 0o755, 1),
                Entry::Symlink {
                    path: "latest".into(),
                    target: "out/b.csv".into(),
                },
                file("out/c.csv", 'g', 0o644, 2),
            ],
            skipped: Vec::new(),
        };
        let changes = now.changes_since(&earlier);
        assert_eq!(changes.added, ["out/c.csv"]);
        assert_eq!(changes.changed, ["out/a.csv", "script.sh", "latest"]);
        assert_eq!(changes.removed, ["old", "old/x"]);
        assert!(!changes.is_empty());
        assert!(now.changes_since(&now).is_empty());
    }

    #[cfg(windows)]
    #[test]
    fn paths_round_trip_including_unpaired_surrogates() {
        use std::os::windows::ffi::OsStringExt;
        let name = OsString::from_wide(&[0x6E, 0x25, 0xD800, 0x78]); // n%, a lone surrogate, x
        let rel = PathBuf::from("dir").join(&name);
        let enc = encode_path(&rel);
        assert_eq!(enc, "dir/n%25%ED%A0%80x");
        assert_eq!(decode_path(&enc).unwrap(), rel);
        assert_eq!(decode_os(&encode_os(&name)).unwrap(), name);
    }

    #[test]
    fn names_differing_only_in_case_are_found() {
        let manifest = |paths: &[&str]| Manifest {
            format: MANIFEST_FORMAT,
            entries: paths
                .iter()
                .map(|p| Entry::Symlink {
                    path: (*p).into(),
                    target: "t".into(),
                })
                .collect(),
            skipped: Vec::new(),
        };
        assert_eq!(
            case_clash(&manifest(&["a.csv", "b.csv", "A.csv"])),
            Some(("a.csv", "A.csv"))
        );
        assert_eq!(
            case_clash(&manifest(&["Data", "data"])),
            Some(("Data", "data"))
        );
        assert_eq!(
            case_clash(&manifest(&["Straße", "STRASSE", "ÉTÉ", "été/x"])),
            None
        );
        assert_eq!(case_clash(&manifest(&["été", "ÉTÉ"])), Some(("été", "ÉTÉ")));
    }

    #[test]
    fn a_name_spelled_two_ways_is_a_duplicate() {
        let entry = |path: &str| Entry::Symlink {
            path: path.into(),
            target: "t".into(),
        };
        let manifest = Manifest {
            format: MANIFEST_FORMAT,
            entries: vec![entry("aA"), entry("a%41")],
            skipped: Vec::new(),
        };
        assert!(validate(&manifest).unwrap_err().contains("duplicate"));
    }

    #[test]
    fn unsafe_paths_are_refused() {
        for bad in [
            "", "/etc", "a//b", "..", "a/../b", ".", "a/%2Fb", "a/%00", "%zz",
        ] {
            assert!(decode_path(bad).is_none(), "{bad}");
        }
    }
}
