//! The agent loop: an analyst gives a task, the model plans it as todos and works through them
//! with tools. Every state change is written before the next model call. A failure is classed,
//! the workspace, the plan and the history go back to the todo's snapshot, a report is stored,
//! and the execution waits for the analyst's choice among those the failure offers (retry, skip,
//! replan, rollback, abort). A crash or a
//! kill loses nothing acknowledged; [`resume`] continues an interrupted execution without
//! running any stored call twice.
//!
//! The entry points are [`run`], [`recover`] and [`resume`]; [`view`] reads an execution back
//! for `decima execution show` and the desktop app.

mod checkpoint;
mod choice;
mod dangling;
mod failure;
mod options;
pub mod plan_rollback;
mod report;
mod review_skip;
mod runner;
mod stuck;
pub mod subagent;
mod view;

use std::path::{Path, PathBuf};

use decima_core::{ConversationId, ExecutionId};
pub use decima_sandbox::DockerConfig;
pub use decima_sandbox::host::BoxFuture;
use decima_store::{Execution, Failure, Resolution, SandboxKind, Store};
pub use tokio_util::sync::CancellationToken;

pub use crate::lease::{Lease, interrupt_orphans};
pub use crate::plan::{TODO_WRITE, todo_write_schema};
pub use crate::tools::{AgentTool, Registry, ToolCallContext, ToolOutcome};
pub use crate::workspace::place::default_workspace;
pub use checkpoint::{RolledBack, collect_snapshots, snapshot_store};
pub use choice::{Choice, MAX_GUIDANCE_CHARS};
pub use failure::{Place, Trigger};
pub use options::{DEFAULT_MAX_STEPS, DEFAULT_STUCK_AFTER, RunOptions};
pub use report::{FailedCall, FailureDetails, FailureReport, TodoChanges};
pub use review_skip::skip_final_review;
pub use subagent::{
    CONTAINER_CONTEXT_DIR, HISTORY_MAX_AGE, SPAWN_SUBAGENT, SubagentLimits, history_path,
    spawn_subagent_schema,
};
pub use view::{
    CallView, ExecutionTree, ExecutionView, FailureView, SnapshotView, StepView, UsageView, list,
    summary, tree, view,
};

use crate::error::Result;
use crate::events::EventSink;

/// Who answers when an execution waits for a choice.
pub trait ChoiceSource: Send + Sync {
    /// The choice for this stored failure; `None` leaves the execution `awaiting_user`, to be
    /// continued later with [`recover`].
    fn choose<'a>(&'a self, failure: &'a Failure) -> BoxFuture<'a, Option<Choice>>;

    /// The analyst's answer to an MCP call that no rule approved yet; `None` when no one can
    /// be asked (no terminal, no window), which refuses the call with a tool error saying how
    /// to approve it. The run goes on either way.
    fn approve<'a>(
        &'a self,
        request: &'a crate::mcp::ApprovalRequest,
    ) -> BoxFuture<'a, Option<crate::mcp::Approval>> {
        let _ = request;
        Box::pin(async { None })
    }
}

/// Never chooses: the execution stops and waits (`--on-failure stop`, scripts, tests).
#[derive(Debug, Default, Clone, Copy)]
pub struct StopOnFailure;

impl ChoiceSource for StopOnFailure {
    fn choose<'a>(&'a self, _failure: &'a Failure) -> BoxFuture<'a, Option<Choice>> {
        Box::pin(async { None })
    }
}

/// What every entry point needs from its caller.
pub struct Session<'a> {
    /// The store.
    pub store: &'a Store,
    /// The data directory: workspaces, snapshots, locks, the secret store.
    pub data_dir: &'a Path,
    /// The provider by name; `None` takes the one the execution was started with, else the
    /// only configured one or the `DECIMA_*` environment.
    pub provider: Option<&'a str>,
    /// Where progress goes.
    pub events: &'a dyn EventSink,
    /// Who answers a failure.
    pub choices: &'a dyn ChoiceSource,
    /// Cancels the run cleanly (Ctrl-C, the stop button).
    pub cancel: CancellationToken,
}

impl Session<'_> {
    /// The same session writing through `store` (a store fenced by the run's lease), or
    /// through its own store when there is none.
    pub(crate) fn writing_through<'b>(&'b self, store: Option<&'b Store>) -> Session<'b> {
        Session {
            store: store.unwrap_or(self.store),
            data_dir: self.data_dir,
            provider: self.provider,
            events: self.events,
            choices: self.choices,
            cancel: self.cancel.clone(),
        }
    }
}

/// A new run.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// The conversation to work in; `None` starts one titled from the task.
    pub conversation: Option<ConversationId>,
    /// The directory the tools work in; `None` is a folder per conversation under the data
    /// directory.
    pub workspace: Option<PathBuf>,
    /// What the analyst asked.
    pub task: String,
    /// Where its tools run.
    pub sandbox: SandboxKind,
    /// The rules it runs under.
    pub options: RunOptions,
}

/// Where a run stopped.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The execution as stored now: succeeded, failed, cancelled or awaiting_user.
    pub execution: Execution,
    /// The final answer, when it succeeded.
    pub answer: Option<String>,
    /// The failure it waits on, when awaiting_user.
    pub waiting_on: Option<Failure>,
}

/// The Docker sandbox settings of a conversation (its subagents share them): what was stored,
/// else the defaults.
pub async fn sandbox_settings(store: &Store, conversation: ConversationId) -> Result<DockerConfig> {
    crate::docker::config_of(store, conversation).await
}

/// Stores a conversation's Docker sandbox settings after checking them (a numeric, non-root
/// user; an image name; limits above zero). The container picks them up when it is next
/// created.
pub async fn set_sandbox_settings(
    store: &Store,
    conversation: ConversationId,
    config: &DockerConfig,
) -> Result<()> {
    config.validate()?;
    let value = serde_json::to_value(config)
        .map_err(|e| crate::error::RuntimeError::Config(format!("sandbox settings: {e}")))?;
    store
        .conversations()
        .set_sandbox_config(conversation, Some(&value))
        .await?;
    Ok(())
}

/// Starts an execution for `request.task` and runs it until it ends or waits.
pub async fn run(session: &Session<'_>, request: RunRequest) -> Result<RunOutcome> {
    runner::start(session, request).await
}

/// Continues an execution that waits for a choice, with that choice (and the analyst's
/// guidance, which is stored in the conversation before the run goes on).
pub async fn recover(
    session: &Session<'_>,
    execution: ExecutionId,
    choice: impl Into<Choice>,
) -> Result<RunOutcome> {
    runner::recover(session, execution, choice.into()).await
}

/// The failure `execution` waits on, provided `choice` is one it offers: faces check before
/// they start anything, so a refused choice changes nothing and the failure keeps waiting.
pub async fn check_choice(
    store: &Store,
    execution: ExecutionId,
    choice: Resolution,
) -> Result<Failure> {
    let failure = runner::waiting_failure(store, execution).await?;
    offered_choice(&failure, choice)?;
    Ok(failure)
}

/// Whether `failure` offers `choice`; when it does not, the error every face shows, naming the
/// choices it does offer.
pub fn offered_choice(failure: &Failure, choice: Resolution) -> Result<()> {
    if FailureReport::of(failure).offers(choice) {
        Ok(())
    } else {
        Err(runner::not_offered(failure, choice))
    }
}

/// Continues an interrupted execution from its last stored state.
pub async fn resume(session: &Session<'_>, execution: ExecutionId) -> Result<RunOutcome> {
    runner::resume(session, execution).await
}
