//! `decima export ID [--format text|jsonl|md] [-o FILE]`

use std::io::Write as _;
use std::path::Path;

use decima_core::export::{ExportFormat, render_message};
use decima_store::Store;

use super::conversation_id;
use crate::args::ExportFormatArg;
use crate::error::CliError;
use crate::output;

pub async fn run(
    store: &Store,
    id: &str,
    format: ExportFormatArg,
    output: Option<&Path>,
) -> Result<(), CliError> {
    let id = conversation_id(id)?;
    // Fails with "not found" before anything is written.
    let conversation = store.conversations().get(id).await?;
    let messages = store.messages().all(id).await?;
    let format = match format {
        ExportFormatArg::Text => ExportFormat::Text,
        ExportFormatArg::Jsonl => ExportFormat::Jsonl,
        ExportFormatArg::Md => ExportFormat::Markdown,
    };
    let mut text = String::new();
    if format == ExportFormat::Markdown {
        text.push_str(&format!("# {}\n\n", conversation.title));
    }
    for m in &messages {
        render_message(format, m, &mut text);
    }
    match output {
        None => output::print(&text),
        Some(path) => write_atomically(path, text.as_bytes()),
    }
}

/// Writes beside the target and renames over it, so a reader never sees half a file and a failed
/// export leaves any previous file intact.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let io_error = |source| CliError::Io {
        action: "write",
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io_error)?;
    tmp.write_all(bytes).map_err(io_error)?;
    tmp.as_file().sync_all().map_err(io_error)?;
    tmp.persist(path).map_err(|e| io_error(e.error))?;
    Ok(())
}
