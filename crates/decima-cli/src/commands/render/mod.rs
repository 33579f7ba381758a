//! How a run's or a chat turn's events reach the terminal: as text (the answer on stdout,
//! progress on stderr) or, with `--json`, as one JSON line per event. `decima run`, `recover`,
//! `resume` and `chat` share them, so a chat turn and an agent run read the same.

mod human;
mod json_lines;
mod said;

use std::io::Write as _;

use decima_runtime::{Event, EventSink};
use decima_store::TodoStatus;

use crate::error::CliError;
pub(crate) use human::Human;
pub(crate) use json_lines::JsonLines;

/// The event sink of one command: JSON lines or text.
pub(crate) enum Printer {
    Json(JsonLines),
    Human(Human),
}

impl Printer {
    /// The run returned: prints what is left (the answer) and reports a failed stdout.
    pub(crate) fn finish(&self, answer: Option<&str>) -> Result<(), CliError> {
        match self {
            Printer::Json(p) => p.finish(),
            Printer::Human(p) => p.finish(answer),
        }
    }
}

impl EventSink for Printer {
    fn emit(&self, event: Event) {
        if let Event::ExecutionStarted { execution_id, .. } = &event {
            match self {
                Printer::Human(p) => p.note(&format!("execution {execution_id}")),
                Printer::Json(_) => note(&format!("execution {execution_id}")),
            }
        }
        match self {
            Printer::Json(p) => p.emit(event),
            Printer::Human(p) => p.emit(event),
        }
    }
}

/// One line on stderr. A stderr that cannot be written to costs the line, never the run.
pub(crate) fn note(line: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{line}");
    let _ = stderr.flush();
}

/// A todo's status as the one character inside its box: done, in progress, failed, skipped,
/// cancelled or pending. One place, so the run's plan and `execution show` agree.
pub(crate) fn todo_mark(status: TodoStatus) -> char {
    match status {
        TodoStatus::Completed => 'x',
        TodoStatus::InProgress => '>',
        TodoStatus::Failed => '!',
        TodoStatus::Skipped => '-',
        TodoStatus::Cancelled => '/',
        TodoStatus::Pending => ' ',
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_todo_status_has_a_mark_of_its_own() {
        let marks: std::collections::BTreeSet<char> =
            TodoStatus::ALL.into_iter().map(todo_mark).collect();
        assert_eq!(marks.len(), TodoStatus::ALL.len(), "{marks:?}");
        assert_eq!(todo_mark(TodoStatus::Pending), ' ');
        assert_ne!(
            todo_mark(TodoStatus::Cancelled),
            todo_mark(TodoStatus::Pending)
        );
    }
}
