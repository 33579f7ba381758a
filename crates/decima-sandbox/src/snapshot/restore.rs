//! Putting a workspace back the way a snapshot recorded it.

mod preflight;

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::fs::{self, File, Metadata};
use std::io;
use std::path::{Component, Path, PathBuf};

use super::manifest::{self, Entry, Manifest};
use super::platform::{self, Stamp};
use super::{
    CachedStat, RestoreStats, SnapshotId, SnapshotStore, StatCache, hash_reader, io_err, now_ns,
    system_time,
};
use crate::error::{Result, SandboxError};

/// How many paths an error names before it says "and N more".
const NAMED: usize = 5;

/// What the manifest wants at a path, for the pruning pass.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    Dir,
    File,
    Symlink,
}

/// One restore of one snapshot into one workspace: prunes what the snapshot does not have, then
/// puts back each entry, and remembers what it changed so that an error part way can say so.
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
    /// The first [`NAMED`] workspace paths (as manifests spell them) changed so far.
    changed: Vec<String>,
    /// How many entries were changed so far.
    changed_count: u64,
}

impl<'a> Restorer<'a> {
    /// A restore of `manifest` (whose decoded `paths` are in entry order) into the canonical
    /// workspace `root`; `old_cache` is the workspace's stat cache.
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
            changed: Vec::new(),
            changed_count: 0,
        }
    }

    /// Runs the restore. Returns what it did and the workspace's new stat cache.
    pub(super) fn run(mut self) -> Result<(RestoreStats, StatCache)> {
        let root_meta = fs::symlink_metadata(self.root).map_err(io_err("inspect", self.root))?;
        if !root_meta.is_dir() {
            return Err(SandboxError::Io {
                action: "restore into",
                path: self.root.display().to_string(),
                source: io::Error::other("not a directory"),
            });
        }
        if platform::PREFLIGHT {
            self.preflight()?;
        }
        match self.apply() {
            Ok(()) => Ok((self.stats, self.cache)),
            Err(e) => Err(self.explain(e)),
        }
    }

    fn apply(&mut self) -> Result<()> {
        self.prune(&mut PathBuf::new())?;
        let manifest = self.manifest;
        let paths = self.paths;
        for (entry, rel) in manifest.entries.iter().zip(paths) {
            let path = self.root.join(rel);
            match entry {
                Entry::Dir { path: key, .. } => self.ensure_dir(&path, key)?,
                Entry::File {
                    path: key,
                    hash,
                    size,
                    mode,
                    mtime_ns,
                } => {
                    self.ensure_file(&path, key, hash, *size, *mode, *mtime_ns)?;
                }
                Entry::Symlink { path: key, target } => {
                    self.ensure_symlink(&path, rel, key, target)?;
                }
            }
        }
        // Directory modes last, deepest first, so read-only directories could be filled.
        for (entry, rel) in manifest.entries.iter().zip(paths).rev() {
            if let Entry::Dir { path: key, mode } = entry {
                let path = self.root.join(rel);
                let meta = fs::symlink_metadata(&path).map_err(io_err("inspect", &path))?;
                if meta.is_dir() && !platform::mode_matches(&meta, *mode) {
                    platform::set_dir_mode(&path, *mode).map_err(io_err("chmod", &path))?;
                    self.stats.metadata_fixed += 1;
                    self.note(key);
                }
            }
        }
        Ok(())
    }

    /// Records that the entry at `key` was changed, for [`Self::explain`].
    fn note(&mut self, key: &str) {
        self.changed_count += 1;
        if self.changed.len() < NAMED {
            self.changed.push(key.to_owned());
        }
    }

    /// An error part way, saying what was restored before it (or that nothing was), and for a
    /// file another program holds, what to do.
    fn explain(&self, err: SandboxError) -> SandboxError {
        let progress = self.progress();
        match err {
            SandboxError::Io {
                action,
                path,
                source,
            } => {
                let held = if platform::in_use(&source) {
                    "; it is open in another program: close it in the program that has it open, \
                     then roll back again"
                } else {
                    ""
                };
                SandboxError::Io {
                    action,
                    path,
                    source: io::Error::new(source.kind(), format!("{source}{held}; {progress}")),
                }
            }
            SandboxError::CorruptSnapshot { id, reason } => SandboxError::CorruptSnapshot {
                id,
                reason: format!("{reason}; {progress}"),
            },
            other => other,
        }
    }

    fn progress(&self) -> String {
        if self.changed_count == 0 {
            return "nothing in the workspace was changed".to_owned();
        }
        let names: Vec<String> = self.changed.iter().map(|p| format!("{p:?}")).collect();
        let more = self.changed_count - self.changed.len() as u64;
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        let (count, verb) = match self.changed_count {
            1 => ("1 entry".to_owned(), "was"),
            n => (format!("{n} entries"), "were"),
        };
        format!(
            "{count} {verb} already restored ({}{more}); restoring again finishes the job",
            names.join(", ")
        )
    }

    /// Removes what the snapshot does not have (or has as another kind), depth first from
    /// `rel`. Directories the snapshot has are descended into, never through a link.
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
                    platform::make_traversable(&path).map_err(io_err("chmod", &path))?;
                    self.prune(rel)?;
                }
                (Some(Want::Dir), false) | (None, false) => {
                    platform::remove_non_dir(&path).map_err(io_err("remove", &path))?;
                    self.stats.removed += 1;
                    self.note(&manifest::encode_path(rel));
                }
                (Some(Want::File | Want::Symlink), true) | (None, true) => {
                    remove_tree(&path)?;
                    self.stats.removed += 1;
                    self.note(&manifest::encode_path(rel));
                }
                // A file or symlink where one is wanted: compared and replaced in the next pass.
                (Some(Want::File | Want::Symlink), false) => {}
            }
            rel.pop();
        }
        Ok(())
    }

    fn ensure_dir(&mut self, path: &Path, key: &str) -> Result<()> {
        match fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => return Ok(()),
            Ok(meta) => self.remove_any(path, &meta)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err("inspect", path)(e)),
        }
        // Owner access until the final pass sets the recorded mode.
        platform::create_dir(path).map_err(io_err("create", path))?;
        self.stats.dirs_created += 1;
        self.note(key);
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
                if meta.len() == size {
                    let stamp = Stamp::of(path, &meta).map_err(io_err("inspect", path))?;
                    if self.same_content(path, key, hash, &stamp)? {
                        let unchanged = Unchanged {
                            key,
                            hash,
                            mode,
                            mtime,
                        };
                        return self.keep_file(path, &unchanged, &meta, stamp);
                    }
                }
            }
            // Anything else is replaced by the rename below (a link is replaced, not followed).
            Ok(meta) if meta.is_dir() => self.remove_any(path, &meta)?,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err("inspect", path)(e)),
        }
        self.write_file(path, hash, mode, mtime)?;
        self.note(key);
        Ok(())
    }

    /// A file that already holds the recorded content: its mode and mtime are put back if they
    /// differ, in place unless the file has other names (which would see the change too, and
    /// may be outside the workspace); then a fresh copy replaces this name instead.
    fn keep_file(
        &mut self,
        path: &Path,
        want: &Unchanged<'_>,
        meta: &Metadata,
        mut stamp: Stamp,
    ) -> Result<()> {
        if !platform::mode_matches(meta, want.mode) || platform::mtime_ns(meta) != want.mtime {
            if platform::link_count(path, meta).map_err(io_err("inspect", path))? > 1 {
                self.write_file(path, want.hash, want.mode, want.mtime)?;
                self.note(want.key);
                return Ok(());
            }
            // A regular file (checked by the caller), opened without following links.
            let file = platform::open_attributes(path).map_err(io_err("open", path))?;
            platform::set_file_mode(&file, path, want.mode).map_err(io_err("chmod", path))?;
            file.set_modified(system_time(want.mtime))
                .map_err(io_err("touch", path))?;
            stamp = Stamp::of_file(&file).map_err(io_err("inspect", path))?;
            self.stats.metadata_fixed += 1;
            self.note(want.key);
        }
        self.stats.files_unchanged += 1;
        if let Some(c) = CachedStat::trusted(&stamp, want.hash.to_owned(), self.start_ns) {
            self.cache.insert(want.key.to_owned(), c);
        }
        Ok(())
    }

    /// Whether the file at `path` already holds `hash`: by the stat cache when it knows the
    /// file, else by hashing it.
    fn same_content(&mut self, path: &Path, key: &str, hash: &str, stamp: &Stamp) -> Result<bool> {
        if let Some(c) = self.old_cache.get(key).filter(|c| c.matches(stamp)) {
            return Ok(c.hash == hash);
        }
        self.stats.hashed += 1;
        let mut file = platform::open_read(path).map_err(io_err("read", path))?;
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
            let mut out = platform::create_new(&tmp).map_err(io_err("create", &tmp))?;
            let (actual, bytes) =
                hash_reader(&mut src, Some(&mut out)).map_err(io_err("write", &tmp))?;
            if actual != hash {
                return Err(SandboxError::CorruptSnapshot {
                    id: self.id.to_string(),
                    reason: format!("object {hash} holds content hashing to {actual}"),
                });
            }
            platform::set_file_mode(&out, &tmp, mode).map_err(io_err("chmod", &tmp))?;
            out.set_modified(system_time(mtime))
                .map_err(io_err("touch", &tmp))?;
            drop(out);
            platform::replace(&tmp, path).map_err(io_err("write", path))?;
            Ok(bytes)
        })();
        match result {
            Ok(bytes) => {
                self.stats.files_written += 1;
                self.stats.bytes_written += bytes;
                Ok(())
            }
            Err(e) => {
                let _ = platform::remove_non_dir(&tmp);
                Err(e)
            }
        }
    }

    fn ensure_symlink(&mut self, path: &Path, rel: &Path, key: &str, target: &str) -> Result<()> {
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
        let to_dir = platform::LINK_KIND_MATTERS && self.link_to_dir(rel, &target);
        platform::symlink(&target, path, to_dir).map_err(io_err("create symlink", path))?;
        self.stats.symlinks_written += 1;
        self.note(key);
        Ok(())
    }

    /// Whether a link at `rel` to `target` points at a directory (Windows makes directory and
    /// file links apart): a target inside the workspace is looked up in the manifest, anything
    /// else on disk (reading, never writing, through it).
    fn link_to_dir(&self, rel: &Path, target: &OsStr) -> bool {
        let parent = rel.parent().unwrap_or(Path::new(""));
        let target = Path::new(target);
        let mut inside = Some(parent.to_path_buf());
        for component in target.components() {
            inside = match (inside, component) {
                (Some(p), Component::CurDir) => Some(p),
                (Some(mut p), Component::ParentDir) => p.pop().then_some(p),
                (Some(mut p), Component::Normal(name)) => {
                    p.push(name);
                    Some(p)
                }
                _ => None,
            };
        }
        if let Some(want) = inside.and_then(|p| self.wanted.get(p.as_path()).copied()) {
            return want == Want::Dir;
        }
        fs::metadata(self.root.join(parent).join(target)).is_ok_and(|m| m.is_dir())
    }

    fn remove_any(&mut self, path: &Path, meta: &Metadata) -> Result<()> {
        if meta.is_dir() {
            remove_tree(path)?;
        } else {
            platform::remove_non_dir(path).map_err(io_err("remove", path))?;
        }
        self.stats.removed += 1;
        Ok(())
    }
}

/// What the manifest records for a file found to hold the right content already.
struct Unchanged<'k> {
    key: &'k str,
    hash: &'k str,
    mode: u32,
    mtime: i64,
}

/// Removes a directory tree without following links, first opening up what stops it (on Unix
/// directories the owner may not write to, on Windows read-only files).
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
    platform::make_traversable(dir).map_err(io_err("chmod", dir))?;
    for item in fs::read_dir(dir).map_err(io_err("list", dir))? {
        let item = item.map_err(io_err("list", dir))?;
        match item.file_type() {
            Ok(t) if t.is_dir() => open_up(&item.path())?,
            Ok(t) if t.is_file() => {
                let path = item.path();
                platform::make_removable(&path).map_err(io_err("chmod", &path))?;
            }
            _ => {}
        }
    }
    Ok(())
}
