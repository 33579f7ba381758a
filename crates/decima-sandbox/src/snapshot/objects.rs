//! The object store: file contents by SHA-256, hashed on a few threads and written once (temp
//! file and rename).

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use super::{SnapshotStore, TEMP_PREFIX, hex, io_err, platform};
use crate::error::{Result, SandboxError};

/// Files up to this size are read into memory once; larger ones are streamed.
const IN_MEMORY_LIMIT: u64 = 8 * 1024 * 1024;

const CHUNK: usize = 256 * 1024;

/// A file whose content must be read.
pub(super) struct HashJob {
    pub(super) index: usize,
    pub(super) path: PathBuf,
    pub(super) size: u64,
}

pub(super) struct HashDone {
    pub(super) index: usize,
    pub(super) hash: String,
    pub(super) bytes: u64,
    pub(super) new_object: bool,
}

impl SnapshotStore {
    pub(crate) fn object_path(&self, hash: &str) -> PathBuf {
        let prefix = hash.get(..2).unwrap_or("xx");
        self.root.join("objects").join(prefix).join(hash)
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
    pub(super) fn write_atomic(&self, path: &Path, bytes: &[u8], replace: bool) -> Result<()> {
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
    pub(super) fn hash_all(
        &self,
        jobs: &[HashJob],
    ) -> Result<(Vec<HashDone>, Vec<(usize, String, String)>)> {
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
            } else if platform::in_use(&e) {
                (
                    "unreadable".to_owned(),
                    format!("open in another program that does not let others read it: {e}"),
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

fn fastrand_u32() -> u32 {
    // Temp names only need to differ between processes and calls; pid + counter do most of it.
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    t ^ std::process::id().rotate_left(16)
}
