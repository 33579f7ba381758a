//! Where Decima keeps its files. The CLI and the desktop app share this, so both see one database.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use decima_core::TokenCounter;

use crate::{Result, Store, StoreError};

/// The database file's name inside the data directory.
pub const DATABASE_FILE: &str = "decima.db";

/// The OS data directory's `decima/` (`~/.local/share/decima` on Linux, `%APPDATA%\decima` on
/// Windows, `~/Library/Application Support/decima` on macOS), or `None` where the OS has no home
/// directory.
pub fn default_data_dir() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|dirs| dirs.data_dir().join("decima"))
}

impl Store {
    /// Creates the data directory if needed and opens `decima.db` inside it.
    pub async fn open_in_dir(dir: &Path, counter: Arc<dyn TokenCounter>) -> Result<Self> {
        let unusable = |reason: String| StoreError::DataDir {
            path: dir.to_path_buf(),
            reason,
        };
        std::fs::create_dir_all(dir).map_err(|e| unusable(e.to_string()))?;
        if !dir.is_dir() {
            return Err(unusable("it is not a directory".into()));
        }
        Store::open(&dir.join(DATABASE_FILE), counter).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(windows)]
    #[test]
    fn on_windows_it_is_the_roaming_app_data_folder() {
        let app_data = std::env::var_os("APPDATA").expect("Windows sets APPDATA");
        assert_eq!(
            default_data_dir(),
            Some(PathBuf::from(app_data).join("decima"))
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn on_linux_it_follows_xdg() {
        let dir = default_data_dir().expect("a home directory");
        let expected = std::env::var_os("XDG_DATA_HOME")
            .filter(|d| std::path::Path::new(d).is_absolute())
            .map_or_else(
                || {
                    PathBuf::from(std::env::var_os("HOME").expect("HOME"))
                        .join(".local")
                        .join("share")
                },
                PathBuf::from,
            );
        assert_eq!(dir, expected.join("decima"));
    }
}
