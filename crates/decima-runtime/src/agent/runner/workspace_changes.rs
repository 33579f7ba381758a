//! What a call changed in the workspace. Around each call of a tool that can write there
//! (`shell`, `write_file`, an MCP tool), the workspace is listed (sizes and times, nothing
//! read), and the difference is what the call created or changed: logged as a
//! `workspace.changed` event with the call's id (which call wrote a file), and each image among
//! them (a chart a command saved) is read and kept with the call's result, as an MCP tool's
//! images are: shown on the call's card in the window, and to a model that takes images in tool
//! results. A listing that fails changes nothing about the call.

use std::collections::BTreeMap;

use decima_core::ToolCall;
use decima_sandbox::host::listing::WorkspaceFile;
use serde_json::json;
use tracing::{debug, warn};

use super::Runner;
use crate::tools::ToolOutcome;

/// The image formats kept from the files a call wrote, by extension.
const IMAGE_TYPES: [(&str, &str); 6] = [
    ("png", "image/png"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
    // Kept for the window's card; no provider takes SVG, so no model is shown it.
    ("svg", "image/svg+xml"),
];
/// Larger images are named, not kept (a provider refuses them, and the window need not hold
/// them).
const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;
/// The most images kept from one call.
const MAX_IMAGES: usize = 4;

/// A listing by path: size and time.
pub(super) type Listing = BTreeMap<String, (u64, i64)>;

impl Runner<'_, '_> {
    /// The workspace as the last listing left it, listed now if none was.
    pub(super) async fn listed_before(&self) -> Option<Listing> {
        let mut last = self.files.lock().await;
        if last.is_none() {
            *last = self.list_workspace().await;
        }
        last.clone()
    }

    /// Notes what the call changed, and keeps the images among it with the call's result.
    pub(super) async fn with_changes(
        &self,
        call: &ToolCall,
        before: Option<Listing>,
        mut outcome: ToolOutcome,
    ) -> ToolOutcome {
        let Some(after) = self.list_workspace().await else {
            return outcome;
        };
        *self.files.lock().await = Some(after.clone());
        let Some(before) = before else {
            return outcome;
        };
        // A file the analyst added while the call ran is theirs, not the call's: it appears
        // between the listings too, under the name the add gave it (and is named to the agent
        // with their next message).
        let added_meanwhile =
            crate::workspace::added::pending_paths(self.store(), self.conversation.id)
                .await
                .unwrap_or_default();
        let changed: Vec<WorkspaceFile> = after
            .iter()
            .filter(|(path, now)| before.get(*path) != Some(now))
            .filter(|(path, _)| before.contains_key(*path) || !added_meanwhile.contains(*path))
            .map(|(path, (size, modified))| WorkspaceFile {
                path: path.clone(),
                size: *size,
                modified: *modified,
            })
            .collect();
        if changed.is_empty() {
            return outcome;
        }
        outcome.files = changed.iter().map(|f| f.path.clone()).collect();
        let files: Vec<serde_json::Value> = changed
            .iter()
            .map(|f| json!({"path": f.path, "size": f.size, "created": !before.contains_key(&f.path)}))
            .collect();
        if let Err(e) = self
            .log_event(
                crate::workspace::CHANGED_EVENT,
                // The answer that holds the call: ids repeat where a server numbers calls per
                // response (`call_0` at every step), so the window finds the card by this.
                &json!({
                    "call_id": call.id,
                    "name": call.name,
                    "files": files,
                    "message_seq": self.step_answers.get(&self.steps_taken.max(1)),
                }),
            )
            .await
        {
            warn!(error = %e, "the workspace's changes could not be logged");
        }
        let sandbox = self.registry.sandbox();
        let first = outcome.images.len();
        let mut named = first;
        for (file, media_type) in changed.iter().filter_map(|f| image_type(f).map(|t| (f, t))) {
            let note = if outcome.images.len() - first >= MAX_IMAGES || file.size > MAX_IMAGE_BYTES
            {
                format!(
                    "written by this call as {}; not kept (too large or too many)",
                    file.path
                )
            } else {
                match sandbox.read_bytes(file.path.clone(), MAX_IMAGE_BYTES).await {
                    Ok(bytes) => {
                        outcome.images.push(decima_llm::images::tool_result_image(
                            self.link.config.protocol,
                            media_type,
                            &bytes,
                        ));
                        format!("written by this call as {}", file.path)
                    }
                    Err(e) => {
                        debug!(error = %e.message, "a written image could not be read");
                        continue;
                    }
                }
            };
            named += 1;
            outcome.text.push('\n');
            outcome.text.push_str(&decima_mcp::content::image_marker(
                named,
                media_type,
                usize::try_from(file.size).unwrap_or(usize::MAX),
                Some(&note),
            ));
        }
        outcome
    }

    /// The workspace's files now; `None` (and a debug line) when they cannot be listed.
    async fn list_workspace(&self) -> Option<Listing> {
        match self.registry.sandbox().list_files().await {
            Ok(files) => Some(
                files
                    .into_iter()
                    .map(|f| (f.path, (f.size, f.modified)))
                    .collect(),
            ),
            Err(e) => {
                debug!(error = %e.message, "the workspace could not be listed");
                None
            }
        }
    }
}

/// The media type of an image file, by its extension.
fn image_type(file: &WorkspaceFile) -> Option<&'static str> {
    let ext = file.path.rsplit_once('.')?.1.to_ascii_lowercase();
    IMAGE_TYPES
        .iter()
        .find(|(e, _)| *e == ext)
        .map(|(_, media_type)| *media_type)
}
