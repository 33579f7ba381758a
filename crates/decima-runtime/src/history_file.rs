//! An execution's history as a file a subagent can grep: its name, the same on the host and in
//! a container, what one export of it did, and the chain of executions whose histories a child
//! inherits. Here, not under `agent/`, because the Docker engine copies these files into
//! containers and a subagent's workspace is its tree's, as well as the spawn that writes them.

use std::path::PathBuf;

use decima_core::ExecutionId;
use decima_store::{Execution, Store};

use crate::error::{Result, RuntimeError};

/// The file name of an execution's history, on the host and in a container.
pub fn history_file_name(execution: ExecutionId) -> String {
    format!("history_{execution}.txt")
}

/// One history file as exported for a spawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    /// Whose history.
    pub execution: ExecutionId,
    /// The host file.
    pub path: PathBuf,
    /// True when the export only appended to the file (its earlier bytes are unchanged).
    pub appended: bool,
}

/// An execution and its ancestors, nearest first: the parent chain a child inherits.
pub async fn lineage(store: &Store, execution: &Execution) -> Result<Vec<Execution>> {
    let mut chain = vec![execution.clone()];
    let mut next = execution.parent_id;
    // Depth is bounded by the limits; the bound here only guards against a corrupt cycle.
    while let Some(id) = next {
        if chain.len() > 64 || chain.iter().any(|e| e.id == id) {
            return Err(RuntimeError::Conflict(format!(
                "the parent chain of execution {} loops or is too deep",
                execution.id
            )));
        }
        let parent = store.executions().get(id).await?;
        next = parent.parent_id;
        chain.push(parent);
    }
    Ok(chain)
}
