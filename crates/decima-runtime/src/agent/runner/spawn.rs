//! `spawn_subagent` as a tool: the limits, the history export, the child's first message, and
//! running the child. A child is an execution of its own, in a conversation of its own, in its
//! parent's workspace; its final answer is the call's result, and its failure a failed result
//! with its class. Calls of it that follow each other in one answer run side by side.

use super::entry::ChildOf;
use super::entry::launch;
use crate::agent::options::RunOptions;
use crate::agent::subagent::{
    self, Brief, Exported, RunningSlot, SpawnRequest, container_history_path, parse_spawn,
    spawn_subagent_schema,
};
use crate::agent::{BoxFuture, ChoiceSource};
use crate::agent::{RunOutcome, RunRequest, Session};
use crate::docker::LazyDocker;
use crate::error::Result;
use crate::events::Event;
use crate::events::EventSink;
use crate::review::TenthManMode;
use crate::tools::ToolOutcome;
use crate::tools::{AgentTool, ToolCallContext, builtin_spec};
use decima_core::{ExecutionId, FailureClass};
use decima_store::{Execution, ExecutionStatus, Failure, Resolution, SandboxKind, Store};
use std::path::PathBuf;
use std::time::Instant;
use tracing::warn;

/// A child that passed the limits and waits to run.
struct Accepted {
    request: RunRequest,
    child: ChildOf,
}

/// `spawn_subagent` for one execution.
pub(super) struct SubagentTool<'s, 'a> {
    session: &'s Session<'a>,
    /// The spawning execution, as it started.
    execution: Execution,
    options: RunOptions,
    /// Children spawned so far, counted from the store on first use: the per-parent limit
    /// holds for calls that run side by side.
    children: tokio::sync::Mutex<Option<usize>>,
    /// One history export at a time (each appends what is new to the same files).
    exporting: tokio::sync::Mutex<()>,
    /// Held while a child's MCP call waits for the analyst: one question at a time.
    asking: tokio::sync::Mutex<()>,
}

impl<'s, 'a> SubagentTool<'s, 'a> {
    pub(super) fn new(session: &'s Session<'a>, execution: Execution, options: RunOptions) -> Self {
        Self {
            session,
            execution,
            options,
            children: tokio::sync::Mutex::new(None),
            exporting: tokio::sync::Mutex::new(()),
            asking: tokio::sync::Mutex::new(()),
        }
    }

    fn store(&self) -> &'s Store {
        self.session.store
    }
}

impl AgentTool for SubagentTool<'_, '_> {
    fn spec(&self) -> decima_llm::ToolSpec {
        builtin_spec(&spawn_subagent_schema())
    }

    fn call<'c>(&'c self, call: ToolCallContext<'c>) -> BoxFuture<'c, ToolOutcome> {
        Box::pin(async move {
            let started = Instant::now();
            let request = match parse_spawn(call.raw) {
                Ok(request) => request,
                Err(e) => return ToolOutcome::from((e, started.elapsed())),
            };
            match self.spawn(request, started).await {
                Ok(outcome) => outcome,
                Err(e) => ToolOutcome::failed(
                    FailureClass::System,
                    &format!("the subagent was not started: {e}"),
                    started.elapsed(),
                ),
            }
        })
    }

    fn concurrent(&self) -> bool {
        true
    }
}

impl SubagentTool<'_, '_> {
    /// Checks the limits, prepares the child and runs it to its end.
    async fn spawn(&self, request: SpawnRequest, started: Instant) -> Result<ToolOutcome> {
        let limits = self.options.subagents;
        let chain = subagent::lineage(self.store(), &self.execution).await?;
        let root = chain.last().map_or(self.execution.id, |e| e.id);
        let depth = self.execution.depth + 1;
        if depth > limits.max_depth {
            return Ok(refused(
                &format!(
                    "spawn_subagent refused: a subagent here would be at depth {depth}, and the \
                     limit is {}; do this part yourself",
                    limits.max_depth
                ),
                started.elapsed(),
            ));
        }
        let slot = {
            let mut children = self.children.lock().await;
            let count = match *children {
                Some(count) => count,
                None => self
                    .store()
                    .executions()
                    .children(self.execution.id)
                    .await?
                    .len(),
            };
            *children = Some(count);
            if count >= limits.max_children as usize {
                return Ok(refused(
                    &format!(
                        "spawn_subagent refused: this execution has already spawned {count} \
                         subagents, the limit per parent; do this part yourself or reuse what \
                         the earlier subagents answered"
                    ),
                    started.elapsed(),
                ));
            }
            let Some(slot) = RunningSlot::try_take(root, limits.max_running) else {
                return Ok(refused(
                    &format!(
                        "spawn_subagent refused: {} subagent(s) of this run are running \
                         already, the most allowed at once; try again when they have \
                         answered, or do this part yourself",
                        limits.max_running
                    ),
                    started.elapsed(),
                ));
            };
            *children = Some(count + 1);
            slot
        };
        let outcome = match self.prepare(&chain, request, started).await? {
            Ok(Accepted { request, child }) => self.run_child(request, child).await,
            Err(outcome) => outcome,
        };
        drop(slot);
        Ok(outcome)
    }

    /// Exports the histories and writes the child's first message; a child whose history
    /// files cannot reach its Docker sandbox is a failed call.
    async fn prepare(
        &self,
        chain: &[Execution],
        request: SpawnRequest,
        started: Instant,
    ) -> Result<std::result::Result<Accepted, ToolOutcome>> {
        let sandbox = request.sandbox.unwrap_or(self.execution.sandbox);
        let exported = self.export(chain, sandbox).await?;
        let exported = match exported {
            Ok(exported) => exported,
            Err(e) => {
                return Ok(Err(ToolOutcome::failed(
                    FailureClass::System,
                    &format!(
                        "the subagent was not started: its history files could not be copied \
                         into the Docker sandbox: {e}"
                    ),
                    started.elapsed(),
                )));
            }
        };
        let plan = self.store().todos().plan(self.execution.id).await?;
        let limits = self.options.subagents;
        let paths: Vec<String> = match sandbox {
            SandboxKind::Host => exported
                .iter()
                .map(|e| e.path.to_string_lossy().into_owned())
                .collect(),
            SandboxKind::Docker => chain.iter().map(|e| container_history_path(e.id)).collect(),
        };
        let first_message = Brief {
            goal: &self.execution.task,
            plan: &plan,
            parent_history: paths.first().map_or("", String::as_str),
            ancestor_histories: paths.get(1..).unwrap_or_default(),
            depth: self.execution.depth + 1,
            max_depth: limits.max_depth,
            task: &request.task,
            budget: limits.brief_tokens,
        }
        .render(decima_llm::tokens::store_counter().as_ref());
        let options = RunOptions {
            provider: self.options.provider.clone(),
            workspace_snapshots: false,
            // A child keeps the tool, but its answer is reviewed as part of the parent's
            // history by the parent's final review, not by one of its own.
            tenth_man: if self.options.tenth_man.tool() {
                TenthManMode::ToolOnly
            } else {
                TenthManMode::Off
            },
            ..self.options.clone()
        };
        Ok(Ok(Accepted {
            request: RunRequest {
                conversation: None,
                workspace: self.execution.workspace.clone().map(PathBuf::from),
                task: request.task,
                sandbox,
                options,
            },
            child: ChildOf {
                parent: self.execution.id,
                depth: self.execution.depth + 1,
                first_message,
            },
        }))
    }

    /// Brings the history files of `chain` up to date, and into the tree's container when
    /// the child runs in Docker (the inner error says why they could not get there).
    async fn export(
        &self,
        chain: &[Execution],
        sandbox: SandboxKind,
    ) -> Result<std::result::Result<Vec<Exported>, String>> {
        let _one_at_a_time = self.exporting.lock().await;
        let exported =
            subagent::export_histories(self.store(), self.session.data_dir, chain).await?;
        if sandbox == SandboxKind::Host {
            return Ok(Ok(exported));
        }
        let root = chain
            .last()
            .map_or(self.execution.conversation_id, |e| e.conversation_id);
        let uploaded = match LazyDocker::new(self.store(), self.session.data_dir, root).await {
            Ok(docker) => docker.upload_histories(&exported).await,
            Err(e) => Err(e.to_string()),
        };
        Ok(uploaded.map(|()| exported))
    }

    /// Runs one child to its end and turns how it ended into the parent's tool result.
    fn run_child(&self, request: RunRequest, child: ChildOf) -> BoxFuture<'_, ToolOutcome> {
        Box::pin(async move {
            let started = Instant::now();
            let events = ChildEvents {
                parent: self.session.events,
                parent_id: self.execution.id,
                depth: child.depth,
                task: request.task.clone(),
            };
            let session = Session {
                store: self.session.store,
                data_dir: self.session.data_dir,
                provider: self.session.provider.or(self.options.provider.as_deref()),
                events: &events,
                choices: &ChildChoices {
                    parent: self.session.choices,
                    asking: &self.asking,
                },
                cancel: self.session.cancel.child_token(),
            };
            match launch(&session, request, Some(child)).await {
                Ok(outcome) => self.child_outcome(outcome, started).await,
                Err(e) => {
                    warn!(error = %e, "a subagent could not run");
                    ToolOutcome::failed(
                        FailureClass::System,
                        &format!("the subagent could not run: {e}"),
                        started.elapsed(),
                    )
                }
            }
        })
    }

    async fn child_outcome(&self, outcome: RunOutcome, started: Instant) -> ToolOutcome {
        let id = outcome.execution.id;
        let status = outcome.execution.status;
        if let (ExecutionStatus::Succeeded, Some(answer)) = (status, &outcome.answer) {
            return ToolOutcome::ok(
                format!("[subagent {id} answered]\n{answer}"),
                started.elapsed(),
            );
        }
        let last_failure = self
            .store()
            .failures()
            .list(id)
            .await
            .ok()
            .and_then(|f| f.into_iter().last());
        let (class, why) = match (&last_failure, status) {
            (Some(f), _) => (f.class, f.message.clone()),
            (None, ExecutionStatus::Cancelled) => {
                (FailureClass::Cancelled, "it was cancelled".to_owned())
            }
            (None, other) => (
                FailureClass::System,
                outcome
                    .execution
                    .error
                    .clone()
                    .unwrap_or_else(|| format!("it ended {other}")),
            ),
        };
        ToolOutcome::failed(
            class,
            &format!(
                "subagent {id} did not finish its task ({class}): {why}; its messages are in \
                 conversation {}",
                outcome.execution.conversation_id
            ),
            started.elapsed(),
        )
    }
}

fn refused(message: &str, duration: std::time::Duration) -> ToolOutcome {
    ToolOutcome {
        refused: true,
        ..ToolOutcome::failed(FailureClass::Logic, message, duration)
    }
}

/// Who answers a subagent. Its failure ends it, and its parent gets the failure as the call's
/// result (with its class), to retry, work around or report. Its MCP calls are put to whoever
/// answers the parent (the analyst at the terminal or in the window), one at a time: children
/// run side by side, and the analyst answers one question at once.
struct ChildChoices<'a> {
    parent: &'a dyn ChoiceSource,
    asking: &'a tokio::sync::Mutex<()>,
}

impl ChoiceSource for ChildChoices<'_> {
    fn choose<'a>(&'a self, _failure: &'a Failure) -> BoxFuture<'a, Option<crate::agent::Choice>> {
        Box::pin(async { Some(Resolution::Abort.into()) })
    }

    fn approve<'a>(
        &'a self,
        request: &'a crate::mcp::ApprovalRequest,
    ) -> BoxFuture<'a, Option<crate::mcp::Approval>> {
        Box::pin(async move {
            let _one_at_a_time = self.asking.lock().await;
            self.parent.approve(request).await
        })
    }
}

/// What a child's run reports to its parent's sink: its start and end as subagent events (for
/// the tree), the subagent events of its own children, and the approvals its MCP calls wait
/// for. Its step-by-step events stay with it: they are in the store, under its conversation.
struct ChildEvents<'a> {
    parent: &'a dyn EventSink,
    parent_id: ExecutionId,
    depth: u32,
    task: String,
}

impl EventSink for ChildEvents<'_> {
    fn emit(&self, event: Event) {
        match event {
            Event::ExecutionStarted {
                execution_id,
                conversation_id,
                ..
            } => self.parent.emit(Event::SubagentStarted {
                parent_id: self.parent_id,
                execution_id,
                conversation_id,
                depth: self.depth,
                task: self.task.clone(),
            }),
            Event::Finished {
                execution_id,
                status,
            } => self.parent.emit(Event::SubagentFinished {
                parent_id: self.parent_id,
                execution_id,
                status,
            }),
            // A child's MCP call waits for the analyst where the parent's run is shown.
            event @ (Event::SubagentStarted { .. }
            | Event::SubagentFinished { .. }
            | Event::ApprovalAsked { .. }) => {
                self.parent.emit(event);
            }
            _ => {}
        }
    }
}
