//! Importing SillyTavern character cards and prompt presets: the rules the CLI's `decima
//! import` and the window's drag-and-drop share.

use decima_core::prompt::{ImportKind, import_detected};
use decima_store::{PresetRecord, Store};
use tracing::info;

use crate::error::{Result, RuntimeError};

/// Larger files are not cards or presets.
pub const MAX_IMPORT_BYTES: usize = 32 * 1024 * 1024;

/// Detects what `bytes` hold (a card as JSON or PNG, or a prompt preset), converts it and
/// stores it as a preset. `file_name` names a preset whose own name is empty, and is kept as
/// its source. Malformed input is refused with what is wrong, and nothing is stored.
pub async fn import(store: &Store, file_name: Option<&str>, bytes: &[u8]) -> Result<PresetRecord> {
    if bytes.len() > MAX_IMPORT_BYTES {
        return Err(RuntimeError::Config(format!(
            "the file is {} bytes; cards and presets are at most 32 MiB",
            bytes.len()
        )));
    }
    let (kind, preset) = import_detected(bytes)?;
    let stem = file_name
        .map(std::path::Path::new)
        .and_then(|p| p.file_stem())
        .map(|s| s.to_string_lossy().into_owned());
    let name = if preset.name.trim().is_empty() {
        stem.unwrap_or_else(|| "Imported preset".into())
    } else {
        preset.name.clone()
    };
    let body = serde_json::to_value(&preset)
        .map_err(|e| RuntimeError::Config(format!("the preset cannot be stored: {e}")))?;
    let kind = match kind {
        ImportKind::Card => "st_card",
        ImportKind::Preset => "st_preset",
    };
    let record = store
        .presets()
        .create(&name, kind, file_name, &body)
        .await?;
    info!(preset = %record.id, kind, "preset imported");
    Ok(record)
}
