//! The owner-only `secrets.json` in the data directory (0600 on unix, a DACL of the user alone
//! on Windows, see `private`): where keys go when no keyring service runs.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Result, SECRETS_FILE, SecretString, private};
use crate::LlmError;

/// Serialises writers of `secrets.json` across processes (the CLI and the app share the file).
const LOCK_FILE: &str = "secrets.json.lock";
/// The only format of `secrets.json` this build reads and writes.
const FILE_VERSION: u64 = 1;
/// The layout of `secrets.json`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SecretsFile {
    version: u64,
    keys: BTreeMap<String, String>,
}
/// The owner-only fallback file. Writes go to an owner-only temp file that is renamed over the
/// old one, under an exclusive lock, so readers see the old or the new file and concurrent
/// writers lose nothing.
pub(super) struct FileVault {
    dir: PathBuf,
    /// Where the file is: warnings and errors name it.
    pub(super) path: PathBuf,
}
impl FileVault {
    pub(super) fn new(data_dir: &Path) -> Self {
        Self {
            dir: data_dir.to_path_buf(),
            path: data_dir.join(SECRETS_FILE),
        }
    }

    pub(super) fn exists(&self) -> bool {
        self.path.exists()
    }

    pub(super) fn get(&self, provider: &str) -> Result<Option<SecretString>> {
        Ok(self.read()?.remove(provider).map(SecretString))
    }

    pub(super) fn set(&self, provider: &str, key: &str) -> Result<()> {
        let _lock = self.lock()?;
        let mut keys = self.read()?;
        keys.insert(provider.to_string(), key.to_string());
        self.write(keys)
    }

    pub(super) fn remove(&self, provider: &str) -> Result<bool> {
        let _lock = self.lock()?;
        let mut keys = self.read()?;
        if keys.remove(provider).is_none() {
            return Ok(false);
        }
        self.write(keys)?;
        Ok(true)
    }

    /// The stored keys; a missing file is an empty one.
    pub(super) fn read(&self) -> Result<BTreeMap<String, String>> {
        let bytes = match fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(source) => return Err(self.io("read", &self.path, source)),
        };
        self.tighten_permissions()?;
        let file: SecretsFile =
            serde_json::from_slice(&bytes).map_err(|e| LlmError::CorruptSecretsFile {
                path: self.path.clone(),
                problem: match e.classify() {
                    serde_json::error::Category::Data => "not the expected layout",
                    _ => "not valid JSON",
                },
                line: e.line(),
                column: e.column(),
            })?;
        if file.version != FILE_VERSION {
            return Err(LlmError::UnsupportedSecretsFile {
                path: self.path.clone(),
                version: file.version,
            });
        }
        Ok(file.keys)
    }

    /// A file someone loosened (by hand or by copying) is made private again before use.
    pub(super) fn tighten_permissions(&self) -> Result<()> {
        private::tighten(&self.path).map_err(|(action, e)| self.io(action, &self.path, e))
    }

    pub(super) fn write(&self, keys: BTreeMap<String, String>) -> Result<()> {
        let file = SecretsFile {
            version: FILE_VERSION,
            keys,
        };
        // Encoding a map of strings cannot fail; serde_json's text is dropped all the same,
        // since it can quote content.
        let mut json = serde_json::to_vec_pretty(&file).map_err(|_| {
            let e = io::Error::new(io::ErrorKind::InvalidData, "cannot encode the keys");
            self.io("write", &self.path, e)
        })?;
        json.push(b'\n');
        let tmp = self.dir.join(format!(
            ".{SECRETS_FILE}.{}.{:016x}.tmp",
            std::process::id(),
            fastrand::u64(..)
        ));
        let written = write_private(&tmp, &json).and_then(|()| fs::rename(&tmp, &self.path));
        if let Err(source) = written {
            let _ = fs::remove_file(&tmp);
            return Err(self.io("write", &self.path, source));
        }
        private::sync_dir(&self.dir);
        Ok(())
    }

    /// Takes the cross-process write lock, creating the data directory (private) if needed.
    pub(super) fn lock(&self) -> Result<File> {
        private::create_private_dir(&self.dir).map_err(|e| self.io("create", &self.dir, e))?;
        let path = self.dir.join(LOCK_FILE);
        let file = private::open_lock(&path).map_err(|e| self.io("open", &path, e))?;
        file.lock().map_err(|e| self.io("lock", &path, e))?;
        Ok(file)
    }

    pub(super) fn io(&self, action: &'static str, path: &Path, source: io::Error) -> LlmError {
        LlmError::SecretsIo {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}
/// Creates the file owner-only from the start (never readable by anyone else, even briefly),
/// then writes and flushes it to disk.
fn write_private(path: &Path, contents: &[u8]) -> io::Result<()> {
    let mut file = private::create_new(path)?;
    file.write_all(contents)?;
    file.sync_all()
}
