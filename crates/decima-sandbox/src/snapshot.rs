//! Content-addressed workspace snapshots.
//!
//! A [`SnapshotStore`] lives outside every workspace (for example `DATA_DIR/snapshots`):
//!
//! ```text
//! objects/<first 2 hex>/<sha256>   file contents, written once (temp file + rename)
//! manifests/<id>.json              one manifest per snapshot; the id is the SHA-256 of the JSON
//! cache/<workspace key>.json       per-workspace stat cache (path, size, mtime, ctime, inode → hash)
//! tmp/                             temp files on their way to manifests/ or cache/ (objects are
//!                                  written to `.tmp-*` beside their final name)
//! ```
//!
//! * [`SnapshotStore::snapshot`] walks the workspace without following symlinks and records
//!   directories (empty ones too), regular files (hash, size, permission bits, mtime) and
//!   symlinks (target text). A file whose size, mtime, ctime and inode match the stat cache is not
//!   read again. Identical contents are stored once.
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
//! Hard links are stored as independent files and restored as such. Ownership, xattrs and
//! directory mtimes are not recorded. Writes are not fsynced: a crash can lose the latest
//! snapshot, and a damaged object is detected on restore (hash check) rather than restored.
//! The stat cache ignores entries whose ctime is within [`RACY_WINDOW_NS`] of the walk, so a
//! file written while a snapshot runs is hashed again next time. The API is blocking; call it
//! from `spawn_blocking`. Operations on one store are serialised by a mutex; do not let two
//! processes garbage-collect the same store while another snapshots into it.

mod manifest;
mod restore;

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::fs::{self, File, Metadata};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use rustix::fs::{FlockOperation, flock};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use manifest::{Changes, Entry, MANIFEST_FORMAT, Manifest, Skipped};

use crate::error::{Result, SandboxError};

/// The top-level folder of a workspace that snapshots leave out (tool-output spill files).
pub const EXCLUDED_DIR: &str = ".decima";

/// Stat-cache entries whose ctime is this close to (or after) the start of the walk are not
/// trusted: a write in the same clock tick would leave size, mtime and ctime unchanged.
pub const RACY_WINDOW_NS: i64 = 100_000_000;

/// How temp files start (in `tmp/` and beside objects in `objects/<prefix>/`).
const TEMP_PREFIX: &str = ".tmp-";

/// Files up to this size are read into memory once; larger ones are streamed.
const IN_MEMORY_LIMIT: u64 = 8 * 1024 * 1024;
const CHUNK: usize = 256 * 1024;

/// A snapshot's id: the lowercase hex SHA-256 of its manifest. This is what the runtime keeps in
/// `snapshots.workspace_archive`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SnapshotId(String);

impl SnapshotId {
    /// Checks the spelling (64 lowercase hex digits).
    ///
    /// # Errors
    /// [`SandboxError::InvalidSnapshotId`] otherwise.
    pub fn parse(s: &str) -> Result<Self> {
        if is_hex_sha256(s) {
            Ok(Self(s.to_owned()))
        } else {
            Err(SandboxError::InvalidSnapshotId { id: s.to_owned() })
        }
    }

    /// The id as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SnapshotId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for SnapshotId {
    type Err = SandboxError;
    fn from_str(s: &str) -> Result<Self> {
        Self::parse(s)
    }
}

impl TryFrom<String> for SnapshotId {
    type Error = SandboxError;
    fn try_from(s: String) -> Result<Self> {
        Self::parse(&s)
    }
}

impl From<SnapshotId> for String {
    fn from(id: SnapshotId) -> Self {
        id.0
    }
}

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

/// One file's identity as seen by `lstat`, with the hash it had.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CachedStat {
    pub(crate) size: u64,
    pub(crate) mtime_ns: i64,
    pub(crate) ctime_ns: i64,
    pub(crate) ino: u64,
    pub(crate) hash: String,
}

impl CachedStat {
    /// Whether `meta` is the same file, unchanged, as when this entry was made.
    pub(crate) fn matches(&self, meta: &Metadata) -> bool {
        self.size == meta.len()
            && self.mtime_ns == mtime_ns(meta)
            && self.ctime_ns == ctime_ns(meta)
            && self.ino == meta.ino()
    }

    /// An entry for `meta`, or `None` when its ctime is too recent to trust (see
    /// [`RACY_WINDOW_NS`]).
    pub(crate) fn trusted(meta: &Metadata, hash: String, walk_start_ns: i64) -> Option<Self> {
        let ctime = ctime_ns(meta);
        (ctime < walk_start_ns.saturating_sub(RACY_WINDOW_NS)).then(|| Self {
            size: meta.len(),
            mtime_ns: mtime_ns(meta),
            ctime_ns: ctime,
            ino: meta.ino(),
            hash,
        })
    }
}

/// Workspace-relative encoded path → stat.
pub(crate) type StatCache = HashMap<String, CachedStat>;

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

/// What the walk found at one path.
enum Walked {
    Dir { rel: PathBuf, mode: u32 },
    File { rel: PathBuf, meta: Metadata },
    Symlink { rel: PathBuf, target: String },
}

/// A file whose content must be read.
struct HashJob {
    index: usize,
    path: PathBuf,
    size: u64,
}

struct HashDone {
    index: usize,
    hash: String,
    bytes: u64,
    new_object: bool,
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
        let _shared = self.across_processes(FlockOperation::LockShared)?;
        let walk_start = now_ns();
        let key = fs::canonicalize(workspace).map_err(io_err("open", workspace))?;
        self.check_outside(&key)?;
        let old_cache = self.cache_for(&mut state, &key);

        let mut walked = Vec::new();
        let mut skipped = Vec::new();
        walk(&key, &mut PathBuf::new(), &mut walked, &mut skipped)?;

        let mut stats = SnapshotStats::default();
        let mut entries = Vec::with_capacity(walked.len());
        let mut jobs = Vec::new();
        let mut metas: HashMap<usize, Metadata> = HashMap::new();
        for item in walked {
            match item {
                Walked::Dir { rel, mode } => {
                    stats.dirs += 1;
                    entries.push(Entry::Dir {
                        path: manifest::encode_path(&rel),
                        mode,
                    });
                }
                Walked::Symlink { rel, target } => {
                    stats.symlinks += 1;
                    entries.push(Entry::Symlink {
                        path: manifest::encode_path(&rel),
                        target,
                    });
                }
                Walked::File { rel, meta } => {
                    let path = manifest::encode_path(&rel);
                    let cached = old_cache
                        .get(&path)
                        .filter(|c| c.matches(&meta) && self.object_path(&c.hash).is_file())
                        .map(|c| c.hash.clone());
                    let index = entries.len();
                    if cached.is_none() {
                        jobs.push(HashJob {
                            index,
                            path: key.join(&rel),
                            size: meta.len(),
                        });
                    }
                    entries.push(Entry::File {
                        path,
                        hash: cached.unwrap_or_default(),
                        size: meta.len(),
                        mode: meta.mode() & 0o7777,
                        mtime_ns: mtime_ns(&meta),
                    });
                    metas.insert(index, meta);
                }
            }
        }

        let (done, failed) = self.hash_all(&jobs)?;
        for d in done {
            stats.hashed += 1;
            stats.bytes_hashed += d.bytes;
            stats.new_objects += u64::from(d.new_object);
            if let Some(Entry::File { hash, size, .. }) = entries.get_mut(d.index) {
                *hash = d.hash;
                // The content read is what is stored, even if the file grew or shrank since lstat.
                *size = d.bytes;
            }
        }
        // Files that could not be read (or vanished) are reported, not recorded.
        let mut failed_set = HashSet::new();
        for (index, kind, reason) in failed {
            failed_set.insert(index);
            if let Some(entry) = entries.get(index) {
                skipped.push(Skipped {
                    path: entry.path().to_owned(),
                    kind,
                    reason,
                });
            }
        }
        let mut new_cache = StatCache::new();
        let mut kept = Vec::with_capacity(entries.len());
        for (index, entry) in entries.into_iter().enumerate() {
            if failed_set.contains(&index) {
                continue;
            }
            if let Entry::File {
                path, hash, size, ..
            } = &entry
            {
                stats.files += 1;
                stats.bytes_total += size;
                if let Some(c) = metas
                    .get(&index)
                    .filter(|m| m.len() == *size)
                    .and_then(|m| CachedStat::trusted(m, hash.clone(), walk_start))
                {
                    new_cache.insert(path.clone(), c);
                }
            }
            kept.push(entry);
        }
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

    /// Makes `workspace` equal to snapshot `id` (see the module documentation). Creates the
    /// workspace directory if it is missing. `.decima/` and paths the snapshot skipped are left
    /// alone.
    ///
    /// # Errors
    /// [`SandboxError::SnapshotNotFound`] or [`SandboxError::CorruptSnapshot`] before anything is
    /// touched when the snapshot or one of its objects is missing or damaged; I/O errors
    /// otherwise (the workspace may then be partly restored; restoring again finishes the job).
    pub fn restore(&self, id: &SnapshotId, workspace: &Path) -> Result<RestoreStats> {
        let mut state = self.lock();
        let _shared = self.across_processes(FlockOperation::LockShared)?;
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

    /// Deletes every manifest not in `live` and every object that no live manifest uses, plus
    /// leftover temp files older than an hour. A manifest written less than `recent` ago counts
    /// as live: its snapshot may be one another process took and has not recorded yet. Nothing
    /// is collected while another process (or store) is snapshotting or restoring: the store's
    /// lock file is held shared by those and exclusively here, so an object a snapshot found
    /// already stored is never deleted before its manifest is written. Then
    /// [`GcStats::busy`] is true.
    ///
    /// # Errors
    /// When a live manifest is damaged (nothing is deleted then) or on I/O failure.
    pub fn gc(&self, live: &[SnapshotId], recent: std::time::Duration) -> Result<GcStats> {
        let _state = self.lock();
        let mut stats = GcStats::default();
        let Some(_exclusive) =
            self.across_processes_if_free(FlockOperation::NonBlockingLockExclusive)?
        else {
            stats.busy = true;
            return Ok(stats);
        };
        let since = SystemTime::now() - recent;
        let mut live: Vec<SnapshotId> = live.to_vec();
        for id in self.list()? {
            if !live.contains(&id)
                && fs::metadata(self.manifest_path(&id))
                    .and_then(|m| m.modified())
                    .is_ok_and(|t| t >= since)
            {
                stats.recent_kept += 1;
                live.push(id);
            }
        }
        let live_set: HashSet<&SnapshotId> = live.iter().collect();
        let mut referenced: HashSet<String> = HashSet::new();
        for id in &live_set {
            match self.manifest(id) {
                Ok(m) => {
                    for entry in m.entries {
                        if let Entry::File { hash, .. } = entry {
                            referenced.insert(hash);
                        }
                    }
                }
                Err(SandboxError::SnapshotNotFound { .. }) => {
                    stats.missing_live.push((*id).clone())
                }
                Err(e) => return Err(e),
            }
        }
        stats.missing_live.sort();
        for id in self.list()? {
            if !live_set.contains(&id) {
                let path = self.manifest_path(&id);
                fs::remove_file(&path).map_err(io_err("remove", &path))?;
                stats.manifests_removed += 1;
            }
        }
        let hour_ago = SystemTime::now() - std::time::Duration::from_secs(3600);
        let objects = self.root.join("objects");
        for prefix in fs::read_dir(&objects).map_err(io_err("list", &objects))? {
            let prefix = prefix.map_err(io_err("list", &objects))?.path();
            if !prefix.is_dir() {
                continue;
            }
            for object in fs::read_dir(&prefix).map_err(io_err("list", &prefix))? {
                let object = object.map_err(io_err("list", &prefix))?;
                let name = object.file_name();
                if name.to_str().is_some_and(|n| referenced.contains(n)) {
                    stats.objects_kept += 1;
                    continue;
                }
                let path = object.path();
                if name.to_str().is_some_and(|n| n.starts_with(TEMP_PREFIX)) {
                    // Another snapshot's object on its way in, or a crash's leftover.
                    if is_older(&object, hour_ago) {
                        let _ = fs::remove_file(&path);
                    }
                    continue;
                }
                let len = object.metadata().map(|m| m.len()).unwrap_or(0);
                fs::remove_file(&path).map_err(io_err("remove", &path))?;
                stats.objects_removed += 1;
                stats.bytes_freed += len;
            }
        }
        let tmp = self.root.join("tmp");
        for item in fs::read_dir(&tmp).map_err(io_err("list", &tmp))?.flatten() {
            if is_older(&item, hour_ago) {
                let _ = fs::remove_file(item.path());
            }
        }
        tracing::debug!(?stats, "snapshot store garbage-collected");
        Ok(stats)
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

    /// The store's lock file, locked with `operation` (held until the file is dropped).
    fn across_processes(&self, operation: FlockOperation) -> Result<File> {
        self.across_processes_if_free(operation)?
            .ok_or_else(|| SandboxError::Io {
                action: "lock",
                path: self.root.join("lock").display().to_string(),
                source: io::Error::from(io::ErrorKind::WouldBlock),
            })
    }

    /// Like [`Self::across_processes`]; `None` when a non-blocking lock is taken elsewhere.
    fn across_processes_if_free(&self, operation: FlockOperation) -> Result<Option<File>> {
        let path = self.root.join("lock");
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io_err("open", &path))?;
        match flock(&file, operation) {
            Ok(()) => Ok(Some(file)),
            Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
            Err(e) => Err(SandboxError::Io {
                action: "lock",
                path: path.display().to_string(),
                source: e.into(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn object_path(&self, hash: &str) -> PathBuf {
        let prefix = hash.get(..2).unwrap_or("xx");
        self.root.join("objects").join(prefix).join(hash)
    }

    fn manifest_path(&self, id: &SnapshotId) -> PathBuf {
        self.root.join("manifests").join(format!("{id}.json"))
    }

    fn cache_file(&self, key: &Path) -> PathBuf {
        use std::os::unix::ffi::OsStrExt;
        let digest = hex(&Sha256::digest(key.as_os_str().as_bytes()));
        self.root
            .join("cache")
            .join(format!("{}.json", &digest[..32]))
    }

    /// The stat cache for a workspace: from memory, else from disk, else empty (a damaged cache
    /// file only costs rehashing).
    fn cache_for(&self, state: &mut State, key: &Path) -> StatCache {
        if let Some(cache) = state.caches.remove(key) {
            return cache;
        }
        fs::read(self.cache_file(key))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    fn save_cache(&self, state: &mut State, key: PathBuf, cache: StatCache) -> Result<()> {
        let bytes = serde_json::to_vec(&cache).map_err(|e| SandboxError::Io {
            action: "encode",
            path: "stat cache".to_owned(),
            source: io::Error::other(e),
        })?;
        let path = self.cache_file(&key);
        self.write_atomic(&path, &bytes, true)?;
        state.caches.insert(key, cache);
        Ok(())
    }

    fn write_manifest(&self, manifest: &Manifest) -> Result<SnapshotId> {
        let bytes = serde_json::to_vec(manifest).map_err(|e| SandboxError::Io {
            action: "encode",
            path: "manifest".to_owned(),
            source: io::Error::other(e),
        })?;
        let id = SnapshotId(hex(&Sha256::digest(&bytes)));
        let path = self.manifest_path(&id);
        if !path.is_file() {
            self.write_atomic(&path, &bytes, false)?;
        }
        Ok(id)
    }

    pub(crate) fn temp_path(&self) -> PathBuf {
        self.root.join("tmp").join(self.temp_name())
    }

    fn temp_name(&self) -> String {
        let n = self.tmp_counter.fetch_add(1, Ordering::Relaxed);
        format!("{TEMP_PREFIX}{}-{n}-{}", std::process::id(), fastrand_u32())
    }

    /// A temp file beside where object `hash` goes, so committing it is a rename within one
    /// directory (cheaper than across directories, and atomic on every filesystem).
    fn object_temp(&self, hash: &str) -> Result<PathBuf> {
        let dest = self.object_path(hash);
        let dir = dest.parent().unwrap_or(&self.root);
        fs::create_dir_all(dir).map_err(io_err("create", dir))?;
        Ok(dir.join(self.temp_name()))
    }

    /// Writes `bytes` to a temp file and renames it to `path` (replacing it when `replace`,
    /// otherwise keeping whichever copy got there first: both are the same content).
    fn write_atomic(&self, path: &Path, bytes: &[u8], replace: bool) -> Result<()> {
        let tmp = self.temp_path();
        let result = (|| {
            let mut f = File::create_new(&tmp).map_err(io_err("create", &tmp))?;
            f.write_all(bytes).map_err(io_err("write", &tmp))?;
            drop(f);
            if !replace && path.exists() {
                return Ok(());
            }
            fs::rename(&tmp, path).map_err(io_err("write", path))
        })();
        let _ = fs::remove_file(&tmp);
        result
    }

    /// Moves a finished temp file into `objects/` unless the object is already there. Returns
    /// whether it was new.
    fn commit_object(&self, tmp: &Path, hash: &str) -> Result<bool> {
        let dest = self.object_path(hash);
        if dest.is_file() {
            let _ = fs::remove_file(tmp);
            return Ok(false);
        }
        if let Some(parent) = dest.parent() {
            fs::create_dir_all(parent).map_err(io_err("create", parent))?;
        }
        // A hard link fails when the name exists, so of two threads (or processes) that stored
        // the same new content at once exactly one counts it as new; a rename would let both.
        match fs::hard_link(tmp, &dest) {
            Ok(()) => {
                let _ = fs::remove_file(tmp);
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let _ = fs::remove_file(tmp);
                Ok(false)
            }
            // A file system without hard links: the content is the same either way.
            Err(_) => {
                let existed = dest.is_file();
                if let Err(e) = fs::rename(tmp, &dest) {
                    let _ = fs::remove_file(tmp);
                    return Err(io_err("write", &dest)(e));
                }
                Ok(!existed)
            }
        }
    }

    /// Hashes (and stores, when new) every job, spread over a few threads. Returns what was
    /// hashed and the files that could not be read, as (index, kind, reason).
    #[allow(clippy::type_complexity)]
    fn hash_all(&self, jobs: &[HashJob]) -> Result<(Vec<HashDone>, Vec<(usize, String, String)>)> {
        let threads = std::thread::available_parallelism()
            .map_or(1, std::num::NonZero::get)
            .clamp(1, 4)
            .min(jobs.len().max(1));
        let next = AtomicUsize::new(0);
        let results: Vec<Result<(Vec<HashDone>, Vec<(usize, String, String)>)>> =
            std::thread::scope(|scope| {
                let handles: Vec<_> = (0..threads)
                    .map(|_| {
                        scope.spawn(|| {
                            let mut done = Vec::new();
                            let mut failed = Vec::new();
                            let mut buf = Vec::new();
                            loop {
                                let i = next.fetch_add(1, Ordering::Relaxed);
                                let Some(job) = jobs.get(i) else { break };
                                match self.store_file(job, &mut buf) {
                                    Ok(Ok(d)) => done.push(d),
                                    Ok(Err((kind, reason))) => {
                                        failed.push((job.index, kind, reason))
                                    }
                                    Err(e) => return Err(e),
                                }
                            }
                            Ok((done, failed))
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(SandboxError::Io {
                                action: "hash",
                                path: "workspace".to_owned(),
                                source: io::Error::other("hashing thread panicked"),
                            })
                        })
                    })
                    .collect()
            });
        let mut done = Vec::with_capacity(jobs.len());
        let mut failed = Vec::new();
        for r in results {
            let (d, f) = r?;
            done.extend(d);
            failed.extend(f);
        }
        Ok((done, failed))
    }

    /// Reads one workspace file, hashes it and stores it if new. The outer error is the store's
    /// fault (fatal); the inner one is the workspace file's (reported as skipped).
    #[allow(clippy::type_complexity)]
    fn store_file(
        &self,
        job: &HashJob,
        buf: &mut Vec<u8>,
    ) -> Result<std::result::Result<HashDone, (String, String)>> {
        let skip = |e: io::Error| {
            if e.kind() == io::ErrorKind::NotFound {
                (
                    "vanished".to_owned(),
                    "removed while the snapshot was taken".to_owned(),
                )
            } else {
                ("unreadable".to_owned(), format!("cannot read: {e}"))
            }
        };
        let mut file = match File::open(&job.path) {
            Ok(f) => f,
            Err(e) => return Ok(Err(skip(e))),
        };
        if job.size <= IN_MEMORY_LIMIT {
            buf.clear();
            if let Err(e) = file.read_to_end(buf) {
                return Ok(Err(skip(e)));
            }
            let hash = hex(&Sha256::digest(buf.as_slice()));
            let bytes = buf.len() as u64;
            let new_object = if self.object_path(&hash).is_file() {
                false
            } else {
                let tmp = self.object_temp(&hash)?;
                let written = File::create_new(&tmp).and_then(|mut f| f.write_all(buf));
                if let Err(e) = written {
                    let _ = fs::remove_file(&tmp);
                    return Err(io_err("write", &tmp)(e));
                }
                self.commit_object(&tmp, &hash)?
            };
            return Ok(Ok(HashDone {
                index: job.index,
                hash,
                bytes,
                new_object,
            }));
        }
        // Large file: hash first; copy only if the store lacks the content, hashing the copy
        // again so the object is always named by what it holds.
        let (hash, bytes) = match hash_reader(&mut file, None) {
            Ok(v) => v,
            Err(e) => return Ok(Err(skip(e))),
        };
        if self.object_path(&hash).is_file() {
            return Ok(Ok(HashDone {
                index: job.index,
                hash,
                bytes,
                new_object: false,
            }));
        }
        let mut file = match File::open(&job.path) {
            Ok(f) => f,
            Err(e) => return Ok(Err(skip(e))),
        };
        let tmp = self.object_temp(&hash)?;
        let mut out = File::create_new(&tmp).map_err(io_err("create", &tmp))?;
        let copied = hash_reader(&mut file, Some(&mut out));
        drop(out);
        let (hash, bytes) = match copied {
            Ok(v) => v,
            Err(e) => {
                let _ = fs::remove_file(&tmp);
                return Ok(Err(skip(e)));
            }
        };
        let new_object = self.commit_object(&tmp, &hash)?;
        Ok(Ok(HashDone {
            index: job.index,
            hash,
            bytes,
            new_object,
        }))
    }
}

/// Reads `r` to the end, hashing it and copying it to `out` if given.
pub(crate) fn hash_reader(
    r: &mut impl Read,
    mut out: Option<&mut File>,
) -> io::Result<(String, u64)> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; CHUNK];
    let mut total = 0u64;
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let chunk = buf.get(..n).unwrap_or_default();
        hasher.update(chunk);
        if let Some(out) = out.as_deref_mut() {
            out.write_all(chunk)?;
        }
        total += n as u64;
    }
    Ok((hex(&hasher.finalize()), total))
}

/// Lists `root/rel` recursively, children sorted by name, never following symlinks.
fn walk(
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

fn is_older(item: &fs::DirEntry, than: SystemTime) -> bool {
    item.metadata()
        .and_then(|m| m.modified())
        .is_ok_and(|t| t < than)
}

pub(crate) fn mtime_ns(meta: &Metadata) -> i64 {
    meta.mtime()
        .saturating_mul(1_000_000_000)
        .saturating_add(meta.mtime_nsec())
}

pub(crate) fn ctime_ns(meta: &Metadata) -> i64 {
    meta.ctime()
        .saturating_mul(1_000_000_000)
        .saturating_add(meta.ctime_nsec())
}

pub(crate) fn system_time(ns: i64) -> SystemTime {
    let d = std::time::Duration::from_nanos(ns.unsigned_abs());
    if ns >= 0 {
        UNIX_EPOCH + d
    } else {
        UNIX_EPOCH - d
    }
}

fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// Permission bits of `meta`, as stored.
pub(crate) fn mode_of(meta: &Metadata) -> u32 {
    meta.permissions().mode() & 0o7777
}

pub(crate) fn is_hex_sha256(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    s
}

fn fastrand_u32() -> u32 {
    // Temp names only need to differ between processes and calls; pid + counter do most of it.
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    t ^ std::process::id().rotate_left(16)
}

pub(crate) fn io_err(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> SandboxError {
    let path = path.display().to_string();
    move |source| SandboxError::Io {
        action,
        path,
        source,
    }
}
