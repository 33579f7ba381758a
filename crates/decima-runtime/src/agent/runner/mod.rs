//! The loop itself. Each step: build the context through the pipeline (compressing first when
//! a threshold is crossed), stream the answer, store it, run its tool calls in order and store
//! each result, then check the budget. Every write happens before the next model call.
//!
//! This module holds the runner's state, by lifetime (the run's in [`Runner`], the step's and
//! the todo's in [`Turn`]), and the step loop. Beside it: [`entry`] (starting, recovering and
//! resuming an execution), [`setup`] (making a runner), and the parts of a step: [`model`] (one
//! model call and its context), [`calls`] (tool calls and what a plan change sets off),
//! [`recovery`] (the failure path and the analyst's choice), [`resume`] (what a resumed
//! execution repairs first), [`records`] (what a step writes), [`finish`] (how an execution
//! ends), [`review`] (the tenth man inside a run) and [`spawn`] (subagents).

mod calls;
mod entry;
mod figures;
mod finish;
mod gates;
mod model;
mod plan_tool;
mod records;
mod recovery;
mod resume;
mod review;
mod setup;
mod spawn;
mod step;
mod todo_state;
mod tool_search;
mod workspace_changes;

pub(super) use entry::{recover, resume, start, waiting_failure};
pub(super) use recovery::not_offered;

use std::sync::Arc;

use decima_core::context::ExecutionHistoryManager;
use decima_core::prompt::Preset;
use decima_core::{FailureClass, Message, NewMessage, Role};
use decima_llm::ProviderConfig;
use decima_llm::tokens::Calibration;
use decima_store::{
    Conversation, EndedBy, Execution, ExecutionStatus, SnapshotReason, Store, Todo,
};
use records::Unfinished;
use tracing::{Instrument as _, info_span, warn};

use super::checkpoint::Checkpoints;
use super::failure::{Pending, Trigger};
use super::options::RunOptions;
use super::{RunOutcome, Session};
use crate::context::{Loaded, Scale};
use crate::error::{Result, RuntimeError};
use crate::events::{Event, RunStart, TodoView};
use crate::lease::Lease;
use crate::memo::{MemoCounter, ModelMemo, ParagraphMemo};
use crate::settings::WindowSettings;
use crate::tools::Registry;
use step::Step;
use todo_state::TodoState;

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
    /// Where its model calls go.
    link: ModelLink,
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
    /// Counting in the model's tokens.
    counting: TokenCounting,
    /// The tools offered, as sent.
    tools: Vec<decima_llm::ToolSpec>,
    /// Images of the conversation's tool results that the model is shown (by the call each
    /// result answers): attached to those results in every request that carries them.
    shown_images: std::collections::HashMap<String, Vec<decima_core::ImagePart>>,
    /// The workspace as the last listing found it, to tell what a call wrote.
    files: tokio::sync::Mutex<Option<workspace_changes::Listing>>,
    /// What a call passes before it runs.
    gates: Gates,
    /// The seq of each step's answer, by step: which steps the request still shows verbatim.
    step_answers: std::collections::HashMap<u32, i64>,
    /// The failure path's state for the todo in progress.
    todo: TodoState,
    /// The window kept between steps.
    window_cache: WindowCache,
    /// What one step leaves for the next.
    carried: Carried,
    _lease: Lease,
}

/// What one step leaves for the next.
#[derive(Default)]
struct Carried {
    /// Failure reports, review digests and notes on the last answer, for the next model call
    /// only: cleared once it is answered.
    instant_context: Option<String>,
    /// Answers cut by the output cap in a row: the second ends in the failure path.
    cut_in_a_row: u32,
    /// The figures of the answer that no source holds, for the failure about to be recorded.
    unlinked: Vec<crate::agent::report::UnlinkedFigure>,
}

/// Where the run's model calls go: the provider's settings, its client, and its prices.
struct ModelLink {
    config: ProviderConfig,
    /// The provider every model call of the run goes to, with its connections.
    provider: Arc<dyn decima_llm::Provider>,
    /// What the provider charges, for each call's estimated cost; `None` without prices.
    prices: Option<decima_llm::Prices>,
}

/// Counting in the model's tokens: the calibration learned from the server's counts, the
/// scale it gives, and the counts kept so that no text is counted twice.
struct TokenCounting {
    calibration: Calibration,
    scale: Scale,
    /// The model's counts of messages already counted in earlier steps.
    model_memo: ModelMemo,
    /// The store counter's counts of the session context's paragraphs.
    paragraphs: ParagraphMemo,
    /// The model's count of what every request carries besides its messages (the tools).
    request_base: u32,
}

impl ModelLink {
    /// The link to `config`'s provider, whose client is made once for the whole run.
    fn connect(config: ProviderConfig, prices: Option<decima_llm::Prices>) -> Result<Self> {
        Ok(Self {
            provider: crate::model_call::connect(&config)?,
            prices,
            config,
        })
    }
}

impl TokenCounting {
    /// Counting that starts from the calibration learned so far and counts nothing twice.
    fn new(
        calibration: Calibration,
        model_counter: Arc<dyn decima_core::TokenCounter>,
        request_base: u32,
    ) -> Self {
        Self {
            scale: Scale::new(calibration.factor),
            calibration,
            model_memo: ModelMemo::new(model_counter),
            paragraphs: ParagraphMemo::default(),
            request_base,
        }
    }
}

/// What a call passes before it runs, beyond its approval: the risky calls the tenth man held.
#[derive(Default)]
struct Gates {
    /// Risky calls the tenth man held once: the same call again runs.
    risky_calls_held: std::sync::Mutex<std::collections::HashSet<(String, String)>>,
}

/// The window kept between steps: what the last step read from the store, and the messages
/// this runner stored since, so a step does not read its window from the store again.
#[derive(Default)]
struct WindowCache {
    /// What the last step read, brought up to date each step.
    cached: Option<CachedContext>,
    /// The messages stored since the last step read the store, as stored: the next step takes
    /// them as they are instead of reading them back.
    stored_since: std::sync::Mutex<Vec<Message>>,
}

impl WindowCache {
    /// The history changed under the window (a compaction, a rollback): the next step reads it
    /// again.
    fn forget(&mut self) {
        self.cached = None;
    }

    /// Notes a message this runner stored, for the next step's refresh.
    fn note_stored(&self, message: &Message) {
        if let Ok(mut since) = self.stored_since.lock() {
            since.push(message.clone());
        }
    }

    /// The messages stored since the last step read, once.
    fn take_stored(&self) -> Vec<Message> {
        match self.stored_since.lock() {
            Ok(mut since) => std::mem::take(&mut *since),
            Err(_) => Vec::new(),
        }
    }
}

/// The step context kept between steps.
struct CachedContext {
    loaded: Loaded,
    memo: MemoCounter,
}

impl<'s, 'a> Runner<'s, 'a> {
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
            provider = %self.link.config.name,
            model = %self.link.config.model,
        )
    }

    fn store(&self) -> &'s Store {
        self.session.store
    }

    fn emit(&self, event: Event) {
        self.session.events.emit(event);
    }

    fn started(&self, how: RunStart) {
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

    /// Snapshots the workspace before the run's first call, its inputs as they were: what the
    /// tenth man recomputes the answer's figures from, in a fresh sandbox. Only when the run's
    /// snapshots hold its workspace.
    async fn snapshot_inputs(&self, seq: i64) -> Result<()> {
        if !self.checkpoints.holds_workspace() {
            return Ok(());
        }
        self.take_snapshot(None, SnapshotReason::RunStart, seq, &[])
            .await
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
        self.window_cache.note_stored(message);
        crate::review::digest_cache::warm_when_full(
            self.store(),
            self.conversation.id,
            message.seq,
        );
        self.emit(Event::MessageStored {
            seq: message.seq,
            role: message.role,
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
                        status: ExecutionStatus::Interrupted,
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
            // On the heap: a step's future is large, and a subagent's run is polled inside its
            // parent's step, so inline it would cost the stack of every level twice.
            if let Stepped::Ended(outcome) = Box::pin(self.step().instrument(span)).await? {
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
        let mut step = Step::start();
        let completion = match self.model_step(&mut step).await {
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
        let Some(answer) = self.store_answer(&mut step, &completion).await? else {
            return Ok(Stepped::Next);
        };
        match self.unfinished(&step, crate::answer::ending(&completion), &answer) {
            Unfinished::No => {}
            Unfinished::AskAgain => return Ok(Stepped::Next),
            Unfinished::Failed(pending) => return self.fail(*pending).await.map(Stepped::from),
        }
        if answer.tool_calls.is_empty() {
            self.step_timed(&step);
            // An answer that leaves the todo of the automatic replan failed ends nothing.
            if let Some(pending) = self.replan_not_taken().await? {
                return self.fail(pending).await.map(Stepped::from);
            }
            if let Some(pending) = self.unlinked_figures(&answer).await? {
                return self.fail(pending).await.map(Stepped::from);
            }
            return self
                .finish_succeeded(answer.content)
                .await
                .map(Stepped::ended);
        }
        let end = self.run_calls(&mut step, &answer).await?;
        self.step_timed(&step);
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
