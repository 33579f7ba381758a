//! Finding and preparing the data directory, and opening the store inside it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use decima_core::EstimateCounter;
use decima_store::Store;

use crate::error::CliError;

/// The database file's name inside the data directory.
pub const DATABASE_FILE: &str = "decima.db";

/// The directory to use: the flag or `DECIMA_DATA_DIR` (clap merges both), else the OS data
/// directory's `decima/`.
pub fn resolve(flag: Option<PathBuf>) -> Result<PathBuf, CliError> {
    match flag {
        Some(dir) => Ok(dir),
        None => directories::BaseDirs::new()
            .map(|dirs| dirs.data_dir().join("decima"))
            .ok_or(CliError::NoDataDir),
    }
}

/// Creates the directory if needed and opens the store in it.
pub async fn open_store(dir: &Path) -> Result<Store, CliError> {
    std::fs::create_dir_all(dir).map_err(|e| CliError::DataDir {
        path: dir.to_path_buf(),
        reason: e.to_string(),
    })?;
    if !dir.is_dir() {
        return Err(CliError::DataDir {
            path: dir.to_path_buf(),
            reason: "it is not a directory".into(),
        });
    }
    Ok(Store::open(&dir.join(DATABASE_FILE), Arc::new(EstimateCounter)).await?)
}
