//! What a run reports to the webview: the runtime's events, one for one, in the frontend's
//! shape (camelCase fields, ids as strings), so the bindings type every one of them.

use decima_core::context::CompressionLevel;
use decima_core::{FailureClass, RiskLevel, Role};
use decima_runtime::Event;
use decima_store::{CompactionTrigger, ExecutionStatus, TodoStatus};
use serde::Serialize;
use specta::Type;

/// One layer's share of the context, as a run reports it.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct LayerTokens {
    /// The layer.
    pub name: String,
    /// Its tokens.
    pub tokens: u32,
}

/// A todo of the plan, as the todo panel shows it.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct TodoItem {
    /// Its id in the plan.
    pub id: String,
    /// What it is.
    pub title: String,
    /// Where it stands.
    pub status: TodoStatus,
    /// The phase it belongs to.
    pub phase: Option<String>,
    /// Completing it takes a checkpoint.
    pub checkpoint: bool,
    /// Kept in every context.
    pub pinned: bool,
    /// Why it failed or was skipped.
    pub reason: Option<String>,
}

impl From<&decima_runtime::events::TodoView> for TodoItem {
    fn from(t: &decima_runtime::events::TodoView) -> Self {
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

/// A run's progress, in the order it happened. `runEnded` is always the last one.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum RunEvent {
    /// A piece of the answer's text.
    TextDelta {
        /// The text.
        text: String,
        /// When Rust forwarded it, in milliseconds since the epoch: the window measures how
        /// long a delta takes to reach the screen against it.
        at_ms: f64,
    },
    /// A piece of the model's reasoning.
    ReasoningDelta {
        /// The text.
        text: String,
    },
    /// What streamed since the last stored message is void (a retry starts over).
    Discarded {
        /// Why.
        reason: String,
    },
    /// A message was stored: the list reloads its tail.
    MessageStored {
        /// Its seq.
        seq: u32,
        /// Its role.
        role: Role,
    },
    /// The context was compressed.
    Compacted {
        /// The compaction, for undo.
        compaction_id: String,
        /// How far it compressed.
        level: CompressionLevel,
        /// What set it off.
        trigger: CompactionTrigger,
        /// Tokens before.
        tokens_before: u32,
        /// Tokens after.
        tokens_after: u32,
    },
    /// Something the analyst should know that did not stop the run.
    Warning {
        /// One line.
        message: String,
    },
    /// An MCP call waits for the analyst: allow it once, for this conversation, always, or
    /// refuse it (`run_approve`).
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
    /// The run's execution exists.
    ExecutionStarted {
        /// The execution.
        execution_id: String,
        /// Its conversation.
        conversation_id: String,
        /// Where its tools work.
        workspace: String,
        /// started, resumed or recovered.
        how: String,
    },
    /// How full the next request is.
    ContextUsage {
        /// Of the input room, 0..1 (above 1 when over).
        usage: f64,
        /// Tokens used.
        used: u32,
        /// Tokens the prompt may use.
        input_room: u32,
        /// Per layer.
        layers: Vec<LayerTokens>,
    },
    /// A tool call started.
    ToolStarted {
        /// The call.
        call_id: String,
        /// The tool.
        name: String,
        /// Its JSON arguments, as the model wrote them.
        arguments: String,
    },
    /// A tool call ended.
    ToolFinished {
        /// The call.
        call_id: String,
        /// The tool.
        name: String,
        /// The command's exit code, for shell.
        exit_code: Option<i32>,
        /// How long it ran.
        duration_ms: u32,
        /// The failure class, when it failed.
        class: Option<FailureClass>,
        /// False when it was answered without running.
        ran: bool,
        /// Images the tool returned: the card shows them (`tool_result_images`).
        images: u32,
    },
    /// The plan changed.
    TodosChanged {
        /// The whole plan.
        todos: Vec<TodoItem>,
    },
    /// The workspace was snapshotted.
    SnapshotTaken {
        /// The snapshot.
        snapshot_id: String,
        /// The todo it belongs to.
        todo_id: Option<String>,
        /// todo_started, checkpoint or manual.
        reason: String,
    },
    /// A failure was recorded.
    Failure {
        /// The failure.
        failure_id: String,
        /// Its class.
        class: FailureClass,
        /// What happened.
        message: String,
    },
    /// A rollback ran.
    RolledBack {
        /// The failure it answered.
        failure_id: String,
        /// Files put back.
        files_restored: u32,
        /// Files removed.
        files_removed: u32,
        /// Messages undone.
        messages_removed: u32,
    },
    /// The run waits for the analyst's choice on this failure.
    AwaitingChoice {
        /// The execution that waits.
        execution_id: String,
        /// The failure.
        failure_id: String,
    },
    /// A choice was applied.
    Recovered {
        /// The failure.
        failure_id: String,
        /// The choice taken, one the failure offered: retry, skip, replan, rollback or abort.
        choice: String,
    },
    /// A subagent started.
    SubagentStarted {
        /// Its parent's execution.
        parent_id: String,
        /// Its execution.
        execution_id: String,
        /// Its conversation.
        conversation_id: String,
        /// 1 for a child of the top run.
        depth: u32,
        /// What it was asked.
        task: String,
    },
    /// A subagent ended.
    SubagentFinished {
        /// Its parent's execution.
        parent_id: String,
        /// Its execution.
        execution_id: String,
        /// How it ended.
        status: ExecutionStatus,
    },
    /// A tenth-man review started.
    ReviewStarted {
        /// tool, system or user.
        trigger: String,
    },
    /// A tenth-man review ended.
    ReviewFinished {
        /// The review.
        review_id: String,
        /// How much it thinks is wrong.
        risk_level: RiskLevel,
        /// How many findings.
        findings: u32,
        /// The final review disagrees with the answer.
        contested: bool,
    },
    /// An execution (the run's, or a subagent's) ended or stopped to wait.
    Finished {
        /// The execution.
        execution_id: String,
        /// Its status.
        status: ExecutionStatus,
    },
    /// The run is over: nothing follows.
    RunEnded {
        /// The execution's status, when it got that far.
        status: Option<ExecutionStatus>,
        /// The final answer, when it succeeded.
        answer: Option<String>,
        /// Why it could not go on, when it ended in an error.
        error: Option<crate::AppError>,
    },
}

/// Wall-clock milliseconds since the epoch; 0 on a clock set before 1970.
fn now_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

fn small(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl RunEvent {
    /// The webview's form of a runtime event; `None` for what it does not show (step timings,
    /// the chat turn marker).
    #[allow(
        clippy::too_many_lines,
        reason = "one arm per runtime event: this mirror goes when the window receives the \
                  runtime's Event itself"
    )]
    pub fn from_runtime(event: Event, execution: Option<&str>) -> Option<Self> {
        Some(match event {
            Event::TurnStarted { .. } | Event::StepTimed { .. } => return None,
            Event::TextDelta { text } => Self::TextDelta {
                text,
                at_ms: now_ms(),
            },
            Event::ReasoningDelta { text } => Self::ReasoningDelta { text },
            Event::Discarded { reason } => Self::Discarded { reason },
            Event::MessageStored { seq, role } => Self::MessageStored {
                seq: u32::try_from(seq).unwrap_or(u32::MAX),
                role,
            },
            Event::Compacted {
                compaction_id,
                level,
                trigger,
                tokens_before,
                tokens_after,
            } => Self::Compacted {
                compaction_id,
                level,
                trigger,
                tokens_before,
                tokens_after,
            },
            Event::Warning { message } => Self::Warning { message },
            Event::ApprovalAsked {
                call_id,
                server,
                tool,
                arguments,
                read_only,
                destructive,
            } => Self::ApprovalAsked {
                call_id,
                server,
                tool,
                arguments,
                read_only,
                destructive,
            },
            Event::ExecutionStarted {
                execution_id,
                conversation_id,
                workspace,
                how,
            } => Self::ExecutionStarted {
                execution_id: execution_id.to_string(),
                conversation_id: conversation_id.to_string(),
                workspace,
                how: how.to_owned(),
            },
            Event::ContextUsage {
                usage,
                used,
                input_room,
                layers,
            } => Self::ContextUsage {
                usage,
                used,
                input_room,
                layers: layers
                    .into_iter()
                    .map(|l| LayerTokens {
                        name: l.name,
                        tokens: small(l.tokens),
                    })
                    .collect(),
            },
            Event::ToolStarted {
                call_id,
                name,
                arguments,
            } => Self::ToolStarted {
                call_id,
                name,
                arguments,
            },
            Event::ToolFinished {
                call_id,
                name,
                exit_code,
                duration_ms,
                class,
                ran,
                images,
            } => Self::ToolFinished {
                call_id,
                name,
                exit_code,
                duration_ms: small(duration_ms),
                class,
                ran,
                images: u32::try_from(images).unwrap_or(u32::MAX),
            },
            Event::TodosChanged { todos } => Self::TodosChanged {
                todos: todos.iter().map(TodoItem::from).collect(),
            },
            Event::SnapshotTaken {
                snapshot_id,
                todo_id,
                reason,
                ..
            } => Self::SnapshotTaken {
                snapshot_id,
                todo_id,
                reason: reason.to_owned(),
            },
            Event::Failure {
                failure_id,
                class,
                message,
                ..
            } => Self::Failure {
                failure_id,
                class,
                message,
            },
            Event::RolledBack {
                failure_id,
                files_restored,
                files_removed,
                messages_removed,
                ..
            } => Self::RolledBack {
                failure_id,
                files_restored: small(files_restored),
                files_removed: small(files_removed),
                messages_removed: small(messages_removed),
            },
            Event::AwaitingChoice { failure_id, .. } => Self::AwaitingChoice {
                execution_id: execution.unwrap_or_default().to_owned(),
                failure_id,
            },
            Event::Recovered { failure_id, choice } => Self::Recovered {
                failure_id,
                choice: choice.to_owned(),
            },
            Event::SubagentStarted {
                parent_id,
                execution_id,
                conversation_id,
                depth,
                task,
            } => Self::SubagentStarted {
                parent_id: parent_id.to_string(),
                execution_id: execution_id.to_string(),
                conversation_id: conversation_id.to_string(),
                depth,
                task,
            },
            Event::SubagentFinished {
                parent_id,
                execution_id,
                status,
            } => Self::SubagentFinished {
                parent_id: parent_id.to_string(),
                execution_id: execution_id.to_string(),
                status,
            },
            Event::ReviewStarted { trigger, .. } => Self::ReviewStarted {
                trigger: trigger.to_owned(),
            },
            Event::ReviewFinished {
                review_id,
                risk_level,
                findings,
                contested,
                ..
            } => Self::ReviewFinished {
                review_id,
                risk_level,
                findings: u32::try_from(findings).unwrap_or(u32::MAX),
                contested,
            },
            Event::Finished {
                execution_id,
                status,
            } => Self::Finished {
                execution_id: execution_id.to_string(),
                status,
            },
        })
    }
}
