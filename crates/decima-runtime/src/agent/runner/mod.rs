//! The loop itself. Each step: build the context through the pipeline (compressing first when
//! a threshold is crossed), stream the answer, store it, run its tool calls in order and store
//! each result, then check the budget. Every write happens before the next model call.
//!
//! This module holds the runner, the entry points and the step loop; the parts of a step live
//! beside it: [`model`] (one model call and its context), [`calls`] (tool calls and what a plan
//! change sets off), [`recovery`] (the failure path and the analyst's choice), [`resume`]
//! (what a resumed execution repairs first), [`records`] (what a step
//! writes), [`finish`] (how an execution ends), [`review`] (the
//! tenth man inside a run) and [`spawn`] (subagents).

mod calls;
mod finish;
mod model;
mod plan_tool;
mod records;
mod recovery;
mod resume;
mod review;
mod spawn;
mod tool_search;
mod workspace_changes;

pub(super) use recovery::not_offered;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use decima_core::context::{ExecutionHistoryManager, StepKind, StepRecord};
use decima_core::prompt::Preset;
use decima_core::{ConversationId, ExecutionId, FailureClass, Message, NewMessage, Role};
use decima_llm::ProviderConfig;
use decima_llm::tokens::{Calibration, counter_for_model, estimate_request};
use decima_sandbox::{HostLimits, HostSandbox, Sandbox};
use decima_store::{
    Conversation, EndedBy, Execution, ExecutionStatus, Failure, NewExecution, Resolution,
    SandboxKind, Store, Todo,
};
use tracing::{Instrument as _, info, info_span, warn};

use super::checkpoint::{Checkpoints, SnapshotSource, snapshot_store};
use super::docker::LazyDocker;
use super::failure::{Pending, Trigger};
use super::lease::{Lease, interrupt_orphans};
use super::options::RunOptions;
use super::report::FailureReport;
use super::stuck::StuckDetector;
use super::tools::Registry;
use super::{RunOutcome, RunRequest, Session, default_workspace};
use crate::chat::{title_from, window_for_turn};
use crate::context::{Loaded, Scale, preset_of};
use crate::error::{Result, RuntimeError};
use crate::events::{Event, TodoView};
use crate::memo::{MemoCounter, ModelMemo, ParagraphMemo};
use crate::settings::{self, WindowSettings};

/// Step records kept in detail before the oldest are summarised.
const STEP_WINDOW: usize = 6;
/// Records summarised at a time.
const STEP_BATCH: usize = 3;
/// Tokens the summary of earlier steps may take in each request. It is in the volatile tail,
/// which no prompt cache serves, so it is kept small however long the run.
const STEP_SUMMARY_TOKENS: u32 = 600;
/// Longest step record, in characters: records are notes, not transcripts.
const RECORD_CHARS: usize = 400;
/// The most images a request shows the model (the newest): Anthropic refuses more than 100, and
/// past 20 it holds each to a smaller size.
const MAX_SHOWN_IMAGES: usize = 20;
/// Calibration samples saved one by one, while the factor still moves.
const CALIBRATION_WARMUP: u32 = 8;
/// After the warm-up, the calibration is saved every this many samples.
const CALIBRATION_SAVE_EVERY: u32 = 8;

/// What the loop does after a failure or a choice.
enum Flow {
    /// Go on with the next step.
    Continue,
    /// Stop here: the execution ended or waits.
    Stop(Box<RunOutcome>),
}

/// One execution being driven.
struct Runner<'s, 'a> {
    session: &'s Session<'a>,
    execution: Execution,
    conversation: Conversation,
    config: ProviderConfig,
    /// The provider every model call of the run goes to, with its connections.
    provider: Arc<dyn decima_llm::Provider>,
    /// What the provider charges, for each call's estimated cost; `None` without prices.
    prices: Option<decima_llm::Prices>,
    window: WindowSettings,
    preset: Preset,
    registry: Registry<'s>,
    /// The run's MCP servers, whose tools are in the registry.
    mcp: crate::mcp::McpSession,
    /// MCP tools offered through `search_tools` rather than all at once.
    deferred: Arc<tool_search::Deferred>,
    checkpoints: Checkpoints,
    options: RunOptions,
    history: ExecutionHistoryManager,
    /// Model calls made so far (analysis records stored).
    steps_taken: u32,
    /// The step budget: `steps_taken` may not reach it.
    step_limit: u32,
    calibration: Calibration,
    scale: Scale,
    /// The model's counts of messages already counted in earlier steps.
    model_memo: ModelMemo,
    /// The store counter's counts of the session context's paragraphs.
    paragraphs: ParagraphMemo,
    /// The model's count of what every request carries besides its messages (the tools).
    request_base: u32,
    /// The tools offered, as sent.
    tools: Vec<decima_llm::ToolSpec>,
    /// Images of the conversation's tool results that the model is shown (by the call each
    /// result answers): attached to those results in every request that carries them.
    shown_images: std::collections::HashMap<String, Vec<decima_core::ImagePart>>,
    /// The workspace as the last listing found it, to tell what a call wrote.
    files: tokio::sync::Mutex<Option<workspace_changes::Listing>>,
    /// Risky calls the tenth man held once: the same call again runs.
    risky_calls_held: std::sync::Mutex<std::collections::HashSet<(String, String)>>,
    /// The state of the current step and todo.
    turn: Turn,
    _lease: Lease,
}

/// What lives for one step or one todo, beside the run's [`Runner`]: what the next model call
/// carries, the failure path's state for the current todo, and the window kept between steps.
#[derive(Default)]
struct Turn {
    /// Failure reports and review digests for the next model call only, cleared once sent.
    instant_context: Option<String>,
    /// Whether the one automatic replan a logic failure gets was used since a todo last
    /// completed: a replan that fails again waits for the analyst.
    auto_replan_used: bool,
    /// The todo the automatic replan was given for, checked once the model has acted again.
    replan_watch: Option<recovery::ReplanWatch>,
    /// The class of the last failed tool call since the current todo started.
    last_tool_failure: Option<FailureClass>,
    /// Repeated calls of the current todo, to tell a stuck loop.
    stuck: StuckDetector,
    /// Time spent waiting on the model and on tools in the current step.
    step_wait: StepWait,
    /// What the last step read from the store, brought up to date each step.
    window_cache: Option<CachedContext>,
    /// The messages this runner stored since the last step read the store, as stored: the
    /// next step takes them as they are instead of reading them back.
    stored_since: std::sync::Mutex<Vec<Message>>,
    /// The call whose `tool.started` marker was written with the answer that made it.
    started_marker_call: Option<String>,
}

/// The step context kept between steps.
struct CachedContext {
    loaded: Loaded,
    memo: MemoCounter,
}

/// What a step spent waiting on others, so its own cost can be told apart.
#[derive(Debug, Default, Clone, Copy)]
struct StepWait {
    model: std::time::Duration,
    tools: std::time::Duration,
}

/// Starts a new execution.
pub(super) async fn start(session: &Session<'_>, request: RunRequest) -> Result<RunOutcome> {
    launch(session, request, None).await
}

/// A subagent's place in its tree, and the first message it starts with.
pub(super) struct ChildOf {
    /// The spawning execution.
    pub parent: ExecutionId,
    /// The child's depth: the parent's plus one.
    pub depth: u32,
    /// The brief, the history paths and the task, stored as the child's first message.
    pub first_message: String,
}

/// Starts a new execution: a top-level run, or a subagent of `child.parent`.
pub(super) async fn launch(
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
    let conversation = match request.conversation {
        Some(id) => {
            let conversation = session.store.conversations().get(id).await?;
            // Refused before anything is written (the start below checks again, atomically).
            if let Some(busy) = session.store.claims().busy(id).await? {
                return Err(decima_store::StoreError::Busy(Box::new(busy)).into());
            }
            conversation
        }
        None => {
            session
                .store
                .conversations()
                .create(&title_from(&request.task), None)
                .await?
        }
    };
    let workspace = match request.workspace {
        Some(dir) => dir,
        None => default_workspace(session.data_dir, conversation.id),
    };
    std::fs::create_dir_all(&workspace).map_err(|source| RuntimeError::Io {
        action: "create",
        path: workspace.clone(),
        source,
    })?;
    let workspace = std::fs::canonicalize(&workspace).map_err(|source| RuntimeError::Io {
        action: "resolve",
        path: workspace.clone(),
        source,
    })?;
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
        runner.started("run");
        match child {
            Some(child) => {
                let mut first = NewMessage::new(Role::User, child.first_message);
                first.execution_id = Some(runner.execution.id);
                runner.store_message(first).await?;
            }
            None => {
                runner.store_task().await?;
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
pub(super) async fn recover(
    session: &Session<'_>,
    id: ExecutionId,
    choice: Resolution,
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
    if !FailureReport::of(&failure).offers(choice) {
        return Err(recovery::not_offered(&failure, choice));
    }
    let lease = Lease::acquire(session.store, session.data_dir, id).await?;
    let writer = lease.store().cloned();
    let session = &session.writing_through(writer.as_ref());
    let mut runner = Runner::open(session, execution, lease).await?;
    let span = runner.span("recover");
    async move {
        runner.started("recover");
        let outcome = async {
            let flow = match runner.apply_choice(&failure, choice).await? {
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
pub(super) async fn resume(session: &Session<'_>, id: ExecutionId) -> Result<RunOutcome> {
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
    let span = runner.span("resume");
    async move {
        let outcome = async {
            runner.set_status(ExecutionStatus::Running).await?;
            runner.started("resume");
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

impl<'s, 'a> Runner<'s, 'a> {
    async fn new(
        session: &'s Session<'a>,
        execution: Execution,
        conversation: Conversation,
        resolved: settings::ResolvedProvider,
        lease: Lease,
    ) -> Result<Self> {
        let options = RunOptions::from_stored(&execution.options);
        let window = window_for_turn(options.provider.as_deref(), &resolved)?;
        let preset = preset_of(session.store, &conversation).await?;
        let workspace = PathBuf::from(execution.workspace.clone().ok_or_else(|| {
            RuntimeError::Config(format!("execution {} has no workspace", execution.id))
        })?);
        if !workspace.is_dir() {
            return Err(RuntimeError::Config(format!(
                "the workspace {} of execution {} is gone; restore it or start a new run",
                workspace.display(),
                execution.id
            )));
        }
        let root = root_conversation(session.store, &execution).await?;
        let mut run_docker = None;
        let (sandbox, source): (Arc<dyn Sandbox>, SnapshotSource) = match execution.sandbox {
            SandboxKind::Host => (
                Arc::new(HostSandbox::new(workspace.clone(), HostLimits::default())),
                SnapshotSource::Host(workspace.clone()),
            ),
            SandboxKind::Docker => {
                let docker =
                    Arc::new(LazyDocker::new(session.store, session.data_dir, root).await?);
                run_docker = Some(docker.clone());
                (docker.clone(), SnapshotSource::Container(docker))
            }
        };
        let source = if options.workspace_snapshots {
            source
        } else {
            SnapshotSource::None
        };
        let checkpoints = Checkpoints::new(snapshot_store(session.data_dir)?, source, execution.id);
        let calibration = match session
            .store
            .calibrations()
            .get(&resolved.config.model)
            .await?
        {
            Some((factor, samples)) => Calibration { factor, samples },
            None => Calibration::new(),
        };
        let mut history = ExecutionHistoryManager::new(STEP_WINDOW, STEP_BATCH);
        let mut steps_taken = 0u32;
        for step in session.store.steps().list(execution.id).await? {
            let kind = match step.kind.as_str() {
                "analysis" => {
                    steps_taken += 1;
                    StepKind::Analysis
                }
                "action" => StepKind::Action,
                "supervision" => StepKind::Supervision,
                _ => continue,
            };
            history.push(StepRecord {
                step: steps_taken.max(1),
                kind,
                content: step.content,
            });
        }
        let step_limit = options.max_steps.max(1);
        let mut registry = Registry::new(sandbox);
        registry.register_core(Arc::new(plan_tool::PlanTool {
            store: session.store,
            events: session.events,
            execution: execution.id,
        }));
        registry.register_core(Arc::new(spawn::SubagentTool::new(
            session,
            execution.clone(),
            options.clone(),
        )));
        let mcp = crate::mcp::McpSession::start(crate::mcp::StartRequest {
            store: session.store,
            data_dir: session.data_dir,
            conversation: conversation.id,
            host_workspace: (execution.sandbox == SandboxKind::Host).then_some(workspace.as_path()),
            protocol: resolved.config.protocol,
            docker: run_docker,
            root_conversation: root,
            events: session.events,
        })
        .await?;
        for tool in mcp.tools() {
            registry.register(tool);
        }
        if options.tenth_man.tool() {
            registry.register(Arc::new(crate::review::tool::TenthManTool {
                store: session.store,
                data_dir: session.data_dir,
                events: session.events,
                agent_provider: options.provider.clone(),
                conversation: conversation.id,
                execution: execution.id,
                reviewer: options.reviewer_provider.clone(),
            }));
        }
        let mut tools = registry.specs();
        let model_counter = counter_for_model(
            &resolved.config.model,
            resolved.config.tokenizer_json.as_deref(),
        )?;
        let deferred = Arc::new(defer_mcp_tools(
            &mut tools,
            &mcp,
            model_counter.as_ref(),
            window.window,
        ));
        if !deferred.held.is_empty() {
            registry.register(Arc::new(tool_search::SearchTool(deferred.clone())));
        }
        let shown_images = if resolved.config.protocol == decima_llm::Protocol::Anthropic {
            shown_only(
                session
                    .store
                    .messages()
                    .tool_result_images(conversation.id)
                    .await?,
            )
        } else {
            std::collections::HashMap::new()
        };
        let request_base = estimate_request(
            model_counter.as_ref(),
            &decima_llm::ChatRequest {
                tools: tools.clone(),
                ..decima_llm::ChatRequest::default()
            },
        );
        Ok(Self {
            registry,
            mcp,
            deferred,
            tools,
            model_memo: ModelMemo::new(model_counter),
            paragraphs: ParagraphMemo::default(),
            request_base,
            shown_images,
            files: tokio::sync::Mutex::new(None),
            session,
            scale: Scale::new(calibration.factor),
            calibration,
            prices: resolved.settings.prices,
            provider: crate::chat::connect(&resolved.config)?,
            config: resolved.config,
            window,
            preset,
            checkpoints,
            options,
            history,
            steps_taken,
            step_limit,
            execution,
            conversation,
            risky_calls_held: std::sync::Mutex::default(),
            turn: Turn::default(),
            _lease: lease,
        })
    }

    /// A runner for an execution that already exists (recover, resume).
    async fn open(session: &'s Session<'a>, execution: Execution, lease: Lease) -> Result<Self> {
        let options = RunOptions::from_stored(&execution.options);
        let provider = session.provider.map(str::to_owned).or(options.provider);
        let resolved =
            settings::resolve(session.store, session.data_dir, provider.as_deref()).await?;
        let conversation = session
            .store
            .conversations()
            .get(execution.conversation_id)
            .await?;
        Self::new(session, execution, conversation, resolved, lease).await
    }

    /// Gives the run's lease back, so another process may continue it at once.
    async fn end(self) {
        self._lease.release().await;
    }

    fn span(&self, how: &'static str) -> tracing::Span {
        info_span!(
            "execution",
            how,
            execution = %self.execution.id,
            conversation = %self.conversation.id,
            provider = %self.config.name,
            model = %self.config.model,
        )
    }

    fn store(&self) -> &'s Store {
        self.session.store
    }

    fn emit(&self, event: Event) {
        self.session.events.emit(event);
    }

    fn started(&self, how: &'static str) {
        self.emit(Event::ExecutionStarted {
            execution_id: self.execution.id,
            conversation_id: self.conversation.id,
            workspace: self.execution.workspace.clone().unwrap_or_default(),
            how,
        });
    }

    async fn set_status(&mut self, status: ExecutionStatus) -> Result<()> {
        self.execution = self
            .store()
            .executions()
            .set_status(self.execution.id, status)
            .await?;
        Ok(())
    }

    /// The task, as the run's first message: stored before any request, so a failed first
    /// request loses nothing typed. Files the analyst added to the workspace since the last
    /// message are named at its end; they are marked announced once it is stored (a crash in
    /// between names them again next time rather than never).
    async fn store_task(&self) -> Result<Message> {
        let pending =
            crate::workspace::added::pending_announcement(self.store(), self.conversation.id)
                .await?;
        let content = match &pending {
            Some((note, _)) => format!("{}\n\n{note}", self.execution.task),
            None => self.execution.task.clone(),
        };
        let mut task = NewMessage::new(Role::User, content);
        task.execution_id = Some(self.execution.id);
        let stored = self.store_message(task).await?;
        if let Some((_, through)) = pending {
            crate::workspace::added::mark_announced(self.store(), self.conversation.id, through)
                .await?;
        }
        Ok(stored)
    }

    async fn store_message(&self, message: NewMessage) -> Result<Message> {
        let stored = self
            .store()
            .messages()
            .append(self.conversation.id, message)
            .await?;
        self.stored(&stored);
        Ok(stored)
    }

    /// Notes a message this runner stored, for the next step's refresh, and reports it.
    fn stored(&self, message: &Message) {
        if let Ok(mut since) = self.turn.stored_since.lock() {
            since.push(message.clone());
        }
        crate::review::digest_cache::warm_when_full(
            self.store(),
            self.conversation.id,
            message.seq,
        );
        self.emit(Event::MessageStored {
            seq: message.seq,
            role: message.role.as_str(),
        });
    }

    /// Appends an event of this execution to the store's log.
    async fn log_event(&self, kind: &str, payload: &serde_json::Value) -> Result<()> {
        self.store()
            .events()
            .append(
                Some(self.execution.id),
                Some(self.conversation.id),
                kind,
                payload,
            )
            .await?;
        Ok(())
    }

    async fn plan(&self) -> Result<Vec<Todo>> {
        Ok(self.store().todos().plan(self.execution.id).await?)
    }

    fn emit_plan(&self, plan: &[Todo]) {
        self.emit(Event::TodosChanged {
            todos: plan.iter().map(TodoView::from).collect(),
        });
    }

    /// The loop; an error that ends it (the store, the machine) leaves the execution
    /// `interrupted`, so it can be resumed once the cause is fixed, rather than `running` with
    /// no process behind it.
    async fn drive(&mut self) -> Result<RunOutcome> {
        let stepped = self.steps().await;
        // The run's servers stop with it, whatever ended it.
        self.mcp.shutdown().await;
        match stepped {
            Ok(outcome) => {
                // Whatever the run's messages landed on, every full block is digested after it.
                crate::review::digest_cache::warm_behind(self.store(), self.conversation.id);
                Ok(outcome)
            }
            Err(e) => {
                warn!(error = %e, "the run stopped on an error; marking it interrupted");
                if self.execution.status == ExecutionStatus::Running
                    && self
                        .store()
                        .executions()
                        .interrupt_if_running(self.execution.id)
                        .await
                        .unwrap_or(false)
                {
                    self.emit(Event::Finished {
                        execution_id: self.execution.id,
                        status: ExecutionStatus::Interrupted.as_str(),
                    });
                }
                Err(e)
            }
        }
    }

    /// Steps until the model answers without a call, the run is cancelled, or it stops to
    /// wait for a choice. Each step runs in a span of its own, numbered as the model call it
    /// makes, so that a run's log reads as a tree: the execution, its steps, and in each step
    /// the model call and the tool calls.
    async fn steps(&mut self) -> Result<RunOutcome> {
        loop {
            let span = info_span!("step", step = self.steps_taken + 1);
            if let Stepped::Ended(outcome) = self.step().instrument(span).await? {
                return Ok(*outcome);
            }
        }
    }

    /// One step: the budget checked, one model call, its answer stored and its calls run, and
    /// the failure path taken when something failed.
    async fn step(&mut self) -> Result<Stepped> {
        if self.session.cancel.is_cancelled() {
            return self
                .finish_cancelled(EndedBy::Stop)
                .await
                .map(Stepped::ended);
        }
        if self.steps_taken >= self.step_limit {
            let pending = Pending {
                class: FailureClass::Logic,
                trigger: Trigger::StepBudget,
                message: format!(
                    "the step budget of {} model calls is used up",
                    self.options.max_steps
                ),
                call: None,
                todo: None,
            };
            return self.fail(pending).await.map(Stepped::from);
        }
        let step_started = Instant::now();
        self.turn.step_wait = StepWait::default();
        let completion = match self.model_step().await {
            Ok(Some(completion)) => completion,
            Ok(None) => {
                return self
                    .finish_cancelled(EndedBy::Stop)
                    .await
                    .map(Stepped::ended);
            }
            Err(StepError::Failed(pending)) => return self.fail(pending).await.map(Stepped::from),
            Err(StepError::Runtime(e)) => return Err(e),
        };
        self.steps_taken += 1;
        let Some(answer) = self.store_answer(&completion).await? else {
            return Ok(Stepped::Next);
        };
        if answer.tool_calls.is_empty() {
            self.step_timed(step_started);
            // An answer that leaves the todo of the automatic replan failed ends nothing.
            if let Some(pending) = self.replan_not_taken().await? {
                return self.fail(pending).await.map(Stepped::from);
            }
            return self
                .finish_succeeded(answer.content)
                .await
                .map(Stepped::ended);
        }
        let end = self.run_calls(&answer).await?;
        self.step_timed(step_started);
        let failed = match end {
            CallsEnd::Done(None) => self.replan_not_taken().await?,
            CallsEnd::Done(Some(pending)) => Some(pending),
            CallsEnd::Cancelled => {
                return self
                    .finish_cancelled(EndedBy::Stop)
                    .await
                    .map(Stepped::ended);
            }
        };
        match failed {
            Some(pending) => self.fail(pending).await.map(Stepped::from),
            None => Ok(Stepped::Next),
        }
    }
}

/// How a step ended: the loop goes on, or the run is over (ended or waiting).
enum Stepped {
    Next,
    Ended(Box<RunOutcome>),
}

impl Stepped {
    fn ended(outcome: RunOutcome) -> Self {
        Self::Ended(Box::new(outcome))
    }
}

impl From<Flow> for Stepped {
    fn from(flow: Flow) -> Self {
        match flow {
            Flow::Continue => Self::Next,
            Flow::Stop(outcome) => Self::Ended(outcome),
        }
    }
}

/// How a step's calls ended.
enum CallsEnd {
    /// All answered; maybe with a failure to take the failure path for.
    Done(Option<Pending>),
    /// The run was cancelled mid-step; every call has an answer.
    Cancelled,
}

/// A model step's failure: a classed failure for the failure path, or a runtime error (the
/// store, the machine) that ends the command.
enum StepError {
    Failed(Pending),
    Runtime(RuntimeError),
}

impl From<RuntimeError> for StepError {
    fn from(e: RuntimeError) -> Self {
        StepError::Runtime(e)
    }
}

impl From<decima_store::StoreError> for StepError {
    fn from(e: decima_store::StoreError) -> Self {
        StepError::Runtime(e.into())
    }
}

fn first_line(text: &str) -> String {
    clip(text.lines().next().unwrap_or(""), 300)
}

fn clip(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max).collect();
    out.push('…');
    out
}

/// The images a model is shown, by call: those that cost tokens (the others were kept for the
/// window only).
fn shown_only(
    stored: Vec<(String, Vec<decima_core::ImagePart>)>,
) -> std::collections::HashMap<String, Vec<decima_core::ImagePart>> {
    stored
        .into_iter()
        .filter_map(|(call, images)| {
            let shown: Vec<_> = images.into_iter().filter(|i| i.tokens > 0).collect();
            (!shown.is_empty()).then_some((call, shown))
        })
        .collect()
}

/// Holds the MCP tools back behind `search_tools` when their schemas would take more than
/// [`crate::mcp::search::DIRECT_SHARE`] of the window.
fn defer_mcp_tools(
    tools: &mut Vec<decima_llm::ToolSpec>,
    mcp: &crate::mcp::McpSession,
    counter: &dyn decima_core::TokenCounter,
    window: u32,
) -> tool_search::Deferred {
    let is_mcp = |s: &decima_llm::ToolSpec| mcp.resolve(&s.name).is_some();
    let tokens: u64 = tools
        .iter()
        .filter(|s| is_mcp(s))
        .map(|s| u64::from(counter.count_text(&serde_json::to_string(s).unwrap_or_default())))
        .sum();
    let budget = (f64::from(window) * crate::mcp::search::DIRECT_SHARE) as u64;
    if tokens <= budget {
        return tool_search::Deferred::default();
    }
    let (held, direct): (Vec<_>, Vec<_>) = std::mem::take(tools).into_iter().partition(is_mcp);
    *tools = direct;
    let servers = mcp.server_names();
    tools.push(crate::mcp::search::search_tools_spec(&servers));
    info!(
        tools = held.len(),
        tokens, budget, "MCP tools are offered through search_tools"
    );
    tool_search::Deferred {
        held,
        servers,
        ..tool_search::Deferred::default()
    }
}

/// The conversation at the root of an execution's tree: its Docker container and settings are
/// the tree's.
async fn root_conversation(store: &Store, execution: &Execution) -> Result<ConversationId> {
    let chain = super::subagent::lineage(store, execution).await?;
    Ok(chain
        .last()
        .map_or(execution.conversation_id, |root| root.conversation_id))
}
