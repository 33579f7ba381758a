//! Files the analyst adds to a conversation's workspace (dropped on the window, or picked):
//! each is copied in under its own name (never over a file already there: `name (2).ext`),
//! noted as a `workspace.added` event, and announced to the agent at the end of the next
//! message the analyst sends, so "drop a CSV, ask a question" works without naming the file.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use decima_core::ConversationId;
use decima_store::Store;
use serde_json::json;
use tracing::info;

use super::place::WorkspacePlace;
use super::{ADDED_EVENT, ANNOUNCED_EVENT};
use crate::error::{Result, RuntimeError};

/// The most added files one announcement names; past it, it counts the rest.
const ANNOUNCED_NAMES: usize = 50;
/// Added-file events read back for an announcement.
const EVENTS_READ: u32 = 1_000;

/// A file copied into the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedFile {
    /// Where it is in the workspace.
    pub path: String,
    /// Bytes copied.
    pub size: u64,
}

/// Copies each host file of `from` into the workspace's top folder. Stops at the first that
/// fails (a folder, an unreadable file): those before it stay added and noted.
pub async fn add_files(
    store: &Store,
    place: &WorkspacePlace,
    conversation: ConversationId,
    from: &[PathBuf],
) -> Result<Vec<AddedFile>> {
    let mut taken: HashSet<String> = place
        .sandbox
        .list_files()
        .await
        .map_err(RuntimeError::Workspace)?
        .into_iter()
        .map(|f| f.path)
        .collect();
    let mut added = Vec::new();
    for source in from {
        if !source.is_file() {
            return Err(RuntimeError::Config(format!(
                "{} is not a file; only files are copied into the workspace (drop the files \
                 inside a folder)",
                source.display()
            )));
        }
        let name = file_name(source);
        let path = free_name(&name, &taken);
        let written = place
            .sandbox
            .copy_in(source.clone(), path.clone())
            .await
            .map_err(RuntimeError::Workspace)?;
        let size = written.bytes as u64;
        store
            .events()
            .append(
                None,
                Some(conversation),
                ADDED_EVENT,
                &json!({"path": path, "size": size, "name": name}),
            )
            .await?;
        info!(bytes = size, "a file was added to the workspace");
        taken.insert(path.clone());
        added.push(AddedFile { path, size });
    }
    Ok(added)
}

/// What the next message says about files added since the last announcement, and the id of
/// the newest added event it covers (to mark once the message is stored); `None` when nothing
/// was added since.
pub async fn pending_announcement(
    store: &Store,
    conversation: ConversationId,
) -> Result<Option<(String, i64)>> {
    Ok(pending(store, conversation)
        .await?
        .map(|(files, through)| (announcement(&files), through)))
}

/// The workspace paths the next message will name (added since the last announcement),
/// oldest first: what the window's notice says, from the store, so it neither comes back
/// after the message named them nor goes before.
pub async fn pending_paths(store: &Store, conversation: ConversationId) -> Result<Vec<String>> {
    Ok(pending(store, conversation)
        .await?
        .map(|(files, _)| files.into_iter().map(|(path, _)| path).collect())
        .unwrap_or_default())
}

/// The files added since the last announcement (path and size, oldest first) and the id of
/// the newest added event; `None` when nothing was added since.
async fn pending(
    store: &Store,
    conversation: ConversationId,
) -> Result<Option<(Vec<(String, u64)>, i64)>> {
    let events = store
        .events()
        .in_tree_of_kinds(conversation, &[ADDED_EVENT, ANNOUNCED_EVENT], EVENTS_READ)
        .await?;
    // Newest first: the added events before the newest announcement of this conversation.
    let mut files = Vec::new();
    let mut newest = None;
    for event in &events {
        if event.conversation_id != Some(conversation) {
            continue;
        }
        if event.kind == ANNOUNCED_EVENT {
            break;
        }
        newest.get_or_insert(event.id);
        let p = &event.payload;
        if let (Some(path), Some(size)) = (p["path"].as_str(), p["size"].as_u64()) {
            files.push((path.to_owned(), size));
        }
    }
    let Some(through) = newest else {
        return Ok(None);
    };
    files.reverse();
    Ok(Some((files, through)))
}

/// Notes that the added files up to event `through` were announced.
pub async fn mark_announced(
    store: &Store,
    conversation: ConversationId,
    through: i64,
) -> Result<()> {
    store
        .events()
        .append(
            None,
            Some(conversation),
            ANNOUNCED_EVENT,
            &json!({"through": through}),
        )
        .await?;
    Ok(())
}

/// The note added to the analyst's message: each file's workspace path and size.
fn announcement(files: &[(String, u64)]) -> String {
    let mut note = String::from("[Files I added to the workspace:");
    for (path, size) in files.iter().take(ANNOUNCED_NAMES) {
        note.push_str(&format!("\n- {path} ({})", human_size(*size)));
    }
    if files.len() > ANNOUNCED_NAMES {
        note.push_str(&format!("\n- and {} more", files.len() - ANNOUNCED_NAMES));
    }
    note.push(']');
    note
}

/// A size as a person reads it.
fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    #[allow(clippy::cast_precision_loss)] // a rounded size for people
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// The file's own name, made safe as one workspace path segment.
fn file_name(source: &Path) -> String {
    let raw = source
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let clean: String = raw
        .chars()
        .map(|c| {
            if c.is_control() || c == '/' || c == '\\' {
                '_'
            } else {
                c
            }
        })
        .collect();
    let clean = clean.trim().trim_start_matches('.').to_owned();
    if clean.is_empty() {
        "added-file".to_owned()
    } else {
        clean
    }
}

/// `name`, or `stem (2).ext`, `stem (3).ext`… when it is taken.
fn free_name(name: &str, taken: &HashSet<String>) -> String {
    if !taken.contains(name) {
        return name.to_owned();
    }
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, format!(".{ext}")),
        _ => (name, String::new()),
    };
    (2..)
        .map(|n| format!("{stem} ({n}){ext}"))
        .find(|candidate| !taken.contains(candidate))
        .unwrap_or_else(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_kept_made_safe_and_never_reused() {
        let taken: HashSet<String> = ["sales.csv", "sales (2).csv", "README"]
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(free_name("sales.csv", &taken), "sales (3).csv");
        assert_eq!(free_name("README", &taken), "README (2)");
        assert_eq!(free_name("new.xlsx", &taken), "new.xlsx");
        assert_eq!(file_name(Path::new("/tmp/.bashrc")), "bashrc");
        assert_eq!(file_name(Path::new("/tmp/a\nb.csv")), "a_b.csv");
        assert_eq!(file_name(Path::new("/")), "added-file");
    }

    #[test]
    fn the_announcement_names_paths_and_sizes_and_counts_the_rest() {
        let one = announcement(&[("q3 sales.csv".into(), 12_800)]);
        assert_eq!(
            one,
            "[Files I added to the workspace:\n- q3 sales.csv (12.5 KB)]"
        );
        let many: Vec<(String, u64)> = (0..60).map(|i| (format!("f{i}.csv"), 10)).collect();
        let note = announcement(&many);
        assert!(note.contains("- f49.csv (10 bytes)"));
        assert!(!note.contains("f50.csv"));
        assert!(note.ends_with("- and 10 more]"));
        assert_eq!(human_size(3 * 1024 * 1024 * 1024), "3.0 GB");
    }
}
