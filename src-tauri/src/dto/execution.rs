//! Executions as the workbench shows them: the run list, the subagent tree, the todo panel
//! and the recovery panel.

use decima_core::Timestamp;
use decima_core::{FailureClass, RiskLevel, Severity};
use decima_runtime::agent;
use decima_store::{Execution, ExecutionStatus, Failure, Resolution, ResolvedBy, Todo};
use serde::Serialize;
use specta::Type;

use decima_runtime::events::TodoView;

/// An execution, with what its panels need.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionView {
    /// Its id.
    pub id: String,
    /// The conversation it works in (a subagent has its own).
    pub conversation_id: String,
    /// The execution that spawned it.
    pub parent_id: Option<String>,
    /// 0 for a run the analyst started, 1 for its children, and so on.
    pub depth: u32,
    /// What it was asked.
    pub task: String,
    /// Where it is in its life.
    pub status: ExecutionStatus,
    /// The final answer, when it succeeded.
    pub result: Option<String>,
    /// Why it ended badly.
    pub error: Option<String>,
    /// Its final review disagreed with its answer.
    pub contested: bool,
    /// Its plan.
    pub todos: Vec<TodoView>,
    /// Todos that have a snapshot to roll back to.
    pub snapshot_todo_ids: Vec<String>,
    /// The failure it waits on, when it awaits a choice.
    pub waiting_on: Option<FailureReport>,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// How the analyst ended it, if they did: the conversation shows a row where it ended.
    pub ending: Option<RunEndingView>,
    /// Its conversation was deleted (a subagent's, deleted on its own): shown, not opened.
    pub conversation_deleted: bool,
    /// When it first ran (RFC 3339): the run history's start and duration.
    pub started_at: Option<String>,
    /// When it ended (RFC 3339), once it did.
    pub finished_at: Option<String>,
    /// Model calls it made.
    pub model_calls: u32,
    /// Tokens those calls sent, as the provider reported them.
    pub tokens_in: u32,
    /// Tokens they received.
    pub tokens_out: u32,
    /// Of the tokens sent, those the provider read from its prompt cache.
    pub cache_read_tokens: u32,
    /// That share of the tokens sent, in percent.
    pub cached_percent: u32,
    /// The estimated cost in US dollars at the provider's prices; `null` when not priced.
    pub cost_usd: Option<f64>,
    /// Compressions the run made (read for the run history's runs only): each one made the
    /// providers' prompt caches miss from the first summary on.
    pub compressions: u32,
    /// The risk its final review found ("low" … "critical"), when one ran.
    pub review_risk: Option<RiskLevel>,
    /// The seq of its first message in the conversation: where the run history opens it.
    pub first_seq: Option<u32>,
    /// The failures the analyst answered, each with where in the conversation the answer was
    /// given: the conversation keeps a row for each.
    pub answered: Vec<AnsweredFailure>,
}

/// A failure and the analyst's choice, for the row the conversation keeps where it was made.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct AnsweredFailure {
    /// What failed and what was rolled back; `resolution` is the choice.
    pub report: FailureReport,
    /// The conversation's last live message when the choice was made: the row follows it.
    pub after_seq: u32,
}

/// "Stopped by you at step 4", "Aborted after a failure at step 7", after message `after_seq`.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct RunEndingView {
    /// stop or abort.
    pub by: String,
    /// The steps the run had taken.
    pub step: u32,
    /// The last message when it ended: the row goes after it.
    pub after_seq: u32,
}

impl ExecutionView {
    /// Assembles the view from what the store holds.
    pub fn new(
        execution: &Execution,
        todos: &[Todo],
        snapshot_todo_ids: Vec<String>,
        waiting_on: Option<&Failure>,
    ) -> Self {
        Self {
            id: execution.id.to_string(),
            conversation_id: execution.conversation_id.to_string(),
            parent_id: execution.parent_id.map(|p| p.to_string()),
            depth: execution.depth,
            task: execution.task.clone(),
            status: execution.status,
            result: execution.result.clone(),
            error: execution.error.clone(),
            contested: execution.contested,
            todos: todos.iter().map(TodoView::from).collect(),
            snapshot_todo_ids,
            waiting_on: waiting_on.map(FailureReport::from),
            created_at: execution.created_at.to_rfc3339(),
            conversation_deleted: false,
            started_at: execution.started_at.map(Timestamp::to_rfc3339),
            finished_at: execution.finished_at.map(Timestamp::to_rfc3339),
            model_calls: execution.usage.model_calls,
            tokens_in: u32::try_from(execution.usage.tokens_in).unwrap_or(u32::MAX),
            tokens_out: u32::try_from(execution.usage.tokens_out).unwrap_or(u32::MAX),
            cache_read_tokens: u32::try_from(execution.usage.cache_read_tokens).unwrap_or(u32::MAX),
            cached_percent: execution.usage.cached_percent(),
            cost_usd: execution.usage.cost_usd(),
            compressions: 0,
            review_risk: None,
            first_seq: None,
            answered: Vec::new(),
            ending: execution.ending.map(|e| RunEndingView {
                by: e.by.as_str().to_owned(),
                step: e.step,
                after_seq: u32::try_from(e.after_seq).unwrap_or(u32::MAX),
            }),
        }
    }
}

/// A failure report, in the recovery panel's terms: where, why, what was rolled back, and
/// what to do next.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct FailureReport {
    /// Its id.
    pub id: String,
    /// What kind of failure, which decides the choices it offers.
    pub class: FailureClass,
    /// The error.
    pub message: String,
    /// The todo it happened in.
    pub todo_title: Option<String>,
    /// That todo's phase.
    pub phase: Option<String>,
    /// Its place in the plan, from 1.
    pub position: Option<u32>,
    /// How many todos the plan has.
    pub plan_len: Option<u32>,
    /// What set it off: a tool, the model request, the step budget, a stuck loop.
    pub trigger: Option<String>,
    /// Likely causes, best first.
    pub likely_causes: Vec<String>,
    /// The tool call that failed, as `name arguments`.
    pub call: Option<String>,
    /// Whether the workspace, plan and history went back to a snapshot.
    pub rolled_back: bool,
    /// Files put back by the rollback.
    pub files_restored: u32,
    /// Files the rollback removed.
    pub files_removed: u32,
    /// Messages the rollback undid.
    pub messages_removed: u32,
    /// The choices the failure offers, best first: the recovery panel shows these and no
    /// others, and `run_choose` and `execution_recover` refuse the rest.
    pub suggestions: Vec<Resolution>,
    /// The choice made, once made.
    pub resolution: Option<Resolution>,
    /// Who made it: the analyst, or the run itself (the automatic first replan).
    pub resolved_by: Option<ResolvedBy>,
    /// What the todo changed since it started, when nothing was rolled back: what choosing
    /// `rollback` would undo.
    pub changes: Option<TodoChangesView>,
    /// For a request too long for the model, the window the server named: the `compress`
    /// choice says it ("use the server's 8,192 and compress").
    pub served_window: Option<u32>,
    /// For unlinked figures: each figure no output holds, in its sentence, numbered from 1 in
    /// this order (what a choice for some of them names).
    pub figures: Vec<UnlinkedFigureView>,
}

/// A figure of an answer that no output holds, in its sentence.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct UnlinkedFigureView {
    /// The figure as written.
    pub text: String,
    /// Its sentence.
    pub sentence: String,
    /// The report it is in, when it is a figure of a file the run wrote rather than of the
    /// answer.
    pub report: Option<String>,
}

/// A rollback done from the Plan panel: what it undid, and the handle its Undo names.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct PlanRollbackView {
    /// What Undo names.
    pub undo: u32,
    /// Files written back.
    pub files_restored: u32,
    /// Files removed.
    pub files_removed: u32,
    /// Messages set aside.
    pub messages_removed: u32,
    /// Why the container's files could not be put back, when they could not.
    pub workspace_error: Option<String>,
}

/// What a todo changed since its snapshot, for the analyst deciding whether to roll back.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct TodoChangesView {
    /// Paths created (the first few; `addedCount` is the total).
    pub added: Vec<String>,
    /// Paths changed.
    pub changed: Vec<String>,
    /// Paths removed.
    pub removed: Vec<String>,
    /// How many paths were created.
    pub added_count: u32,
    /// How many were changed.
    pub changed_count: u32,
    /// How many were removed.
    pub removed_count: u32,
    /// Messages stored since the todo started.
    pub messages_since: u32,
    /// Why the workspace could not be compared, when it could not.
    pub workspace_unknown: Option<String>,
}

impl From<agent::TodoChanges> for TodoChangesView {
    fn from(c: agent::TodoChanges) -> Self {
        let [added_count, changed_count, removed_count] = c.counts.map(count);
        Self {
            added: c.added,
            changed: c.changed,
            removed: c.removed,
            added_count,
            changed_count,
            removed_count,
            messages_since: count(c.messages_since),
            workspace_unknown: c.workspace_unknown,
        }
    }
}

/// A count for the window, saturating where a stored one would not fit.
fn count(n: impl TryInto<u32>) -> u32 {
    n.try_into().unwrap_or(u32::MAX)
}

impl From<&Failure> for FailureReport {
    fn from(f: &Failure) -> Self {
        let report = agent::FailureReport::of(f);
        let offered = report.offered();
        let details = report.details;
        let rolled = report.rolled_back.as_ref();
        Self {
            id: f.id.clone(),
            class: f.class,
            message: f.message.clone(),
            todo_title: details.place.todo_title,
            phase: details.place.phase,
            position: details.place.position.map(count),
            plan_len: Some(count(details.place.plan_len)),
            trigger: details.trigger,
            likely_causes: details.likely_causes,
            call: details.call.map(|c| format!("{} {}", c.name, c.arguments)),
            rolled_back: rolled.is_some(),
            files_restored: rolled.map_or(0, |r| count(r.files_restored)),
            files_removed: rolled.map_or(0, |r| count(r.files_removed)),
            messages_removed: rolled.map_or(0, |r| count(r.messages_removed)),
            suggestions: offered,
            resolution: f.resolution,
            resolved_by: f.resolved_by,
            changes: details.changes.map(TodoChangesView::from),
            served_window: details.served_window,
            figures: details
                .figures
                .iter()
                .map(|f| UnlinkedFigureView {
                    text: f.text.clone(),
                    sentence: f.sentence.clone(),
                    report: f.path.clone(),
                })
                .collect(),
        }
    }
}

/// A tenth-man finding, with the seqs of the messages it cites.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct FindingView {
    /// Its id.
    pub id: String,
    /// One line.
    pub title: String,
    /// How grave it is.
    pub severity: Severity,
    /// The case against the conclusion.
    pub argument: String,
    /// The messages it cites.
    pub evidence_seqs: Vec<u32>,
    /// What to do about it.
    pub recommendation: String,
}

impl From<&decima_store::Finding> for FindingView {
    fn from(f: &decima_store::Finding) -> Self {
        Self {
            id: f.id.clone(),
            title: f.body.title.clone(),
            severity: f.body.severity,
            argument: f.body.argument.clone(),
            evidence_seqs: f
                .body
                .evidence_seqs
                .iter()
                .filter_map(|s| u32::try_from(*s).ok())
                .collect(),
            recommendation: f.body.recommendation.clone(),
        }
    }
}

/// A tenth-man review and the findings earlier reviews left open.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ReviewView {
    /// Its id.
    pub id: String,
    /// How much it thinks is wrong.
    pub risk_level: RiskLevel,
    /// The reviewer's verdict in a few sentences.
    pub summary: String,
    /// quick or full.
    pub review_type: String,
    /// What the analyst asked it to look at.
    pub focus: Option<String>,
    /// This review's findings.
    pub findings: Vec<FindingView>,
    /// Questions the reviewer could not settle.
    pub open_questions: Vec<String>,
    /// Findings of earlier reviews that no review has closed.
    pub earlier_open_findings: Vec<FindingView>,
    /// Found in the cache: the history had not changed.
    pub cached: bool,
    /// What asked for it: user, tool or final (a run's automatic last review).
    pub trigger: String,
    /// When it was written, RFC 3339, UTC.
    pub created_at: String,
    /// The last seq of the history when it ran.
    pub reviewed_through_seq: u32,
}

impl ReviewView {
    /// The view of a stored review, beside the findings earlier reviews left open.
    pub fn of(
        review: &decima_store::Review,
        earlier: &[decima_store::Finding],
        cached: bool,
    ) -> Self {
        Self {
            id: review.id.clone(),
            risk_level: review.risk_level,
            summary: review.summary.clone(),
            review_type: review.review_type.clone(),
            focus: review.focus.clone(),
            findings: review.findings.iter().map(FindingView::from).collect(),
            open_questions: review.open_questions.clone(),
            earlier_open_findings: earlier
                .iter()
                .filter(|f| f.review_id != review.id)
                .map(FindingView::from)
                .collect(),
            cached,
            trigger: review.trigger.clone(),
            created_at: review.created_at.to_rfc3339(),
            reviewed_through_seq: u32::try_from(review.reviewed_through_seq).unwrap_or(u32::MAX),
        }
    }
}
