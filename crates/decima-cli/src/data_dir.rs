//! Finding the data directory and opening the store inside it.

use decima_store::{Store, StoreLocation};
use std::path::{Path, PathBuf};

use crate::error::CliError;

/// The directory to use: the flag or `DECIMA_DATA_DIR` (clap merges both), else the OS default
/// that the desktop app uses too.
pub fn resolve(flag: Option<PathBuf>) -> Result<PathBuf, CliError> {
    flag.or_else(decima_store::default_data_dir)
        .ok_or(CliError::NoDataDir)
}

/// Where the store is: `--database-url` (or `DECIMA_DATABASE_URL`) when given, else the shared
/// database the desktop's Settings saved for this data directory (its password from the secret
/// store), else the SQLite file in the data directory.
pub async fn location(dir: &Path, database_url: Option<&str>) -> Result<StoreLocation, CliError> {
    let (location, _source) = decima_runtime::database::location(dir, database_url).await?;
    Ok(location)
}

/// Opens the store, creating the data directory (or another SQLite file's folder) if needed,
/// pricing messages with the same tokenizer as the desktop app.
pub async fn open_store(dir: &Path, location: &StoreLocation) -> Result<Store, CliError> {
    let counter = decima_llm::tokens::store_counter();
    let store = match location {
        StoreLocation::Sqlite(path) if *path == dir.join(decima_store::DATABASE_FILE) => {
            Store::open_in_dir(dir, counter).await?
        }
        StoreLocation::Sqlite(path) => {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|source| CliError::Io {
                    action: "create",
                    path: parent.to_path_buf(),
                    source,
                })?;
            }
            Store::connect(location, counter).await?
        }
        StoreLocation::Postgres(_) => Store::connect(location, counter).await?,
    };
    tracing::debug!(store = %location, "store opened");
    Ok(store)
}
