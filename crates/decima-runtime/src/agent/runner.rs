//! The loop itself. Each step: build the context through the pipeline (compressing first when
//! a threshold is crossed), stream the answer, store it, run its tool calls in order and store
//! each result, then check the budget. Every write happens before the next model call.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use decima_core::context::{CompressionLevel, ExecutionHistoryManager, StepKind, StepRecord};
use decima_core::prompt::Preset;
use decima_core::{
    ExecutionId, FailureClass, Message, NewMessage, Role, TokenCounter as _, ToolCall,
};
use decima_llm::tokens::{Calibration, counter_for_model, estimate_request};
use decima_llm::{Completion, LlmError, ProviderConfig};
use decima_sandbox::{HostLimits, HostSandbox};
use decima_store::{
    Conversation, Execution, ExecutionStatus, Failure, NewExecution, NewFailure, Resolution,
    SandboxKind, SnapshotReason, Store, Todo, TodoStatus,
};
use serde_json::json;
use tracing::{Instrument as _, debug, info, info_span, warn};

use super::checkpoint::{Checkpoints, RolledBack, rollback_target, snapshot_store};
use super::dangling;
use super::failure::{self, Pending, Place, Trigger};
use super::lease::{Lease, interrupt_orphans};
use super::options::RunOptions;
use super::plan::{self, Transitions};
use super::stuck::StuckDetector;
use super::tools::{Registry, ToolOutcome};
use super::{RunOutcome, RunRequest, Session, default_workspace};
use crate::chat::{chat_request, stream_answer, title_from, window_for_turn};
use crate::compression::{CompressContext, compress_at, compress_built};
use crate::context::{Built, Extras, Loaded, Scale, preset_of};
use crate::error::{Result, RuntimeError};
use crate::events::{Event, LayerUsage, TodoView};
use crate::memo::{MemoCounter, ModelMemo, ParagraphMemo};
use crate::settings::{self, WindowSettings};

/// Step records kept in detail before the oldest are summarised.
const STEP_WINDOW: usize = 6;
/// Records summarised at a time.
const STEP_BATCH: usize = 3;
/// Longest step record, in characters: records are notes, not transcripts.
const RECORD_CHARS: usize = 400;
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
    window: WindowSettings,
    preset: Preset,
    registry: Registry,
    checkpoints: Checkpoints,
    options: RunOptions,
    history: ExecutionHistoryManager,
    /// Model calls made so far (analysis records stored).
    steps_taken: u32,
    /// The step budget: `steps_taken` may not reach it.
    step_limit: u32,
    stuck: StuckDetector,
    /// Sent with the next model call only.
    instant: Option<String>,
    /// Whether the one automatic replan a logic failure gets was used since a todo last
    /// completed: a replan that fails again waits for the analyst.
    auto_replan_used: bool,
    /// The class of the last failed tool call since the current todo started.
    last_tool_failure: Option<FailureClass>,
    calibration: Calibration,
    scale: Scale,
    /// Time spent waiting on the model and on tools in the current step.
    waited: StepWait,
    /// What the last step read from the store, brought up to date each step.
    cache: Option<CachedContext>,
    /// The model's counts of messages already counted in earlier steps.
    model_memo: ModelMemo,
    /// The store counter's counts of the session context's paragraphs.
    paragraphs: ParagraphMemo,
    /// The model's count of what every request carries besides its messages (the tools).
    request_base: u32,
    /// The tools offered, as sent.
    tools: Vec<decima_llm::ToolSpec>,
    _lease: Lease,
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
        Some(id) => session.store.conversations().get(id).await?,
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
    let execution = session
        .store
        .executions()
        .create(&NewExecution {
            conversation_id: conversation.id,
            parent_id: None,
            depth: 0,
            task: request.task.clone(),
            sandbox: SandboxKind::Host,
            provider_id: None,
            workspace: Some(workspace.to_string_lossy().into_owned()),
            options: options.to_stored(),
        })
        .await?;
    let lease = Lease::acquire(session.data_dir, execution.id)?;
    let execution = session
        .store
        .executions()
        .set_status(execution.id, ExecutionStatus::Running)
        .await?;
    let id = execution.id;
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
    let span = runner.span("run");
    async move {
        runner.started("run");
        runner.store_task().await?;
        runner.drive().await
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
    let failure = session
        .store
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
        })?;
    let mut runner = Runner::open(session, execution).await?;
    let span = runner.span("recover");
    async move {
        runner.started("recover");
        match runner.apply_choice(&failure, choice).await? {
            Flow::Continue => runner.drive().await,
            Flow::Stop(outcome) => Ok(*outcome),
        }
    }
    .instrument(span)
    .await
}

/// Continues an interrupted execution.
pub(super) async fn resume(session: &Session<'_>, id: ExecutionId) -> Result<RunOutcome> {
    interrupt_orphans(session.store, session.data_dir).await?;
    let execution = session.store.executions().get(id).await?;
    match execution.status {
        ExecutionStatus::Interrupted => {}
        ExecutionStatus::AwaitingUser => {
            return Err(RuntimeError::Conflict(format!(
                "execution {id} waits for a choice: continue it with recover --choice \
                 retry|skip|replan|abort"
            )));
        }
        other => {
            return Err(RuntimeError::Conflict(format!(
                "execution {id} is {other}; only an interrupted execution can be resumed"
            )));
        }
    }
    let mut runner = Runner::open(session, execution).await?;
    let span = runner.span("resume");
    async move {
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
        let sandbox = HostSandbox::new(workspace.clone(), HostLimits::default());
        let checkpoints =
            Checkpoints::new(snapshot_store(session.data_dir)?, workspace, execution.id);
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
        let registry = Registry::new(Arc::new(sandbox));
        let tools = registry.specs();
        let model_counter = counter_for_model(
            &resolved.config.model,
            resolved.config.tokenizer_json.as_deref(),
        )?;
        let request_base = estimate_request(
            model_counter.as_ref(),
            &decima_llm::ChatRequest {
                tools: tools.clone(),
                ..decima_llm::ChatRequest::default()
            },
        );
        Ok(Self {
            registry,
            tools,
            model_memo: ModelMemo::new(model_counter),
            paragraphs: ParagraphMemo::default(),
            request_base,
            cache: None,
            session,
            scale: Scale::new(calibration.factor),
            calibration,
            config: resolved.config,
            window,
            preset,
            checkpoints,
            stuck: StuckDetector::default(),
            options,
            history,
            steps_taken,
            step_limit,
            instant: None,
            auto_replan_used: false,
            last_tool_failure: None,
            waited: StepWait::default(),
            execution,
            conversation,
            _lease: lease,
        })
    }

    /// A runner for an execution that already exists (recover, resume).
    async fn open(session: &'s Session<'a>, execution: Execution) -> Result<Self> {
        let lease = Lease::acquire(session.data_dir, execution.id)?;
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
    /// request loses nothing typed.
    async fn store_task(&self) -> Result<Message> {
        let mut task = NewMessage::new(Role::User, self.execution.task.clone());
        task.execution_id = Some(self.execution.id);
        self.store_message(task).await
    }

    async fn store_message(&self, message: NewMessage) -> Result<Message> {
        let stored = self
            .store()
            .messages()
            .append(self.conversation.id, message)
            .await?;
        self.emit(Event::MessageStored {
            seq: stored.seq,
            role: stored.role.as_str(),
        });
        Ok(stored)
    }

    async fn plan(&self) -> Result<Vec<Todo>> {
        Ok(self.store().todos().plan(self.execution.id).await?)
    }

    fn emit_plan(&self, plan: &[Todo]) {
        self.emit(Event::TodosChanged {
            todos: plan.iter().map(TodoView::from).collect(),
        });
    }

    async fn record(&mut self, kind: StepKind, content: String) -> Result<()> {
        self.record_all(vec![(kind, content)]).await
    }

    /// Stores step records in one transaction and feeds them to the step history.
    async fn record_all(&mut self, records: Vec<(StepKind, String)>) -> Result<()> {
        let records: Vec<(StepKind, String)> = records
            .into_iter()
            .map(|(kind, content)| (kind, clip(&content, RECORD_CHARS)))
            .collect();
        let rows: Vec<(decima_store::StepKind, &str)> = records
            .iter()
            .map(|(kind, content)| {
                let kind = match kind {
                    StepKind::Analysis => decima_store::StepKind::Analysis,
                    StepKind::Action => decima_store::StepKind::Action,
                    StepKind::Supervision => decima_store::StepKind::Supervision,
                };
                (kind, content.as_str())
            })
            .collect();
        match rows.as_slice() {
            // One record is one statement: no transaction round trips.
            [(kind, content)] => {
                self.store()
                    .steps()
                    .record(self.execution.id, *kind, content)
                    .await?;
            }
            rows => {
                self.store()
                    .steps()
                    .record_all(self.execution.id, rows)
                    .await?;
            }
        }
        for (kind, content) in records {
            self.history.push(StepRecord {
                step: self.steps_taken.max(1),
                kind,
                content,
            });
        }
        Ok(())
    }

    /// The loop; an error that ends it (the store, the machine) leaves the execution
    /// `interrupted`, so it can be resumed once the cause is fixed, rather than `running` with
    /// no process behind it.
    async fn drive(&mut self) -> Result<RunOutcome> {
        match self.steps().await {
            Ok(outcome) => Ok(outcome),
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
    /// wait for a choice.
    async fn steps(&mut self) -> Result<RunOutcome> {
        loop {
            if self.session.cancel.is_cancelled() {
                return self.finish_cancelled().await;
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
                };
                match self.fail(pending).await? {
                    Flow::Continue => continue,
                    Flow::Stop(outcome) => return Ok(*outcome),
                }
            }
            let step_started = Instant::now();
            self.waited = StepWait::default();
            let completion = match self.model_step().await {
                Ok(Some(completion)) => completion,
                Ok(None) => return self.finish_cancelled().await,
                Err(StepError::Failed(pending)) => match self.fail(pending).await? {
                    Flow::Continue => continue,
                    Flow::Stop(outcome) => return Ok(*outcome),
                },
                Err(StepError::Runtime(e)) => return Err(e),
            };
            self.steps_taken += 1;
            let Some(answer) = self.store_answer(&completion).await? else {
                continue;
            };
            if answer.tool_calls.is_empty() {
                self.step_timed(step_started);
                return self.finish_succeeded(answer.content).await;
            }
            let end = self.run_calls(&answer).await?;
            self.step_timed(step_started);
            match end {
                CallsEnd::Done(None) => {}
                CallsEnd::Done(Some(pending)) => match self.fail(pending).await? {
                    Flow::Continue => {}
                    Flow::Stop(outcome) => return Ok(*outcome),
                },
                CallsEnd::Cancelled => return self.finish_cancelled().await,
            }
        }
    }

    /// Builds, compresses when due, and streams one answer. `Ok(None)` when cancelled.
    async fn model_step(&mut self) -> Result<Option<Completion>, StepError> {
        let mut overflow_retried = false;
        loop {
            let built = self.build_context().await?;
            let request = chat_request(&self.config, &built, &self.tools);
            let estimate = self.estimate(&built);
            let needed = self.calibration.apply(estimate);
            let too_big = built.compression_required() || needed > built.budgeting.input_room;
            let result = if too_big {
                Err(LlmError::ContextOverflow {
                    provider: self.config.name.clone(),
                    message: format!(
                        "the request needs about {needed} tokens and {} are available",
                        built.budgeting.input_room
                    ),
                }
                .into())
            } else {
                let asked = Instant::now();
                let result = tokio::select! {
                    biased;
                    () = self.session.cancel.cancelled() => return Ok(None),
                    result = stream_answer(&self.config, request, self.session.events) => result,
                };
                self.waited.model += asked.elapsed();
                result
            };
            match result {
                Ok(completion) => {
                    if let Some(usage) = completion.usage {
                        self.calibration.update(estimate, usage.prompt_tokens);
                        // Saved while it is still learning, then every few samples: a crash
                        // loses at most a few samples of a running average.
                        if self.calibration.samples <= CALIBRATION_WARMUP
                            || self
                                .calibration
                                .samples
                                .is_multiple_of(CALIBRATION_SAVE_EVERY)
                        {
                            self.store()
                                .calibrations()
                                .save(
                                    &self.config.model,
                                    self.calibration.factor,
                                    self.calibration.samples,
                                )
                                .await?;
                        }
                    }
                    self.instant = None;
                    return Ok(Some(completion));
                }
                Err(RuntimeError::Llm(e))
                    if e.class() == FailureClass::ContextOverflow && !overflow_retried =>
                {
                    // Compress deeply and try once more.
                    overflow_retried = true;
                    warn!("context overflow; compressing deeply and retrying once");
                    let built = self.build_context().await?;
                    compress_at(
                        &self.compress_ctx(),
                        &built,
                        CompressionLevel::Deep,
                        "overflow",
                    )
                    .await?;
                }
                Err(RuntimeError::Llm(e)) => {
                    return Err(StepError::Failed(Pending {
                        class: e.class(),
                        trigger: Trigger::ModelRequest,
                        message: e.to_string(),
                        call: None,
                    }));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Reports what the step cost, apart from the model and the tools it waited on.
    fn step_timed(&self, started: Instant) {
        let total = started.elapsed();
        let own = total
            .saturating_sub(self.waited.model)
            .saturating_sub(self.waited.tools);
        let us = |d: std::time::Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        debug!(
            step = self.steps_taken,
            total_us = us(total),
            model_us = us(self.waited.model),
            tools_us = us(self.waited.tools),
            "step timed"
        );
        self.emit(Event::StepTimed {
            step: self.steps_taken,
            total_us: us(total),
            model_us: us(self.waited.model),
            tools_us: us(self.waited.tools),
            overhead_us: us(own),
        });
    }

    fn compress_ctx(&self) -> CompressContext<'_> {
        CompressContext {
            store: self.store(),
            data_dir: self.session.data_dir,
            conversation: &self.conversation,
            preset: &self.preset,
            window: &self.window,
            scale: self.scale,
            provider: self.options.provider.as_deref(),
            events: self.session.events,
        }
    }

    /// The context of the next request, compressed first when a threshold is crossed: the
    /// check runs between model calls, not only when a run starts. What was read for the last
    /// step is kept and brought up to date with the messages stored since, so a step does not
    /// read its window from the store again.
    async fn build_context(&mut self) -> Result<Built> {
        let history = self.history.history();
        let instant = self.instant.clone().unwrap_or_default();
        let extras = Extras {
            session: &history,
            instant: &instant,
        };
        let store = self.session.store;
        let mut cached = match self.cache.take() {
            Some(mut cached) => {
                if cached.loaded.refresh(store).await? {
                    cached
                } else {
                    self.load_context().await?
                }
            }
            None => self.load_context().await?,
        };
        let todos = store
            .todos()
            .pinned_in_conversation(self.conversation.id)
            .await?;
        let counter = self.paragraphs.over(&cached.memo);
        let mut built = cached.loaded.assemble(
            &self.preset,
            &self.window,
            self.scale,
            &todos,
            extras,
            &counter,
        )?;
        if compress_built(&self.compress_ctx(), &built, "auto")
            .await?
            .is_some()
        {
            cached = self.load_context().await?;
            let counter = self.paragraphs.over(&cached.memo);
            built = cached.loaded.assemble(
                &self.preset,
                &self.window,
                self.scale,
                &todos,
                extras,
                &counter,
            )?;
        }
        self.cache = Some(cached);
        self.emit(Event::ContextUsage {
            usage: built.report.usage,
            used: built.report.total,
            input_room: built.budgeting.input_room,
            layers: built
                .report
                .layers
                .iter()
                .map(|l| LayerUsage {
                    name: l.name.clone(),
                    tokens: u64::from(l.tokens),
                })
                .collect(),
        });
        Ok(built)
    }

    async fn load_context(&self) -> Result<CachedContext> {
        let store = self.store();
        let memo = MemoCounter::load(
            store,
            self.conversation.id,
            decima_llm::tokens::store_counter(),
        )
        .await?;
        let loaded = Loaded::load(
            store,
            &self.conversation,
            &self.preset,
            &self.window,
            self.scale,
            &memo,
        )
        .await?;
        Ok(CachedContext { loaded, memo })
    }

    /// The model's estimate of a request: the tools and reply priming counted once per run,
    /// each message once (remembered across steps).
    fn estimate(&self, built: &Built) -> u32 {
        built
            .assembled
            .messages
            .iter()
            .map(|m| self.model_memo.count_message(&m.message))
            .fold(self.request_base, u32::saturating_add)
    }

    /// Stores the answer and its analysis and action records. `None` when there was nothing to
    /// store (an empty answer, or one whose only call was cut off): the model is told next step.
    async fn store_answer(&mut self, completion: &Completion) -> Result<Option<Message>> {
        let mut notes = Vec::new();
        if !completion.cut_off_tool_calls.is_empty() {
            let names: Vec<&str> = completion
                .cut_off_tool_calls
                .iter()
                .map(|c| c.name.as_str())
                .collect();
            let note = format!(
                "Your last answer hit the output limit while writing a call to {}; that call \
                 was not run. Make the step smaller (write big files in parts).",
                names.join(", ")
            );
            self.emit(Event::Warning {
                message: note.clone(),
            });
            notes.push(note);
        }
        if completion.text.trim().is_empty() && completion.tool_calls.is_empty() {
            if notes.is_empty() {
                notes.push(
                    "Your last answer was empty. Answer the task, or call a tool.".to_owned(),
                );
            }
            self.record(StepKind::Analysis, "(empty answer)".into())
                .await?;
            self.instant = Some(notes.join("\n"));
            return Ok(None);
        }
        if !notes.is_empty() {
            self.instant = Some(notes.join("\n"));
        }
        let mut message = NewMessage::from(&completion.to_message());
        message.execution_id = Some(self.execution.id);
        let answer = self.store_message(message).await?;
        let analysis = match (&completion.reasoning, completion.text.trim()) {
            (Some(r), _) if !r.trim().is_empty() => r.clone(),
            (_, "") => "(no analysis)".to_owned(),
            (_, text) => text.to_owned(),
        };
        let action = if answer.tool_calls.is_empty() {
            "answered without a tool call".to_owned()
        } else {
            answer
                .tool_calls
                .iter()
                .map(|c| format!("{} {}", c.name, c.arguments))
                .collect::<Vec<_>>()
                .join("; ")
        };
        self.record_all(vec![
            (StepKind::Analysis, analysis),
            (StepKind::Action, action),
        ])
        .await?;
        Ok(Some(answer))
    }

    /// Runs the answer's calls in order and stores each result. The first call that starts
    /// the failure path stops the rest, which are answered as not run.
    async fn run_calls(&mut self, answer: &Message) -> Result<CallsEnd> {
        let mut failure: Option<Pending> = None;
        let mut deferred: Vec<(CompressionLevel, &'static str)> = Vec::new();
        let mut supervision = Vec::new();
        for call in &answer.tool_calls {
            if let Some(pending) = &failure {
                let text = format!(
                    "[not run] an earlier call in this step failed ({}); this call was not run",
                    pending.message
                );
                self.answer_unrun(call, text, None).await?;
                continue;
            }
            if self.session.cancel.is_cancelled() {
                self.answer_unrun(
                    call,
                    "[not run] the run was cancelled before this call".into(),
                    Some(FailureClass::Cancelled),
                )
                .await?;
                continue;
            }
            self.store()
                .events()
                .append(
                    Some(self.execution.id),
                    Some(self.conversation.id),
                    "tool.started",
                    &json!({ "call_id": call.id, "name": call.name }),
                )
                .await?;
            self.emit(Event::ToolStarted {
                call_id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            });
            if Registry::is_plan_tool(&call.name) {
                let (outcome, transitions) = self.todo_write(call).await?;
                let stored = self
                    .answer_call(
                        call,
                        outcome.text.clone(),
                        None,
                        ms(&outcome),
                        outcome.class,
                    )
                    .await?;
                supervision.push(format!("todo_write {}", status_word(&outcome)));
                if let Some(transitions) = transitions {
                    let (pending, compress) =
                        self.after_plan_change(&transitions, stored.seq).await?;
                    deferred.extend(compress);
                    failure = pending;
                }
                continue;
            }
            let ran = Instant::now();
            let outcome = tokio::select! {
                biased;
                () = self.session.cancel.cancelled() => None,
                outcome = self.registry.call(&call.name, &call.arguments) => Some(outcome),
            };
            self.waited.tools += ran.elapsed();
            let Some(outcome) = outcome else {
                // Dropping the call's future killed its process group.
                self.answer_unrun(
                    call,
                    "[cancelled] the run was cancelled while this call ran; the command was \
                     killed and its effect may be partial"
                        .into(),
                    Some(FailureClass::Cancelled),
                )
                .await?;
                for rest in answer
                    .tool_calls
                    .iter()
                    .skip_while(|c| c.id != call.id)
                    .skip(1)
                {
                    self.answer_unrun(
                        rest,
                        "[not run] the run was cancelled before this call".into(),
                        Some(FailureClass::Cancelled),
                    )
                    .await?;
                }
                return Ok(CallsEnd::Cancelled);
            };
            self.answer_call(
                call,
                outcome.text.clone(),
                outcome.exit_code,
                ms(&outcome),
                outcome.class,
            )
            .await?;
            supervision.push(format!("{} {}", call.name, status_word(&outcome)));
            if let Some(class) = outcome.class {
                self.last_tool_failure = Some(class);
            }
            let repeats = self
                .stuck
                .observe(&call.name, &call.arguments, outcome.is_failure());
            if repeats >= self.options.stuck_after.max(2) {
                self.stuck.reset();
                failure = Some(Pending {
                    class: FailureClass::Logic,
                    trigger: Trigger::StuckLoop,
                    message: format!(
                        "stuck loop: the same failing {} call ran {repeats} times in a row",
                        call.name
                    ),
                    call: Some((call.name.clone(), call.arguments.clone())),
                });
            } else if let Some(class @ (FailureClass::Permission | FailureClass::System)) =
                outcome.class
                && !outcome.refused
            {
                failure = Some(Pending {
                    class,
                    trigger: Trigger::ToolFailure,
                    message: first_line(&outcome.text),
                    call: Some((call.name.clone(), call.arguments.clone())),
                });
            }
        }
        self.record(StepKind::Supervision, supervision.join("; "))
            .await?;
        if failure.is_none() {
            // Phase and checkpoint compressions run once every call of the step has its
            // result, so no compaction splits a call from its answer.
            for (level, trigger) in deferred {
                let built = self.build_context().await?;
                if compress_at(&self.compress_ctx(), &built, level, trigger)
                    .await?
                    .is_some()
                {
                    self.cache = None;
                }
            }
        }
        Ok(CallsEnd::Done(failure))
    }

    async fn answer_call(
        &self,
        call: &ToolCall,
        text: String,
        exit_code: Option<i32>,
        duration_ms: u64,
        class: Option<FailureClass>,
    ) -> Result<Message> {
        self.answer(call, text, exit_code, duration_ms, class, true)
            .await
    }

    /// Answers a call that was not run (or not to its end): cancelled, interrupted, rolled
    /// back, or skipped after an earlier failure.
    async fn answer_unrun(
        &self,
        call: &ToolCall,
        text: String,
        class: Option<FailureClass>,
    ) -> Result<Message> {
        self.answer(call, text, None, 0, class, false).await
    }

    async fn answer(
        &self,
        call: &ToolCall,
        text: String,
        exit_code: Option<i32>,
        duration_ms: u64,
        class: Option<FailureClass>,
        ran: bool,
    ) -> Result<Message> {
        let stored = dangling::answer(
            self.store(),
            self.conversation.id,
            self.execution.id,
            call,
            text,
        )
        .await?;
        self.emit(Event::MessageStored {
            seq: stored.seq,
            role: stored.role.as_str(),
        });
        self.emit(Event::ToolFinished {
            call_id: call.id.clone(),
            name: call.name.clone(),
            exit_code,
            duration_ms,
            class,
            ran,
        });
        Ok(stored)
    }

    /// Applies a todo_write call: the whole plan is replaced in one transaction.
    async fn todo_write(&mut self, call: &ToolCall) -> Result<(ToolOutcome, Option<Transitions>)> {
        let started = Instant::now();
        let before = self.plan().await?;
        let inputs = match plan::parse_todo_write(&call.arguments, &before) {
            Ok(inputs) => inputs,
            Err(message) => {
                return Ok((
                    ToolOutcome::failed(FailureClass::Data, &message, started.elapsed()),
                    None,
                ));
            }
        };
        let after = match self
            .store()
            .todos()
            .replace_plan(self.execution.id, &inputs)
            .await
        {
            Ok(after) => after,
            Err(
                e @ (decima_store::StoreError::InvalidInput(_)
                | decima_store::StoreError::NotFound { .. }),
            ) => {
                return Ok((
                    ToolOutcome::failed(FailureClass::Data, &e.to_string(), started.elapsed()),
                    None,
                ));
            }
            Err(e) => return Err(e.into()),
        };
        self.emit_plan(&after);
        let transitions = plan::transitions(&before, &after);
        Ok((
            ToolOutcome::ok(plan::render_plan(&after), started.elapsed()),
            Some(transitions),
        ))
    }

    /// Snapshots for started todos and passed checkpoints (now, before the next call changes
    /// the workspace), the compressions they call for (deferred to the end of the step), and
    /// the failure of a todo the model marked failed.
    async fn after_plan_change(
        &mut self,
        transitions: &Transitions,
        seq: i64,
    ) -> Result<(Option<Pending>, Vec<(CompressionLevel, &'static str)>)> {
        let plan = self.plan().await?;
        let mut compress = Vec::new();
        if !transitions.completed.is_empty() {
            self.auto_replan_used = false;
        }
        for todo in &transitions.started {
            self.take_snapshot(Some(todo), SnapshotReason::TodoStart, seq, &plan)
                .await?;
            self.last_tool_failure = None;
            self.stuck.reset();
        }
        for todo in &transitions.checkpoints {
            if self.options.checkpoint_compression {
                self.take_snapshot(Some(todo), SnapshotReason::Checkpoint, seq, &plan)
                    .await?;
                compress.push((CompressionLevel::Checkpoint, "checkpoint"));
            }
        }
        if self.options.phase_compression && !transitions.phases_done.is_empty() {
            compress.push((CompressionLevel::Phase, "phase"));
        }
        let pending = transitions.failed.first().map(|(todo, reason)| {
            let title = plan
                .iter()
                .find(|t| &t.id == todo)
                .map(|t| t.title.clone())
                .unwrap_or_default();
            Pending {
                class: self.last_tool_failure.unwrap_or(FailureClass::Logic),
                trigger: Trigger::TodoFailed,
                message: format!("the model marked \"{title}\" failed: {reason}"),
                call: None,
            }
        });
        Ok((pending, compress))
    }

    async fn take_snapshot(
        &self,
        todo: Option<&str>,
        reason: SnapshotReason,
        seq: i64,
        plan: &[Todo],
    ) -> Result<()> {
        let snapshot = self
            .checkpoints
            .take(self.store(), todo, reason, seq, plan)
            .await?;
        self.emit(Event::SnapshotTaken {
            snapshot_id: snapshot.id,
            todo_id: snapshot.todo_id,
            reason: reason.as_str(),
            message_seq: seq,
        });
        Ok(())
    }

    /// The failure path: record, roll back when the class says so, and wait for a choice (or
    /// take the one automatic replan a logic failure gets).
    async fn fail(&mut self, pending: Pending) -> Result<Flow> {
        let plan = self.plan().await?;
        let failed_todo = match pending.trigger {
            Trigger::TodoFailed => plan
                .iter()
                .find(|t| t.status == TodoStatus::Failed)
                .map(|t| t.id.clone()),
            _ => None,
        };
        let place = Place::of(&plan, failed_todo.as_deref());
        let causes = failure::likely_causes(&pending);
        warn!(
            class = %pending.class,
            trigger = pending.trigger.as_str(),
            todo = place.todo_id.as_deref().unwrap_or("-"),
            "failure"
        );
        let auto_replan = pending.class == FailureClass::Logic
            && pending.trigger != Trigger::StepBudget
            && !std::mem::replace(&mut self.auto_replan_used, true);
        if auto_replan {
            let recorded = self.record_failure(&pending, &place, &causes, None).await?;
            let resolved = self
                .store()
                .failures()
                .resolve(&recorded.id, Resolution::Replan)
                .await?;
            self.store()
                .events()
                .append(
                    Some(self.execution.id),
                    Some(self.conversation.id),
                    "failure.auto_replan",
                    &json!({ "failure_id": resolved.id }),
                )
                .await?;
            self.instant = Some(failure::render_for_model(
                &pending,
                &place,
                &causes,
                None,
                Resolution::Replan,
            ));
            self.stuck.reset();
            self.emit(Event::Recovered {
                failure_id: resolved.id,
                choice: Resolution::Replan.as_str(),
            });
            return Ok(Flow::Continue);
        }
        let rolls_back = matches!(
            pending.class,
            FailureClass::Data
                | FailureClass::Permission
                | FailureClass::System
                | FailureClass::Logic
        ) && pending.trigger != Trigger::StepBudget;
        let target = if rolls_back {
            rollback_target(self.store(), place.todo_id.as_deref()).await?
        } else {
            None
        };
        let rolled = match &target {
            Some(snapshot) => {
                let rolled = self
                    .checkpoints
                    .roll_back(self.store(), self.conversation.id, snapshot)
                    .await?;
                self.emit_plan(&self.plan().await?);
                Some(rolled)
            }
            None => None,
        };
        // Calls whose results the rollback removed get an answer that says so.
        for call in dangling::unanswered(self.store(), self.conversation.id).await? {
            let text = "[rolled back] this call's effects were undone by a rollback to the \
                        start of the todo"
                .to_owned();
            self.answer_unrun(&call, text, None).await?;
        }
        let recorded = self
            .record_failure(&pending, &place, &causes, rolled.as_ref())
            .await?;
        if let Some(rolled) = &rolled {
            self.emit(Event::RolledBack {
                failure_id: recorded.id.clone(),
                snapshot_id: rolled.snapshot_id.clone(),
                files_restored: rolled.files_restored,
                files_removed: rolled.files_removed,
                messages_removed: rolled.messages_removed,
            });
        }
        self.set_status(ExecutionStatus::AwaitingUser).await?;
        self.emit(Event::AwaitingChoice {
            failure_id: recorded.id.clone(),
            suggestions: suggestion_names(&recorded),
        });
        match self.session.choices.choose(&recorded).await {
            Some(choice) => self.apply_choice(&recorded, choice).await,
            None => {
                self.emit(Event::Finished {
                    execution_id: self.execution.id,
                    status: ExecutionStatus::AwaitingUser.as_str(),
                });
                Ok(Flow::Stop(Box::new(RunOutcome {
                    execution: self.execution.clone(),
                    answer: None,
                    waiting_on: Some(recorded),
                })))
            }
        }
    }

    async fn record_failure(
        &self,
        pending: &Pending,
        place: &Place,
        causes: &[String],
        rolled: Option<&RolledBack>,
    ) -> Result<Failure> {
        let suggestions: Vec<&str> = failure::suggestions(pending, rolled.is_some())
            .into_iter()
            .map(Resolution::as_str)
            .collect();
        let recorded = self
            .store()
            .failures()
            .record(&NewFailure {
                execution_id: self.execution.id,
                todo_id: place.todo_id.clone(),
                class: pending.class,
                message: pending.message.clone(),
                details: json!({
                    "trigger": pending.trigger.as_str(),
                    "place": place,
                    "likely_causes": causes,
                    "call": pending.call.as_ref().map(|(name, args)| json!({"name": name, "arguments": args})),
                    "step": self.steps_taken,
                }),
                snapshot_id: rolled.map(|r| r.snapshot_id.clone()),
                rolled_back: rolled
                    .map(|r| serde_json::to_value(r).unwrap_or_default())
                    .unwrap_or_else(|| json!({})),
                suggested_actions: json!(suggestions),
            })
            .await?;
        self.emit(Event::Failure {
            failure_id: recorded.id.clone(),
            class: recorded.class,
            message: recorded.message.clone(),
            alert: recorded.class == FailureClass::System,
        });
        Ok(recorded)
    }

    /// Applies the analyst's choice to a waiting failure, and says whether the loop goes on.
    async fn apply_choice(&mut self, failure: &Failure, choice: Resolution) -> Result<Flow> {
        let resolved = self.store().failures().resolve(&failure.id, choice).await?;
        self.store()
            .events()
            .append(
                Some(self.execution.id),
                Some(self.conversation.id),
                "failure.resolved",
                &json!({ "failure_id": resolved.id, "choice": choice.as_str() }),
            )
            .await?;
        self.emit(Event::Recovered {
            failure_id: resolved.id.clone(),
            choice: choice.as_str(),
        });
        if choice == Resolution::Abort {
            return self
                .finish_cancelled()
                .await
                .map(|o| Flow::Stop(Box::new(o)));
        }
        if self.execution.status != ExecutionStatus::Running {
            self.set_status(ExecutionStatus::Running).await?;
        }
        self.stuck.reset();
        let pending = Pending {
            class: failure.class,
            trigger: trigger_of(failure),
            message: failure.message.clone(),
            call: None,
        };
        let place: Place =
            serde_json::from_value(failure.details.get("place").cloned().unwrap_or_default())
                .unwrap_or_default();
        let rolled: Option<RolledBack> = if failure.snapshot_id.is_some() {
            serde_json::from_value(failure.rolled_back.clone()).ok()
        } else {
            None
        };
        let causes: Vec<String> = failure
            .details
            .get("likely_causes")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default();
        match choice {
            Resolution::Retry => {
                if pending.trigger == Trigger::StepBudget {
                    self.step_limit = self.steps_taken + self.options.max_steps.max(1);
                }
            }
            Resolution::Skip => {
                if let Some(todo) = &failure.todo_id {
                    let mut inputs = plan::as_inputs(&self.plan().await?);
                    for input in inputs.iter_mut().filter(|i| i.id.as_deref() == Some(todo)) {
                        input.status = TodoStatus::Skipped;
                        input.reason = None;
                    }
                    let after = self
                        .store()
                        .todos()
                        .replace_plan(self.execution.id, &inputs)
                        .await?;
                    self.emit_plan(&after);
                }
                if pending.trigger == Trigger::StepBudget {
                    self.step_limit = self.steps_taken + self.options.max_steps.max(1);
                }
            }
            Resolution::Replan => {
                if pending.trigger == Trigger::StepBudget {
                    self.step_limit = self.steps_taken + self.options.max_steps.max(1);
                }
            }
            Resolution::Abort => {}
        }
        self.instant = Some(failure::render_for_model(
            &pending,
            &place,
            &causes,
            rolled.as_ref(),
            choice,
        ));
        Ok(Flow::Continue)
    }

    /// After a crash: every call of the last answer without a stored result gets one that
    /// says it was interrupted. Nothing is run again.
    async fn answer_interrupted_calls(&mut self) -> Result<()> {
        let open = dangling::unanswered(self.store(), self.conversation.id).await?;
        if open.is_empty() {
            return Ok(());
        }
        let started = dangling::started_calls(self.store(), self.execution.id).await?;
        for call in open {
            let text = if started.contains(&call.id) {
                "[interrupted] Decima stopped while this call ran; it was not run again and its \
                 effect is unknown: check before you repeat it"
            } else {
                "[interrupted] Decima stopped before this call started; it did not run"
            };
            self.answer_unrun(&call, text.to_owned(), None).await?;
        }
        Ok(())
    }

    /// A todo marked in_progress whose snapshot a crash prevented gets one now.
    async fn snapshot_unsnapshotted_todos(&mut self) -> Result<()> {
        let plan = self.plan().await?;
        for todo in plan.iter().filter(|t| t.status == TodoStatus::InProgress) {
            if self
                .store()
                .snapshots()
                .latest_for_todo(&todo.id)
                .await?
                .is_none()
            {
                let seq = self.last_seq().await?;
                self.take_snapshot(Some(&todo.id), SnapshotReason::TodoStart, seq, &plan)
                    .await?;
            }
        }
        Ok(())
    }

    async fn last_seq(&self) -> Result<i64> {
        Ok(self
            .store()
            .messages()
            .page_before(self.conversation.id, 0, i64::MAX, 1)
            .await?
            .last()
            .map_or(0, |m| m.seq))
    }

    async fn finish_succeeded(&mut self, answer: String) -> Result<RunOutcome> {
        self.execution = self
            .store()
            .executions()
            .finish(
                self.execution.id,
                ExecutionStatus::Succeeded,
                Some(&answer),
                None,
            )
            .await?;
        info!(steps = self.steps_taken, "execution succeeded");
        self.emit(Event::Finished {
            execution_id: self.execution.id,
            status: ExecutionStatus::Succeeded.as_str(),
        });
        Ok(RunOutcome {
            execution: self.execution.clone(),
            answer: Some(answer),
            waiting_on: None,
        })
    }

    async fn finish_cancelled(&mut self) -> Result<RunOutcome> {
        // A cancellation between a stored answer and its results leaves calls open.
        for call in dangling::unanswered(self.store(), self.conversation.id).await? {
            self.answer_unrun(
                &call,
                "[not run] the run was cancelled before this call".into(),
                Some(FailureClass::Cancelled),
            )
            .await?;
        }
        self.execution = self
            .store()
            .executions()
            .finish(
                self.execution.id,
                ExecutionStatus::Cancelled,
                None,
                Some("cancelled"),
            )
            .await?;
        info!(steps = self.steps_taken, "execution cancelled");
        self.emit(Event::Finished {
            execution_id: self.execution.id,
            status: ExecutionStatus::Cancelled.as_str(),
        });
        Ok(RunOutcome {
            execution: self.execution.clone(),
            answer: None,
            waiting_on: None,
        })
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

fn trigger_of(failure: &Failure) -> Trigger {
    match failure.details.get("trigger").and_then(|t| t.as_str()) {
        Some("todo_failed") => Trigger::TodoFailed,
        Some("stuck_loop") => Trigger::StuckLoop,
        Some("model_request") => Trigger::ModelRequest,
        Some("step_budget") => Trigger::StepBudget,
        _ => Trigger::ToolFailure,
    }
}

fn suggestion_names(failure: &Failure) -> Vec<String> {
    failure
        .suggested_actions
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn ms(outcome: &ToolOutcome) -> u64 {
    u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX)
}

fn status_word(outcome: &ToolOutcome) -> String {
    match (outcome.class, outcome.exit_code) {
        (Some(class), _) => format!("failed ({class})"),
        (None, Some(0)) => "exit 0".to_owned(),
        (None, Some(code)) => format!("exit {code}"),
        (None, None) => "ok".to_owned(),
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
