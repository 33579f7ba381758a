//! An execution read back whole, for `decima execution show --json` and the desktop app: its
//! status, workspace, plan, snapshots, steps and failure reports.

use decima_core::{ConversationId, ExecutionId, FailureClass};
use decima_store::{Execution, Failure, Store};
use serde::Serialize;

use crate::error::Result;
use crate::events::TodoView;

/// One execution with everything it did.
#[derive(Debug, Clone, Serialize)]
pub struct ExecutionView {
    /// Its id.
    pub id: ExecutionId,
    /// Its conversation.
    pub conversation_id: ConversationId,
    /// The spawning execution, for subagents.
    pub parent_id: Option<ExecutionId>,
    /// 0 for a top-level run, 1 for its subagents, and so on.
    pub depth: u32,
    /// Where its tools run: host or docker.
    pub sandbox: &'static str,
    /// What it was asked.
    pub task: String,
    /// queued, running, awaiting_user, succeeded, failed, cancelled or interrupted.
    pub status: &'static str,
    /// The directory its tools work in.
    pub workspace: Option<String>,
    /// The options it runs under.
    pub options: serde_json::Value,
    /// Its final answer.
    pub result: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
    /// A high or critical final review argued against the result; the result is unchanged.
    pub contested: bool,
    /// Creation, start and end times (milliseconds since the epoch).
    pub created_at: i64,
    /// When it first ran.
    pub started_at: Option<i64>,
    /// When it ended.
    pub finished_at: Option<i64>,
    /// The plan.
    pub todos: Vec<TodoView>,
    /// Every snapshot, oldest first.
    pub snapshots: Vec<SnapshotView>,
    /// Every step record, in order.
    pub steps: Vec<StepView>,
    /// Every failure report, oldest first.
    pub failures: Vec<FailureView>,
    /// The subagents it spawned, oldest first (summaries: their own views hold their details).
    pub children: Vec<ExecutionView>,
    /// Its tenth-man reviews (the tool's, the final one), oldest first, with their findings.
    pub reviews: Vec<decima_store::Review>,
    /// What its model calls carried, as the providers reported it.
    pub usage: UsageView,
}

/// A run's model calls and tokens, with what the providers' prompt caches did for them.
#[derive(Debug, Clone, Serialize)]
pub struct UsageView {
    /// Requests answered by the model.
    pub model_calls: u32,
    /// Prompt tokens, summed (cache reads and writes included).
    pub tokens_in: u64,
    /// Tokens generated, summed.
    pub tokens_out: u64,
    /// Of the prompt tokens, those read from the provider's cache.
    pub cache_read_tokens: u64,
    /// Of the prompt tokens, those written to the cache.
    pub cache_write_tokens: u64,
    /// `cache_read_tokens` as a share of `tokens_in`, in percent.
    pub cached_percent: u32,
    /// The estimated cost in US dollars, at the provider's prices when each call was answered;
    /// `null` when no call was priced.
    pub cost_usd: Option<f64>,
    /// Compressions the run made, each of which made the providers' caches miss from the
    /// first summary on (only in a whole view).
    pub compressions: Option<u32>,
    /// Each call, in order (only in a whole view; lists leave it empty).
    pub calls: Vec<CallView>,
}

/// One model call's figures; all `null` when the provider reported none.
#[derive(Debug, Clone, Serialize)]
pub struct CallView {
    /// 1, 2, ... within the run.
    pub n: u32,
    /// Prompt tokens.
    pub tokens_in: Option<u32>,
    /// Tokens generated.
    pub tokens_out: Option<u32>,
    /// Of the prompt, read from the cache.
    pub cache_read_tokens: Option<u32>,
    /// Of the prompt, written to the cache.
    pub cache_write_tokens: Option<u32>,
    /// When it was answered (milliseconds since the epoch).
    pub at: i64,
}

impl From<&decima_store::RunUsage> for UsageView {
    fn from(u: &decima_store::RunUsage) -> Self {
        Self {
            model_calls: u.model_calls,
            tokens_in: u.tokens_in,
            tokens_out: u.tokens_out,
            cache_read_tokens: u.cache_read_tokens,
            cache_write_tokens: u.cache_write_tokens,
            cached_percent: u.cached_percent(),
            cost_usd: u.cost_usd(),
            compressions: None,
            calls: Vec::new(),
        }
    }
}

impl From<&decima_store::ModelCall> for CallView {
    fn from(c: &decima_store::ModelCall) -> Self {
        Self {
            n: c.n,
            tokens_in: c.usage.map(|u| u.tokens_in),
            tokens_out: c.usage.map(|u| u.tokens_out),
            cache_read_tokens: c.usage.map(|u| u.cache_read_tokens),
            cache_write_tokens: c.usage.map(|u| u.cache_write_tokens),
            at: c.at.0,
        }
    }
}

/// A snapshot as the view shows it.
#[derive(Debug, Clone, Serialize)]
pub struct SnapshotView {
    /// Its id.
    pub id: String,
    /// The todo it was taken for.
    pub todo_id: Option<String>,
    /// todo_start, checkpoint or manual.
    pub reason: &'static str,
    /// The last message seq it covers.
    pub message_seq: i64,
    /// The workspace archive in the snapshot store.
    pub workspace_archive: Option<String>,
    /// When it was taken.
    pub created_at: i64,
}

/// A step record.
#[derive(Debug, Clone, Serialize)]
pub struct StepView {
    /// Its number among the execution's records.
    pub seq: i64,
    /// analysis, action, supervision or summary.
    pub kind: String,
    /// The record.
    pub content: String,
}

/// A failure report.
#[derive(Debug, Clone, Serialize)]
pub struct FailureView {
    /// Its id.
    pub id: String,
    /// The todo it happened in.
    pub todo_id: Option<String>,
    /// transient, data, logic, permission, system, context_overflow or cancelled.
    pub class: FailureClass,
    /// What happened.
    pub message: String,
    /// Where and why, in detail: the place in the plan, the trigger, the likely causes.
    pub details: serde_json::Value,
    /// What the rollback undid (empty when nothing was rolled back).
    pub rolled_back: serde_json::Value,
    /// The suggested next actions, best first.
    pub suggestions: serde_json::Value,
    /// compress, retry, skip, replan, rollback or abort, once chosen.
    pub resolution: Option<&'static str>,
    /// Who chose: `analyst`, or `automatic` for the run's own first replan.
    pub resolved_by: Option<&'static str>,
    /// When it was recorded.
    pub created_at: i64,
}

impl From<&Failure> for FailureView {
    fn from(f: &Failure) -> Self {
        Self {
            id: f.id.clone(),
            todo_id: f.todo_id.clone(),
            class: f.class,
            message: f.message.clone(),
            details: f.details.clone(),
            rolled_back: f.rolled_back.clone(),
            suggestions: f.suggested_actions.clone(),
            resolution: f.resolution.map(|r| r.as_str()),
            resolved_by: f.resolved_by.map(|r| r.as_str()),
            created_at: f.created_at.0,
        }
    }
}

impl FailureView {
    /// The report, typed (see [`super::FailureReport`]).
    pub fn report(&self) -> super::FailureReport {
        super::FailureReport::read(&self.details, &self.rolled_back, &self.suggestions)
    }
}

/// One execution, whole.
pub async fn view(store: &Store, id: ExecutionId) -> Result<ExecutionView> {
    let execution = store.executions().get(id).await?;
    let todos = store.todos().plan(id).await?;
    let snapshots = store.snapshots().list(id).await?;
    let steps = store.steps().list(id).await?;
    let failures = store.failures().list(id).await?;
    let calls = store.executions().model_calls(id).await?;
    let compressions = store.executions().compressions(id).await?;
    Ok(ExecutionView {
        usage: UsageView {
            calls: calls.iter().map(CallView::from).collect(),
            compressions: Some(compressions),
            ..UsageView::from(&execution.usage)
        },
        todos: todos.iter().map(TodoView::from).collect(),
        snapshots: snapshots
            .iter()
            .map(|s| SnapshotView {
                id: s.id.clone(),
                todo_id: s.todo_id.clone(),
                reason: s.reason.as_str(),
                message_seq: s.message_seq,
                workspace_archive: s.workspace_archive.clone(),
                created_at: s.created_at.0,
            })
            .collect(),
        steps: steps
            .into_iter()
            .map(|s| StepView {
                seq: s.seq,
                kind: s.kind,
                content: s.content,
            })
            .collect(),
        failures: failures.iter().map(FailureView::from).collect(),
        reviews: store.reviews().list_for_execution(id).await?,
        children: store
            .executions()
            .children(id)
            .await?
            .iter()
            .map(summary)
            .collect(),
        ..summary(&execution)
    })
}

/// An execution and its subagents, to any depth: `decima execution tree` and the desktop's
/// subagent tree.
#[derive(Debug, Clone, Serialize)]
pub struct ExecutionTree {
    /// The execution, as [`summary`] gives it (its `children` field is empty; see below).
    #[serde(flatten)]
    pub execution: ExecutionView,
    /// Its subagents' trees, oldest first.
    #[serde(rename = "subagents")]
    pub subagents: Vec<ExecutionTree>,
}

/// The tree below `id` (which may itself be a subagent).
pub async fn tree(store: &Store, id: ExecutionId) -> Result<ExecutionTree> {
    let root = store.executions().get(id).await?;
    // Breadth first, one query per node; depth and fan-out are bounded by the limits.
    let mut nodes: Vec<(Execution, Vec<usize>)> = vec![(root, Vec::new())];
    let mut next = 0;
    while next < nodes.len() {
        let children = store.executions().children(nodes[next].0.id).await?;
        for child in children {
            // A corrupt cycle would loop forever; a node seen before is not walked again.
            if nodes.iter().any(|(e, _)| e.id == child.id) {
                continue;
            }
            nodes.push((child, Vec::new()));
            let at = nodes.len() - 1;
            nodes[next].1.push(at);
        }
        next += 1;
    }
    fn build(nodes: &[(Execution, Vec<usize>)], at: usize) -> ExecutionTree {
        ExecutionTree {
            execution: summary(&nodes[at].0),
            subagents: nodes[at].1.iter().map(|&c| build(nodes, c)).collect(),
        }
    }
    Ok(build(&nodes, 0))
}

/// Executions without their plan and records: for lists.
pub fn summary(e: &Execution) -> ExecutionView {
    ExecutionView {
        id: e.id,
        conversation_id: e.conversation_id,
        parent_id: e.parent_id,
        depth: e.depth,
        sandbox: e.sandbox.as_str(),
        task: e.task.clone(),
        status: e.status.as_str(),
        workspace: e.workspace.clone(),
        options: e.options.clone(),
        result: e.result.clone(),
        error: e.error.clone(),
        contested: e.contested,
        created_at: e.created_at.0,
        started_at: e.started_at.map(|t| t.0),
        finished_at: e.finished_at.map(|t| t.0),
        todos: Vec::new(),
        snapshots: Vec::new(),
        steps: Vec::new(),
        failures: Vec::new(),
        children: Vec::new(),
        reviews: Vec::new(),
        usage: UsageView::from(&e.usage),
    }
}

/// The executions of one conversation (oldest first), or the newest 100 of all.
pub async fn list(store: &Store, conversation: Option<ConversationId>) -> Result<Vec<Execution>> {
    Ok(match conversation {
        Some(id) => store.executions().list_by_conversation(id).await?,
        None => store.executions().list_recent(100).await?,
    })
}
