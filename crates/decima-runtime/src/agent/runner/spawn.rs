//! `spawn_subagent` calls: the limits, the history export, the child's first message, and
//! running the children of one answer side by side. A child is an execution of its own, in a
//! conversation of its own, in its parent's workspace; its final answer is the call's result,
//! and its failure a failed result with its class.

use futures_util::future::join_all;

use super::*;
use crate::agent::docker::LazyDocker;
use crate::agent::subagent::{
    self, Brief, RunningSlot, SPAWN_SUBAGENT, SpawnRequest, container_history_path, parse_spawn,
};
use crate::agent::{BoxFuture, ChoiceSource};
use crate::events::EventSink;
use crate::review::TenthManMode;

/// A child that passed the limits and waits to run.
struct Accepted {
    request: RunRequest,
    child: ChildOf,
    slot: RunningSlot,
}

impl Runner<'_, '_> {
    /// Whether the loop runs this call itself, as a subagent.
    pub(super) fn is_spawn(call: &ToolCall) -> bool {
        call.name == SPAWN_SUBAGENT
    }

    /// Runs a group of `spawn_subagent` calls (consecutive in one answer) side by side, each
    /// within the limits. The outcomes are in the order of `calls`.
    pub(super) async fn spawn_all(&self, calls: &[&ToolCall]) -> Result<Vec<ToolOutcome>> {
        let started = Instant::now();
        let limits = self.options.subagents;
        let mut outcomes: Vec<Option<ToolOutcome>> = vec![None; calls.len()];
        let mut parsed: Vec<(usize, SpawnRequest)> = Vec::new();
        for (i, call) in calls.iter().enumerate() {
            match parse_spawn(&call.arguments) {
                Ok(request) => parsed.push((i, request)),
                Err(e) => outcomes[i] = Some(ToolOutcome::from((e, started.elapsed()))),
            }
        }
        if !parsed.is_empty() {
            let chain = subagent::lineage(self.store(), &self.execution).await?;
            let root = chain.last().map_or(self.execution.id, |e| e.id);
            let depth = self.execution.depth + 1;
            let mut children = self
                .store()
                .executions()
                .children(self.execution.id)
                .await?
                .len();
            let mut accepted: Vec<(usize, SpawnRequest, RunningSlot)> = Vec::new();
            for (i, request) in parsed {
                let refusal = if depth > limits.max_depth {
                    Some(format!(
                        "spawn_subagent refused: a subagent here would be at depth {depth}, and \
                         the limit is {}; do this part yourself",
                        limits.max_depth
                    ))
                } else if children >= limits.max_children as usize {
                    Some(format!(
                        "spawn_subagent refused: this execution has already spawned {children} \
                         subagents, the limit per parent; do this part yourself or reuse what \
                         the earlier subagents answered"
                    ))
                } else {
                    None
                };
                if let Some(message) = refusal {
                    outcomes[i] = Some(refused(&message, started.elapsed()));
                    continue;
                }
                let Some(slot) = RunningSlot::try_take(root, limits.max_running) else {
                    outcomes[i] = Some(refused(
                        &format!(
                            "spawn_subagent refused: {} subagent(s) of this run are running \
                             already, the most allowed at once; try again when they have \
                             answered, or do this part yourself",
                            limits.max_running
                        ),
                        started.elapsed(),
                    ));
                    continue;
                };
                children += 1;
                accepted.push((i, request, slot));
            }
            if !accepted.is_empty() {
                let runs = self.prepare_children(&chain, accepted).await?;
                let results = join_all(runs.into_iter().map(|(i, run)| async move {
                    let outcome = match run {
                        Ok(Accepted {
                            request,
                            child,
                            slot,
                        }) => {
                            let outcome = self.run_child(request, child).await;
                            drop(slot);
                            outcome
                        }
                        Err(outcome) => outcome,
                    };
                    (i, outcome)
                }))
                .await;
                for (i, outcome) in results {
                    outcomes[i] = Some(outcome);
                }
            }
        }
        Ok(outcomes
            .into_iter()
            .map(|o| {
                o.unwrap_or_else(|| {
                    ToolOutcome::failed(
                        FailureClass::Logic,
                        "spawn_subagent: this call was not run",
                        started.elapsed(),
                    )
                })
            })
            .collect())
    }

    /// Exports the histories and writes each child's first message.
    async fn prepare_children(
        &self,
        chain: &[Execution],
        accepted: Vec<(usize, SpawnRequest, RunningSlot)>,
    ) -> Result<Vec<(usize, std::result::Result<Accepted, ToolOutcome>)>> {
        let started = Instant::now();
        let exported =
            subagent::export_histories(self.store(), self.session.data_dir, chain).await?;
        // Children in Docker read the files from the tree's container.
        let wants_docker = accepted
            .iter()
            .any(|(_, r, _)| r.sandbox.unwrap_or(self.execution.sandbox) == SandboxKind::Docker);
        let uploaded = if wants_docker {
            let root = chain
                .last()
                .map_or(self.execution.conversation_id, |e| e.conversation_id);
            match LazyDocker::new(self.store(), self.session.data_dir, root).await {
                Ok(docker) => docker.upload_histories(&exported).await,
                Err(e) => Err(e.to_string()),
            }
        } else {
            Ok(())
        };
        let plan = self.plan().await?;
        let workspace = self.execution.workspace.clone().map(PathBuf::from);
        let limits = self.options.subagents;
        let mut runs = Vec::with_capacity(accepted.len());
        for (i, request, slot) in accepted {
            let sandbox = request.sandbox.unwrap_or(self.execution.sandbox);
            if let (SandboxKind::Docker, Err(e)) = (sandbox, &uploaded) {
                runs.push((
                    i,
                    Err(ToolOutcome::failed(
                        FailureClass::System,
                        &format!(
                            "the subagent was not started: its history files could not be \
                             copied into the Docker sandbox: {e}"
                        ),
                        started.elapsed(),
                    )),
                ));
                continue;
            }
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
            runs.push((
                i,
                Ok(Accepted {
                    request: RunRequest {
                        conversation: None,
                        workspace: workspace.clone(),
                        task: request.task,
                        sandbox,
                        options,
                    },
                    child: ChildOf {
                        parent: self.execution.id,
                        depth: self.execution.depth + 1,
                        first_message,
                    },
                    slot,
                }),
            ));
        }
        Ok(runs)
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
                    asking: &self.child_approvals,
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
    fn choose<'a>(&'a self, _failure: &'a Failure) -> BoxFuture<'a, Option<Resolution>> {
        Box::pin(async { Some(Resolution::Abort) })
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
