//! Progress reports. The runtime never prints: it emits typed events through one sink, which
//! the CLI turns into terminal output and the desktop app forwards to the webview.

use decima_core::context::CompressionLevel;
use decima_core::{ConversationId, ExecutionId, FailureClass, RiskLevel, Role};
use decima_store::{CompactionTrigger, ExecutionStatus, TodoStatus};
use serde::Serialize;

/// Something the runtime did or is doing, in the order it happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
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
        /// run, recover or resume.
        how: &'static str,
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
        duration_ms: u64,
        /// The failure class, when the call failed.
        class: Option<FailureClass>,
        /// False when the call was answered without running (to its end): cancelled,
        /// interrupted by a crash, rolled back, or skipped after an earlier failure.
        ran: bool,
        /// Images the tool returned, kept with its result (the window shows them).
        images: usize,
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
        /// todo_start or checkpoint.
        reason: &'static str,
        /// The last message seq it covers.
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
        files_restored: u64,
        /// Files created since the snapshot and removed.
        files_removed: u64,
        /// Messages soft-deleted.
        messages_removed: u64,
    },
    /// The execution waits for the person to pick one of the choices the failure offers.
    AwaitingChoice {
        /// The failure to resolve.
        failure_id: String,
        /// What the runtime suggests, best first.
        suggestions: Vec<String>,
    },
    /// A choice was taken (by the person or automatically) and the run goes on.
    Recovered {
        /// The failure resolved.
        failure_id: String,
        /// The choices the failure offers, best first: retry, skip, replan, rollback or abort.
        choice: &'static str,
    },
    /// A step ended: what it cost, and how much of that was waiting on the model and tools.
    StepTimed {
        /// The step's number in the execution.
        step: u32,
        /// Wall time of the whole step.
        total_us: u64,
        /// Waiting for the model's answer.
        model_us: u64,
        /// Running tools.
        tools_us: u64,
        /// The runtime's own cost: building the context, storing, recording.
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
        /// tool, system or user.
        trigger: &'static str,
        /// full_history, recent_messages or specific_content.
        mode: &'static str,
        /// quick or full.
        review_type: &'static str,
    },
    /// A tenth-man review is stored (or was found in the cache).
    ReviewFinished {
        /// The stored review.
        review_id: String,
        /// How much it thinks is wrong.
        risk_level: RiskLevel,
        /// How many findings it raised.
        findings: usize,
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
pub struct LayerUsage {
    /// The layer's name (system_constants, global_summary, ..., pending).
    pub name: String,
    /// Its tokens, in model tokens.
    pub tokens: u64,
}

/// A todo as events and the execution view show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
