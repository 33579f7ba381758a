//! `decima import FILE`: a SillyTavern character card (JSON or PNG) or prompt preset becomes a
//! Decima preset; prints its id.

use std::path::Path;

use decima_store::Store;

use crate::error::CliError;
use crate::output;

/// Larger files are not cards or presets; the importer refuses them too, this just avoids reading
/// a huge file into memory first.
const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;

pub async fn run(store: &Store, file: &Path) -> Result<(), CliError> {
    let io = |source| CliError::Io {
        action: "read",
        path: file.to_path_buf(),
        source,
    };
    let size = std::fs::metadata(file).map_err(io)?.len();
    if size > MAX_FILE_BYTES {
        return Err(CliError::Provider(format!(
            "{} is {size} bytes; cards and presets are at most 32 MiB",
            file.display()
        )));
    }
    let bytes = std::fs::read(file).map_err(io)?;
    let source = file.file_name().map(|n| n.to_string_lossy().into_owned());
    let record = decima_runtime::presets::import(store, source.as_deref(), &bytes).await?;
    output::print(&format!("{}\n", record.id))
}
