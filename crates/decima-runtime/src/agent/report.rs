//! A stored failure read back: the one schema of the JSON in `failures.details`,
//! `failures.rolled_back` and `failures.suggested_actions`. The loop writes it when it records a
//! failure and reads it when the analyst chooses; the CLI and the window show it. None of them
//! picks the JSON apart by hand.

use decima_store::{Failure, Resolution};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::checkpoint::RolledBack;
use super::failure::{Place, Trigger};

/// What `failures.details` holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FailureDetails {
    /// What started the failure path ([`Trigger::as_str`]).
    pub trigger: Option<String>,
    /// Where in the plan it happened.
    pub place: Place,
    /// Likely causes, best first.
    pub likely_causes: Vec<String>,
    /// The tool call that failed, if a call did.
    pub call: Option<FailedCall>,
    /// The step it happened at.
    pub step: u32,
    /// What the todo changed since its snapshot, when nothing was rolled back: what a
    /// rollback would undo, so the analyst can decide whether to choose it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<TodoChanges>,
    /// For a request too long for the model: the window the server named in its refusal, or
    /// the one it reported serving, which `compress` fits the run to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub served_window: Option<u32>,
    /// For an answer with unlinked figures: each of them, in its sentence.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<UnlinkedFigure>,
}

/// A figure of an answer that no source holds, as the recovery panel lists it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default)]
pub struct UnlinkedFigure {
    /// The answer's message.
    pub message_seq: i64,
    /// Byte span of the figure in the answer (or in its report).
    pub start: u32,
    /// End of the span.
    pub end: u32,
    /// The figure as written.
    pub text: String,
    /// Its sentence.
    pub sentence: String,
    /// The report it is in, when it is a figure of a file the run wrote (`report.md`) rather
    /// than of the answer; its span is then in that file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// What a todo changed since the snapshot taken when it started.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TodoChanges {
    /// The snapshot a rollback would return to.
    pub snapshot_id: String,
    /// Workspace paths created since, the first [`TodoChanges::LISTED`].
    pub added: Vec<String>,
    /// Workspace paths whose content changed, the first [`TodoChanges::LISTED`].
    pub changed: Vec<String>,
    /// Workspace paths removed since, the first [`TodoChanges::LISTED`].
    pub removed: Vec<String>,
    /// How many paths were created, changed and removed in all.
    pub counts: [u64; 3],
    /// Live messages stored after the snapshot (a rollback soft-deletes them).
    pub messages_since: u64,
    /// Why the workspace could not be compared, when it could not (a container whose engine is
    /// down, a snapshot without a workspace).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace_unknown: Option<String>,
}

impl TodoChanges {
    /// Paths listed per kind; the counts hold the rest.
    pub const LISTED: usize = 40;

    /// Whether the workspace is as the snapshot left it (as far as it could be compared).
    pub fn workspace_unchanged(&self) -> bool {
        self.counts == [0, 0, 0] && self.workspace_unknown.is_none()
    }

    /// One line for a person: "3 files created, 1 changed, 0 removed; 12 messages".
    pub fn summary(&self) -> String {
        let [added, changed, removed] = self.counts;
        let files = match &self.workspace_unknown {
            Some(why) => format!("the workspace could not be compared ({why})"),
            None => format!("{added} paths created, {changed} changed, {removed} removed"),
        };
        format!(
            "{files}; {} messages since the todo started",
            self.messages_since
        )
    }
}

/// A tool call as the failure report keeps it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FailedCall {
    /// The tool.
    pub name: String,
    /// Its arguments as the model wrote them.
    pub arguments: String,
}

impl FailureDetails {
    /// The trigger as the loop knows it; a report without one (or with a name this version
    /// does not know) counts as a tool failure, the most general.
    pub fn trigger(&self) -> Trigger {
        match self.trigger.as_deref() {
            Some("todo_failed") => Trigger::TodoFailed,
            Some("stuck_loop") => Trigger::StuckLoop,
            Some("model_request") => Trigger::ModelRequest,
            Some("step_budget") => Trigger::StepBudget,
            Some("still_failed") => Trigger::StillFailed,
            Some("looping_answer") => Trigger::LoopingAnswer,
            Some("cut_twice") => Trigger::CutTwice,
            Some("unlinked_figures") => Trigger::UnlinkedFigures,
            _ => Trigger::ToolFailure,
        }
    }
}

/// A stored failure's report, typed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FailureReport {
    /// Where and why.
    pub details: FailureDetails,
    /// What the rollback undid, when the workspace went back to a snapshot.
    pub rolled_back: Option<RolledBack>,
    /// The choices the failure offers, best first (retry, skip, replan, rollback, abort): the
    /// only ones accepted for it.
    pub suggestions: Vec<String>,
}

impl FailureReport {
    /// Reads a stored failure. A part that does not have the shape the runtime writes (a row
    /// edited by hand) reads as empty rather than failing the whole view.
    pub fn of(failure: &Failure) -> Self {
        Self::read(
            &failure.details,
            &failure.rolled_back,
            &failure.suggested_actions,
        )
    }

    /// The choices this failure offers, best first; names this version does not know are
    /// left out.
    pub fn offered(&self) -> Vec<Resolution> {
        let offered: Vec<Resolution> = self
            .suggestions
            .iter()
            .filter_map(|s| s.parse().ok())
            .collect();
        if offered.is_empty() {
            // A report without choices (edited by hand): stopping is always possible.
            return vec![Resolution::Abort];
        }
        offered
    }

    /// Whether the analyst may answer this failure with `choice`.
    pub fn offers(&self, choice: Resolution) -> bool {
        self.offered().contains(&choice)
    }

    /// Reads the three stored parts (also as [`super::FailureView`] carries them). Nothing rolled
    /// back is stored as `{}`, which is no [`RolledBack`].
    pub fn read(details: &Value, rolled_back: &Value, suggestions: &Value) -> Self {
        Self {
            details: FailureDetails::deserialize(details).unwrap_or_default(),
            rolled_back: RolledBack::deserialize(rolled_back).ok(),
            suggestions: Vec::<String>::deserialize(suggestions).unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_back_what_the_loop_writes_and_tolerates_what_it_does_not() {
        let details = FailureDetails {
            trigger: Some(Trigger::StuckLoop.as_str().to_owned()),
            place: Place {
                todo_id: Some("t2".into()),
                todo_title: Some("Total the regions".into()),
                phase: Some("sum".into()),
                position: Some(2),
                plan_len: 3,
            },
            likely_causes: vec!["the model repeats a call".into()],
            call: Some(FailedCall {
                name: "shell".into(),
                arguments: r#"{"command":"false"}"#.into(),
            }),
            step: 7,
            changes: None,
            served_window: None,
            figures: Vec::new(),
        };
        let rolled = RolledBack {
            snapshot_id: "snap".into(),
            files_restored: 2,
            ..RolledBack::default()
        };
        let report = FailureReport::read(
            &serde_json::to_value(&details).unwrap(),
            &serde_json::to_value(&rolled).unwrap(),
            &json!(["replan", "skip"]),
        );
        assert_eq!(report.details, details);
        assert_eq!(report.details.trigger(), Trigger::StuckLoop);
        assert_eq!(report.rolled_back, Some(rolled));
        assert_eq!(report.suggestions, ["replan", "skip"]);

        // Nothing rolled back is stored as {}; a hand-edited row reads as empty parts.
        let odd = FailureReport::read(&json!({"place": 5}), &json!({}), &json!("retry"));
        assert_eq!(odd, FailureReport::default());
        assert_eq!(odd.details.trigger(), Trigger::ToolFailure);
        // A missing part of a well-formed report is only that part missing.
        let partial =
            FailureReport::read(&json!({"trigger": "step_budget"}), &json!({}), &json!([]));
        assert_eq!(partial.details.trigger(), Trigger::StepBudget);
        assert_eq!(partial.details.place, Place::default());
    }
}
