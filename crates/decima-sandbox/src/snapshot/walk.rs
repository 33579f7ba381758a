//! The walk of a workspace: directories, regular files and symlinks, never following a link.

use std::fs::{self, Metadata};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::{EXCLUDED_DIR, Skipped, io_err, manifest};
use crate::error::Result;

/// What the walk found at one path.
pub(super) enum Walked {
    Dir { rel: PathBuf, mode: u32 },
    File { rel: PathBuf, meta: Metadata },
    Symlink { rel: PathBuf, target: String },
}

/// Lists `root/rel` recursively, children sorted by name, never following symlinks.
pub(super) fn walk(
    root: &Path,
    rel: &mut PathBuf,
    out: &mut Vec<Walked>,
    skipped: &mut Vec<Skipped>,
) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::FileTypeExt;
    let dir = root.join(&*rel);
    let mut items: Vec<fs::DirEntry> = Vec::new();
    for item in fs::read_dir(&dir).map_err(io_err("list", &dir))? {
        items.push(item.map_err(io_err("list", &dir))?);
    }
    items.sort_by(|a, b| a.file_name().as_bytes().cmp(b.file_name().as_bytes()));
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
                skipped.push(Skipped {
                    path,
                    kind: "vanished".to_owned(),
                    reason: "removed while the snapshot was taken".to_owned(),
                });
                rel.pop();
                continue;
            }
            Err(e) => return Err(io_err("inspect", &root.join(&*rel))(e)),
        };
        let ft = meta.file_type();
        if ft.is_dir() {
            out.push(Walked::Dir {
                rel: rel.clone(),
                mode: meta.mode() & 0o7777,
            });
            walk(root, rel, out, skipped)?;
        } else if ft.is_file() {
            out.push(Walked::File {
                rel: rel.clone(),
                meta,
            });
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
            let (kind, what) = if ft.is_fifo() {
                ("fifo", "a named pipe")
            } else if ft.is_socket() {
                ("socket", "a socket")
            } else if ft.is_block_device() {
                ("block_device", "a block device")
            } else if ft.is_char_device() {
                ("char_device", "a character device")
            } else {
                ("unknown", "an unknown file type")
            };
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
