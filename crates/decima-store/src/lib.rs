//! Decima's store: one SQLite file (the embedded default), or a team's shared PostgreSQL
//! database, reached through sqlx.
//!
//! The schemas live in the workspace's `migrations/sqlite` and `migrations/postgres`. A SQLite
//! file is brought up to date on open; a shared database by `decima db migrate`. Every SQLite
//! write transaction starts with `BEGIN IMMEDIATE`, so concurrent writers queue on the busy
//! timeout instead of failing with `SQLITE_BUSY` halfway through.

// Unit tests read as the story they check: the line limit is for production code.
#![cfg_attr(test, allow(clippy::too_many_lines))]
#![warn(missing_docs)]

mod answers;
mod app_settings;
mod calibrations;
mod checkpointer;
mod claims;
mod compactions;
mod conversations;
mod copy;
mod data_dir;
mod error;
mod events;
mod executions;
mod exports;
mod failures;
mod figure_decisions;
mod figure_receipts;
mod leases;
mod live;
mod location;
mod mcp_servers;
mod message_images;
mod messages;
mod pool;
mod postgres;
mod presets;
mod process_identity;
mod providers;
mod review_digests;
mod reviews;
mod rows;
mod schema;
mod search;
mod snapshots;
mod steps;
mod todos;
mod token_memo;

use std::path::Path;
use std::sync::Arc;

use decima_core::TokenCounter;
use sqlx::{PgPool, Sqlite, SqlitePool, Transaction};

pub use answers::{AnswerEnd, AnswerRecord, AnswerTotals, Answers, StoredAnswer};
pub use app_settings::AppSettings;
pub use calibrations::Calibrations;
pub use claims::{Busy, Claim, ClaimKind, Claims, Holder};
pub use compactions::{CompactionRecord, CompactionTrigger, Compactions, LiveState};
pub use conversations::{Conversation, Conversations};
pub use copy::CopyReport;
pub use data_dir::{DATABASE_FILE, default_data_dir};
pub use error::StoreError;
pub use events::{Event, Events};
pub use executions::{
    CallUsage, EndedBy, Execution, ExecutionStatus, Executions, ModelCall, NewExecution, RunEnding,
    RunUsage, SandboxKind,
};
pub use exports::{Exports, HistoryExport};
pub use failures::{Failure, Failures, NewFailure, Resolution, ResolvedBy};
pub use figure_decisions::{FigureDecision, FigureDecisions};
pub use figure_receipts::{FigureReceipt, FigureReceipts, MAX_RECEIPT_BYTES};
pub use leases::{LeaseClaim, LeaseHolder, Leases};
pub use live::{Change, ChangeFeed};
pub use location::StoreLocation;
pub use mcp_servers::{McpServerRecord, McpServers};
pub use messages::{MessageText, MessageTexts, Messages, SeqTotals, StepNotes};
pub use presets::{PRESET_KINDS, PresetRecord, Presets};
pub use process_identity::{GoneHolder, Liveness, ProcessIdentity, this_boot_id};
pub use providers::{NewProvider, ProviderRecord, Providers};
pub use review_digests::{ReviewDigest, ReviewDigests, SeqFingerprint};
pub use reviews::{Finding, NewFinding, NewReview, Review, ReviewPass, Reviews};
pub use schema::{SchemaState, known_versions};
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

/// The database behind a [`Store`].
#[derive(Clone)]
pub(crate) enum Backend {
    /// The embedded file.
    Sqlite(SqlitePool),
    /// A shared server.
    Postgres(PgPool),
}

/// The SQL one dialect writes differently from the other, for bodies written once for both
/// (see [`on_pool`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// Locks the rows a `SELECT` reads until the transaction ends. SQLite's write transaction
    /// (`BEGIN IMMEDIATE`) already excludes every other writer.
    pub(crate) fn for_update(self) -> &'static str {
        match self {
            Self::Sqlite => "",
            Self::Postgres => " FOR UPDATE",
        }
    }

    /// A JSON array of `expr` over the rows, as text ('[]' for none).
    pub(crate) fn json_group_array(self, expr: &str) -> String {
        match self {
            Self::Sqlite => format!("json_group_array({expr})"),
            Self::Postgres => format!("COALESCE(json_agg({expr})::text, '[]')"),
        }
    }

    /// The function that builds a JSON array from its arguments.
    pub(crate) fn json_array(self) -> &'static str {
        match self {
            Self::Sqlite => "json_array",
            Self::Postgres => "json_build_array",
        }
    }

    /// A true flag as a literal: SQLite's booleans are the integer 1, and a partial index on
    /// `flag = 1` is only used for a query that says so.
    pub(crate) fn truth(self) -> &'static str {
        match self {
            Self::Sqlite => "1",
            Self::Postgres => "TRUE",
        }
    }
}

/// Runs `$body` with `$pool` bound to the store's pool and `$dialect` to its [`Dialect`]. The
/// body is compiled once for each backend, so query text both dialects accept (`$N`
/// placeholders, standard SQL) is written once, and sqlx checks the types of each.
macro_rules! on_pool {
    ($store:expr, |$pool:ident, $dialect:ident| $body:expr) => {
        match $store.backend() {
            $crate::Backend::Sqlite($pool) => {
                #[allow(unused_variables)]
                let $dialect = $crate::Dialect::Sqlite;
                $body
            }
            // Boxed: PostgreSQL's futures run the wire protocol inline and are several times
            // the size of SQLite's, which hand each statement to a worker thread; inline, they
            // would grow every caller's future (and a debug build's stack frames) on SQLite too.
            // No body returns early with success, so `return Err` and `?` keep their meaning.
            $crate::Backend::Postgres($pool) => {
                #[allow(unused_variables)]
                let $dialect = $crate::Dialect::Postgres;
                Box::pin(async { Ok::<_, $crate::StoreError>($body) }).await?
            }
        }
    };
}
pub(crate) use on_pool;

/// A write transaction on either backend: SQLite's takes the write lock up front
/// (`BEGIN IMMEDIATE`), so it never fails with `SQLITE_BUSY` after it has read; PostgreSQL's
/// locks the rows it changes (or reads `FOR UPDATE`) as it goes.
pub(crate) trait BeginWrite {
    type Db: sqlx::Database;
    async fn begin_write(&self) -> Result<Transaction<'static, Self::Db>>;
}

impl BeginWrite for SqlitePool {
    type Db = Sqlite;
    async fn begin_write(&self) -> Result<Transaction<'static, Sqlite>> {
        Ok(self.begin_with("BEGIN IMMEDIATE").await?)
    }
}

impl BeginWrite for PgPool {
    type Db = sqlx::Postgres;
    async fn begin_write(&self) -> Result<Transaction<'static, sqlx::Postgres>> {
        Ok(self.begin().await?)
    }
}

/// A handle on the database. Cheap to clone: clones share one connection pool and one counter.
#[derive(Clone)]
pub struct Store {
    backend: Backend,
    counter: Arc<dyn TokenCounter>,
    /// Checkpoints a SQLite file's WAL in the background while any handle lives.
    _checkpointer: Option<Arc<checkpointer::Checkpointer>>,
    /// How the unfenced pool connects (PostgreSQL): a fenced store of a fenced store (a
    /// subagent's, made from its parent's) starts from these, not from its parent's fence.
    unfenced: Option<Arc<sqlx::postgres::PgConnectOptions>>,
}

impl Store {
    /// Opens (creating if needed) the SQLite file and brings its schema up to date. The counter
    /// prices every message once, at insert.
    pub async fn open(path: &Path, counter: Arc<dyn TokenCounter>) -> Result<Self> {
        let commits = Arc::new(checkpointer::Commits::default());
        let pool = pool::open(path, Arc::clone(&commits)).await?;
        let checkpointer = checkpointer::Checkpointer::start(pool.clone(), commits);
        Ok(Self {
            backend: Backend::Sqlite(pool),
            counter,
            _checkpointer: Some(Arc::new(checkpointer)),
            unfenced: None,
        })
    }

    /// Opens the store at `location`: a SQLite file as [`Store::open`] does, or a shared
    /// PostgreSQL database, whose schema must be exactly what this build knows (see
    /// [`Store::migrate`]).
    pub async fn connect(location: &StoreLocation, counter: Arc<dyn TokenCounter>) -> Result<Self> {
        match location {
            StoreLocation::Sqlite(path) => Self::open(path, counter).await,
            StoreLocation::Postgres(url) => {
                let pool = postgres::connect(url, &location.redacted()).await?;
                let state = schema::postgres_state(&pool).await?;
                if state.pending > 0 {
                    pool.close().await;
                    return Err(StoreError::SchemaBehind {
                        found: state.applied,
                        known: state.known,
                    });
                }
                let unfenced = Some(pool.connect_options());
                Ok(Self {
                    backend: Backend::Postgres(pool),
                    counter,
                    _checkpointer: None,
                    unfenced,
                })
            }
        }
    }

    /// Brings the schema at `location` up to this build's, under the database's migration lock,
    /// and returns where it stood before and after. Refuses a schema newer than this build's.
    pub async fn migrate(location: &StoreLocation) -> Result<(SchemaState, SchemaState)> {
        match location {
            StoreLocation::Sqlite(path) => {
                let before = {
                    let store = Self::open_without_migrating(path).await?;
                    let state = schema::sqlite_state(&store).await?;
                    store.close().await;
                    state
                };
                let store = Self::open(path, Arc::new(decima_core::EstimateCounter)).await?;
                let after = match &store.backend {
                    Backend::Sqlite(pool) => schema::sqlite_state(pool).await?,
                    Backend::Postgres(pool) => schema::postgres_state(pool).await?,
                };
                store.close().await;
                Ok((before, after))
            }
            StoreLocation::Postgres(url) => {
                let pool = postgres::connect(url, &location.redacted()).await?;
                let before = schema::postgres_state(&pool).await?;
                schema::migrate_postgres(&pool).await?;
                let after = schema::postgres_state(&pool).await?;
                pool.close().await;
                Ok((before, after))
            }
        }
    }

    /// A plain connection to a SQLite file, to read its schema's state before migrating it.
    async fn open_without_migrating(path: &Path) -> Result<SqlitePool> {
        use std::str::FromStr;
        let open_error = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        let options = sqlx::sqlite::SqliteConnectOptions::from_str("sqlite:")
            .map_err(open_error)?
            .filename(path)
            .create_if_missing(true);
        sqlx::sqlite::SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await
            .map_err(open_error)
    }

    /// Whether this store is a shared PostgreSQL database.
    #[must_use]
    pub fn is_postgres(&self) -> bool {
        matches!(self.backend, Backend::Postgres(_))
    }

    /// The SQLite pool, for maintenance queries and benchmarks' anchors; `None` on PostgreSQL.
    #[must_use]
    pub fn sqlite_pool(&self) -> Option<&SqlitePool> {
        match &self.backend {
            Backend::Sqlite(pool) => Some(pool),
            Backend::Postgres(_) => None,
        }
    }

    /// The PostgreSQL pool, for maintenance queries; `None` on SQLite.
    #[must_use]
    pub fn postgres_pool(&self) -> Option<&PgPool> {
        match &self.backend {
            Backend::Postgres(pool) => Some(pool),
            Backend::Sqlite(_) => None,
        }
    }

    /// Where the open database's schema stands against this build (Settings shows it).
    pub async fn schema_state(&self) -> Result<SchemaState> {
        match &self.backend {
            Backend::Sqlite(pool) => schema::sqlite_state(pool).await,
            Backend::Postgres(pool) => Box::pin(schema::postgres_state(pool)).await,
        }
    }

    pub(crate) fn backend(&self) -> &Backend {
        &self.backend
    }

    /// The same store's counter over another pool of the same database (a fenced one).
    pub(crate) fn with_backend(&self, backend: Backend) -> Self {
        Self {
            backend,
            counter: Arc::clone(&self.counter),
            _checkpointer: self._checkpointer.clone(),
            unfenced: self.unfenced.clone(),
        }
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

    /// How each answer of the model ended and what it cost, chat turns and runs alike.
    pub fn answers(&self) -> Answers<'_> {
        Answers::new(self)
    }

    /// Tenth-man reviews and their findings: the cache, and the findings still open.
    pub fn reviews(&self) -> Reviews<'_> {
        Reviews::new(self)
    }

    /// The tenth man's cached summaries of seq ranges (never compactions).
    pub fn review_digests(&self) -> ReviewDigests<'_> {
        ReviewDigests::new(self)
    }

    /// The analyst's decisions on the figures of answers that no source held.
    pub fn figure_decisions(&self) -> FigureDecisions<'_> {
        FigureDecisions::new(self)
    }

    /// What the tenth man got when it recomputed the figures of answers: their receipts.
    pub fn figure_receipts(&self) -> FigureReceipts<'_> {
        FigureReceipts::new(self)
    }

    /// Export bookkeeping: where each history was last written, for incremental exports.
    pub fn exports(&self) -> Exports<'_> {
        Exports::new(self)
    }

    /// Remembered token counts of texts a step counts afresh.
    pub fn token_memo(&self) -> TokenMemo<'_> {
        TokenMemo::new(self)
    }

    /// Checks the database: SQLite's `PRAGMA integrity_check`, or a round trip to the server.
    /// Returns "ok" when healthy.
    pub async fn integrity_check(&self) -> Result<String> {
        match &self.backend {
            Backend::Sqlite(pool) => Ok(sqlx::query_scalar("PRAGMA integrity_check")
                .fetch_one(pool)
                .await?),
            Backend::Postgres(pool) => {
                let one: i32 = sqlx::query_scalar("SELECT 1").fetch_one(pool).await?;
                Ok(if one == 1 { "ok" } else { "unexpected answer" }.to_owned())
            }
        }
    }

    /// Closes the pool (checkpointing a SQLite file's WAL).
    pub async fn close(&self) {
        match &self.backend {
            Backend::Sqlite(pool) => pool.close().await,
            Backend::Postgres(pool) => pool.close().await,
        }
    }

    pub(crate) fn counter(&self) -> &dyn TokenCounter {
        self.counter.as_ref()
    }
}
