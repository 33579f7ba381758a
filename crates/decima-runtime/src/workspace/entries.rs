//! The files of a workspace with who wrote each: a run's call (from the `workspace.changed`
//! events its calls logged, subagents' included) or the analyst (a file they added). Sizes and
//! times are the workspace's now; a file written and since removed is not listed.

use std::collections::HashMap;

use decima_core::{ConversationId, ExecutionId, Timestamp};
use decima_store::Store;
use serde::Serialize;
use tracing::debug;

use super::place::WorkspacePlace;
use super::{ADDED_EVENT, CHANGED_EVENT};
use crate::error::{Result, RuntimeError};

/// The most events read back to find who wrote what: the newest win, so a long-lived
/// workspace still names the last writer of a file written recently.
const EVENTS_READ: u32 = 5_000;

/// Who last wrote a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "by", rename_all = "camelCase")]
pub enum Writer {
    /// A tool call of a run.
    #[serde(rename_all = "camelCase")]
    Call {
        /// The call's id, as its tool card carries it.
        call_id: String,
        /// The seq of the answer that holds the call: a call id alone is not unique (servers
        /// that number calls per response), so this is what finds the card. `None` for
        /// changes noted before it was recorded.
        message_seq: Option<i64>,
        /// The tool.
        tool: String,
        /// The run.
        execution_id: Option<ExecutionId>,
        /// The conversation the call is in (a subagent's, for a file it wrote).
        conversation_id: Option<ConversationId>,
        /// When the change was noted.
        at: Timestamp,
    },
    /// The analyst added it.
    #[serde(rename_all = "camelCase")]
    Analyst {
        /// The name it had where it came from.
        name: String,
        /// When it was added.
        at: Timestamp,
    },
}

/// A file of the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceEntry {
    /// Relative to the workspace, `/`-separated.
    pub path: String,
    /// Bytes.
    pub size: u64,
    /// Last change, seconds since the epoch.
    pub modified: i64,
    /// Who last wrote it, when a call or the analyst did.
    pub written_by: Option<Writer>,
}

/// The files of `conversation`'s workspace the agent or the analyst wrote (all of its files
/// with `all`), newest first.
pub async fn entries(
    store: &Store,
    place: &WorkspacePlace,
    conversation: ConversationId,
    all: bool,
) -> Result<Vec<WorkspaceEntry>> {
    let files = place
        .sandbox
        .list_files()
        .await
        .map_err(RuntimeError::Workspace)?;
    let writers = writers(store, conversation).await?;
    let mut listed: Vec<WorkspaceEntry> = files
        .into_iter()
        .filter_map(|f| {
            let written_by = writers.get(&f.path).cloned();
            (all || written_by.is_some()).then_some(WorkspaceEntry {
                path: f.path,
                size: f.size,
                modified: f.modified,
                written_by,
            })
        })
        .collect();
    listed.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
    Ok(listed)
}

/// The last writer of each path, from the newest events back.
async fn writers(store: &Store, conversation: ConversationId) -> Result<HashMap<String, Writer>> {
    let events = store
        .events()
        .in_tree_of_kinds(conversation, &[CHANGED_EVENT, ADDED_EVENT], EVENTS_READ)
        .await?;
    let mut writers = HashMap::new();
    for event in events {
        let p = &event.payload;
        if event.kind == ADDED_EVENT {
            let (Some(path), Some(name)) = (p["path"].as_str(), p["name"].as_str()) else {
                debug!(id = event.id, "an added-file event without a path");
                continue;
            };
            writers.entry(path.to_owned()).or_insert(Writer::Analyst {
                name: name.to_owned(),
                at: event.created_at,
            });
            continue;
        }
        let (Some(call_id), Some(tool), Some(files)) = (
            p["call_id"].as_str(),
            p["name"].as_str(),
            p["files"].as_array(),
        ) else {
            debug!(id = event.id, "a workspace event without a call");
            continue;
        };
        for path in files.iter().filter_map(|f| f["path"].as_str()) {
            writers
                .entry(path.to_owned())
                .or_insert_with(|| Writer::Call {
                    call_id: call_id.to_owned(),
                    message_seq: p["message_seq"].as_i64(),
                    tool: tool.to_owned(),
                    execution_id: event.execution_id,
                    conversation_id: event.conversation_id,
                    at: event.created_at,
                });
        }
    }
    Ok(writers)
}
