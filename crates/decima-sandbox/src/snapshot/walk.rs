//! The walk of a workspace: directories, regular files and symlinks, never following a link.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::platform::{self, Stamp};
use super::{EXCLUDED_DIR, Skipped, io_err, manifest};
use crate::error::Result;

/// What the walk found at one path.
pub(super) enum Walked {
    /// A directory and its recorded mode.
    Dir { rel: PathBuf, mode: u32 },
    /// A regular file: its recorded mode and its identity (size and mtime included).
    File {
        rel: PathBuf,
        mode: u32,
        stamp: Stamp,
    },
    /// A symlink (on Windows also a junction) and its encoded target.
    Symlink { rel: PathBuf, target: String },
}

/// Lists `root/rel` recursively, children sorted by name, never following symlinks.
pub(super) fn walk(
    root: &Path,
    rel: &mut PathBuf,
    out: &mut Vec<Walked>,
    skipped: &mut Vec<Skipped>,
) -> Result<()> {
    let dir = root.join(&*rel);
    let mut items: Vec<fs::DirEntry> = Vec::new();
    for item in fs::read_dir(&dir).map_err(io_err("list", &dir))? {
        items.push(item.map_err(io_err("list", &dir))?);
    }
    // Byte order of the names: raw bytes on Unix, WTF-8 (code point order) on Windows.
    items.sort_by(|a, b| {
        a.file_name()
            .as_encoded_bytes()
            .cmp(b.file_name().as_encoded_bytes())
    });
    for item in items {
        let name = item.file_name();
        rel.push(&name);
        let path = manifest::encode_path(rel);
        if rel.parent() == Some(Path::new("")) && name == EXCLUDED_DIR {
            skipped.push(Skipped {
                path,
                kind: "excluded".to_owned(),
                reason: "Decima's tool-output spill folder is not part of snapshots".to_owned(),
            });
            rel.pop();
            continue;
        }
        // DirEntry::metadata does not follow symlinks.
        let meta = match item.metadata() {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                skipped.push(vanished(path));
                rel.pop();
                continue;
            }
            Err(e) => return Err(io_err("inspect", &root.join(&*rel))(e)),
        };
        let ft = meta.file_type();
        if ft.is_dir() {
            out.push(Walked::Dir {
                rel: rel.clone(),
                mode: platform::mode_of(&meta),
            });
            walk(root, rel, out, skipped)?;
        } else if ft.is_file() {
            match Stamp::of(&root.join(&*rel), &meta) {
                Ok(stamp) => out.push(Walked::File {
                    rel: rel.clone(),
                    mode: platform::mode_of(&meta),
                    stamp,
                }),
                Err(e) if e.kind() == io::ErrorKind::NotFound => skipped.push(vanished(path)),
                Err(e) => skipped.push(Skipped {
                    path,
                    kind: "unreadable".to_owned(),
                    reason: format!("cannot inspect: {e}"),
                }),
            }
        } else if ft.is_symlink() {
            let full = root.join(&*rel);
            match fs::read_link(&full) {
                Ok(target) => out.push(Walked::Symlink {
                    rel: rel.clone(),
                    target: manifest::encode_os(target.as_os_str()),
                }),
                Err(e) => skipped.push(Skipped {
                    path,
                    kind: "unreadable".to_owned(),
                    reason: format!("cannot read symlink: {e}"),
                }),
            }
        } else {
            let (kind, what) = platform::special_kind(&ft);
            skipped.push(Skipped {
                path,
                kind: kind.to_owned(),
                reason: format!("{what} has no content to snapshot"),
            });
        }
        rel.pop();
    }
    Ok(())
}

fn vanished(path: String) -> Skipped {
    Skipped {
        path,
        kind: "vanished".to_owned(),
        reason: "removed while the snapshot was taken".to_owned(),
    }
}
