//! The shapes the webview receives. They are exported to TypeScript, so field names follow the
//! frontend's camelCase and times are RFC 3339 strings rather than integers JavaScript would
//! have to guess the unit of.

mod compression;
mod execution;
mod figures;
mod run_update;
mod settings;

pub use compression::{CompactionMarker, CompressionPreview, SummaryPreview};
pub use execution::{
    AnsweredFailure, ExecutionView, FailureReport, FindingView, PlanRollbackView, ReviewView,
    TodoChangesView,
};
pub use figures::FiguresView;
pub use run_update::RunUpdate;
pub use settings::{
    DatabaseView, EngineChoiceView, ExportView, ImageBuildEvent, McpCheckView, McpServerOptions,
    McpServerView, McpSwitchView, McpToolView, PresetView, PricesView, ProbeFailure,
    ProviderModels, ProviderName, ProviderPresetView, ProviderProbe, ProviderView, ReportView,
    SandboxImageView, SandboxStatus, StoreChange, ThresholdsView, WorkbenchSettings,
};

use decima_core::{Message, Role};
use decima_store::Conversation;
use serde::{Deserialize, Serialize};
use specta::Type;

/// What keeps a conversation busy, for the composer's disabled Send and its reason.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ConversationBusy {
    /// `running`, `awaiting_user`, `chat` or `compression`.
    pub kind: String,
    /// The execution, for the first two.
    pub execution_id: Option<String>,
    /// Since when (RFC 3339, UTC), when known.
    pub since: Option<String>,
    /// When a chat turn's or compression's claim lapses if its process died (RFC 3339, UTC).
    pub expires_at: Option<String>,
    /// The reason in English, as the runtime words it (the UI words its own).
    pub message: String,
}

impl From<&decima_store::Busy> for ConversationBusy {
    fn from(busy: &decima_store::Busy) -> Self {
        use decima_store::Holder;
        let message = busy.to_string();
        match &busy.holder {
            Holder::Execution {
                id,
                status,
                started_at,
                ..
            } => Self {
                kind: status.as_str().to_owned(),
                execution_id: Some(id.to_string()),
                since: started_at.map(|t| t.to_rfc3339()),
                expires_at: None,
                message,
            },
            Holder::Claim {
                kind,
                claimed_at,
                expires_at,
                ..
            } => Self {
                kind: kind.as_str().to_owned(),
                execution_id: None,
                since: Some(claimed_at.to_rfc3339()),
                expires_at: Some(expires_at.to_rfc3339()),
                message,
            },
        }
    }
}

/// A conversation as the sidebar lists it.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ConversationSummary {
    /// The conversation id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Live messages.
    pub message_count: u32,
    /// Cached tokens of those messages.
    pub tokens: u32,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// RFC 3339, UTC.
    pub updated_at: String,
    /// The conversation whose run spawned this one (a subagent's): the sidebar nests it there.
    pub parent_id: Option<String>,
}

impl From<&Conversation> for ConversationSummary {
    fn from(c: &Conversation) -> Self {
        Self {
            id: c.id.to_string(),
            title: c.title.clone(),
            message_count: u32::try_from(c.message_count).unwrap_or(u32::MAX),
            tokens: u32::try_from(c.tokens).unwrap_or(u32::MAX),
            created_at: c.created_at.to_rfc3339(),
            updated_at: c.updated_at.to_rfc3339(),
            parent_id: c.parent_id.map(|p| p.to_string()),
        }
    }
}

/// A tool call on an assistant message.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallView {
    /// The provider's call id.
    pub id: String,
    /// The tool.
    pub name: String,
    /// Raw JSON text, possibly invalid: the UI pretty-prints when it can.
    pub arguments: String,
}

/// An image a tool returned, for its card: the webview shows it as a `data:` URL (the only
/// images its content policy allows besides its own).
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ToolImageView {
    /// Its MIME type.
    pub media_type: String,
    /// Its bytes, base64.
    pub data: String,
}

/// A stored message, read-only in this version of the UI.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct MessageView {
    /// The message id.
    pub id: String,
    /// Its position in the conversation.
    pub seq: u32,
    /// Who said it.
    pub role: Role,
    /// The optional participant name.
    pub name: Option<String>,
    /// The text.
    pub content: String,
    /// Reasoning, if any.
    pub reasoning: Option<String>,
    /// Tool calls, on assistant messages.
    pub tool_calls: Vec<ToolCallView>,
    /// The call a tool message answers.
    pub tool_call_id: Option<String>,
    /// Cached token count.
    pub tokens: u32,
    /// Pinned messages are never compressed away.
    pub pinned: bool,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// For an answer of the model: how it ended and what it cost.
    pub answer: Option<AnswerView>,
}

/// How an answer of the model ended and what it cost, beside its message: the window marks an
/// answer that is not whole (cut by the output cap, stopped, ended for looping) and offers to
/// continue it.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct AnswerView {
    /// Whole, cut, stopped or looping.
    pub ended: decima_store::AnswerEnd,
    /// Prompt tokens the provider reported, if it did.
    pub tokens_in: Option<u32>,
    /// Output tokens the provider reported, if it did.
    pub tokens_out: Option<u32>,
    /// Of the prompt, tokens read from the provider's cache.
    pub cache_read_tokens: Option<u32>,
    /// The estimated cost in US dollars; `None` without prices or usage.
    pub cost_usd: Option<f64>,
    /// The server counted far fewer prompt tokens than were sent: it dropped part of them.
    pub prompt_truncated: bool,
    /// The written form of tool calls that were read back from the answer's text.
    pub calls_from_text: Option<String>,
}

impl From<decima_store::AnswerRecord> for AnswerView {
    fn from(record: decima_store::AnswerRecord) -> Self {
        Self {
            ended: record.ended,
            tokens_in: record.usage.map(|u| u.tokens_in),
            tokens_out: record.usage.map(|u| u.tokens_out),
            cache_read_tokens: record.usage.map(|u| u.cache_read_tokens),
            cost_usd: record.cost_microdollars.map(|c| c as f64 / 1_000_000.0),
            prompt_truncated: record.prompt_truncated,
            calls_from_text: record.calls_from_text,
        }
    }
}

impl From<Message> for MessageView {
    fn from(m: Message) -> Self {
        Self {
            id: m.id.to_string(),
            seq: u32::try_from(m.seq).unwrap_or(u32::MAX),
            role: m.role,
            name: m.name,
            content: m.content,
            reasoning: m.reasoning,
            tool_calls: m
                .tool_calls
                .into_iter()
                .map(|c| ToolCallView {
                    id: c.id,
                    name: c.name,
                    arguments: c.arguments,
                })
                .collect(),
            tool_call_id: m.tool_call_id,
            tokens: m.tokens,
            pinned: m.pinned,
            created_at: m.created_at.to_rfc3339(),
            answer: None,
        }
    }
}

/// A page of a conversation's messages, oldest first.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct MessagePage {
    /// The messages, in seq order.
    pub messages: Vec<MessageView>,
    /// Older live messages exist before the first of these.
    pub has_earlier: bool,
    /// Newer live messages exist after the last of these: the view jumped away from the end.
    pub has_later: bool,
    /// Live messages in the whole conversation.
    pub total: u32,
}

/// Which page of a conversation to read: the view opens at the end, reads up and down from
/// what it shows, and jumps to a message (a search hit, a citation, "go to", the start).
#[derive(Debug, Clone, Copy, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum PageAt {
    /// The newest messages.
    End,
    /// The newest messages before this seq.
    Before {
        /// Exclusive upper bound.
        seq: u32,
    },
    /// The oldest messages after this seq (0 reads from the start).
    After {
        /// Exclusive lower bound.
        seq: u32,
    },
    /// A page with this seq (or the nearest live message) in its middle.
    Around {
        /// The message to show.
        seq: u32,
    },
}

/// A snippet of a message around a search match, split so the view marks the match as text.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SnippetView {
    /// Text before the match.
    pub before: String,
    /// The match as the message spells it.
    pub matched: String,
    /// Text after the match.
    pub after: String,
}

/// One message found by a search: enough to list it and open its conversation there.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SearchHitView {
    /// The conversation the message is in.
    pub conversation_id: String,
    /// That conversation's title.
    pub conversation_title: String,
    /// The message's seq: where the conversation opens.
    pub seq: u32,
    /// Who wrote it.
    pub role: Role,
    /// When it was stored (RFC 3339).
    pub created_at: String,
    /// The text around the first match.
    pub snippet: SnippetView,
}

/// A page of search hits, newest first.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SearchPageView {
    /// The hits.
    pub hits: Vec<SearchHitView>,
    /// Pass back as `after` for the next page; absent on the last.
    pub next: Option<String>,
}

/// The seqs in one conversation that match, for stepping through them (find in conversation).
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct FindView {
    /// Matching seqs, oldest first.
    pub seqs: Vec<u32>,
    /// More matched than are listed.
    pub truncated: bool,
}

/// One layer of the context meter.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ContextLayerView {
    /// `system_constants`, `session_context`, `working_context`, `instant_context` or `pending`.
    pub name: String,
    /// Its tokens, as the model counts them.
    pub tokens: u32,
}

/// What the context meter shows: usage of the room the prompt may use, per layer.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ContextUsage {
    /// The model's context window.
    pub window: u32,
    /// Tokens kept free for the answer.
    pub output_reserve: u32,
    /// What the prompt may use: the window minus the reserve. `usage` is relative to this.
    pub input_room: u32,
    /// Tokens the next request needs, pending messages included.
    pub tokens: u32,
    /// `tokens / input_room`; above 1 when the history has outgrown the window.
    pub usage: f64,
    /// `ok`, `warn`, `compress` or `deep`.
    pub state: String,
    /// Per layer.
    pub layers: Vec<ContextLayerView>,
    /// Messages that no longer fit: compression must run before the next request.
    pub pending_messages: u32,
    /// Of the input the conversation's runs sent, the share the providers read from their
    /// prompt caches, in percent; `null` before any run.
    pub cached_percent: Option<u32>,
    /// What the conversation's runs cost, estimated at their providers' prices; `null` when
    /// none was priced.
    pub cost_usd: Option<f64>,
    /// What its chat turns (outside runs) cost, likewise; `null` when none was priced.
    pub chat_cost_usd: Option<f64>,
}

impl From<&decima_runtime::context::Built> for ContextUsage {
    fn from(built: &decima_runtime::context::Built) -> Self {
        let state = serde_json::to_value(built.report.state)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        Self {
            window: built.budgeting.window,
            output_reserve: built.budgeting.output_reserve,
            input_room: built.budgeting.input_room,
            tokens: built.report.total,
            usage: built.report.usage,
            state,
            layers: built
                .report
                .layers
                .iter()
                .map(|l| ContextLayerView {
                    name: l.name.clone(),
                    tokens: l.tokens,
                })
                .collect(),
            pending_messages: u32::try_from(built.history.pending_messages).unwrap_or(u32::MAX),
            cached_percent: None,
            cost_usd: None,
            chat_cost_usd: None,
        }
    }
}

/// What became of one file dropped on the window for import.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct DroppedImport {
    /// The file's name, to say which one.
    pub name: String,
    /// The new conversation, when it was imported.
    pub conversation: Option<ConversationSummary>,
    /// Why it was not, in a sentence.
    pub error: Option<String>,
}

/// A conversation's own run options (`None`: follows the settings or the default), with what
/// each unset one follows, so the window can say "Settings (local)".
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct RunOptionsView {
    /// The provider its runs use.
    pub provider: Option<String>,
    /// Where their tools run: "host" or "docker".
    pub sandbox: Option<String>,
    /// Model calls a run may make.
    pub max_steps: Option<u32>,
    /// Where the tenth man runs: "hybrid", "tool_only", "system_only" or "off".
    pub tenth_man: Option<String>,
    /// The settings' provider (`None`: the only one configured).
    pub settings_provider: Option<String>,
    /// The settings' sandbox.
    pub settings_sandbox: String,
    /// The runtime's step budget.
    pub default_max_steps: u32,
    /// What an unset tenth man follows: the provider's default, else the runtime's.
    pub default_tenth_man: String,
    /// Its messages are quick chats (no tools, plan or review).
    pub quick: bool,
    /// The provider its runs use now (its own choice, else the settings'), if one is known.
    pub provider_in_force: Option<String>,
    /// That provider's tenth man default, when it set one.
    pub provider_tenth_man: Option<String>,
    /// The folder host runs work in, when the analyst chose one.
    pub workspace: Option<String>,
    /// The data folder's own workspace for this conversation, used otherwise.
    pub default_workspace: String,
}

/// A conversation's workspace as its panel lists it.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceView {
    /// Where it is: "host" or "docker".
    pub sandbox: String,
    /// Whether it is a folder on this computer that "Open folder" can show.
    pub can_open_folder: bool,
    /// Its files, newest first.
    pub files: Vec<WorkspaceFileView>,
    /// The conversation whose workspace this is, when it is another's (a subagent's works in
    /// its root run's): its id and title, so the panel says whose files these are.
    pub owner: Option<WorkspaceOwnerView>,
    /// Files the analyst added that the next message will name to the agent, oldest first:
    /// the notice saying so shows exactly while this is not empty.
    pub pending_announcement: Vec<String>,
    /// The host folder, for a host workspace: said in the panel, so the analyst knows where
    /// the agent's files are.
    pub location: Option<String>,
    /// Files in this conversation's host folder, changed since they were last copied into its
    /// container, while its runs work in Docker and cannot see them: the panel offers to copy
    /// them across.
    pub left_on_host: u32,
}

/// What a workspace holds, counted before a switch leaves it behind.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceCensusView {
    /// Its files.
    pub files: u32,
    /// Their bytes.
    pub bytes: f64,
}

/// What copying a workspace across did.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceTransferView {
    /// The files copied.
    pub copied: Vec<String>,
    /// Files already there under the same path, left as they were.
    pub kept: Vec<String>,
    /// Bytes copied.
    pub bytes: f64,
}

/// The conversation a shared workspace belongs to.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceOwnerView {
    /// Its id, to open it.
    pub conversation_id: String,
    /// Its title.
    pub title: String,
}

/// A file of a workspace.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceFileView {
    /// Relative to the workspace, `/`-separated.
    pub path: String,
    /// Bytes (a number: sizes stay far below 2^53).
    pub size: f64,
    /// Its last change, in milliseconds since the epoch.
    pub modified_ms: f64,
    /// Who last wrote it, when a call or the analyst did.
    pub written_by: Option<WriterView>,
}

/// Who last wrote a workspace file: the tool card to link to, or the analyst.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(tag = "by", rename_all = "camelCase")]
pub enum WriterView {
    /// A run's tool call.
    #[serde(rename_all = "camelCase")]
    Call {
        /// The call's id, as its card carries it.
        call_id: String,
        /// The seq of the answer that holds the call, which finds it where ids repeat.
        message_seq: Option<u32>,
        /// The tool.
        tool: String,
        /// The conversation the call is in (a subagent's, for a file it wrote).
        conversation_id: Option<String>,
        /// When, in milliseconds since the epoch.
        at_ms: f64,
    },
    /// The analyst added it.
    #[serde(rename_all = "camelCase")]
    Analyst {
        /// Its name where it came from.
        name: String,
        /// When, in milliseconds since the epoch.
        at_ms: f64,
    },
}

/// A file copied into a workspace.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct AddedFileView {
    /// Where it landed in the workspace.
    pub path: String,
    /// Bytes.
    pub size: f64,
}

/// A workspace file saved out.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct SavedFileView {
    /// Where it was written.
    pub path: String,
    /// Bytes copied.
    pub bytes: f64,
}
