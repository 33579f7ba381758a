//! A conversation's workspace as the window sees it: where it is (a host folder or a
//! container), the files the agent wrote there and which call wrote each, and files the
//! analyst adds, announced to the agent with the next message they send.

pub mod added;
pub mod entries;
pub mod place;
pub mod transfer;

pub use added::{AddedFile, add_files};
pub use entries::{WorkspaceEntry, Writer, entries};
pub use place::{WorkspacePlace, place, place_as};
pub use transfer::{Transfer, census, copy_across, left_on_host};

/// The event a run logs for each call that changed files (see the runner's
/// `workspace_changes`): `{call_id, name, files: [{path, size, created}]}`.
pub const CHANGED_EVENT: &str = "workspace.changed";
/// The event logged for each file the analyst added: `{path, size, name}`.
pub const ADDED_EVENT: &str = "workspace.added";
/// The event logged once the added files were announced: `{through}` (the last added
/// event's id).
pub const ANNOUNCED_EVENT: &str = "workspace.announced";
