//! Garbage collection: manifests that are not live go, then objects no live manifest uses.

use std::collections::HashSet;
use std::fs;
use std::time::SystemTime;

use super::{Entry, GcStats, SnapshotId, SnapshotStore, TEMP_PREFIX, io_err};
use crate::error::{Result, SandboxError};

impl SnapshotStore {
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
        let Some(_exclusive) = self.lock_exclusive_if_free()? else {
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
}

fn is_older(item: &fs::DirEntry, than: SystemTime) -> bool {
    item.metadata()
        .and_then(|m| m.modified())
        .is_ok_and(|t| t < than)
}
