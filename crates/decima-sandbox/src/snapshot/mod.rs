//! Content-addressed workspace snapshots.
//!
//! A [`SnapshotStore`] lives outside every workspace (for example `DATA_DIR/snapshots`):
//!
//! ```text
//! objects/<first 2 hex>/<sha256>   file contents, written once (temp file + rename)
//! manifests/<id>.json              one manifest per snapshot; the id is the SHA-256 of the JSON
//! cache/<workspace key>.json       per-workspace stat cache (path, file identity → hash)
//! tmp/                             temp files on their way to manifests/ or cache/ (objects are
//!                                  written to `.tmp-*` beside their final name)
//! ```
//!
//! * [`SnapshotStore::snapshot`] walks the workspace without following symlinks and records
//!   directories (empty ones too), regular files (hash, size, permission bits, mtime) and
//!   symlinks (target text). A file whose identity matches the stat cache (size, mtime, ctime and
//!   inode on Unix) is not read again. Identical contents are stored once.
//! * [`SnapshotStore::restore`] makes the workspace equal to a snapshot: entries created since are
//!   removed, changed or deleted ones written back (content, mode, mtime), symlinks recreated as
//!   links. Unchanged files are recognised by the stat cache (or by hashing when it cannot tell)
//!   and left alone. Every directory on the way to a written entry has first been made a real
//!   directory, and entries are replaced by rename or created fresh, so restore never writes
//!   through a symlink. Object contents are verified against their hash before they land.
//! * [`SnapshotStore::gc`] deletes manifests that are not live and objects no live manifest uses.
//!
//! Nothing is skipped silently: fifos, sockets and devices, files that cannot be read, and files
//! that vanish mid-walk are listed in [`Manifest::skipped`] with a reason, and restore leaves
//! whatever is at those paths alone.
//!
//! **`.decima/` is excluded.** A top-level `.decima` holds tool-output spill files, which are a
//! record of what happened rather than work: it is listed as skipped (`excluded`), a restore never
//! touches it, and spilled outputs referenced by messages stay readable after a rollback.
//!
//! Hard links are stored as independent files and restored as such: a restore replaces a name
//! (a new file renamed over it) rather than writing into the file, and gives a file with other
//! names whose mode or mtime must change a fresh copy too, so a name outside the workspace never
//! sees a restore. Ownership, xattrs and directory mtimes are not recorded. Writes are not
//! fsynced: a crash can lose the latest snapshot, and a damaged object is detected on restore
//! (hash check) rather than restored. The stat cache ignores entries whose ctime (on Windows the
//! later of the last-write and creation times) is within [`RACY_WINDOW_NS`] of the walk, so a
//! file written while a snapshot runs is hashed again next time. The API is blocking; call it
//! from `spawn_blocking`. Operations on one store are serialised by a mutex; do not let two
//! processes garbage-collect the same store while another snapshots into it.
//!
//! **Windows.** Everything that differs lives in the `platform` module (one interface, a Unix and
//! a Windows implementation):
//!
//! * A file's identity for the stat cache is its size, last-write and creation times, attributes
//!   and file id (volume serial number and file index), read from a handle on the entry itself.
//! * Modes: a file is recorded as `0o444` when read-only and `0o644` otherwise, a directory as
//!   `0o755`; a restore sets or clears the read-only attribute, and replaces or removes a
//!   read-only file (clearing the attribute first where Windows cannot ignore it). Names are
//!   spelled from their WTF-8 form (see [`Entry`]), so one that is not valid Unicode round-trips
//!   too.
//! * Symbolic links and junctions are recorded as links, never followed; a restore opens files
//!   with `FILE_FLAG_OPEN_REPARSE_POINT`, removes a link before putting a file or directory in
//!   its place, and brings a junction back as a directory symbolic link.
//! * Before it changes anything, a restore looks for what would stop it half way: a file or
//!   folder it must replace or remove that another program holds open (Excel holds its
//!   workbook), which fails the restore with the file named and "close it in the program that has
//!   it open, then roll back again"; and links it must create when this account may not (no
//!   Developer Mode). A snapshot holding two names that differ only in case is refused with both
//!   named, since a Windows folder can hold only one of them. Paths longer than 260 characters
//!   work: the workspace is canonicalised to a `\\?\` path, which Windows does not limit.
//!
//! Whatever stops a restore part way (on any platform) is reported with what it had already
//! restored by then, or that nothing had changed; restoring again finishes the job.

mod gc;
mod id;
mod manifest;
mod objects;
mod platform;
mod restore;
mod stat_cache;
mod walk;

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::fs::{self, File, TryLockError};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use id::SnapshotId;
pub use manifest::{Changes, Entry, MANIFEST_FORMAT, Manifest, Skipped};

pub(crate) use id::{hex, is_hex_sha256};
pub(crate) use objects::hash_reader;
use objects::{HashDone, HashJob};
use platform::Stamp;
use stat_cache::now_ns;
pub(crate) use stat_cache::{CachedStat, StatCache, system_time};
use walk::{Walked, walk};

use crate::error::{Result, SandboxError};

/// The top-level folder of a workspace that snapshots leave out (tool-output spill files).
pub const EXCLUDED_DIR: &str = ".decima";

/// Stat-cache entries whose ctime is this close to (or after) the start of the walk are not
/// trusted: a write in the same clock tick would leave size, mtime and ctime unchanged.
pub const RACY_WINDOW_NS: i64 = 100_000_000;

/// How temp files start (in `tmp/` and beside objects in `objects/<prefix>/`).
const TEMP_PREFIX: &str = ".tmp-";

/// What a snapshot cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotStats {
    /// Regular files recorded.
    pub files: u64,
    /// Directories recorded.
    pub dirs: u64,
    /// Symlinks recorded.
    pub symlinks: u64,
    /// Entries listed as skipped.
    pub skipped: u64,
    /// Files whose content was read and hashed (the rest came from the stat cache).
    pub hashed: u64,
    /// Bytes read to hash them.
    pub bytes_hashed: u64,
    /// Objects written to the store (contents it did not have yet).
    pub new_objects: u64,
    /// Total size of the recorded files.
    pub bytes_total: u64,
}

/// A snapshot just taken.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// Its id, for [`SnapshotStore::restore`].
    pub id: SnapshotId,
    /// What it holds.
    pub manifest: Manifest,
    /// What it cost.
    pub stats: SnapshotStats,
}

/// What a restore did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestoreStats {
    /// Files written from the store (changed, deleted or replaced since the snapshot).
    pub files_written: u64,
    /// Bytes written into them.
    pub bytes_written: u64,
    /// Files that already matched and were left alone.
    pub files_unchanged: u64,
    /// Files hashed to find out whether they matched.
    pub hashed: u64,
    /// Directories created.
    pub dirs_created: u64,
    /// Symlinks (re)created.
    pub symlinks_written: u64,
    /// Entries removed (created since the snapshot, or of the wrong kind); a removed directory
    /// counts once.
    pub removed: u64,
    /// Files or directories whose permission bits or mtime were put back without rewriting.
    pub metadata_fixed: u64,
}

/// What a garbage collection did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GcStats {
    /// Manifests deleted (not in the live set).
    pub manifests_removed: u64,
    /// Objects deleted (used by no live manifest).
    pub objects_removed: u64,
    /// Their total size.
    pub bytes_freed: u64,
    /// Objects kept.
    pub objects_kept: u64,
    /// Live ids that have no manifest in the store.
    pub missing_live: Vec<SnapshotId>,
    /// Manifests kept only because they are recent (a snapshot whose owner may not have
    /// recorded it yet).
    pub recent_kept: u64,
    /// True when another process was snapshotting or restoring, so nothing was collected.
    pub busy: bool,
}

struct State {
    /// Loaded stat caches, by canonical workspace path.
    caches: HashMap<PathBuf, StatCache>,
}

/// A content-addressed store of workspace snapshots. See the module documentation.
pub struct SnapshotStore {
    root: PathBuf,
    state: Mutex<State>,
    tmp_counter: AtomicU64,
}

impl fmt::Debug for SnapshotStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SnapshotStore")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

impl SnapshotStore {
    /// Opens (creating if needed) a store rooted at `dir`, which must not be inside a workspace
    /// it snapshots.
    ///
    /// # Errors
    /// When the directories cannot be created.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self> {
        let root = dir.as_ref().to_path_buf();
        for sub in ["objects", "manifests", "cache", "tmp"] {
            let path = root.join(sub);
            fs::create_dir_all(&path).map_err(io_err("create", &path))?;
        }
        Ok(Self {
            root,
            state: Mutex::new(State {
                caches: HashMap::new(),
            }),
            tmp_counter: AtomicU64::new(0),
        })
    }

    /// The store's directory.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Records `workspace` and returns the snapshot's id, manifest and cost.
    ///
    /// # Errors
    /// When the workspace cannot be listed or the store cannot be written. Unreadable or special
    /// files do not fail the snapshot; they are listed in [`Manifest::skipped`].
    pub fn snapshot(&self, workspace: &Path) -> Result<Snapshot> {
        let mut state = self.lock();
        let _shared = self.lock_shared()?;
        let walk_start = now_ns();
        let key = fs::canonicalize(workspace).map_err(io_err("open", workspace))?;
        self.check_outside(&key)?;
        let old_cache = self.cache_for(&mut state, &key);

        let mut walked = Vec::new();
        let mut skipped = Vec::new();
        walk(&key, &mut PathBuf::new(), &mut walked, &mut skipped)?;

        let mut stats = SnapshotStats::default();
        let mut listed = self.list_entries(&key, walked, &old_cache, &mut stats);
        let (done, failed) = self.hash_all(&listed.jobs)?;
        listed.take_hashes(done, &mut stats);
        let (kept, new_cache) = listed.keep_readable(failed, &mut skipped, &mut stats, walk_start);
        skipped.sort_by(|a, b| a.path.cmp(&b.path));
        stats.skipped = skipped.len() as u64;

        let manifest = Manifest {
            format: MANIFEST_FORMAT,
            entries: kept,
            skipped,
        };
        let id = self.write_manifest(&manifest)?;
        self.save_cache(&mut state, key, new_cache)?;
        tracing::debug!(%id, ?stats, workspace = %workspace.display(), "workspace snapshot");
        Ok(Snapshot {
            id,
            manifest,
            stats,
        })
    }

    /// The manifest's entries in walk order: directories and links as they are, each file with
    /// its hash from the stat cache where its metadata still matches, else a job to hash it.
    fn list_entries(
        &self,
        key: &Path,
        walked: Vec<Walked>,
        old_cache: &StatCache,
        stats: &mut SnapshotStats,
    ) -> Listed {
        let mut listed = Listed {
            entries: Vec::with_capacity(walked.len()),
            jobs: Vec::new(),
            stamps: HashMap::new(),
        };
        for item in walked {
            match item {
                Walked::Dir { rel, mode } => {
                    stats.dirs += 1;
                    listed.entries.push(Entry::Dir {
                        path: manifest::encode_path(&rel),
                        mode,
                    });
                }
                Walked::Symlink { rel, target } => {
                    stats.symlinks += 1;
                    listed.entries.push(Entry::Symlink {
                        path: manifest::encode_path(&rel),
                        target,
                    });
                }
                Walked::File { rel, mode, stamp } => {
                    let path = manifest::encode_path(&rel);
                    let cached = old_cache
                        .get(&path)
                        .filter(|c| c.matches(&stamp) && self.object_path(&c.hash).is_file())
                        .map(|c| c.hash.clone());
                    let index = listed.entries.len();
                    if cached.is_none() {
                        listed.jobs.push(HashJob {
                            index,
                            path: key.join(&rel),
                            size: stamp.size(),
                        });
                    }
                    listed.entries.push(Entry::File {
                        path,
                        hash: cached.unwrap_or_default(),
                        size: stamp.size(),
                        mode,
                        mtime_ns: stamp.mtime_ns(),
                    });
                    listed.stamps.insert(index, stamp);
                }
            }
        }
        listed
    }

    /// Makes `workspace` equal to snapshot `id` (see the module documentation). Creates the
    /// workspace directory if it is missing. `.decima/` and paths the snapshot skipped are left
    /// alone.
    ///
    /// # Errors
    /// [`SandboxError::SnapshotNotFound`] or [`SandboxError::CorruptSnapshot`] before anything is
    /// touched when the snapshot or one of its objects is missing or damaged. Also before
    /// anything is touched, where the platform has them (Windows): names that differ only in
    /// case, files another program holds open, links this account may not create. I/O errors
    /// otherwise; the error then says what was already restored (restoring again finishes the
    /// job).
    pub fn restore(&self, id: &SnapshotId, workspace: &Path) -> Result<RestoreStats> {
        let mut state = self.lock();
        let _shared = self.lock_shared()?;
        let manifest = self.manifest(id)?;
        let paths =
            manifest::validate(&manifest).map_err(|reason| SandboxError::CorruptSnapshot {
                id: id.to_string(),
                reason,
            })?;
        for entry in &manifest.entries {
            if let Entry::File { hash, path, .. } = entry
                && !self.object_path(hash).is_file()
            {
                return Err(SandboxError::CorruptSnapshot {
                    id: id.to_string(),
                    reason: format!("object {hash} for {path:?} is missing"),
                });
            }
        }
        if platform::FOLDS_CASE
            && let Some((first, second)) = manifest::case_clash(&manifest)
        {
            return Err(SandboxError::Io {
                action: "restore",
                path: format!("{first:?} and {second:?}"),
                source: io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the snapshot holds both names, which differ only in case, and a Windows \
                     folder can hold only one of them; nothing was changed",
                ),
            });
        }
        fs::create_dir_all(workspace).map_err(io_err("create", workspace))?;
        let key = fs::canonicalize(workspace).map_err(io_err("open", workspace))?;
        self.check_outside(&key)?;
        let old_cache = self.cache_for(&mut state, &key);
        let (stats, new_cache) =
            restore::Restorer::new(self, id, &key, &manifest, &paths, &old_cache).run()?;
        self.save_cache(&mut state, key, new_cache)?;
        tracing::debug!(%id, ?stats, workspace = %workspace.display(), "workspace restored");
        Ok(stats)
    }

    /// Reads a snapshot's manifest, checking it against its id.
    ///
    /// # Errors
    /// [`SandboxError::SnapshotNotFound`], [`SandboxError::CorruptSnapshot`] or I/O.
    pub fn manifest(&self, id: &SnapshotId) -> Result<Manifest> {
        let path = self.manifest_path(id);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(SandboxError::SnapshotNotFound { id: id.to_string() });
            }
            Err(e) => return Err(io_err("read", &path)(e)),
        };
        let corrupt = |reason: String| SandboxError::CorruptSnapshot {
            id: id.to_string(),
            reason,
        };
        if hex(&Sha256::digest(&bytes)) != id.as_str() {
            return Err(corrupt("manifest does not match its id".to_owned()));
        }
        serde_json::from_slice(&bytes).map_err(|e| corrupt(format!("manifest: {e}")))
    }

    /// Up to `max` bytes from the start of a file a snapshot holds, by the hash its manifest
    /// gives: a run's inputs as they were when it started are read without restoring them.
    ///
    /// # Errors
    /// [`SandboxError::CorruptSnapshot`] when the object is missing, or I/O.
    pub fn object_head(&self, hash: &str, max: u64) -> Result<Vec<u8>> {
        use std::io::Read as _;
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(SandboxError::CorruptSnapshot {
                id: hash.to_owned(),
                reason: "not a content hash".to_owned(),
            });
        }
        let path = self.object_path(hash);
        let file = fs::File::open(&path).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => SandboxError::CorruptSnapshot {
                id: hash.to_owned(),
                reason: "the file's content is missing from the snapshot store".to_owned(),
            },
            _ => io_err("open", &path)(e),
        })?;
        let mut bytes = Vec::new();
        file.take(max)
            .read_to_end(&mut bytes)
            .map_err(io_err("read", &path))?;
        Ok(bytes)
    }

    /// Whether the store holds snapshot `id`.
    #[must_use]
    pub fn contains(&self, id: &SnapshotId) -> bool {
        self.manifest_path(id).is_file()
    }

    /// Every snapshot id in the store, sorted.
    ///
    /// # Errors
    /// When `manifests/` cannot be listed.
    pub fn list(&self) -> Result<Vec<SnapshotId>> {
        let dir = self.root.join("manifests");
        let mut ids = Vec::new();
        for item in fs::read_dir(&dir).map_err(io_err("list", &dir))? {
            let item = item.map_err(io_err("list", &dir))?;
            let name = item.file_name();
            if let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_suffix(".json"))
                .and_then(|n| SnapshotId::parse(n).ok())
            {
                ids.push(id);
            }
        }
        ids.sort();
        Ok(ids)
    }

    /// Refuses a workspace that contains the store: a snapshot would record the store and a
    /// restore would delete it.
    fn check_outside(&self, workspace: &Path) -> Result<()> {
        let root = fs::canonicalize(&self.root).map_err(io_err("open", &self.root))?;
        if root.starts_with(workspace) {
            return Err(SandboxError::Io {
                action: "use",
                path: workspace.display().to_string(),
                source: io::Error::other(format!(
                    "the snapshot store {} is inside this workspace",
                    self.root.display()
                )),
            });
        }
        Ok(())
    }

    /// The store's lock file, locked shared (held until the file is dropped): snapshots and
    /// restores hold it so that no collection runs meanwhile (`flock` on Unix, `LockFileEx` on
    /// Windows).
    fn lock_shared(&self) -> Result<File> {
        let (path, file) = self.lock_file()?;
        file.lock_shared().map_err(io_err("lock", &path))?;
        Ok(file)
    }

    /// The store's lock file, locked exclusively; `None` when another snapshot or restore holds
    /// it (no waiting).
    fn lock_exclusive_if_free(&self) -> Result<Option<File>> {
        let (path, file) = self.lock_file()?;
        match file.try_lock() {
            Ok(()) => Ok(Some(file)),
            Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(e)) => Err(io_err("lock", &path)(e)),
        }
    }

    fn lock_file(&self) -> Result<(PathBuf, File)> {
        let path = self.root.join("lock");
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io_err("open", &path))?;
        Ok((path, file))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn manifest_path(&self, id: &SnapshotId) -> PathBuf {
        self.root.join("manifests").join(format!("{id}.json"))
    }

    fn write_manifest(&self, manifest: &Manifest) -> Result<SnapshotId> {
        let bytes = serde_json::to_vec(manifest).map_err(|e| SandboxError::Io {
            action: "encode",
            path: "manifest".to_owned(),
            source: io::Error::other(e),
        })?;
        let id = SnapshotId::of_manifest(&bytes);
        let path = self.manifest_path(&id);
        if !path.is_file() {
            self.write_atomic(&path, &bytes, false)?;
        }
        Ok(id)
    }
}

/// Wraps an I/O error with what was being done to which path, for the crate's error type.
pub(crate) fn io_err(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> SandboxError {
    let path = path.display().to_string();
    move |source| SandboxError::Io {
        action,
        path,
        source,
    }
}

/// A snapshot's entries while its files are hashed: the jobs still to hash and the identity each
/// file was listed with, by entry index.
struct Listed {
    entries: Vec<Entry>,
    jobs: Vec<HashJob>,
    stamps: HashMap<usize, Stamp>,
}

impl Listed {
    /// Puts each hashed file's hash and size (what was read, even if the file grew or shrank
    /// since it was listed) into its entry.
    fn take_hashes(&mut self, done: Vec<HashDone>, stats: &mut SnapshotStats) {
        for d in done {
            stats.hashed += 1;
            stats.bytes_hashed += d.bytes;
            stats.new_objects += u64::from(d.new_object);
            if let Some(Entry::File { hash, size, .. }) = self.entries.get_mut(d.index) {
                *hash = d.hash;
                *size = d.bytes;
            }
        }
    }

    /// The entries to record and the stat cache for the next snapshot: files that could not be
    /// read (or vanished) are reported as skipped, not recorded.
    fn keep_readable(
        self,
        failed: Vec<(usize, String, String)>,
        skipped: &mut Vec<Skipped>,
        stats: &mut SnapshotStats,
        walk_start: i64,
    ) -> (Vec<Entry>, StatCache) {
        let mut failed_set = HashSet::new();
        for (index, kind, reason) in failed {
            failed_set.insert(index);
            if let Some(entry) = self.entries.get(index) {
                skipped.push(Skipped {
                    path: entry.path().to_owned(),
                    kind,
                    reason,
                });
            }
        }
        let mut new_cache = StatCache::new();
        let mut kept = Vec::with_capacity(self.entries.len());
        for (index, entry) in self.entries.into_iter().enumerate() {
            if failed_set.contains(&index) {
                continue;
            }
            if let Entry::File {
                path, hash, size, ..
            } = &entry
            {
                stats.files += 1;
                stats.bytes_total += size;
                if let Some(c) = self
                    .stamps
                    .get(&index)
                    .filter(|s| s.size() == *size)
                    .and_then(|s| CachedStat::trusted(s, hash.clone(), walk_start))
                {
                    new_cache.insert(path.clone(), c);
                }
            }
            kept.push(entry);
        }
        (kept, new_cache)
    }
}
