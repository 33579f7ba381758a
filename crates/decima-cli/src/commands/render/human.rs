//! Text output: the answer on stdout, tool calls, the plan, failures and reviews on stderr.

use std::io::Write as _;
use std::sync::Mutex;

use decima_runtime::Event;
use decima_runtime::agent::TODO_WRITE;
use decima_runtime::events::TodoView;

use decima_store::TodoStatus;

use super::{note, todo_mark};
use crate::commands::execution::one_line;
use crate::error::CliError;

/// How much of a tool call's arguments its `[tool]` line shows.
const ARGUMENTS_SHOWN: usize = 160;

/// Text output: the answer on stdout, progress on stderr.
pub(crate) struct Human {
    /// Stream the model's text as it arrives (stdout is a terminal); otherwise only the final
    /// answer is written, at the end.
    stream: bool,
    state: Mutex<HumanState>,
}

#[derive(Default)]
struct HumanState {
    /// The text streamed since the last tool call or discard: the answer, if the run ends now.
    segment: String,
    /// Streamed text on stdout does not end with a line break.
    stdout_open: bool,
    /// Streamed reasoning on stderr does not end with a line break.
    reasoning_open: bool,
    /// The titles of the plan last shown, to show the whole plan again only when it changes.
    plan: Vec<String>,
    stdout_failed: Option<std::io::Error>,
}

impl Human {
    pub(crate) fn new(stream: bool) -> Self {
        Self {
            stream,
            state: Mutex::new(HumanState::default()),
        }
    }

    /// A line on stderr, on a line of its own even when text was streaming.
    pub(crate) fn note(&self, line: &str) {
        match self.state.lock() {
            Ok(mut state) => {
                state.break_lines();
                note(line);
            }
            Err(_) => note(line),
        }
    }

    pub(crate) fn emit(&self, event: Event) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        match event {
            Event::TextDelta { text } => {
                if self.stream {
                    if state.reasoning_open {
                        let _ = writeln!(std::io::stderr());
                        state.reasoning_open = false;
                    }
                    state.print(&text);
                }
                state.segment.push_str(&text);
            }
            Event::ReasoningDelta { text } => {
                if state.stdout_open {
                    state.print("\n");
                }
                let mut stderr = std::io::stderr().lock();
                let _ = stderr.write_all(text.as_bytes());
                let _ = stderr.flush();
                if !text.is_empty() {
                    state.reasoning_open = !text.ends_with('\n');
                }
            }
            Event::Discarded { reason } => {
                let streamed = !state.segment.is_empty() && self.stream;
                state.segment.clear();
                state.break_lines();
                if streamed {
                    note(&format!("[the partial text above is discarded: {reason}]"));
                } else {
                    note(&format!("[a partial answer was discarded: {reason}]"));
                }
            }
            Event::ExecutionStarted { workspace, how, .. } => {
                state.segment.clear();
                state.break_lines();
                if !workspace.is_empty() {
                    note(&format!("[{how}] workspace {workspace}"));
                }
            }
            // The plan lines below say what a todo_write did.
            Event::ToolStarted { name, .. } if name == TODO_WRITE => {
                state.segment.clear();
            }
            Event::ToolFinished {
                name, class: None, ..
            } if name == TODO_WRITE => {}
            Event::ToolStarted {
                name, arguments, ..
            } => {
                state.segment.clear();
                state.break_lines();
                note(&format!(
                    "[tool] {name} {}",
                    one_line(&arguments, ARGUMENTS_SHOWN)
                ));
            }
            Event::ToolFinished {
                name,
                exit_code,
                duration_ms,
                class,
                ran,
                ..
            } => {
                state.break_lines();
                let mut line = format!("[tool] {name}");
                match (exit_code, class) {
                    _ if !ran => line.push_str(" answered without running"),
                    (Some(code), Some(class)) => line.push_str(&format!(" exit {code} [{class}]")),
                    (Some(code), None) => line.push_str(&format!(" exit {code}")),
                    (None, Some(class)) => line.push_str(&format!(" failed [{class}]")),
                    (None, None) => line.push_str(" ok"),
                }
                line.push_str(&format!(" ({duration_ms} ms)"));
                note(&line);
            }
            Event::TodosChanged { todos } => {
                state.break_lines();
                let titles: Vec<String> = todos.iter().map(|t| t.title.clone()).collect();
                if titles != state.plan {
                    note(&plan_lines(&todos));
                    state.plan = titles;
                } else {
                    note(&progress_line(&todos));
                }
            }
            Event::SnapshotTaken {
                snapshot_id,
                reason: "checkpoint",
                ..
            } => {
                state.break_lines();
                note(&format!("[checkpoint] snapshot {}", short(&snapshot_id)));
            }
            Event::Failure { class, message, .. } => {
                state.break_lines();
                note(&format!("[failure] [{class}] {}", one_line(&message, 400)));
            }
            Event::RolledBack {
                snapshot_id,
                files_restored,
                files_removed,
                messages_removed,
                ..
            } => {
                state.segment.clear();
                state.break_lines();
                note(&format!(
                    "[rollback] workspace, plan and history back to snapshot {}: {files_restored} \
                     files restored, {files_removed} removed, {messages_removed} messages undone",
                    short(&snapshot_id)
                ));
            }
            Event::Recovered { choice, .. } => {
                state.break_lines();
                note(&format!("[recover] {choice}"));
            }
            Event::Compacted {
                compaction_id,
                tokens_before,
                tokens_after,
                ..
            } => {
                state.break_lines();
                note(&format!(
                    "[compressed the history before sending: {tokens_before} → {tokens_after} \
                     tokens; `decima compress undo {compaction_id}` reverts it]"
                ));
            }
            // A chat turn's first event: which conversation it went to (a new one, unless
            // `--conversation` named it).
            Event::TurnStarted { conversation_id } => {
                state.break_lines();
                note(&format!("conversation {conversation_id}"));
            }
            Event::Warning { message } => {
                state.break_lines();
                note(&format!("warning: {message}"));
            }
            // The terminal prompt itself says what is asked.
            Event::ApprovalAsked { .. } => state.break_lines(),
            Event::SubagentStarted {
                execution_id,
                depth,
                task,
                ..
            } => {
                state.break_lines();
                note(&format!(
                    "[subagent {} started at depth {depth}] {}",
                    short(&execution_id.to_string()),
                    one_line(&task, 100)
                ));
            }
            Event::SubagentFinished {
                execution_id,
                status,
                ..
            } => {
                state.break_lines();
                note(&format!(
                    "[subagent {} {status}]",
                    short(&execution_id.to_string())
                ));
            }
            Event::ReviewStarted {
                trigger,
                mode,
                review_type,
                ..
            } => {
                state.break_lines();
                note(&format!(
                    "[tenth man: {review_type} {mode} review ({trigger})…]"
                ));
            }
            Event::ReviewFinished {
                review_id,
                risk_level,
                findings,
                cached,
                contested,
            } => {
                state.break_lines();
                note(&format!(
                    "[tenth man: risk {risk_level}, {findings} finding(s){}; review {review_id}]{}",
                    if cached { ", from the cache" } else { "" },
                    if contested {
                        "\n[the final review CONTESTS this result: read the findings before \
                         relying on it]"
                    } else {
                        ""
                    }
                ));
            }
            // The report and the question come from the choice source, or the exit message.
            Event::AwaitingChoice { .. } => state.break_lines(),
            Event::MessageStored { .. }
            | Event::ContextUsage { .. }
            | Event::StepTimed { .. }
            | Event::SnapshotTaken { .. }
            | Event::Finished { .. } => {}
        }
    }

    /// The run returned. The answer goes to stdout unless it has just streamed there, and the
    /// output ends with a line break.
    pub(crate) fn finish(&self, answer: Option<&str>) -> Result<(), CliError> {
        let Ok(mut state) = self.state.lock() else {
            return Ok(());
        };
        if let Some(answer) = answer {
            let streamed = self.stream && state.segment.trim() == answer.trim();
            if !streamed {
                if state.stdout_open {
                    state.print("\n");
                }
                state.print(answer);
            }
        }
        if state.stdout_open {
            state.print("\n");
        }
        if state.reasoning_open {
            let _ = writeln!(std::io::stderr());
            state.reasoning_open = false;
        }
        state
            .stdout_failed
            .take()
            .map_or(Ok(()), |e| Err(CliError::Output(e)))
    }
}

impl HumanState {
    /// Writes text to stdout, remembering the first failure.
    fn print(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let mut stdout = std::io::stdout().lock();
        let result = stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush());
        if let Err(e) = result {
            self.stdout_failed.get_or_insert(e);
        }
        self.stdout_open = !text.ends_with('\n');
    }

    /// Ends streamed text and reasoning lines, so the next note starts a line of its own.
    fn break_lines(&mut self) {
        if self.stdout_open {
            self.print("\n");
        }
        if self.reasoning_open {
            let _ = writeln!(std::io::stderr());
            self.reasoning_open = false;
        }
    }
}

/// The whole plan, one todo a line.
fn plan_lines(todos: &[TodoView]) -> String {
    let mut text = String::from("[plan]");
    for (i, todo) in todos.iter().enumerate() {
        text.push_str(&format!(
            "\n  [{}] {}. {}",
            todo_mark(todo.status),
            i + 1,
            one_line(&todo.title, 120)
        ));
    }
    text
}

/// Progress through an unchanged plan: how many are done and which one is being worked on.
fn progress_line(todos: &[TodoView]) -> String {
    let done = todos
        .iter()
        .filter(|t| t.status == TodoStatus::Completed)
        .count();
    let mut line = format!("[todos] {done}/{} completed", todos.len());
    if let Some(todo) = todos.iter().find(|t| t.status == TodoStatus::InProgress) {
        line.push_str(&format!("; now: {}", one_line(&todo.title, 120)));
    }
    line
}

/// The first 12 characters of a long id.
fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}
