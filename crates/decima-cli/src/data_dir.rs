//! Finding the data directory and opening the store inside it.

use decima_store::Store;
use std::path::{Path, PathBuf};

use crate::error::CliError;

/// The directory to use: the flag or `DECIMA_DATA_DIR` (clap merges both), else the OS default
/// that the desktop app uses too.
pub fn resolve(flag: Option<PathBuf>) -> Result<PathBuf, CliError> {
    flag.or_else(decima_store::default_data_dir)
        .ok_or(CliError::NoDataDir)
}

/// Creates the directory if needed and opens the store in it, pricing messages with the same
/// tokenizer as the desktop app.
pub async fn open_store(dir: &Path) -> Result<Store, CliError> {
    let store = Store::open_in_dir(dir, decima_llm::tokens::store_counter()).await?;
    tracing::debug!(data_dir = %dir.display(), "store opened");
    Ok(store)
}
