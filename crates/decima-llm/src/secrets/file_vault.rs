//! The 0600 `secrets.json` in the data directory: where keys go when no keyring service runs.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Result, SECRETS_FILE, SecretString};
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
/// The 0600 fallback file. Writes go to a 0600 temp file that is renamed over the old one, under
/// an exclusive lock, so readers see the old or the new file and concurrent writers lose nothing.
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
    #[cfg(unix)]
    pub(super) fn tighten_permissions(&self) -> Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let meta = fs::metadata(&self.path).map_err(|e| self.io("inspect", &self.path, e))?;
        if meta.permissions().mode() & 0o077 != 0 {
            fs::set_permissions(&self.path, fs::Permissions::from_mode(0o600))
                .map_err(|e| self.io("restrict the permissions of", &self.path, e))?;
        }
        Ok(())
    }

    #[cfg(not(unix))]
    pub(super) fn tighten_permissions(&self) -> Result<()> {
        Ok(())
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
        sync_dir(&self.dir);
        Ok(())
    }

    /// Takes the cross-process write lock, creating the data directory (0700) if needed.
    pub(super) fn lock(&self) -> Result<File> {
        create_private_dir(&self.dir).map_err(|e| self.io("create", &self.dir, e))?;
        let path = self.dir.join(LOCK_FILE);
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let file = options.open(&path).map_err(|e| self.io("open", &path, e))?;
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
/// Creates the file with mode 0600 from the start (never world-readable, even briefly), then
/// writes and flushes it to disk.
fn write_private(path: &Path, contents: &[u8]) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(contents)?;
    file.sync_all()
}
fn create_private_dir(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}
/// Makes the rename durable. Best effort: some filesystems refuse to sync a directory.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}
