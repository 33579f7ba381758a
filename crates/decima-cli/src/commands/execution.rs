//! `decima execution list|show|tree`: agent executions read back from the store. JSON is the
//! runtime's [`ExecutionView`] as is; the text forms are compact summaries for a person.

use std::fmt::Write as _;
use std::path::Path;

use decima_runtime::agent::{self, ExecutionTree, ExecutionView, FailureView};
use decima_runtime::events::TodoView;
use decima_store::{Store, TodoStatus};

use super::render::todo_mark;
use super::{conversation_id, execution_id, interrupt_orphans};
use crate::args::ExecutionCommand;
use crate::error::CliError;
use crate::output;

/// The longest task shown in a table row; the rest is cut with an ellipsis.
const TASK_COLUMN: usize = 60;

pub async fn run(
    store: &Store,
    data_dir: &Path,
    command: ExecutionCommand,
) -> Result<(), CliError> {
    match command {
        ExecutionCommand::List { conversation, json } => {
            let conversation = conversation.as_deref().map(conversation_id).transpose()?;
            interrupt_orphans(store, data_dir).await?;
            list(store, conversation, json).await
        }
        ExecutionCommand::Tree { id, json } => {
            let id = execution_id(&id)?;
            interrupt_orphans(store, data_dir).await?;
            let tree = agent::tree(store, id).await?;
            if json {
                output::print_json(&tree)
            } else {
                let mut text = String::new();
                render_tree(&tree, "", true, true, &mut text);
                output::print(&text)
            }
        }
        ExecutionCommand::Numbers { id, json } => {
            let id = execution_id(&id)?;
            let report = decima_runtime::figures::check_execution(store, data_dir, id).await?;
            super::numbers::print(&report, json)
        }
        ExecutionCommand::Show { id, json } => {
            let id = execution_id(&id)?;
            interrupt_orphans(store, data_dir).await?;
            let view = agent::view(store, id).await?;
            if json {
                output::print_json(&view)
            } else {
                output::print(&render(&view))
            }
        }
    }
}

async fn list(
    store: &Store,
    conversation: Option<decima_core::ConversationId>,
    json: bool,
) -> Result<(), CliError> {
    let executions = agent::list(store, conversation).await?;
    if json {
        let rows: Vec<ExecutionView> = executions.iter().map(agent::summary).collect();
        return output::print_json(&rows);
    }
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{:<36}  {:<13}  {:<24}  TASK",
        "ID", "STATUS", "CREATED"
    );
    for e in &executions {
        let _ = writeln!(
            text,
            "{:<36}  {:<13}  {:<24}  {}",
            e.id,
            e.status.as_str(),
            e.created_at.to_rfc3339(),
            one_line(&e.task, TASK_COLUMN)
        );
    }
    output::print(&text)
}

/// Model calls, tokens, what the prompt cache served, compressions and the estimated cost.
fn usage_line(u: &decima_runtime::agent::UsageView) -> String {
    let mut line = format!(
        "{} model calls  ·  {} tokens in, {} out  ·  {}% of input from cache",
        u.model_calls, u.tokens_in, u.tokens_out, u.cached_percent
    );
    if let Some(n) = u.compressions {
        let _ = write!(line, "  ·  {n} compressions");
    }
    match u.cost_usd {
        Some(cost) => {
            let _ = write!(line, "  ·  about ${cost:.4}");
        }
        None => line.push_str("  ·  no prices set, so no cost estimate"),
    }
    line
}

/// `execution show` as text: a header, the plan, counts of snapshots and steps, and every
/// failure report.
fn render(v: &ExecutionView) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "{}", one_line(&v.task, 200));
    let _ = writeln!(
        text,
        "execution {}  ·  {}  ·  conversation {}",
        v.id, v.status, v.conversation_id
    );
    if let Some(workspace) = &v.workspace {
        let _ = writeln!(text, "workspace {workspace}");
    }
    let mut times = format!("created {}", time(v.created_at));
    if let Some(t) = v.started_at {
        let _ = write!(times, "  ·  started {}", time(t));
    }
    if let Some(t) = v.finished_at {
        let _ = write!(times, "  ·  finished {}", time(t));
    }
    let _ = writeln!(text, "{times}");
    let _ = writeln!(text, "{}", usage_line(&v.usage));
    if let Some(error) = &v.error {
        let _ = writeln!(text, "error: {}", one_line(error, 400));
    }

    if !v.todos.is_empty() {
        let done = v
            .todos
            .iter()
            .filter(|t| t.status == TodoStatus::Completed)
            .count();
        let _ = writeln!(text, "\ntodos ({done}/{} completed):", v.todos.len());
        for (i, todo) in v.todos.iter().enumerate() {
            let _ = writeln!(text, "  {}", todo_line(i + 1, todo));
        }
    }

    let _ = write!(text, "\nsnapshots: {}", v.snapshots.len());
    if let Some(last) = v.snapshots.last() {
        let _ = write!(
            text,
            " (last: {} {} at seq {})",
            last.reason,
            short_id(&last.id),
            last.message_seq
        );
    }
    let _ = writeln!(text, "\nsteps: {}", v.steps.len());

    write_failures(&mut text, v);

    if !v.children.is_empty() {
        let _ = writeln!(text, "\nsubagents ({}):", v.children.len());
        for child in &v.children {
            let _ = writeln!(
                text,
                "  {}  {:<13}  {}",
                child.id,
                child.status,
                one_line(&child.task, TASK_COLUMN)
            );
        }
    }

    if let Some(result) = &v.result {
        let _ = writeln!(text, "\nanswer:\n{}", result.trim_end());
        if v.contested {
            let _ = writeln!(
                text,
                "\nCONTESTED: the final tenth-man review rated this result high or critical risk."
            );
        }
    }
    for r in &v.reviews {
        let _ = writeln!(
            text,
            "\ntenth man ({}, {} {}): risk {}. {}",
            r.trigger, r.review_type, r.mode, r.risk_level, r.summary
        );
        for f in &r.findings {
            let _ = writeln!(
                text,
                "  - [{}] {} (seqs {:?}): {}",
                f.body.severity, f.body.title, f.body.evidence_seqs, f.body.recommendation
            );
        }
    }
    text
}

/// The failure reports of `execution show`, each with the choice that answered it.
fn write_failures(text: &mut String, v: &ExecutionView) {
    if v.failures.is_empty() {
        return;
    }
    let _ = writeln!(text, "\nfailures:");
    for failure in &v.failures {
        for line in failure_report(failure) {
            let _ = writeln!(text, "  {line}");
        }
        let _ = writeln!(
            text,
            "      resolution: {}",
            match (failure.resolution, failure.resolved_by) {
                (Some(choice), Some("automatic")) => format!("{choice} (automatic)"),
                (Some(choice), _) => choice.to_owned(),
                (None, _) => "none yet (waiting)".to_owned(),
            }
        );
    }
}

/// One node of `execution tree` and, below it, its subagents, drawn with box characters.
fn render_tree(node: &ExecutionTree, prefix: &str, last: bool, root: bool, out: &mut String) {
    let e = &node.execution;
    let (branch, below) = match (root, last) {
        (true, _) => ("", ""),
        (false, true) => ("└─ ", "   "),
        (false, false) => ("├─ ", "│  "),
    };
    let _ = writeln!(
        out,
        "{prefix}{branch}{}  {}  depth {}  {}  {}",
        e.id,
        e.status,
        e.depth,
        e.sandbox,
        one_line(&e.task, TASK_COLUMN)
    );
    let prefix = format!("{prefix}{below}");
    for (i, child) in node.subagents.iter().enumerate() {
        render_tree(child, &prefix, i + 1 == node.subagents.len(), false, out);
    }
}

/// One todo: `[x] 2. Load the ledger (phase load)`, with the reason a failed or skipped one
/// gives.
fn todo_line(position: usize, todo: &TodoView) -> String {
    let mark = todo_mark(todo.status);
    let mut line = format!("[{mark}] {position}. {}", one_line(&todo.title, 120));
    if let Some(phase) = &todo.phase {
        let _ = write!(line, " (phase {})", one_line(phase, 40));
    }
    if todo.checkpoint {
        line.push_str(" [checkpoint]");
    }
    if let Some(reason) = &todo.reason {
        let _ = write!(line, " — {}", one_line(reason, 120));
    }
    line
}

/// A failure report as lines: class and message, where, why, what was rolled back, what to do.
/// Shared by `execution show` and the `--on-failure ask` prompt.
pub(super) fn failure_report(f: &FailureView) -> Vec<String> {
    let mut lines = vec![format!(
        "failure {}: [{}] {}",
        short_id(&f.id),
        f.class,
        one_line(&f.message, 400)
    )];
    let report = f.report();
    let details = &report.details;
    let place = &details.place;
    if let Some(title) = &place.todo_title {
        let mut at = format!(
            "    where: todo {} of {} \"{}\"",
            place.position.unwrap_or(0),
            place.plan_len,
            one_line(title, 120)
        );
        if let Some(phase) = &place.phase {
            let _ = write!(at, " (phase {})", one_line(phase, 40));
        }
        lines.push(at);
    } else {
        lines.push("    where: no todo was in progress".into());
    }
    let causes = &details.likely_causes;
    match (details.trigger.as_deref(), causes.is_empty()) {
        (Some(trigger), false) => lines.push(format!(
            "    why: {trigger}; likely: {}",
            one_line(&causes.join("; "), 400)
        )),
        (Some(trigger), true) => lines.push(format!("    why: {trigger}")),
        (None, false) => lines.push(format!("    likely: {}", one_line(&causes.join("; "), 400))),
        (None, true) => {}
    }
    if let Some(call) = &details.call {
        lines.push(format!(
            "    call: {} {}",
            call.name,
            one_line(&call.arguments, 160)
        ));
    }
    let rolled_back = match &report.rolled_back {
        Some(r) => format!(
            "workspace, plan and history back to snapshot {} ({} files restored, {} removed, \
             {} messages undone)",
            short_id(&r.snapshot_id),
            r.files_restored,
            r.files_removed,
            r.messages_removed
        ),
        None => "nothing".into(),
    };
    lines.push(format!("    rolled back: {rolled_back}"));
    if let Some(changes) = &details.changes {
        lines.push(format!(
            "    since the todo started: {}",
            one_line(&changes.summary(), 300)
        ));
        for (what, paths, total) in [
            ("created", &changes.added, changes.counts[0]),
            ("changed", &changes.changed, changes.counts[1]),
            ("removed", &changes.removed, changes.counts[2]),
        ] {
            if paths.is_empty() {
                continue;
            }
            let more = total.saturating_sub(paths.len() as u64);
            lines.push(format!(
                "      {what}: {}{}",
                one_line(&paths.join(", "), 300),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ));
        }
    }
    let offered: Vec<&str> = report.offered().into_iter().map(|c| c.as_str()).collect();
    lines.push(format!("    choices: {}", offered.join(", ")));
    if let Some(window) = details
        .served_window
        .filter(|_| offered.contains(&"compress"))
    {
        lines.push(format!(
            "    compress: use the server's {} tokens and compress the conversation deeply",
            decima_runtime::served_window::thousands(window)
        ));
    }
    lines
}

/// Milliseconds since the epoch as RFC 3339.
fn time(ms: i64) -> String {
    decima_core::Timestamp(ms).to_rfc3339()
}

/// The first 12 characters of a long id: enough to tell snapshots and failures apart on screen.
fn short_id(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

/// Model- or user-written text on one line of at most `max` characters: line breaks and tabs
/// become spaces, other control characters (terminal escapes) a replacement mark.
pub(super) fn one_line(text: &str, max: usize) -> String {
    let mut out: String = text
        .chars()
        .take(max)
        .map(|c| match c {
            '\n' | '\r' | '\t' => ' ',
            c if c.is_control() => '\u{fffd}',
            c => c,
        })
        .collect();
    if text.chars().nth(max).is_some() {
        out.push('…');
    }
    out
}
