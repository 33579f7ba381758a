//! The per-workspace stat cache: a file whose [`Stamp`] is unchanged (on Unix its size, mtime,
//! ctime and inode; on Windows its size, times, attributes and file id) is not read again.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::platform::Stamp;
use super::{RACY_WINDOW_NS, SnapshotStore, State, hex};
use crate::error::{Result, SandboxError};

/// One file's identity, with the hash it had. The stamp's fields sit beside `hash` in the JSON,
/// so the Unix cache file reads as it always has.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CachedStat {
    /// The file's identity when it was hashed.
    #[serde(flatten)]
    pub(crate) stamp: Stamp,
    /// Its content's hash then.
    pub(crate) hash: String,
}

impl CachedStat {
    /// Whether `stamp` is the same file, unchanged, as when this entry was made.
    pub(crate) fn matches(&self, stamp: &Stamp) -> bool {
        self.stamp == *stamp
    }

    /// An entry for `stamp`, or `None` when the file changed too recently to trust (see
    /// [`RACY_WINDOW_NS`]).
    pub(crate) fn trusted(stamp: &Stamp, hash: String, walk_start_ns: i64) -> Option<Self> {
        (stamp.settled_ns() < walk_start_ns.saturating_sub(RACY_WINDOW_NS)).then(|| Self {
            stamp: stamp.clone(),
            hash,
        })
    }
}

/// Workspace-relative encoded path → stat.
pub(crate) type StatCache = HashMap<String, CachedStat>;

impl SnapshotStore {
    fn cache_file(&self, key: &Path) -> PathBuf {
        // Raw bytes on Unix, WTF-8 on Windows: either way one name per workspace path.
        let digest = hex(&Sha256::digest(key.as_os_str().as_encoded_bytes()));
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

    /// Writes a workspace's stat cache to disk and keeps it in memory for the next operation.
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

/// A manifest's nanoseconds since the Unix epoch as a time to set on a file.
pub(crate) fn system_time(ns: i64) -> SystemTime {
    let d = std::time::Duration::from_nanos(ns.unsigned_abs());
    if ns >= 0 {
        UNIX_EPOCH + d
    } else {
        UNIX_EPOCH - d
    }
}

/// Now, in nanoseconds since the Unix epoch (the racy window's reference).
pub(super) fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}
