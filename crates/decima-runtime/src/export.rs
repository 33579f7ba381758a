//! History export: a conversation as text, JSONL or markdown, written to a file incrementally.
//! Subagents grep these files, so an export appends only what is new since the last one.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use decima_core::export::{ExportFormat, render_message};
use decima_core::{Message, Role};
use decima_store::{Conversation, Store};
use tracing::{debug, info_span};

use crate::error::{Result, RuntimeError};
use crate::figures::{ConversationLedger, conversation_files, footnoted};

/// The stored name of a format, used to check that an append continues the same format.
pub fn format_name(format: ExportFormat) -> &'static str {
    match format {
        ExportFormat::Text => "text",
        ExportFormat::Jsonl => "jsonl",
        ExportFormat::Markdown => "md",
    }
}

/// Renders messages; `with_header` adds the markdown title line. With a conversation's
/// ledger, a Markdown export gives each figure of an answer a footnote with its source.
pub fn render(
    conversation: &Conversation,
    format: ExportFormat,
    messages: &[Message],
    with_header: bool,
    figures: Option<&ConversationLedger<'_>>,
) -> String {
    let mut text = String::new();
    if with_header && format == ExportFormat::Markdown {
        text.push_str(&format!("# {}\n\n", conversation.title));
    }
    for m in messages {
        match figures {
            Some(ledger) if m.role == Role::Assistant && !m.content.is_empty() => {
                let checked = ledger.check(m);
                if checked.is_empty() {
                    render_message(format, m, &mut text);
                    continue;
                }
                let (content, notes) = footnoted(m, &checked);
                let marked = Message {
                    content,
                    ..m.clone()
                };
                render_message(format, &marked, &mut text);
                text.push_str(&notes);
                text.push('\n');
            }
            _ => render_message(format, m, &mut text),
        }
    }
    text
}

/// The ledger a Markdown export's footnotes cite: `messages` and the files every run of them
/// read or wrote. None for the other formats, which have no footnotes.
pub async fn footnote_ledger<'m>(
    store: &Store,
    data_dir: &Path,
    format: ExportFormat,
    messages: &'m [Message],
) -> Result<Option<ConversationLedger<'m>>> {
    if format != ExportFormat::Markdown {
        return Ok(None);
    }
    let files = conversation_files(store, data_dir, messages).await?;
    Ok(Some(ConversationLedger::with_files(messages, files)))
}

/// What an export to a file did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportOutcome {
    /// The absolute path written.
    pub path: PathBuf,
    /// Messages written (appended or in the rewrite).
    pub messages: usize,
    /// True when the file was appended to rather than rewritten.
    pub appended: bool,
}

/// Appends what is new when the file is exactly as the last export left it (same format, same
/// length, no message rolled back since); otherwise rewrites it whole. `full` forces a rewrite.
pub async fn export_to_file(
    store: &Store,
    data_dir: &Path,
    conversation: &Conversation,
    format: ExportFormat,
    path: &Path,
    full: bool,
) -> Result<ExportOutcome> {
    let span = info_span!("export", conversation = %conversation.id, format = format_name(format));
    let _entered = span.enter();
    let io_error = |source| RuntimeError::Io {
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
                return Ok(ExportOutcome {
                    path,
                    messages: 0,
                    appended: true,
                });
            }
            // The new answers' figures rest on the whole history, not only on what is new.
            let history = if format == ExportFormat::Markdown {
                store.messages().all(id).await?
            } else {
                Vec::new()
            };
            let ledger = footnote_ledger(store, data_dir, format, &history).await?;
            let text = render(conversation, format, &new, false, ledger.as_ref());
            let bytes = append(&path, text.as_bytes()).map_err(io_error)?;
            (new.len(), new.last().map_or(last_seq, |m| m.seq), bytes)
        }
        None => {
            let messages = store.messages().all(id).await?;
            let ledger = footnote_ledger(store, data_dir, format, &messages).await?;
            let text = render(conversation, format, &messages, true, ledger.as_ref());
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
    debug!(
        messages = written,
        appended = append_after.is_some(),
        "exported"
    );
    Ok(ExportOutcome {
        path,
        messages: written,
        appended: append_after.is_some(),
    })
}

/// The conversation as a notebook that runs again (see [`crate::notebook`]), as text: its
/// answers' figures footnoted from every run's outputs and files, its host workspaces' paths
/// made relative.
pub async fn notebook_text(
    store: &Store,
    data_dir: &Path,
    conversation: &Conversation,
) -> Result<(String, usize)> {
    let messages = store.messages().all(conversation.id).await?;
    let ledger = footnote_ledger(store, data_dir, ExportFormat::Markdown, &messages).await?;
    let mut host_workspaces: Vec<String> = store
        .executions()
        .list_by_conversation(conversation.id)
        .await?
        .into_iter()
        .filter(|e| e.sandbox == decima_store::SandboxKind::Host)
        .filter_map(|e| e.workspace)
        .collect();
    host_workspaces.sort();
    host_workspaces.dedup();
    let text = crate::notebook::render(conversation, &messages, ledger.as_ref(), &host_workspaces);
    Ok((text, messages.len()))
}

/// Writes the conversation as a notebook to `path` (whole, atomically: a notebook is one JSON
/// document, never appended to).
pub async fn export_notebook(
    store: &Store,
    data_dir: &Path,
    conversation: &Conversation,
    path: &Path,
) -> Result<ExportOutcome> {
    let io_error = |source| RuntimeError::Io {
        action: "write",
        path: path.to_path_buf(),
        source,
    };
    let path = std::path::absolute(path).map_err(io_error)?;
    let (text, messages) = notebook_text(store, data_dir, conversation).await?;
    write_atomically(&path, text.as_bytes()).map_err(io_error)?;
    Ok(ExportOutcome {
        path,
        messages,
        appended: false,
    })
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
