//! What the failure path knows of the todo in progress: the class of its last failed call, its
//! streak of repeated calls, the one automatic replan a logic failure gets, and the todo that
//! replan was given for. Each change is a method named for what happened, so what a todo start,
//! a completion, a failure or a choice does to this state is said in one place and tested here.

use decima_core::FailureClass;

use crate::agent::stuck::{Observed, StuckDetector};

/// The todo the automatic replan was given for, and the class of that failure: if the todo is
/// still failed when the model has acted again, the replan did not take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ReplanWatch {
    /// The todo's id.
    pub(super) todo: String,
    /// The class of the failure that was replanned.
    pub(super) class: FailureClass,
}

/// The failure path's state for the todo in progress.
#[derive(Debug, Default)]
pub(super) struct TodoState {
    /// The class of the last failed tool call since the todo started.
    last_tool_failure: Option<FailureClass>,
    /// Identical calls with identical results in a row.
    stuck: StuckDetector,
    /// Whether the automatic replan was used since a todo last completed: a replan that fails
    /// again waits for the analyst.
    auto_replan_used: bool,
    /// The todo the automatic replan was given for, checked once the model has acted again.
    replan_watch: Option<ReplanWatch>,
}

impl TodoState {
    /// A todo started: its failures and repeats start from nothing. The automatic replan is
    /// not given back: only a completed todo earns it.
    pub(super) fn todo_started(&mut self) {
        self.last_tool_failure = None;
        self.stuck.reset();
    }

    /// A todo completed: the next logic failure may be replanned automatically again.
    pub(super) fn todo_completed(&mut self) {
        self.auto_replan_used = false;
    }

    /// A tool call of the todo failed (a plan the model wrote wrong is not one).
    pub(super) fn call_failed(&mut self, class: FailureClass) {
        self.last_tool_failure = Some(class);
    }

    /// The class of a todo the model marked failed: that of its last failed call, else logic
    /// (the model gave up on its own reasoning).
    pub(super) fn failed_todo_class(&self) -> FailureClass {
        self.last_tool_failure.unwrap_or(FailureClass::Logic)
    }

    /// Notes a call and its result. Returns the streak when this same call has now come back
    /// the same way `limit` times in a row, and starts a new streak, so a loop is reported
    /// once, not on every call after.
    pub(super) fn repeated(&mut self, call: Observed<'_>, limit: u32) -> Option<u32> {
        let repeats = self.stuck.observe(call);
        if repeats < limit {
            return None;
        }
        self.stuck.reset();
        Some(repeats)
    }

    /// A failure reached the failure path: the watch on an earlier replan is over (this is
    /// what came of it). Returns whether this failure may take the automatic replan, which
    /// it then uses up.
    pub(super) fn failed(&mut self, replannable: bool) -> bool {
        self.replan_watch = None;
        replannable && !std::mem::replace(&mut self.auto_replan_used, true)
    }

    /// The automatic replan was given: the model starts over on the todo, so its streak is
    /// forgotten, and `watch` (the todo it was given for) is checked after its next answer.
    pub(super) fn replanned(&mut self, watch: Option<ReplanWatch>) {
        self.stuck.reset();
        self.replan_watch = watch;
    }

    /// The analyst (or a rule) chose how to go on: the streak that led here is over.
    pub(super) fn chosen(&mut self) {
        self.stuck.reset();
    }

    /// The watch on the automatic replan, once: the model has acted since it was given.
    pub(super) fn take_watch(&mut self) -> Option<ReplanWatch> {
        self.replan_watch.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(result: &str) -> Observed<'_> {
        Observed {
            name: "shell",
            arguments: r#"{"command":"wc -l ledger.csv"}"#,
            result,
            exit_code: Some(0),
            failed: false,
        }
    }

    fn watch(todo: &str) -> ReplanWatch {
        ReplanWatch {
            todo: todo.into(),
            class: FailureClass::Logic,
        }
    }

    #[test]
    fn a_failed_todo_takes_the_class_of_its_last_failed_call_and_a_new_todo_forgets_it() {
        let mut todo = TodoState::default();
        assert_eq!(todo.failed_todo_class(), FailureClass::Logic);
        todo.call_failed(FailureClass::Data);
        todo.call_failed(FailureClass::Permission);
        assert_eq!(todo.failed_todo_class(), FailureClass::Permission);
        todo.todo_started();
        assert_eq!(todo.failed_todo_class(), FailureClass::Logic);
    }

    #[test]
    fn a_loop_is_reported_once_at_its_limit_then_counted_again_from_one() {
        let mut todo = TodoState::default();
        assert_eq!(todo.repeated(call("12"), 3), None);
        assert_eq!(todo.repeated(call("12"), 3), None);
        assert_eq!(todo.repeated(call("12"), 3), Some(3));
        assert_eq!(todo.repeated(call("12"), 3), None);
        // Another result breaks the streak.
        assert_eq!(todo.repeated(call("12"), 3), None);
        assert_eq!(todo.repeated(call("13"), 3), None);
        assert_eq!(todo.repeated(call("13"), 3), None);
        assert_eq!(todo.repeated(call("13"), 3), Some(3));
    }

    #[test]
    fn a_new_todo_a_replan_and_a_choice_each_end_the_streak() {
        let ends: [fn(&mut TodoState); 3] = [
            TodoState::todo_started,
            |t| t.replanned(None),
            TodoState::chosen,
        ];
        for end in ends {
            let mut todo = TodoState::default();
            todo.repeated(call("12"), 2);
            end(&mut todo);
            assert_eq!(todo.repeated(call("12"), 2), None);
            assert_eq!(todo.repeated(call("12"), 2), Some(2));
        }
    }

    #[test]
    fn the_automatic_replan_is_given_once_until_a_todo_completes() {
        let mut todo = TodoState::default();
        assert!(!todo.failed(false), "only a replannable failure takes it");
        assert!(todo.failed(true));
        assert!(
            !todo.failed(true),
            "a second logic failure waits for the analyst"
        );
        todo.todo_started();
        assert!(!todo.failed(true), "starting a todo does not give it back");
        todo.todo_completed();
        assert!(todo.failed(true));
    }

    #[test]
    fn the_replan_watch_is_read_once_and_a_new_failure_ends_it() {
        let mut todo = TodoState::default();
        todo.replanned(Some(watch("t2")));
        assert_eq!(todo.take_watch(), Some(watch("t2")));
        assert_eq!(todo.take_watch(), None);
        todo.replanned(Some(watch("t3")));
        todo.failed(false);
        assert_eq!(todo.take_watch(), None);
    }
}
