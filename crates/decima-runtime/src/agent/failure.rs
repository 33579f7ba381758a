//! The failure report: where it happened, why, what was rolled back, and what to do next. It
//! is stored in `failures`, shown by `decima execution show`, and given to the model as the
//! instant context when the analyst (or the one automatic replan) asks for a new plan.

use decima_core::FailureClass;
use decima_store::{Resolution, Todo};
use serde::{Deserialize, Serialize};

use super::checkpoint::RolledBack;

/// What started the failure path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Trigger {
    /// The model marked the todo failed.
    TodoFailed,
    /// The same failing call, with the same arguments, several times in a row.
    StuckLoop,
    /// A provider request failed after its retries.
    ModelRequest,
    /// A tool failed with a permission or system error.
    ToolFailure,
    /// The execution used its whole step budget.
    StepBudget,
    /// A todo the model marked failed was still failed when the model acted again after the
    /// automatic replan: the replan did not take, so the analyst decides.
    StillFailed,
    /// The model's answer kept repeating one run of text until Decima ended it: a small
    /// model's loop, which asking again rarely mends.
    LoopingAnswer,
    /// Two answers in a row were cut by the output cap before the model finished.
    CutTwice,
    /// The final answer states figures that no tool output holds.
    UnlinkedFigures,
}

impl Trigger {
    /// The name stored in the report's details.
    pub fn as_str(&self) -> &'static str {
        self.into()
    }

    /// Whether a logic failure of this kind gets the one automatic replan. A stuck loop, a
    /// replan that did not take and an exhausted budget go to the analyst at once: asking the
    /// model again is what already failed.
    pub fn allows_auto_replan(&self) -> bool {
        matches!(
            self,
            Trigger::TodoFailed | Trigger::ModelRequest | Trigger::ToolFailure
        )
    }
}

/// A failure before it is stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    /// The class recovery keys on.
    pub class: FailureClass,
    /// What started the failure path.
    pub trigger: Trigger,
    /// What happened, in one line.
    pub message: String,
    /// The tool call involved, if any: (name, arguments).
    pub call: Option<(String, String)>,
    /// The todo it concerns, when the failure names one (the one the model marked failed);
    /// otherwise the todo in progress is taken.
    pub todo: Option<String>,
}

/// Where in the plan a failure happened.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    /// The todo (the one in progress, or the one the model marked failed).
    pub todo_id: Option<String>,
    /// Its title.
    pub todo_title: Option<String>,
    /// Its phase.
    pub phase: Option<String>,
    /// Its position, from 1.
    pub position: Option<usize>,
    /// How many todos the plan has.
    pub plan_len: usize,
}

impl Place {
    /// The todo a failure belongs to: the one named, else the one in progress.
    pub fn of(plan: &[Todo], todo_id: Option<&str>) -> Self {
        let found = match todo_id {
            Some(id) => plan.iter().position(|t| t.id == id),
            None => plan
                .iter()
                .position(|t| t.status == decima_store::TodoStatus::InProgress),
        };
        match found {
            Some(i) => Place {
                todo_id: Some(plan[i].id.clone()),
                todo_title: Some(plan[i].title.clone()),
                phase: plan[i].phase.clone(),
                position: Some(i + 1),
                plan_len: plan.len(),
            },
            None => Place {
                plan_len: plan.len(),
                ..Place::default()
            },
        }
    }
}

/// The likely causes of a failure of this class, for the person and the model.
pub fn likely_causes(pending: &Pending) -> Vec<String> {
    let mut causes: Vec<String> = match (&pending.trigger, pending.class) {
        (Trigger::StuckLoop, _) => vec![
            "the model repeats a call that cannot succeed as written".into(),
            "a precondition of the call (a file, a tool, a directory) is missing".into(),
        ],
        (Trigger::StepBudget, _) => vec![
            "the task needs more steps than the budget allows".into(),
            "the model is going round in circles".into(),
        ],
        (Trigger::StillFailed, _) => vec![
            "the model did not write a plan that gets around the failure".into(),
            "the todo cannot be done as the model understands it".into(),
        ],
        (_, FailureClass::Transient) => vec![
            "the provider or the network is overloaded or rate limited".into(),
            "a command took longer than its timeout".into(),
        ],
        (_, FailureClass::Data) => vec![
            "a file or path the step relies on does not exist or has another shape".into(),
            "the arguments or the input data are malformed".into(),
        ],
        (_, FailureClass::Permission) => vec![
            "the step tried to reach outside the workspace".into(),
            "the operating system or the provider refused the credentials or rights".into(),
        ],
        (_, FailureClass::System) => vec![
            "the sandbox, the disk or the database is not usable".into(),
            "a program the step needs is not installed".into(),
        ],
        (_, FailureClass::Logic) => vec![
            "the approach does not work for this data".into(),
            "a step's precondition was not met by the steps before it".into(),
        ],
        (_, FailureClass::ContextOverflow) => {
            vec!["the conversation no longer fits the model's window, even compressed".into()]
        }
        (_, FailureClass::Cancelled) => vec!["the run was stopped".into()],
        (_, FailureClass::Unlinked) => vec![
            "the model wrote a figure it never computed or read with a tool".into(),
            "the figure comes from a tool output in a form the matcher does not follow (a \
             rounding, a unit or a derivation of more than three figures)"
                .into(),
        ],
        (_, FailureClass::Degenerate) => vec![
            "the model lost its way and repeated itself (small local models do)".into(),
            "the step asks more of the model than it can do in one answer".into(),
        ],
    };
    if let Some((name, _)) = &pending.call {
        causes.push(format!("the failing call was {name}"));
    }
    causes
}

/// What a failure leaves the analyst to decide with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// The workspace, the plan and the history already went back to the todo's snapshot.
    pub rolled_back: bool,
    /// A todo is involved, so there is something to skip.
    pub has_todo: bool,
    /// Nothing was rolled back, but a snapshot of the todo exists to roll back to.
    pub can_roll_back: bool,
}

/// The choices a failure offers, best first: the only ones the CLI, the window and
/// [`super::recover`] accept for it. Abort is always among them.
pub fn suggestions(trigger: &Trigger, class: FailureClass, options: Options) -> Vec<Resolution> {
    use Resolution::*;
    let mut choices = match (trigger, class) {
        (Trigger::StepBudget, _) => vec![Retry, Replan, Abort],
        (Trigger::StuckLoop, _) => vec![Replan, Skip, Abort],
        (_, FailureClass::Transient) => vec![Retry, Skip, Abort],
        (_, FailureClass::Data | FailureClass::Logic) => vec![Replan, Skip, Retry, Abort],
        (_, FailureClass::Degenerate) => vec![Replan, Retry, Skip, Abort],
        (_, FailureClass::Unlinked) => vec![Verify, Estimate, Correct, Accept, Abort],
        // The same request again would be refused again: compress first.
        (_, FailureClass::ContextOverflow) => vec![Compress, Replan, Skip, Abort],
        (_, FailureClass::Permission) if options.rolled_back => vec![Replan, Skip, Abort],
        (_, FailureClass::Permission | FailureClass::System) => vec![Retry, Abort, Skip],
        _ => vec![Retry, Replan, Skip, Abort],
    };
    if !options.has_todo {
        choices.retain(|c| *c != Skip);
    }
    if options.can_roll_back && !options.rolled_back {
        // Before abort, which stays last or where it was.
        let at = choices
            .iter()
            .position(|c| *c == Abort)
            .unwrap_or(choices.len());
        choices.insert(at, Rollback);
    }
    choices
}

/// The report as the model reads it when asked for a new plan.
pub fn render_for_model(
    pending: &Pending,
    place: &Place,
    causes: &[String],
    rolled_back: Option<&RolledBack>,
    choice: Resolution,
) -> String {
    let mut out = String::from("# Failure report\n");
    match &place.todo_title {
        Some(title) => out.push_str(&format!(
            "Where: todo {} of {} \"{}\"{}\n",
            place.position.unwrap_or(0),
            place.plan_len,
            title,
            place
                .phase
                .as_deref()
                .map(|p| format!(" (phase {p})"))
                .unwrap_or_default()
        )),
        None => out.push_str("Where: no todo was in progress\n"),
    }
    out.push_str(&format!(
        "Why: [{}] {} ({})\n",
        pending.class,
        pending.message,
        pending.trigger.as_str()
    ));
    if !causes.is_empty() {
        out.push_str(&format!("Likely causes: {}\n", causes.join("; ")));
    }
    match rolled_back {
        Some(r) => out.push_str(&format!(
            "Rolled back: the workspace, the plan and the history went back to when the todo \
             started ({} files restored, {} removed, {} messages undone)\n",
            r.files_restored, r.files_removed, r.messages_removed
        )),
        None => out.push_str("Nothing was rolled back.\n"),
    }
    out.push_str(match choice {
        Resolution::Replan => {
            "Next: write a new plan with todo_write that avoids this failure, then go on. A \
             todo you marked failed must not stay failed: set it back to pending to try it \
             another way, or to skipped to drop it. If it is still failed after your next \
             step, the run stops and the analyst decides.\n"
        }
        Resolution::Retry => "Next: the analyst asked to try this todo again.\n",
        Resolution::Skip => "Next: the analyst skipped this todo; go on with the rest.\n",
        Resolution::Abort => "Next: stop.\n",
        Resolution::Rollback => {
            "Next: the analyst rolled this todo back and will say how to go on.\n"
        }
        Resolution::Verify => {
            "Next: the analyst asked you to verify the figures listed above: compute each one \
             with a tool from the data (print the value), then give your whole answer again with \
             the values the tools printed, or say which figures you could not compute.\n"
        }
        Resolution::Estimate | Resolution::Correct | Resolution::Accept => {
            "Next: the analyst settled the figures of your answer; nothing more is needed.\n"
        }
        Resolution::Compress => {
            "Next: the conversation was compressed to fit the model's window; go on with this \
             todo, and keep tool outputs short (read files in parts, filter before printing).\n"
        }
    });
    out
}
