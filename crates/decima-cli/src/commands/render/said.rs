//! What the text output says of a run's events other than its streamed text and its plan: a
//! line on stderr for each, or nothing.

use decima_core::FailureClass;
use decima_runtime::Event;
use decima_runtime::agent::TODO_WRITE;

use crate::commands::execution::one_line;

/// How much of a tool call's arguments its `[tool]` line shows.
const ARGUMENTS_SHOWN: usize = 160;

/// What an event shows on the terminal.
pub(super) enum Said {
    /// Nothing.
    Nothing,
    /// Only the end of the streamed lines: what follows (a prompt, a report) comes from elsewhere.
    LineBreak,
    /// A line of its own on stderr.
    Note(String),
}

/// Events after which the text streamed so far is no longer the answer.
pub(super) fn ends_segment(event: &Event) -> bool {
    matches!(
        event,
        Event::ExecutionStarted { .. } | Event::ToolStarted { .. } | Event::RolledBack { .. }
    )
}

/// What `event` shows. A `todo_write` call says nothing of its own: the plan lines say what it did.
pub(super) fn said(event: Event) -> Said {
    match event {
        Event::ExecutionStarted { workspace, how, .. } if !workspace.is_empty() => {
            Said::Note(format!("[{how}] workspace {workspace}"))
        }
        Event::ExecutionStarted { .. } => Said::LineBreak,
        Event::ToolStarted { name, .. } if name == TODO_WRITE => Said::Nothing,
        Event::ToolFinished {
            name, class: None, ..
        } if name == TODO_WRITE => Said::Nothing,
        Event::ToolStarted {
            name, arguments, ..
        } => Said::Note(format!(
            "[tool] {name} {}",
            one_line(&arguments, ARGUMENTS_SHOWN)
        )),
        Event::ToolFinished {
            name,
            exit_code,
            duration_ms,
            class,
            ran,
            ..
        } => Said::Note(tool_finished(&name, exit_code, duration_ms, class, ran)),
        Event::SnapshotTaken {
            snapshot_id,
            reason: decima_store::SnapshotReason::Checkpoint,
            ..
        } => Said::Note(format!("[checkpoint] snapshot {}", short(&snapshot_id))),
        Event::Failure { class, message, .. } => {
            Said::Note(format!("[failure] [{class}] {}", one_line(&message, 400)))
        }
        Event::RolledBack {
            snapshot_id,
            files_restored,
            files_removed,
            messages_removed,
            ..
        } => Said::Note(format!(
            "[rollback] workspace, plan and history back to snapshot {}: {files_restored} files \
             restored, {files_removed} removed, {messages_removed} messages undone",
            short(&snapshot_id)
        )),
        Event::Recovered { choice, .. } => Said::Note(format!("[recover] {choice}")),
        Event::Compacted {
            compaction_id,
            tokens_before,
            tokens_after,
            ..
        } => Said::Note(format!(
            "[compressed the history before sending: {tokens_before} → {tokens_after} tokens; \
             `decima compress undo {compaction_id}` reverts it]"
        )),
        // A chat turn's first event: which conversation it went to (a new one, unless
        // `--conversation` named it).
        Event::TurnStarted { conversation_id } => {
            Said::Note(format!("conversation {conversation_id}"))
        }
        Event::Warning { message } => Said::Note(format!("warning: {message}")),
        other => said_of_agents(other),
    }
}

/// What subagents, reviews and the run's questions show.
fn said_of_agents(event: Event) -> Said {
    match event {
        Event::SubagentStarted {
            execution_id,
            depth,
            task,
            ..
        } => Said::Note(format!(
            "[subagent {} started at depth {depth}] {}",
            short(&execution_id.to_string()),
            one_line(&task, 100)
        )),
        Event::SubagentFinished {
            execution_id,
            status,
            ..
        } => Said::Note(format!(
            "[subagent {} {status}]",
            short(&execution_id.to_string())
        )),
        Event::ReviewStarted {
            trigger,
            mode,
            review_type,
            ..
        } => Said::Note(format!(
            "[tenth man: {review_type} {mode} review ({trigger})…]"
        )),
        Event::ReviewFinished {
            review_id,
            risk_level,
            findings,
            cached,
            contested,
        } => Said::Note(format!(
            "[tenth man: risk {risk_level}, {findings} finding(s){}; review {review_id}]{}",
            if cached { ", from the cache" } else { "" },
            if contested {
                "\n[the final review CONTESTS this result: read the findings before relying on \
                 it]"
            } else {
                ""
            }
        )),
        // The terminal prompt itself says what is asked; the report and the question of a
        // failure come from the choice source, or the exit message.
        Event::ApprovalAsked { .. } | Event::AwaitingChoice { .. } => Said::LineBreak,
        _ => Said::Nothing,
    }
}

/// A finished tool call's line: how it ended and how long it took.
fn tool_finished(
    name: &str,
    exit_code: Option<i32>,
    duration_ms: u64,
    class: Option<FailureClass>,
    ran: bool,
) -> String {
    let mut line = format!("[tool] {name}");
    match (exit_code, class) {
        _ if !ran => line.push_str(" answered without running"),
        (Some(code), Some(class)) => line.push_str(&format!(" exit {code} [{class}]")),
        (Some(code), None) => line.push_str(&format!(" exit {code}")),
        (None, Some(class)) => line.push_str(&format!(" failed [{class}]")),
        (None, None) => line.push_str(" ok"),
    }
    line.push_str(&format!(" ({duration_ms} ms)"));
    line
}

/// The first 12 characters of a long id.
fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}
