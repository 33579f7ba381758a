//! `decima export ID [--format text|jsonl|md] [-o FILE [--full]]`

use std::io::Write as _;
use std::path::Path;

use decima_core::Message;
use decima_core::export::{ExportFormat, render_message};
use decima_store::{Conversation, Store};

use super::conversation_id;
use crate::args::ExportFormatArg;
use crate::error::CliError;
use crate::output;

pub async fn run(
    store: &Store,
    id: &str,
    format: ExportFormatArg,
    output: Option<&Path>,
    full: bool,
) -> Result<(), CliError> {
    let id = conversation_id(id)?;
    // Fails with "not found" before anything is written.
    let conversation = store.conversations().get(id).await?;
    let format = match format {
        ExportFormatArg::Text => ExportFormat::Text,
        ExportFormatArg::Jsonl => ExportFormat::Jsonl,
        ExportFormatArg::Md => ExportFormat::Markdown,
    };
    match output {
        None => {
            let messages = store.messages().all(id).await?;
            output::print(&render(&conversation, format, &messages, true))
        }
        Some(path) => export_to_file(store, &conversation, format, path, full).await,
    }
}

fn format_name(format: ExportFormat) -> &'static str {
    match format {
        ExportFormat::Text => "text",
        ExportFormat::Jsonl => "jsonl",
        ExportFormat::Markdown => "md",
    }
}

fn render(
    conversation: &Conversation,
    format: ExportFormat,
    messages: &[Message],
    with_header: bool,
) -> String {
    let mut text = String::new();
    if with_header && format == ExportFormat::Markdown {
        text.push_str(&format!("# {}\n\n", conversation.title));
    }
    for m in messages {
        render_message(format, m, &mut text);
    }
    text
}

/// Appends what is new when the file is exactly as the last export left it (same format, same
/// length, no message rolled back since); otherwise rewrites it whole.
async fn export_to_file(
    store: &Store,
    conversation: &Conversation,
    format: ExportFormat,
    path: &Path,
    full: bool,
) -> Result<(), CliError> {
    let io_error = |source| CliError::Io {
        action: "write",
        path: path.to_path_buf(),
        source,
    };
    let path = std::path::absolute(path).map_err(io_error)?;
    let key = path.to_string_lossy().into_owned();
    let id = conversation.id;
    let previous = store.exports().get(id, &key).await?;
    let on_disk = std::fs::metadata(&path).ok().map(|m| m.len());
    let mut append_after = None;
    if let Some(previous) =
        previous.filter(|p| !full && p.format == format_name(format) && Some(p.bytes) == on_disk)
        && store
            .messages()
            .deleted_since(id, previous.updated_at)
            .await?
            == 0
    {
        append_after = Some(previous.last_seq);
    }
    let (written, last_seq, bytes) = match append_after {
        Some(last_seq) => {
            let new = store.messages().range(id, last_seq + 1, i64::MAX).await?;
            if new.is_empty() {
                eprintln!("{} is up to date", path.display());
                return Ok(());
            }
            let bytes = append(&path, render(conversation, format, &new, false).as_bytes())
                .map_err(io_error)?;
            (new.len(), new.last().map_or(last_seq, |m| m.seq), bytes)
        }
        None => {
            let messages = store.messages().all(id).await?;
            let text = render(conversation, format, &messages, true);
            write_atomically(&path, text.as_bytes()).map_err(io_error)?;
            (
                messages.len(),
                messages.last().map_or(0, |m| m.seq),
                text.len() as u64,
            )
        }
    };
    store
        .exports()
        .record(id, &key, format_name(format), last_seq, bytes)
        .await?;
    let verb = if append_after.is_some() {
        "appended"
    } else {
        "wrote"
    };
    eprintln!("{verb} {written} messages to {}", path.display());
    Ok(())
}

/// Appends; returns the file's new length. No fsync: the length recorded in SQLite is the check,
/// so a file that lost its tail in a crash has another length and is rewritten whole.
fn append(path: &Path, bytes: &[u8]) -> std::io::Result<u64> {
    let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
    file.write_all(bytes)?;
    Ok(file.metadata()?.len())
}

/// Writes beside the target and renames over it, so a reader never sees half a file and a failed
/// export leaves any previous file intact.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
