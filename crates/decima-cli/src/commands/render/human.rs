//! Text output: the answer on stdout, tool calls, the plan, failures and reviews on stderr.

use std::io::Write as _;
use std::sync::Mutex;

use decima_runtime::Event;
use decima_runtime::events::TodoView;

use decima_store::TodoStatus;

use super::said::{self, Said};
use super::{note, todo_mark};
use crate::commands::execution::one_line;
use crate::error::CliError;

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
            Event::ReasoningDelta { text } => state.reason(&text),
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
            other => {
                if said::ends_segment(&other) {
                    state.segment.clear();
                }
                match said::said(other) {
                    Said::Nothing => {}
                    Said::LineBreak => state.break_lines(),
                    Said::Note(line) => {
                        state.break_lines();
                        note(&line);
                    }
                }
            }
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

    /// Streamed reasoning goes to stderr, on a line after any answer text.
    fn reason(&mut self, text: &str) {
        if self.stdout_open {
            self.print("\n");
        }
        let mut stderr = std::io::stderr().lock();
        let _ = stderr.write_all(text.as_bytes());
        let _ = stderr.flush();
        if !text.is_empty() {
            self.reasoning_open = !text.ends_with('\n');
        }
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
