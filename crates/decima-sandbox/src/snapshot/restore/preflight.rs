//! What a restore checks before it changes anything, on a platform where something can stop it
//! half way ([`platform::PREFLIGHT`], Windows): files and folders it must replace or remove that
//! another program holds open (Excel holds its workbook), and symbolic links this account may
//! not create. Either fails the restore with nothing changed and what to do. A program that
//! opens a file after this check still stops the restore part way; its error then names the
//! file and what was already restored.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::{NAMED, Restorer, Want};
use crate::error::{Result, SandboxError};
use crate::snapshot::manifest::{self, Entry};
use crate::snapshot::platform::{self, Stamp};

/// A file the manifest records: its encoded path, hash and size.
type Recorded<'m> = (&'m str, &'m str, u64);

impl Restorer<'_> {
    /// Fails, naming what is in the way, before anything in the workspace changes.
    pub(super) fn preflight(&mut self) -> Result<()> {
        let manifest = self.manifest;
        let files: HashMap<&Path, Recorded<'_>> = manifest
            .entries
            .iter()
            .zip(self.paths)
            .filter_map(|(entry, rel)| match entry {
                Entry::File {
                    path, hash, size, ..
                } => Some((rel.as_path(), (path.as_str(), hash.as_str(), *size))),
                _ => None,
            })
            .collect();
        let mut held = Vec::new();
        self.find_held(&mut PathBuf::new(), &files, &mut held);
        held.sort();
        if let Some((first, others)) = held.split_first() {
            return Err(held_error(first, others));
        }
        self.check_links()
    }

    /// Collects (as workspace-relative paths) what under `rel` the restore would replace or
    /// remove and another program holds. Whatever cannot be listed or inspected here is left
    /// to the restore itself, which reports it.
    fn find_held(
        &mut self,
        rel: &mut PathBuf,
        files: &HashMap<&Path, Recorded<'_>>,
        held: &mut Vec<PathBuf>,
    ) {
        let Ok(items) = fs::read_dir(self.root.join(&*rel)) else {
            return;
        };
        for item in items.flatten() {
            let name = item.file_name();
            rel.push(&name);
            let top_level = rel.parent() == Some(Path::new(""));
            let left_alone = (top_level && name == crate::snapshot::EXCLUDED_DIR)
                || self.skipped.contains(rel.as_path());
            if let (Ok(ft), false) = (item.file_type(), left_alone) {
                let path = self.root.join(&*rel);
                match self.wanted.get(rel.as_path()).copied() {
                    Some(Want::Dir) if ft.is_dir() => self.find_held(rel, files, held),
                    _ if ft.is_dir() => held_in_tree(self.root, rel, held),
                    _ if !ft.is_file() || !platform::probe_in_use(&path) => {}
                    // Held, and in the way unless it already holds what the restore wants.
                    Some(Want::File)
                        if files
                            .get(rel.as_path())
                            .is_some_and(|&recorded| self.holds(&path, recorded)) => {}
                    _ => held.push(rel.clone()),
                }
            }
            rel.pop();
        }
    }

    /// Whether the file at `path` already holds the recorded content, so that the restore at
    /// most sets its attributes and time (which a program holding it allows).
    fn holds(&mut self, path: &Path, (key, hash, size): Recorded<'_>) -> bool {
        fs::symlink_metadata(path)
            .ok()
            .filter(|meta| meta.is_file() && meta.len() == size)
            .and_then(|meta| Stamp::of(path, &meta).ok())
            .is_some_and(|stamp| self.same_content(path, key, hash, &stamp).unwrap_or(false))
    }

    /// Checks, when the restore must create a link, that this account may.
    fn check_links(&self) -> Result<()> {
        let missing =
            self.manifest
                .entries
                .iter()
                .zip(self.paths)
                .find(|(entry, rel)| match entry {
                    Entry::Symlink { target, .. } => {
                        let path = self.root.join(rel);
                        let present = fs::symlink_metadata(&path)
                            .is_ok_and(|m| m.file_type().is_symlink())
                            && fs::read_link(&path).is_ok_and(|t| {
                                Some(t.into_os_string()) == manifest::decode_os(target)
                            });
                        !present
                    }
                    _ => false,
                });
        let Some((entry, _)) = missing else {
            return Ok(());
        };
        let probes = self.store.root().join("tmp");
        platform::check_link_creation(&probes).map_err(|e| SandboxError::Io {
            action: "restore the link",
            path: format!("{:?}", entry.path()),
            source: io::Error::new(e.kind(), format!("{e}; nothing was changed")),
        })
    }
}

/// Collects everything in the tree at `rel` (which the restore would remove whole) that another
/// program holds: the folder itself (a program working in it), its files and its folders.
fn held_in_tree(root: &Path, rel: &mut PathBuf, held: &mut Vec<PathBuf>) {
    let path = root.join(&*rel);
    if platform::probe_in_use(&path) {
        held.push(rel.clone());
    }
    let Ok(items) = fs::read_dir(&path) else {
        return;
    };
    for item in items.flatten() {
        rel.push(item.file_name());
        match item.file_type() {
            Ok(ft) if ft.is_dir() => held_in_tree(root, rel, held),
            Ok(ft) if ft.is_file() && platform::probe_in_use(&root.join(&*rel)) => {
                held.push(rel.clone());
            }
            _ => {}
        }
        rel.pop();
    }
}

/// The error for files other programs hold: the first named as the path, a few more in the
/// message, and what to do.
fn held_error(first: &Path, others: &[PathBuf]) -> SandboxError {
    let mut also = String::new();
    if !others.is_empty() {
        let names: Vec<String> = others
            .iter()
            .take(NAMED)
            .map(|rel| format!("{:?}", manifest::encode_path(rel)))
            .collect();
        let more = others.len().saturating_sub(NAMED);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        let verb = if others.len() == 1 { "is" } else { "are" };
        also = format!(" (so {verb} {}{more})", names.join(", "));
    }
    SandboxError::Io {
        action: "roll back",
        path: format!("{:?}", manifest::encode_path(first)),
        source: io::Error::new(
            io::ErrorKind::ResourceBusy,
            format!(
                "it is open in another program{also}; close it in the program that has it \
                 open, then roll back again (nothing was changed)"
            ),
        ),
    }
}
