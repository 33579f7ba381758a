//! A conversation from a JSONL history file: the format `decima export --format jsonl` and the
//! window's JSONL export write, and OpenAI-style chat logs. The CLI's `conversation import`, the
//! window's picker and a file dropped on the window all come through here.

use std::path::Path;

use decima_core::CoreError;
use decima_store::{Conversation, Store};

use crate::error::{Result, RuntimeError};

/// The title when the file's name gives none.
const UNTITLED: &str = "Imported conversation";

/// Reads `path`, checks every line, and stores the messages as a new conversation in one
/// transaction: a bad line stores nothing and names the line. The title is `title`, else the
/// file's stem.
pub async fn conversation_file(
    store: &Store,
    path: &Path,
    title: Option<String>,
    preset: Option<&str>,
) -> Result<Conversation> {
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|source| RuntimeError::Io {
            action: "read",
            path: path.to_path_buf(),
            source,
        })?;
    let messages = decima_core::openai_jsonl::parse_document(&bytes).map_err(|e| match e {
        CoreError::BadLine { line, problem } => RuntimeError::ImportLine {
            path: path.to_path_buf(),
            line,
            problem,
        },
        other => RuntimeError::Core(other),
    })?;
    let title = title.unwrap_or_else(|| title_from(path));
    let conversation = store
        .conversations()
        .import(&title, preset, &messages)
        .await?;
    tracing::info!(messages = messages.len(), "imported a conversation");
    Ok(conversation)
}

/// The file's stem, or a stand-in when it is blank.
fn title_from(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| UNTITLED.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_is_the_file_stem_or_a_stand_in() {
        assert_eq!(
            title_from(Path::new("/x/Q3 ledger 2026-11-26.jsonl")),
            "Q3 ledger 2026-11-26"
        );
        assert_eq!(title_from(Path::new("/x/  .jsonl")), UNTITLED);
    }
}
