//! Where a run begins: a new execution, a recovery choice on a waiting one, or a resume of an
//! interrupted one, each under the run's lease and its span.

use std::path::{Path, PathBuf};

use decima_core::{ConversationId, ExecutionId, NewMessage, Role};
use decima_store::{Conversation, ExecutionStatus, Failure, NewExecution, Store};
use tracing::Instrument as _;

use super::{Flow, Runner, recovery};
use crate::agent::options::RunOptions;
use crate::agent::report::FailureReport;
use crate::agent::{Choice, RunOutcome, RunRequest, Session, default_workspace};
use crate::chat::title_from;
use crate::error::{Result, RuntimeError};
use crate::events::RunStart;
use crate::lease::{Lease, interrupt_orphans};
use crate::settings;

/// Starts a new execution.
pub(in crate::agent) async fn start(
    session: &Session<'_>,
    request: RunRequest,
) -> Result<RunOutcome> {
    launch(session, request, None).await
}

/// A subagent's place in its tree, and the first message it starts with.
pub(in crate::agent) struct ChildOf {
    /// The spawning execution.
    pub parent: ExecutionId,
    /// The child's depth: the parent's plus one.
    pub depth: u32,
    /// The brief, the history paths and the task, stored as the child's first message.
    pub first_message: String,
}

/// Starts a new execution: a top-level run, or a subagent of `child.parent`.
pub(in crate::agent) async fn launch(
    session: &Session<'_>,
    request: RunRequest,
    child: Option<ChildOf>,
) -> Result<RunOutcome> {
    if request.task.trim().is_empty() {
        return Err(RuntimeError::Config(
            "the task is empty: say what to do".into(),
        ));
    }
    interrupt_orphans(session.store, session.data_dir).await?;
    // The provider is resolved before anything is written: a run that cannot start leaves no
    // conversation or execution behind.
    let provider = session
        .provider
        .map(str::to_owned)
        .or(request.options.provider.clone());
    let resolved = settings::resolve(session.store, session.data_dir, provider.as_deref()).await?;
    let conversation = conversation_for(session, request.conversation, &request.task).await?;
    let workspace = workspace_for(session.data_dir, request.workspace, conversation.id)?;
    let options = RunOptions {
        provider,
        ..request.options
    };
    // The lease first, under the id the row will have: no other process can take the new
    // execution for an orphan before it is running.
    let id = ExecutionId::new();
    let lease = Lease::acquire(session.store, session.data_dir, id).await?;
    let writer = lease.store().cloned();
    let session = &session.writing_through(writer.as_ref());
    let execution = session
        .store
        .executions()
        .start(
            id,
            &NewExecution {
                conversation_id: conversation.id,
                parent_id: child.as_ref().map(|c| c.parent),
                depth: child.as_ref().map_or(0, |c| c.depth),
                task: request.task.clone(),
                sandbox: request.sandbox,
                provider_id: None,
                workspace: Some(workspace.to_string_lossy().into_owned()),
                options: options.to_stored(),
            },
        )
        .await?;
    let mut runner = match Runner::new(session, execution, conversation, resolved, lease).await {
        Ok(runner) => runner,
        Err(e) => {
            // Nothing ran: the execution ends failed with the reason, not `running` forever.
            let _ = session
                .store
                .executions()
                .finish(id, ExecutionStatus::Failed, None, Some(&e.to_string()))
                .await;
            return Err(e);
        }
    };
    let span = runner.span(if child.is_some() { "subagent" } else { "run" });
    async move {
        runner.started(RunStart::Run);
        match child {
            Some(child) => {
                let mut first = NewMessage::new(Role::User, child.first_message);
                first.execution_id = Some(runner.execution.id);
                runner.store_message(first).await?;
            }
            None => {
                let task = runner.store_task().await?;
                // Boxed: a snapshot's future is large, and a run's future holds its children's.
                Box::pin(runner.snapshot_inputs(task.seq)).await?;
            }
        }
        let outcome = runner.drive().await;
        runner.end().await;
        outcome
    }
    .instrument(span)
    .await
}

/// Continues an execution that waits for a choice.
pub(in crate::agent) async fn recover(
    session: &Session<'_>,
    id: ExecutionId,
    choice: Choice,
) -> Result<RunOutcome> {
    interrupt_orphans(session.store, session.data_dir).await?;
    let execution = session.store.executions().get(id).await?;
    if execution.status != ExecutionStatus::AwaitingUser {
        return Err(RuntimeError::Conflict(format!(
            "execution {id} is {}, not awaiting a choice{}",
            execution.status,
            if execution.status == ExecutionStatus::Interrupted {
                "; continue it with resume"
            } else {
                ""
            }
        )));
    }
    let failure = waiting_failure(session.store, id).await?;
    // Refused before anything is touched: the failure stays unresolved and keeps waiting.
    if !FailureReport::of(&failure).offers(choice.resolution) {
        return Err(recovery::not_offered(&failure, choice.resolution));
    }
    let lease = Lease::acquire(session.store, session.data_dir, id).await?;
    let writer = lease.store().cloned();
    let session = &session.writing_through(writer.as_ref());
    let mut runner = Runner::open(session, execution, lease).await?;
    let span = runner.span(RunStart::Recover.as_str());
    async move {
        runner.started(RunStart::Recover);
        let outcome = async {
            let flow = match runner.apply_choice(&failure, &choice).await? {
                recovery::Chosen::Go(flow) => flow,
                recovery::Chosen::AskAgain(next) => runner.wait_for_choice(*next).await?,
            };
            match flow {
                Flow::Continue => runner.drive().await,
                Flow::Stop(outcome) => Ok(*outcome),
            }
        }
        .await;
        runner.end().await;
        outcome
    }
    .instrument(span)
    .await
}

/// The failure an execution awaiting a choice waits on: its newest unresolved one.
pub(crate) async fn waiting_failure(store: &Store, id: ExecutionId) -> Result<Failure> {
    store
        .failures()
        .list(id)
        .await?
        .into_iter()
        .rev()
        .find(|f| f.resolution.is_none())
        .ok_or_else(|| {
            RuntimeError::Conflict(format!(
                "execution {id} waits, but has no unresolved failure"
            ))
        })
}

/// Continues an interrupted execution.
pub(in crate::agent) async fn resume(session: &Session<'_>, id: ExecutionId) -> Result<RunOutcome> {
    interrupt_orphans(session.store, session.data_dir).await?;
    let execution = session.store.executions().get(id).await?;
    match execution.status {
        ExecutionStatus::Interrupted => {}
        ExecutionStatus::Running if session.store.is_postgres() => {
            // Its lease is live (an orphan's was taken above): say whose, and for how long.
            if let Some(holder) = session.store.leases().holder(id).await? {
                return Err(RuntimeError::Busy(format!(
                    "execution {id} is being run by {} (its lease lapses in {} s unless \
                     renewed); if that process is gone, resume again once the lease lapsed",
                    holder.owner,
                    holder.lapses_in.as_secs().max(1)
                )));
            }
            return Err(RuntimeError::Conflict(format!(
                "execution {id} is running; only an interrupted execution can be resumed"
            )));
        }
        ExecutionStatus::AwaitingUser => {
            return Err(RuntimeError::Conflict(format!(
                "execution {id} waits for a choice on a failure: continue it with recover and \
                 one of the choices its failure offers"
            )));
        }
        other => {
            return Err(RuntimeError::Conflict(format!(
                "execution {id} is {other}; only an interrupted execution can be resumed"
            )));
        }
    }
    let lease = Lease::acquire(session.store, session.data_dir, id).await?;
    let writer = lease.store().cloned();
    let session = &session.writing_through(writer.as_ref());
    let mut runner = Runner::open(session, execution, lease).await?;
    let span = runner.span(RunStart::Resume.as_str());
    async move {
        let outcome = async {
            runner.set_status(ExecutionStatus::Running).await?;
            runner.started(RunStart::Resume);
            // A run killed between its start and storing its task stores it now.
            if !runner
                .store()
                .messages()
                .any_of_execution(runner.conversation.id, runner.execution.id)
                .await?
            {
                runner.store_task().await?;
            }
            runner.answer_interrupted_calls().await?;
            runner.snapshot_unsnapshotted_todos().await?;
            runner.drive().await
        }
        .await;
        runner.end().await;
        outcome
    }
    .instrument(span)
    .await
}

/// The run's conversation: the one named, refused while another run holds it, or a new one
/// titled from the task.
async fn conversation_for(
    session: &Session<'_>,
    named: Option<ConversationId>,
    task: &str,
) -> Result<Conversation> {
    let Some(id) = named else {
        return Ok(session
            .store
            .conversations()
            .create(&title_from(task), None)
            .await?);
    };
    let conversation = session.store.conversations().get(id).await?;
    // Refused before anything is written (the start below checks again, atomically).
    if let Some(busy) = session.store.claims().busy(id).await? {
        return Err(decima_store::StoreError::Busy(Box::new(busy)).into());
    }
    Ok(conversation)
}

/// The run's workspace folder, made if missing and resolved to its real path: the one asked
/// for, or the conversation's default under the data folder.
fn workspace_for(
    data_dir: &Path,
    asked: Option<PathBuf>,
    conversation: ConversationId,
) -> Result<PathBuf> {
    let workspace = asked.unwrap_or_else(|| default_workspace(data_dir, conversation));
    std::fs::create_dir_all(&workspace).map_err(|source| RuntimeError::Io {
        action: "create",
        path: workspace.clone(),
        source,
    })?;
    dunce::canonicalize(&workspace).map_err(|source| RuntimeError::Io {
        action: "resolve",
        path: workspace.clone(),
        source,
    })
}
