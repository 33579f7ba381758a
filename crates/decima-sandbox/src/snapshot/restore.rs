//! Putting a workspace back the way a snapshot recorded it.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::manifest::{self, Entry, Manifest};
use super::{
    CachedStat, RestoreStats, SnapshotId, SnapshotStore, StatCache, hash_reader, io_err, mode_of,
    mtime_ns, now_ns, system_time,
};
use crate::error::{Result, SandboxError};

/// What the manifest wants at a path, for the pruning pass.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    Dir,
    File,
    Symlink,
}

pub(super) struct Restorer<'a> {
    store: &'a SnapshotStore,
    id: &'a SnapshotId,
    root: &'a Path,
    manifest: &'a Manifest,
    paths: &'a [PathBuf],
    old_cache: &'a StatCache,
    wanted: HashMap<&'a Path, Want>,
    skipped: HashSet<PathBuf>,
    start_ns: i64,
    stats: RestoreStats,
    cache: StatCache,
}

impl<'a> Restorer<'a> {
    pub(super) fn new(
        store: &'a SnapshotStore,
        id: &'a SnapshotId,
        root: &'a Path,
        manifest: &'a Manifest,
        paths: &'a [PathBuf],
        old_cache: &'a StatCache,
    ) -> Self {
        let wanted = manifest
            .entries
            .iter()
            .zip(paths)
            .map(|(entry, path)| {
                let want = match entry {
                    Entry::Dir { .. } => Want::Dir,
                    Entry::File { .. } => Want::File,
                    Entry::Symlink { .. } => Want::Symlink,
                };
                (path.as_path(), want)
            })
            .collect();
        let skipped = manifest
            .skipped
            .iter()
            .filter_map(|s| manifest::decode_path(&s.path))
            .collect();
        Self {
            store,
            id,
            root,
            manifest,
            paths,
            old_cache,
            wanted,
            skipped,
            start_ns: now_ns(),
            stats: RestoreStats::default(),
            cache: StatCache::new(),
        }
    }

    pub(super) fn run(mut self) -> Result<(RestoreStats, StatCache)> {
        let root_meta = fs::symlink_metadata(self.root).map_err(io_err("inspect", self.root))?;
        if !root_meta.is_dir() {
            return Err(SandboxError::Io {
                action: "restore into",
                path: self.root.display().to_string(),
                source: io::Error::other("not a directory"),
            });
        }
        self.prune(&mut PathBuf::new())?;
        let manifest = self.manifest;
        let paths = self.paths;
        for (entry, rel) in manifest.entries.iter().zip(paths) {
            let path = self.root.join(rel);
            match entry {
                Entry::Dir { .. } => self.ensure_dir(&path)?,
                Entry::File {
                    path: key,
                    hash,
                    size,
                    mode,
                    mtime_ns,
                } => {
                    self.ensure_file(&path, key, hash, *size, *mode, *mtime_ns)?;
                }
                Entry::Symlink { target, .. } => self.ensure_symlink(&path, target)?,
            }
        }
        // Directory modes last, deepest first, so read-only directories could be filled.
        for (entry, rel) in manifest.entries.iter().zip(paths).rev() {
            if let Entry::Dir { mode, .. } = entry {
                let path = self.root.join(rel);
                let meta = fs::symlink_metadata(&path).map_err(io_err("inspect", &path))?;
                if meta.is_dir() && mode_of(&meta) != *mode {
                    fs::set_permissions(&path, fs::Permissions::from_mode(*mode))
                        .map_err(io_err("chmod", &path))?;
                    self.stats.metadata_fixed += 1;
                }
            }
        }
        Ok((self.stats, self.cache))
    }

    /// Removes what the snapshot does not have (or has as another kind), depth first from
    /// `rel`. Directories the snapshot has are descended into, never through a symlink.
    fn prune(&mut self, rel: &mut PathBuf) -> Result<()> {
        let dir = self.root.join(&*rel);
        let mut items = Vec::new();
        for item in fs::read_dir(&dir).map_err(io_err("list", &dir))? {
            items.push(item.map_err(io_err("list", &dir))?);
        }
        for item in items {
            let name = item.file_name();
            rel.push(&name);
            let top_level = rel.parent() == Some(Path::new(""));
            if (top_level && name == super::EXCLUDED_DIR) || self.skipped.contains(rel.as_path()) {
                rel.pop();
                continue;
            }
            let path = self.root.join(&*rel);
            let ft = item.file_type().map_err(io_err("inspect", &path))?;
            match (self.wanted.get(rel.as_path()).copied(), ft.is_dir()) {
                (Some(Want::Dir), true) => {
                    make_traversable(&path)?;
                    self.prune(rel)?;
                }
                (Some(Want::Dir), false) | (None, false) => {
                    fs::remove_file(&path).map_err(io_err("remove", &path))?;
                    self.stats.removed += 1;
                }
                (Some(Want::File | Want::Symlink), true) | (None, true) => {
                    remove_tree(&path)?;
                    self.stats.removed += 1;
                }
                // A file or symlink where one is wanted: compared and replaced in the next pass.
                (Some(Want::File | Want::Symlink), false) => {}
            }
            rel.pop();
        }
        Ok(())
    }

    fn ensure_dir(&mut self, path: &Path) -> Result<()> {
        match fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => return Ok(()),
            Ok(meta) => self.remove_any(path, &meta)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err("inspect", path)(e)),
        }
        fs::create_dir(path).map_err(io_err("create", path))?;
        // Owner access until the final pass sets the recorded mode.
        fs::set_permissions(path, fs::Permissions::from_mode(0o700))
            .map_err(io_err("chmod", path))?;
        self.stats.dirs_created += 1;
        Ok(())
    }

    fn ensure_file(
        &mut self,
        path: &Path,
        key: &str,
        hash: &str,
        size: u64,
        mode: u32,
        mtime: i64,
    ) -> Result<()> {
        match fs::symlink_metadata(path) {
            Ok(meta) if meta.is_file() => {
                if meta.len() == size && self.same_content(path, key, hash, &meta)? {
                    self.stats.files_unchanged += 1;
                    let mut meta = meta;
                    if mode_of(&meta) != mode || mtime_ns(&meta) != mtime {
                        // A regular file (checked above), opened without following symlinks.
                        let file = OpenOptions::new()
                            .read(true)
                            .custom_flags(O_NOFOLLOW)
                            .open(path)
                            .map_err(io_err("open", path))?;
                        file.set_permissions(fs::Permissions::from_mode(mode))
                            .map_err(io_err("chmod", path))?;
                        file.set_modified(system_time(mtime))
                            .map_err(io_err("touch", path))?;
                        meta = file.metadata().map_err(io_err("inspect", path))?;
                        self.stats.metadata_fixed += 1;
                    }
                    if let Some(c) = CachedStat::trusted(&meta, hash.to_owned(), self.start_ns) {
                        self.cache.insert(key.to_owned(), c);
                    }
                    return Ok(());
                }
            }
            // Anything else is replaced by the rename below (a symlink is replaced, not followed).
            Ok(meta) if meta.is_dir() => self.remove_any(path, &meta)?,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err("inspect", path)(e)),
        }
        self.write_file(path, hash, mode, mtime)
    }

    /// Whether the file at `path` already holds `hash`: by the stat cache when it knows the
    /// file, else by hashing it.
    fn same_content(
        &mut self,
        path: &Path,
        key: &str,
        hash: &str,
        meta: &fs::Metadata,
    ) -> Result<bool> {
        if let Some(c) = self.old_cache.get(key).filter(|c| c.matches(meta)) {
            return Ok(c.hash == hash);
        }
        self.stats.hashed += 1;
        let mut file = OpenOptions::new()
            .read(true)
            .custom_flags(O_NOFOLLOW)
            .open(path)
            .map_err(io_err("read", path))?;
        let (actual, _) = hash_reader(&mut file, None).map_err(io_err("read", path))?;
        Ok(actual == hash)
    }

    /// Writes the object for `hash` next to `path` and renames it into place.
    fn write_file(&mut self, path: &Path, hash: &str, mode: u32, mtime: i64) -> Result<()> {
        let parent = path.parent().unwrap_or(self.root);
        let tmp = parent.join(format!(
            ".decima-restore-{}-{}",
            std::process::id(),
            self.stats.files_written
        ));
        let result = (|| {
            let object = self.store.object_path(hash);
            let mut src = File::open(&object).map_err(io_err("read", &object))?;
            let mut out = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&tmp)
                .map_err(io_err("create", &tmp))?;
            let (actual, bytes) =
                hash_reader(&mut src, Some(&mut out)).map_err(io_err("write", &tmp))?;
            if actual != hash {
                return Err(SandboxError::CorruptSnapshot {
                    id: self.id.to_string(),
                    reason: format!("object {hash} holds content hashing to {actual}"),
                });
            }
            out.set_permissions(fs::Permissions::from_mode(mode))
                .map_err(io_err("chmod", &tmp))?;
            out.set_modified(system_time(mtime))
                .map_err(io_err("touch", &tmp))?;
            drop(out);
            fs::rename(&tmp, path).map_err(io_err("write", path))?;
            Ok(bytes)
        })();
        match result {
            Ok(bytes) => {
                self.stats.files_written += 1;
                self.stats.bytes_written += bytes;
                Ok(())
            }
            Err(e) => {
                let _ = fs::remove_file(&tmp);
                Err(e)
            }
        }
    }

    fn ensure_symlink(&mut self, path: &Path, target: &str) -> Result<()> {
        let target = manifest::decode_os(target).unwrap_or_default();
        match fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                if fs::read_link(path).is_ok_and(|t| t.as_os_str() == target) {
                    return Ok(());
                }
                self.remove_any(path, &meta)?;
            }
            Ok(meta) => self.remove_any(path, &meta)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err("inspect", path)(e)),
        }
        std::os::unix::fs::symlink(&target, path).map_err(io_err("create symlink", path))?;
        self.stats.symlinks_written += 1;
        Ok(())
    }

    fn remove_any(&mut self, path: &Path, meta: &fs::Metadata) -> Result<()> {
        if meta.is_dir() {
            remove_tree(path)?;
        } else {
            fs::remove_file(path).map_err(io_err("remove", path))?;
        }
        self.stats.removed += 1;
        Ok(())
    }
}

const O_NOFOLLOW: i32 = libc::O_NOFOLLOW;

/// Gives the owner read, write and search permission on a real directory so it can be pruned
/// and filled; the recorded mode is put back at the end.
fn make_traversable(path: &Path) -> Result<()> {
    let meta = fs::symlink_metadata(path).map_err(io_err("inspect", path))?;
    let mode = mode_of(&meta);
    if meta.is_dir() && mode & 0o700 != 0o700 {
        fs::set_permissions(path, fs::Permissions::from_mode(mode | 0o700))
            .map_err(io_err("chmod", path))?;
    }
    Ok(())
}

/// Removes a directory tree without following symlinks, first opening up directories the
/// owner may not write to.
fn remove_tree(path: &Path) -> Result<()> {
    match fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            open_up(path)?;
            fs::remove_dir_all(path).map_err(io_err("remove", path))
        }
        Err(e) => Err(io_err("remove", path)(e)),
    }
}

fn open_up(dir: &Path) -> Result<()> {
    make_traversable(dir)?;
    for item in fs::read_dir(dir).map_err(io_err("list", dir))? {
        let item = item.map_err(io_err("list", dir))?;
        if item.file_type().is_ok_and(|t| t.is_dir()) {
            open_up(&item.path())?;
        }
    }
    Ok(())
}
