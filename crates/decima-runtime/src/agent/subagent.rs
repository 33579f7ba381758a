//! Subagents: a child execution that starts with its parent's knowledge instead of amnesia.
//!
//! Before a child starts, the history of every ancestor is exported (incrementally) to
//! `DATA_DIR/context/history_<execution id>.txt`, in the greppable text format (one
//! `### seq=N role=R time=T` header per message, tool calls on `@tool_call` lines, reasoning
//! after `@reasoning`). The child's first message carries a brief within a token budget (its
//! parent's goal and current todo), the path of its parent's history file with grep examples,
//! and the paths of every older ancestor's file; then its task. In a Docker sandbox the files
//! are copied into the container under `/workspace/context/` and the paths are those.
//!
//! Limits (per run, stored with its options): depth 3, 3 children per parent, 5 children of
//! one tree running at once. A refusal is a tool error the model can read. The running count is
//! kept in this process per root execution: children run in their root's process, and a lease
//! keeps any execution from running in two processes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use decima_core::export::ExportFormat;
use decima_core::{ExecutionId, TokenCounter};
use decima_sandbox::ToolError;
use decima_store::{Execution, SandboxKind, Store, Todo, TodoStatus};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tracing::{debug, warn};

use crate::error::{Result, RuntimeError};
use crate::export::export_to_file;
pub use crate::history_file::{Exported, history_file_name, lineage};

/// The tool's name.
pub const SPAWN_SUBAGENT: &str = "spawn_subagent";
/// Where history files go in a container.
pub const CONTAINER_CONTEXT_DIR: &str = "/workspace/context";
/// History files older than this are removed when a child is spawned.
pub const HISTORY_MAX_AGE: Duration = Duration::from_secs(7 * 24 * 3600);

/// How far a tree of subagents may grow. Stored with each execution's options, and passed
/// down to its children, so a resumed tree keeps its rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SubagentLimits {
    /// The deepest a subagent may be: the top-level run is depth 0.
    pub max_depth: u32,
    /// Children one execution may spawn over its life.
    pub max_children: u32,
    /// Children of one tree running at the same time.
    pub max_running: u32,
    /// Tokens the brief (the parent's goal and current todo) may take in the child's first
    /// message.
    pub brief_tokens: u32,
}

impl Default for SubagentLimits {
    fn default() -> Self {
        Self {
            max_depth: 3,
            max_children: 3,
            max_running: 5,
            brief_tokens: 1_500,
        }
    }
}

/// `{name, description, parameters}` of `spawn_subagent`.
pub fn spawn_subagent_schema() -> Value {
    json!({
        "name": SPAWN_SUBAGENT,
        "description": "Start a subagent for a self-contained part of the work. It gets a brief of your goal and current todo, and your whole history as a file it can grep, then works with the same tools and returns its final answer as this call's result. Several spawn_subagent calls in one answer run in parallel.",
        "parameters": {
            "type": "object",
            "properties": {
                "task": {
                    "type": "string",
                    "description": "What the subagent must do and what it must answer with."
                },
                "sandbox": {
                    "type": "string",
                    "enum": ["host", "docker"],
                    "description": "Where its tools run (default: where yours run)."
                }
            },
            "required": ["task"],
            "additionalProperties": false
        }
    })
}

/// A parsed `spawn_subagent` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnRequest {
    /// The child's task.
    pub task: String,
    /// Where its tools run; `None` is the parent's sandbox.
    pub sandbox: Option<SandboxKind>,
}

/// Parses the model's arguments; a wrong shape is a data error that names the problem.
pub fn parse_spawn(arguments: &str) -> std::result::Result<SpawnRequest, ToolError> {
    #[derive(Deserialize)]
    struct Args {
        task: Option<Value>,
        sandbox: Option<Value>,
    }
    let args: Args = serde_json::from_str(arguments).map_err(|e| {
        ToolError::data(format!(
            "spawn_subagent needs a JSON object {{\"task\": ..., \"sandbox\"?: \"host\"|\"docker\"}}: {e}"
        ))
    })?;
    let task = match args.task {
        Some(Value::String(t)) if !t.trim().is_empty() => t,
        Some(Value::String(_)) => return Err(ToolError::data("spawn_subagent: `task` is empty")),
        Some(_) => return Err(ToolError::data("spawn_subagent: `task` must be a string")),
        None => return Err(ToolError::data("spawn_subagent: `task` is missing")),
    };
    let sandbox = match args.sandbox {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s == "host" => Some(SandboxKind::Host),
        Some(Value::String(s)) if s == "docker" => Some(SandboxKind::Docker),
        Some(other) => {
            return Err(ToolError::data(format!(
                "spawn_subagent: `sandbox` must be \"host\" or \"docker\", not {other}"
            )));
        }
    };
    Ok(SpawnRequest { task, sandbox })
}

/// Children running now, per root execution.
static RUNNING: Mutex<Option<HashMap<ExecutionId, u32>>> = Mutex::new(None);

/// A place among the running children of one tree; given back when dropped.
#[derive(Debug)]
pub struct RunningSlot {
    root: ExecutionId,
}

impl RunningSlot {
    /// Takes a place when fewer than `limit` children of `root`'s tree run.
    pub fn try_take(root: ExecutionId, limit: u32) -> Option<Self> {
        let mut guard = RUNNING.lock().unwrap_or_else(|p| p.into_inner());
        let counts = guard.get_or_insert_with(HashMap::new);
        let running = counts.entry(root).or_insert(0);
        if *running >= limit {
            return None;
        }
        *running += 1;
        Some(Self { root })
    }
}

impl Drop for RunningSlot {
    fn drop(&mut self) {
        let mut guard = RUNNING.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(counts) = guard.as_mut()
            && let Some(running) = counts.get_mut(&self.root)
        {
            *running = running.saturating_sub(1);
            if *running == 0 {
                counts.remove(&self.root);
            }
        }
    }
}

/// The host path of an execution's history file.
pub fn history_path(data_dir: &Path, execution: ExecutionId) -> PathBuf {
    data_dir.join("context").join(history_file_name(execution))
}

/// The container path of an execution's history file.
pub fn container_history_path(execution: ExecutionId) -> String {
    format!("{CONTAINER_CONTEXT_DIR}/{}", history_file_name(execution))
}

/// Exports the histories of `chain` (an execution and its ancestors) to their files, each
/// appending only what is new since its last export, and removes history files past
/// [`HISTORY_MAX_AGE`]. The files are in the order of `chain`.
pub async fn export_histories(
    store: &Store,
    data_dir: &Path,
    chain: &[Execution],
) -> Result<Vec<Exported>> {
    let dir = data_dir.join("context");
    std::fs::create_dir_all(&dir).map_err(|source| RuntimeError::Io {
        action: "create",
        path: dir.clone(),
        source,
    })?;
    remove_old_histories(&dir, HISTORY_MAX_AGE, SystemTime::now());
    let mut paths = Vec::with_capacity(chain.len());
    for execution in chain {
        let conversation = store.conversations().get(execution.conversation_id).await?;
        let path = history_path(data_dir, execution.id);
        let outcome = export_to_file(
            store,
            data_dir,
            &conversation,
            ExportFormat::Text,
            &path,
            false,
        )
        .await?;
        debug!(
            execution = %execution.id,
            messages = outcome.messages,
            appended = outcome.appended,
            "history exported for a subagent"
        );
        paths.push(Exported {
            execution: execution.id,
            path: outcome.path,
            appended: outcome.appended,
        });
    }
    Ok(paths)
}

/// Removes `history_*.txt` files in `dir` last written before `now - max_age`. A file that
/// cannot be read or removed is left, with a warning: cleanup never stops a spawn.
pub fn remove_old_histories(dir: &Path, max_age: Duration, now: SystemTime) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with("history_") && name.ends_with(".txt")) {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|modified| now.duration_since(modified).ok())
            .is_some_and(|age| age > max_age);
        if old {
            match std::fs::remove_file(entry.path()) {
                Ok(()) => removed += 1,
                Err(e) => warn!(file = %name, error = %e, "cannot remove an old history file"),
            }
        }
    }
    removed
}

/// What the child's first message is made of.
pub struct Brief<'a> {
    /// The parent's task: the goal the child serves.
    pub goal: &'a str,
    /// The parent's plan, for its current todo.
    pub plan: &'a [Todo],
    /// The parent's history file, as the child's tools see it.
    pub parent_history: &'a str,
    /// Older ancestors' files, nearest first, as the child's tools see them.
    pub ancestor_histories: &'a [String],
    /// The child's depth and the limit.
    pub depth: u32,
    /// The deepest allowed.
    pub max_depth: u32,
    /// The child's task.
    pub task: &'a str,
    /// Tokens the brief may take.
    pub budget: u32,
}

impl Brief<'_> {
    /// The first message: the brief, where the history is and how to search it, then the task.
    pub fn render(&self, counter: &dyn TokenCounter) -> String {
        let current = self
            .plan
            .iter()
            .find(|t| t.status == TodoStatus::InProgress)
            .or_else(|| self.plan.iter().find(|t| t.status == TodoStatus::Pending));
        let mut brief = format!("Goal: {}\n", self.goal.trim());
        match current {
            Some(todo) => {
                brief.push_str(&format!("Current todo: {}", todo.title.trim()));
                if let Some(phase) = &todo.phase {
                    brief.push_str(&format!(" (phase: {phase})"));
                }
                brief.push('\n');
            }
            None => brief.push_str("Current todo: none recorded\n"),
        }
        let brief = clip_to_tokens(&brief, self.budget, counter);
        let mut out = format!(
            "You are a subagent (depth {} of at most {}). Your parent waits for your final \
             answer, which it receives as the result of its spawn_subagent call.\n\n\
             ## Brief from your parent\n{}\n\
             ## Your parent's full history\n\
             Every message of your parent's conversation (with its seq, role and time, the \
             tool calls and their results, and the reasoning) is in this file:\n  {}\n\
             Search it with the shell tool instead of guessing or reading it whole, for \
             example:\n  grep -n -i 'keyword' {}\n  grep -n -A 20 '^### seq=12 ' {}\n\
             Each message starts with a `### seq=N role=R time=T` line; tool calls are on \
             `@tool_call` lines and reasoning follows `@reasoning`.\n",
            self.depth,
            self.max_depth,
            brief.trim_end(),
            self.parent_history,
            self.parent_history,
            self.parent_history,
        );
        if !self.ancestor_histories.is_empty() {
            out.push_str("Older ancestors' histories, nearest first:\n");
            for path in self.ancestor_histories {
                out.push_str(&format!("  {path}\n"));
            }
        }
        out.push_str(&format!("\n## Your task\n{}\n", self.task.trim()));
        out
    }
}

/// The longest prefix of `text` (cut at a line or word) within `budget` tokens, marked when cut.
fn clip_to_tokens(text: &str, budget: u32, counter: &dyn TokenCounter) -> String {
    if counter.count_text(text) <= budget {
        return text.to_owned();
    }
    // Halve until it fits, then grow back by lines: a handful of counts, not one per char.
    let mut end = text.len();
    while end > 0 && counter.count_text(&text[..end]) > budget {
        end /= 2;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
    }
    let mut best = end;
    for (i, _) in text.match_indices(['\n', ' ']).filter(|(i, _)| *i > end) {
        if counter.count_text(&text[..i]) > budget {
            break;
        }
        best = i;
    }
    format!("{} […]\n", text[..best].trim_end())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use decima_core::EstimateCounter;

    #[test]
    fn parses_the_documented_arguments_and_refuses_the_rest() {
        let ok = parse_spawn(r#"{"task":"count rows","sandbox":"docker"}"#).unwrap();
        assert_eq!(ok.task, "count rows");
        assert_eq!(ok.sandbox, Some(SandboxKind::Docker));
        assert_eq!(parse_spawn(r#"{"task":"x"}"#).unwrap().sandbox, None);
        for bad in [
            "",
            "[]",
            r#"{"task":""}"#,
            r#"{"task":3}"#,
            r#"{"sandbox":"host"}"#,
            r#"{"task":"x","sandbox":"vm"}"#,
        ] {
            let e = parse_spawn(bad).unwrap_err();
            assert_eq!(e.class, decima_core::FailureClass::Data, "{bad}");
            assert!(e.message.contains("spawn_subagent"), "{}", e.message);
        }
    }

    #[test]
    fn running_slots_are_counted_per_tree_and_given_back() {
        let a = ExecutionId::new();
        let b = ExecutionId::new();
        let first = RunningSlot::try_take(a, 2).unwrap();
        let _second = RunningSlot::try_take(a, 2).unwrap();
        assert!(RunningSlot::try_take(a, 2).is_none());
        // Another tree has its own count.
        let _other = RunningSlot::try_take(b, 2).unwrap();
        drop(first);
        assert!(RunningSlot::try_take(a, 2).is_some());
    }

    #[test]
    fn the_brief_is_clipped_to_its_budget_but_the_paths_and_task_are_not() {
        let goal = "analyse the quarterly ledger ".repeat(400);
        let brief = Brief {
            goal: &goal,
            plan: &[],
            parent_history: "/d/context/history_p.txt",
            ancestor_histories: &["/d/context/history_r.txt".to_owned()],
            depth: 2,
            max_depth: 3,
            task: "find the duplicate invoices",
            budget: 100,
        };
        let text = brief.render(&EstimateCounter);
        assert!(text.contains("[…]"));
        assert!(EstimateCounter.count_text(&text) < 400, "{text}");
        assert!(text.contains("grep -n -i 'keyword' /d/context/history_p.txt"));
        assert!(text.contains("/d/context/history_r.txt"));
        assert!(text.ends_with("## Your task\nfind the duplicate invoices\n"));
    }

    #[test]
    fn only_old_history_files_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["history_a.txt", "history_b.txt", "notes.txt"] {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        let later = SystemTime::now() + Duration::from_secs(8 * 24 * 3600);
        assert_eq!(
            remove_old_histories(dir.path(), HISTORY_MAX_AGE, SystemTime::now()),
            0
        );
        assert_eq!(remove_old_histories(dir.path(), HISTORY_MAX_AGE, later), 2);
        assert!(dir.path().join("notes.txt").exists());
    }
}
