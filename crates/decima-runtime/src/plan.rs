//! `todo_write`: the model replaces its whole plan in one call, as the todo tools of the best
//! coding agents do. This module owns the schema, reading the arguments, and what changed
//! between two plans (which todos started, completed or failed), which drives snapshots,
//! checkpoint and phase compressions and the failure path.

use std::collections::HashMap;

use decima_core::names::echo_untrusted;
use decima_store::{Todo, TodoInput, TodoStatus};
use serde::Deserialize;
use serde_json::{Value, json};

/// The tool's name.
pub const TODO_WRITE: &str = "todo_write";

/// `{name, description, parameters}` for `todo_write`.
pub fn todo_write_schema() -> Value {
    json!({
        "name": TODO_WRITE,
        "description": "Replace your whole plan. Send every todo each time, in order: leaving one out removes it. Keep ids from earlier results to update a todo. Statuses: pending, in_progress, completed, failed, skipped; a failed todo needs a reason. Mark a todo in_progress before you work on it (the workspace is snapshotted then, so a failure can be rolled back), and completed as soon as it is done. checkpoint: true takes a snapshot when the todo completes.",
        "parameters": {
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string", "description": "The id of an existing todo; omit for a new one."},
                            "title": {"type": "string"},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed", "failed", "skipped"]},
                            "phase": {"type": "string", "description": "A name that groups todos; a phase whose todos are all completed is compressed."},
                            "checkpoint": {"type": "boolean"},
                            "pinned": {"type": "boolean", "description": "Keep this todo verbatim in every prompt."},
                            "reason": {"type": "string", "description": "Why it failed (required when status is failed)."}
                        },
                        "required": ["title", "status"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["todos"],
            "additionalProperties": false
        }
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    todos: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    id: Option<String>,
    title: String,
    status: String,
    phase: Option<String>,
    #[serde(default)]
    checkpoint: bool,
    #[serde(default)]
    pinned: bool,
    reason: Option<String>,
}

/// Reads `todo_write` arguments against the current plan. Ids the model made up (`"1"`,
/// `"t2"`) are matched to a current todo of the same title, or start a new todo, so a model that
/// numbers its todos itself is not refused. Errors are one line for the model.
pub fn parse_todo_write(raw: &str, current: &[Todo]) -> Result<Vec<TodoInput>, String> {
    if let Some((_, why)) = decima_llm::invalid_arguments(raw) {
        return Err(format!(
            "the arguments of this todo_write call are not valid JSON ({why}); send them again \
             as {{\"todos\": [...]}}"
        ));
    }
    let args: Args = serde_json::from_str(raw).map_err(|e| {
        format!("todo_write needs {{\"todos\": [{{\"title\", \"status\", ...}}]}}: {e}")
    })?;
    let by_id: HashMap<&str, &Todo> = current.iter().map(|t| (t.id.as_str(), t)).collect();
    let mut plan = Vec::with_capacity(args.todos.len());
    for (i, entry) in args.todos.into_iter().enumerate() {
        let status: TodoStatus = entry
            .status
            .parse()
            .ok()
            // Decima marks a todo cancelled when the analyst ends the run; the model never does.
            .filter(|s| *s != TodoStatus::Cancelled)
            .ok_or_else(|| {
                format!(
                    "todo {} has status {:?}; use pending, in_progress, completed, failed or \
                     skipped",
                    i + 1,
                    echo_untrusted(&entry.status)
                )
            })?;
        if entry.title.trim().is_empty() {
            return Err(format!("todo {} has an empty title", i + 1));
        }
        let reason = entry.reason.filter(|r| !r.trim().is_empty());
        if status == TodoStatus::Failed && reason.is_none() {
            return Err(format!(
                "todo {} ({:?}) is failed without a reason: say why in \"reason\"",
                i + 1,
                echo_untrusted(&entry.title)
            ));
        }
        let id = match entry.id {
            Some(id) if by_id.contains_key(id.as_str()) => Some(id),
            _ => current
                .iter()
                .find(|t| t.title == entry.title)
                .map(|t| t.id.clone()),
        };
        plan.push(TodoInput {
            id,
            title: entry.title,
            status,
            phase: entry.phase.filter(|p| !p.trim().is_empty()),
            checkpoint: entry.checkpoint,
            pinned: entry.pinned,
            // The store keeps reasons for failed todos only.
            reason: if status == TodoStatus::Failed {
                reason
            } else {
                None
            },
        });
    }
    let mut seen = std::collections::HashSet::new();
    for todo in &plan {
        if let Some(id) = &todo.id
            && !seen.insert(id.as_str())
        {
            return Err(format!(
                "two todos update the same todo ({:?}); each todo appears once",
                echo_untrusted(&todo.title)
            ));
        }
    }
    Ok(plan)
}

/// What a plan change means for the loop.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Transitions {
    /// Todos that moved to in_progress: each gets a snapshot.
    pub started: Vec<String>,
    /// Todos that moved to completed.
    pub completed: Vec<String>,
    /// Checkpoint todos that moved to completed.
    pub checkpoints: Vec<String>,
    /// Phases whose todos are now all completed, and were not before.
    pub phases_done: Vec<String>,
    /// Todos that moved to failed, with their reasons.
    pub failed: Vec<(String, String)>,
}

/// Compares the plan before and after a change.
pub fn transitions(before: &[Todo], after: &[Todo]) -> Transitions {
    let old: HashMap<&str, &Todo> = before.iter().map(|t| (t.id.as_str(), t)).collect();
    let mut out = Transitions::default();
    for t in after {
        let was = old.get(t.id.as_str()).map(|o| o.status);
        if was == Some(t.status) {
            continue;
        }
        match t.status {
            TodoStatus::InProgress => out.started.push(t.id.clone()),
            TodoStatus::Completed => {
                out.completed.push(t.id.clone());
                if t.checkpoint {
                    out.checkpoints.push(t.id.clone());
                }
            }
            TodoStatus::Failed => out
                .failed
                .push((t.id.clone(), t.reason.clone().unwrap_or_default())),
            _ => {}
        }
    }
    let phase_done = |plan: &[Todo], phase: &str| {
        let mut todos = plan.iter().filter(|t| t.phase.as_deref() == Some(phase));
        let mut any = false;
        let all = todos.all(|t| {
            any = true;
            t.status == TodoStatus::Completed
        });
        any && all
    };
    let mut phases: Vec<&str> = after.iter().filter_map(|t| t.phase.as_deref()).collect();
    phases.dedup();
    for phase in phases {
        if phase_done(after, phase)
            && !phase_done(before, phase)
            && !out.phases_done.iter().any(|p| p == phase)
        {
            out.phases_done.push(phase.to_owned());
        }
    }
    out
}

/// The plan as the tool result shows it: one line per todo with its id.
pub fn render_plan(plan: &[Todo]) -> String {
    if plan.is_empty() {
        return "The plan is empty.".to_owned();
    }
    let mut out = String::from("The plan now:\n");
    for t in plan {
        out.push_str(&format!("- [{}] {} (id {})", t.status, t.title, t.id));
        if let Some(phase) = &t.phase {
            out.push_str(&format!(" phase {phase}"));
        }
        if t.checkpoint {
            out.push_str(" checkpoint");
        }
        if let Some(reason) = &t.reason {
            out.push_str(&format!(" — {reason}"));
        }
        out.push('\n');
    }
    out
}

/// The plan as todo inputs, to restore it exactly (rollback, skip).
pub fn as_inputs(plan: &[Todo]) -> Vec<TodoInput> {
    plan.iter()
        .map(|t| TodoInput {
            id: Some(t.id.clone()),
            title: t.title.clone(),
            status: t.status,
            phase: t.phase.clone(),
            checkpoint: t.checkpoint,
            pinned: t.pinned,
            reason: t.reason.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_cannot_mark_a_todo_cancelled() {
        let refused = parse_todo_write(
            r#"{"todos": [{"title": "fit", "status": "cancelled"}]}"#,
            &[],
        )
        .unwrap_err();
        assert!(refused.contains("use pending, in_progress"), "{refused}");
        assert!(
            parse_todo_write(r#"{"todos": [{"title": "fit", "status": "skipped"}]}"#, &[]).is_ok()
        );
    }
}
