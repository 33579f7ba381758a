//! The per-workspace stat cache: a file whose size, mtime, ctime and inode are unchanged is not
//! read again.

use std::collections::HashMap;
use std::fs::{self, Metadata};
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{RACY_WINDOW_NS, SnapshotStore, State, hex};
use crate::error::{Result, SandboxError};

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

impl SnapshotStore {
    fn cache_file(&self, key: &Path) -> PathBuf {
        use std::os::unix::ffi::OsStrExt;
        let digest = hex(&Sha256::digest(key.as_os_str().as_bytes()));
        self.root
            .join("cache")
            .join(format!("{}.json", &digest[..32]))
    }

    /// The stat cache for a workspace: from memory, else from disk, else empty (a damaged cache
    /// file only costs rehashing).
    pub(super) fn cache_for(&self, state: &mut State, key: &Path) -> StatCache {
        if let Some(cache) = state.caches.remove(key) {
            return cache;
        }
        fs::read(self.cache_file(key))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    pub(super) fn save_cache(
        &self,
        state: &mut State,
        key: PathBuf,
        cache: StatCache,
    ) -> Result<()> {
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

pub(super) fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// Permission bits of `meta`, as stored.
pub(crate) fn mode_of(meta: &Metadata) -> u32 {
    meta.permissions().mode() & 0o7777
}
