//! Decima's store: one SQLite file, reached through sqlx.
//!
//! The schema lives in the workspace's `migrations/` and is applied on open. Every write
//! transaction starts with `BEGIN IMMEDIATE`, so concurrent writers queue on the busy timeout
//! instead of failing with `SQLITE_BUSY` halfway through.

#![warn(missing_docs)]

mod app_settings;
mod calibrations;
mod checkpointer;
mod claims;
mod compactions;
mod conversations;
mod data_dir;
mod error;
mod events;
mod executions;
mod exports;
mod failures;
mod mcp_servers;
mod message_images;
mod messages;
mod pool;
mod presets;
mod providers;
mod review_digests;
mod reviews;
mod rows;
mod search;
mod snapshots;
mod steps;
mod todos;
mod token_memo;

use std::path::Path;
use std::sync::Arc;

use decima_core::TokenCounter;
use sqlx::{Sqlite, SqlitePool, Transaction};

pub use app_settings::AppSettings;
pub use calibrations::Calibrations;
pub use claims::{Busy, Claim, ClaimKind, Claims, Holder};
pub use compactions::{CompactionRecord, Compactions, LiveState, TRIGGERS};
pub use conversations::{Conversation, Conversations};
pub use data_dir::{DATABASE_FILE, default_data_dir};
pub use error::StoreError;
pub use events::{Event, Events};
pub use executions::{
    CallUsage, EndedBy, Execution, ExecutionStatus, Executions, ModelCall, NewExecution, RunEnding,
    RunUsage, SandboxKind,
};
pub use exports::{Exports, HistoryExport};
pub use failures::{Failure, Failures, NewFailure, Resolution};
pub use mcp_servers::{McpServerRecord, McpServers};
pub use messages::{MessageText, MessageTexts, Messages, SeqTotals, StepNotes};
pub use presets::{PRESET_KINDS, PresetRecord, Presets};
pub use providers::{NewProvider, ProviderRecord, Providers};
pub use review_digests::{ReviewDigest, ReviewDigests, SeqFingerprint};
pub use reviews::{Finding, NewFinding, NewReview, Review, ReviewPass, Reviews};
pub use search::{
    MAX_PAGE as MAX_SEARCH_PAGE, MAX_QUERY_CHARS, Search, SearchHit, SearchPage, SearchQuery,
    SeqMatches, Snippet,
};
pub use snapshots::{NewSnapshot, Snapshot, SnapshotReason, Snapshots};
pub use steps::{Step, StepKind, Steps};
pub use todos::{PinnedTodo, Todo, TodoInput, TodoStatus, Todos};
pub use token_memo::TokenMemo;

/// Shorthand for the store's results.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// A handle on the database. Cheap to clone: clones share one connection pool and one counter.
#[derive(Clone)]
pub struct Store {
    pool: SqlitePool,
    counter: Arc<dyn TokenCounter>,
    /// Checkpoints the WAL in the background while any handle lives.
    _checkpointer: Arc<checkpointer::Checkpointer>,
}

impl Store {
    /// Opens (creating if needed) the database file and brings its schema up to date. The counter
    /// prices every message once, at insert.
    pub async fn open(path: &Path, counter: Arc<dyn TokenCounter>) -> Result<Self> {
        let commits = Arc::new(checkpointer::Commits::default());
        let pool = pool::open(path, Arc::clone(&commits)).await?;
        let checkpointer = checkpointer::Checkpointer::start(pool.clone(), commits);
        Ok(Self {
            pool,
            counter,
            _checkpointer: Arc::new(checkpointer),
        })
    }

    /// The raw pool, for maintenance queries and benchmarks' anchors.
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Conversations: create, list, rename, soft-delete, restore, import.
    pub fn conversations(&self) -> Conversations<'_> {
        Conversations::new(self)
    }

    /// Messages: append with gapless seqs, read ranges, pin, soft-delete after a seq.
    pub fn messages(&self) -> Messages<'_> {
        Messages::new(self)
    }

    /// Full-text search, through the index the migrations keep in step with every write.
    pub fn search(&self) -> Search<'_> {
        Search::new(self)
    }

    /// Providers: the LLM endpoints the user configured. Their keys live in the keyring, not here.
    pub fn providers(&self) -> Providers<'_> {
        Providers::new(self)
    }

    /// Installation-wide settings (the run's provider, the reviewer, the sandbox), by key.
    pub fn app_settings(&self) -> AppSettings<'_> {
        AppSettings::new(self)
    }

    /// The analyst's MCP servers, their per-conversation switches and tool approvals.
    pub fn mcp_servers(&self) -> McpServers<'_> {
        McpServers::new(self)
    }

    /// Token calibrations: per-model corrections learned from providers' reported usage.
    pub fn calibrations(&self) -> Calibrations<'_> {
        Calibrations::new(self)
    }

    /// Compactions and the summaries they make: apply, undo, and the summaries in force.
    pub fn compactions(&self) -> Compactions<'_> {
        Compactions::new(self)
    }

    /// Todos of executions; the pinned ones go into every request's session context.
    pub fn todos(&self) -> Todos<'_> {
        Todos::new(self)
    }

    /// Executions: create, read, move along allowed status transitions, interrupt on start-up.
    pub fn executions(&self) -> Executions<'_> {
        Executions::new(self)
    }

    /// The plan of an execution: the same repository as [`Store::todos`], named for the loop.
    pub fn plan(&self) -> Todos<'_> {
        Todos::new(self)
    }

    /// Snapshots: the states a rollback returns to.
    pub fn snapshots(&self) -> Snapshots<'_> {
        Snapshots::new(self)
    }

    /// Who is using a conversation: its active execution, or a chat turn's or compression's
    /// claim. One thing at a time writes into a history.
    pub fn claims(&self) -> Claims<'_> {
        Claims::new(self)
    }

    /// Failures and the user's one answer to each.
    pub fn failures(&self) -> Failures<'_> {
        Failures::new(self)
    }

    /// The append-only event log readers catch up on.
    pub fn events(&self) -> Events<'_> {
        Events::new(self)
    }

    /// The per-step record of executions.
    pub fn steps(&self) -> Steps<'_> {
        Steps::new(self)
    }

    /// Prompt presets, native and imported.
    pub fn presets(&self) -> Presets<'_> {
        Presets::new(self)
    }

    /// Tenth-man reviews and their findings: the cache, and the findings still open.
    pub fn reviews(&self) -> Reviews<'_> {
        Reviews::new(self)
    }

    /// The tenth man's cached summaries of seq ranges (never compactions).
    pub fn review_digests(&self) -> ReviewDigests<'_> {
        ReviewDigests::new(self)
    }

    /// Export bookkeeping: where each history was last written, for incremental exports.
    pub fn exports(&self) -> Exports<'_> {
        Exports::new(self)
    }

    /// Remembered token counts of texts a step counts afresh.
    pub fn token_memo(&self) -> TokenMemo<'_> {
        TokenMemo::new(self)
    }

    /// Runs `PRAGMA integrity_check` and returns its verdict ("ok" when healthy).
    pub async fn integrity_check(&self) -> Result<String> {
        let verdict: String = sqlx::query_scalar("PRAGMA integrity_check")
            .fetch_one(&self.pool)
            .await?;
        Ok(verdict)
    }

    /// Closes the pool, checkpointing the WAL.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    pub(crate) fn counter(&self) -> &dyn TokenCounter {
        self.counter.as_ref()
    }

    /// A write transaction that takes the write lock up front, so it can never fail with
    /// `SQLITE_BUSY` after it has read.
    pub(crate) async fn begin_write(&self) -> Result<Transaction<'static, Sqlite>> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }
}
