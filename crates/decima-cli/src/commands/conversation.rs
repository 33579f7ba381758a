//! `decima conversation …`

use std::fmt::Write as _;
use std::path::Path;

use decima_core::NewMessage;
use decima_core::export::{ExportFormat, render_message};
use decima_store::Store;

use super::conversation_id;
use crate::args::ConversationCommand;
use crate::error::CliError;
use crate::output::{self, ConversationDetailJson, ConversationJson, MessageJson};

pub async fn run(store: &Store, command: ConversationCommand) -> Result<(), CliError> {
    match command {
        ConversationCommand::Import {
            file,
            title,
            preset,
        } => import(store, &file, title, preset.as_deref()).await,
        ConversationCommand::Create { title, preset } => {
            let preset = checked_preset(store, preset.as_deref()).await?;
            let conversation = store.conversations().create(&title, preset).await?;
            output::print(&format!("{}\n", conversation.id))
        }
        ConversationCommand::List { json, deleted } => list(store, json, deleted).await,
        ConversationCommand::Show { id, json } => show(store, &id, json).await,
        ConversationCommand::Rename { id, title } => {
            store
                .conversations()
                .rename(conversation_id(&id)?, &title)
                .await?;
            Ok(())
        }
        ConversationCommand::Delete { id } => {
            let id = conversation_id(&id)?;
            store.conversations().soft_delete(id).await?;
            eprintln!(
                "Moved conversation {id} to the trash; `decima conversation restore {id}` brings it back."
            );
            Ok(())
        }
        ConversationCommand::Pin { id, seq } => {
            store
                .messages()
                .set_pinned(conversation_id(&id)?, seq, true)
                .await?;
            Ok(())
        }
        ConversationCommand::Unpin { id, seq } => {
            store
                .messages()
                .set_pinned(conversation_id(&id)?, seq, false)
                .await?;
            Ok(())
        }
        ConversationCommand::Restore { id } => {
            store.conversations().restore(conversation_id(&id)?).await?;
            Ok(())
        }
    }
}

/// The preset id, checked to name a live preset (a deleted one still satisfies the foreign key).
async fn checked_preset<'a>(
    store: &Store,
    preset: Option<&'a str>,
) -> Result<Option<&'a str>, CliError> {
    if let Some(id) = preset {
        store.presets().get(id).await?;
    }
    Ok(preset)
}

/// Reads every line first and imports only if all of them are valid, in one transaction.
async fn import(
    store: &Store,
    file: &Path,
    title: Option<String>,
    preset: Option<&str>,
) -> Result<(), CliError> {
    let preset = checked_preset(store, preset).await?;
    let bytes = std::fs::read(file).map_err(|source| CliError::Io {
        action: "read",
        path: file.to_path_buf(),
        source,
    })?;
    let messages = parse_jsonl(file, &bytes)?;
    let title = title.unwrap_or_else(|| {
        file.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| "Imported conversation".into())
    });
    let conversation = store
        .conversations()
        .import(&title, preset, &messages)
        .await?;
    output::print(&format!("{}\n", conversation.id))
}

/// One chat message per line; blank lines are skipped; CRLF is accepted.
fn parse_jsonl(file: &Path, bytes: &[u8]) -> Result<Vec<NewMessage>, CliError> {
    let mut messages = Vec::new();
    for (index, raw) in bytes.split(|b| *b == b'\n').enumerate() {
        let line_no = index + 1;
        let bad = |problem: String| CliError::BadLine {
            path: file.to_path_buf(),
            line: line_no,
            problem,
        };
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let line = std::str::from_utf8(raw).map_err(|e| {
            bad(format!(
                "not valid UTF-8 (first bad byte at column {})",
                e.valid_up_to() + 1
            ))
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let message =
            decima_core::openai_jsonl::parse_line(line).map_err(|e| bad(e.to_string()))?;
        messages.push(message);
    }
    Ok(messages)
}

async fn list(store: &Store, json: bool, deleted: bool) -> Result<(), CliError> {
    let conversations = if deleted {
        store.conversations().list_deleted().await?
    } else {
        store.conversations().list().await?
    };
    if json {
        let rows: Vec<ConversationJson> =
            conversations.iter().map(ConversationJson::from).collect();
        return output::print_json(&rows);
    }
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{:<36}  {:>8}  {:>9}  {:<24}  TITLE",
        "ID", "MESSAGES", "TOKENS", "UPDATED"
    );
    for c in &conversations {
        let _ = writeln!(
            text,
            "{:<36}  {:>8}  {:>9}  {:<24}  {}",
            c.id,
            c.message_count,
            c.tokens,
            c.updated_at.to_rfc3339(),
            c.title
        );
    }
    output::print(&text)
}

async fn show(store: &Store, id: &str, json: bool) -> Result<(), CliError> {
    let id = conversation_id(id)?;
    let conversation = store.conversations().get(id).await?;
    let messages = store.messages().all(id).await?;
    if json {
        return output::print_json(&ConversationDetailJson {
            conversation: ConversationJson::from(&conversation),
            messages: messages.iter().map(MessageJson::from).collect(),
        });
    }
    let mut text = format!(
        "{}\n{}  ·  {} messages  ·  {} tokens  ·  updated {}\n\n",
        conversation.title,
        conversation.id,
        conversation.message_count,
        conversation.tokens,
        conversation.updated_at.to_rfc3339()
    );
    for m in &messages {
        render_message(ExportFormat::Text, m, &mut text);
    }
    output::print(&text)
}
