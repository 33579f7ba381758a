//! Progress reports. The runtime never prints: it emits typed events through one sink, which
//! the CLI turns into terminal output (or JSON lines) and the desktop app sends to the webview
//! as they are: one type, one wire shape, and TypeScript types derived from it (the `specta`
//! feature), so no copy of it exists to drift.
//!
//! Numbers the window reads as `number` are typed `f64` for TypeScript: a seq, a count of bytes
//! or microseconds stays far below 2^53, where a JavaScript number is exact.

use decima_core::context::CompressionLevel;
use decima_core::{ConversationId, ExecutionId, FailureClass, RiskLevel, Role};
use decima_store::{CompactionTrigger, ExecutionStatus, Resolution, SnapshotReason, TodoStatus};
use serde::Serialize;

use crate::review::{ReviewScope, ReviewTrigger, ReviewType};

/// How an execution came to run: started by a task, continued after a failure's choice, or
/// picked up again after its process stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, strum::IntoStaticStr, strum::Display)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum RunStart {
    /// A new execution for a task.
    Run,
    /// After a choice on its failure.
    Recover,
    /// After its process stopped (a crash, a closed window).
    Resume,
}

impl RunStart {
    /// The name logs and the CLI show.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Something the runtime did or is doing, in the order it happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
// The container's name is not in the JSON; it names the TypeScript type `RunEvent`, where
// `Event` is the DOM's.
#[serde(tag = "type", rename = "RunEvent", rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum Event {
    /// A chat turn started in this conversation (new or existing).
    TurnStarted {
        /// The conversation the turn belongs to.
        conversation_id: ConversationId,
    },
    /// A piece of the answer's visible text.
    TextDelta {
        /// The text.
        text: String,
    },
    /// A piece of the model's reasoning.
    ReasoningDelta {
        /// The text.
        text: String,
    },
    /// Everything streamed since the last final event is void: a retry starts over.
    Discarded {
        /// Why.
        reason: String,
    },
    /// A message was stored.
    MessageStored {
        /// Its seq.
        #[cfg_attr(feature = "specta", specta(type = f64))]
        seq: i64,
        /// Who said it.
        role: Role,
    },
    /// A compaction was applied, automatically or on request.
    Compacted {
        /// The stored compaction, for undo.
        compaction_id: String,
        /// How far it compressed.
        level: CompressionLevel,
        /// What set it off.
        trigger: CompactionTrigger,
        /// Tokens the history needed before.
        tokens_before: u32,
        /// And after.
        tokens_after: u32,
    },
    /// An MCP call waits for the analyst's approval (no rule approved it).
    ApprovalAsked {
        /// The call.
        call_id: String,
        /// The server.
        server: String,
        /// The server's own name for the tool.
        tool: String,
        /// The call's arguments as the model sent them.
        arguments: String,
        /// The server says the tool only reads.
        read_only: Option<bool>,
        /// The server says the tool may destroy data.
        destructive: Option<bool>,
    },
    /// Something the person should know that did not stop the operation.
    Warning {
        /// One line.
        message: String,
    },
    /// An agent execution started or continued (after a choice, or resumed).
    ExecutionStarted {
        /// The execution.
        execution_id: ExecutionId,
        /// Its conversation.
        conversation_id: ConversationId,
        /// The directory its tools work in.
        workspace: String,
        /// How it came to run.
        how: RunStart,
    },
    /// The context a step is about to send: every layer, against the input room.
    ContextUsage {
        /// Usage as a fraction of the input room.
        usage: f64,
        /// Tokens the request holds (model tokens).
        used: u32,
        /// The input room (window minus the output reserve).
        input_room: u32,
        /// Tokens per layer, pending included.
        layers: Vec<LayerUsage>,
    },
    /// A tool call is about to run.
    ToolStarted {
        /// The call's id.
        call_id: String,
        /// The tool.
        name: String,
        /// Its arguments, as the model wrote them.
        arguments: String,
    },
    /// A tool call finished, failed or was answered without running.
    ToolFinished {
        /// The call's id.
        call_id: String,
        /// The tool.
        name: String,
        /// The command's exit code, for shell.
        exit_code: Option<i32>,
        /// Wall time.
        #[cfg_attr(feature = "specta", specta(type = f64))]
        duration_ms: u64,
        /// The failure class, when the call failed.
        class: Option<FailureClass>,
        /// False when the call was answered without running (to its end): cancelled,
        /// interrupted by a crash, rolled back, or skipped after an earlier failure.
        ran: bool,
        /// Images the tool returned, kept with its result (the window shows them).
        images: u32,
    },
    /// The plan changed (todo_write, a rollback, a skip).
    TodosChanged {
        /// The whole plan after the change.
        todos: Vec<TodoView>,
    },
    /// A workspace snapshot was taken.
    SnapshotTaken {
        /// The stored snapshot's id.
        snapshot_id: String,
        /// The todo it belongs to.
        todo_id: Option<String>,
        /// Why it was taken.
        reason: SnapshotReason,
        /// The last message seq it covers.
        #[cfg_attr(feature = "specta", specta(type = f64))]
        message_seq: i64,
    },
    /// Something failed and took the failure path.
    Failure {
        /// The stored failure report.
        failure_id: String,
        /// Its class.
        class: FailureClass,
        /// What happened, in one line.
        message: String,
        /// A system failure (the sandbox, the disk, the database): the person should look now,
        /// whatever they choose.
        alert: bool,
    },
    /// The workspace, the plan and the history went back to a snapshot.
    RolledBack {
        /// The failure that caused it.
        failure_id: String,
        /// The snapshot restored.
        snapshot_id: String,
        /// Files written back.
        #[cfg_attr(feature = "specta", specta(type = f64))]
        files_restored: u64,
        /// Files created since the snapshot and removed.
        #[cfg_attr(feature = "specta", specta(type = f64))]
        files_removed: u64,
        /// Messages soft-deleted.
        #[cfg_attr(feature = "specta", specta(type = f64))]
        messages_removed: u64,
    },
    /// The execution waits for the person to pick one of the choices the failure offers.
    AwaitingChoice {
        /// The execution that waits.
        execution_id: ExecutionId,
        /// The failure to resolve.
        failure_id: String,
        /// The choices it offers, best first: the only ones it accepts.
        suggestions: Vec<Resolution>,
    },
    /// A choice was taken (by the person or automatically) and the run goes on.
    Recovered {
        /// The failure resolved.
        failure_id: String,
        /// The choice taken, one the failure offered.
        choice: Resolution,
    },
    /// A step ended: what it cost, and how much of that was waiting on the model and tools.
    StepTimed {
        /// The step's number in the execution.
        step: u32,
        /// Wall time of the whole step.
        #[cfg_attr(feature = "specta", specta(type = f64))]
        total_us: u64,
        /// Waiting for the model's answer.
        #[cfg_attr(feature = "specta", specta(type = f64))]
        model_us: u64,
        /// Running tools.
        #[cfg_attr(feature = "specta", specta(type = f64))]
        tools_us: u64,
        /// The runtime's own cost: building the context, storing, recording.
        #[cfg_attr(feature = "specta", specta(type = f64))]
        overhead_us: u64,
    },
    /// A subagent was spawned and started (at any depth below the run that emits it).
    SubagentStarted {
        /// The execution that spawned it.
        parent_id: ExecutionId,
        /// The subagent's execution.
        execution_id: ExecutionId,
        /// Its own conversation, where its messages are.
        conversation_id: ConversationId,
        /// Its depth: 1 for a child of the top-level run.
        depth: u32,
        /// What it was asked to do.
        task: String,
    },
    /// A subagent ended or stopped.
    SubagentFinished {
        /// The execution that spawned it.
        parent_id: ExecutionId,
        /// The subagent's execution.
        execution_id: ExecutionId,
        /// succeeded, failed, cancelled or interrupted.
        status: ExecutionStatus,
    },
    /// A tenth-man review started.
    ReviewStarted {
        /// The conversation reviewed.
        conversation_id: ConversationId,
        /// The execution reviewed, if one.
        execution_id: Option<ExecutionId>,
        /// What asked for it.
        trigger: ReviewTrigger,
        /// What part of the history it reads.
        mode: ReviewScope,
        /// How deep it goes.
        review_type: ReviewType,
    },
    /// A tenth-man review is stored (or was found in the cache).
    ReviewFinished {
        /// The stored review.
        review_id: String,
        /// How much it thinks is wrong.
        risk_level: RiskLevel,
        /// How many findings it raised.
        findings: u32,
        /// Served from the cache: no request was made.
        cached: bool,
        /// A final review that contests the run's result.
        contested: bool,
    },
    /// The execution ended or stopped: the last event of a run.
    Finished {
        /// The execution.
        execution_id: ExecutionId,
        /// succeeded, failed, cancelled, interrupted or awaiting_user.
        status: ExecutionStatus,
    },
}

/// One layer of the context meter.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct LayerUsage {
    /// The layer's name (system_constants, global_summary, ..., pending).
    pub name: String,
    /// Its tokens, in model tokens.
    pub tokens: u32,
}

/// A todo as events and the execution view show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TodoView {
    /// Its id, for todo_write updates.
    pub id: String,
    /// What it is.
    pub title: String,
    /// Where it stands.
    pub status: TodoStatus,
    /// Its phase.
    pub phase: Option<String>,
    /// Whether finishing it takes a checkpoint.
    pub checkpoint: bool,
    /// Whether it stays in the session context verbatim.
    pub pinned: bool,
    /// Why it failed or was skipped.
    pub reason: Option<String>,
}

impl From<&decima_store::Todo> for TodoView {
    fn from(t: &decima_store::Todo) -> Self {
        Self {
            id: t.id.clone(),
            title: t.title.clone(),
            status: t.status,
            phase: t.phase.clone(),
            checkpoint: t.checkpoint,
            pinned: t.pinned,
            reason: t.reason.clone(),
        }
    }
}

/// Where events go. Implementations must be cheap: events are emitted from the streaming path.
pub trait EventSink: Send + Sync {
    /// Receives one event.
    fn emit(&self, event: Event);
}

/// A sink that drops everything, for callers that only want the result.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoEvents;

impl EventSink for NoEvents {
    fn emit(&self, _event: Event) {}
}

/// A sink that keeps every event, for tests and for callers that replay them later.
#[derive(Debug, Default)]
pub struct CollectEvents {
    events: std::sync::Mutex<Vec<Event>>,
}

impl CollectEvents {
    /// Everything emitted so far.
    pub fn take(&self) -> Vec<Event> {
        match self.events.lock() {
            Ok(mut events) => std::mem::take(&mut *events),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        }
    }
}

impl EventSink for CollectEvents {
    fn emit(&self, event: Event) {
        match self.events.lock() {
            Ok(mut events) => events.push(event),
            Err(poisoned) => poisoned.into_inner().push(event),
        }
    }
}
