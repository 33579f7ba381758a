//! Who is using a conversation. A conversation holds one history, so only one thing may write
//! into it at a time: an active execution (running, or awaiting the analyst's choice), a chat
//! turn, or a compression. Anything else that would write is refused before it stores a byte,
//! with the holder named, so the person knows what to stop or wait for.
//!
//! Executions hold a conversation through their status: the partial unique index
//! `executions_one_active` allows one active execution per conversation, and starting or
//! resuming one checks the claims below in the same write transaction. Chat turns and
//! compressions, which are not executions, take a claim: a row in `conversation_claims` that
//! lapses unless renewed, so a process that died frees the conversation by itself. A claim also
//! names its holder's process ([`ProcessIdentity`]): when that process is gone from this very
//! machine, its claim counts as free at once instead of after its time to live. Both checks run
//! inside `BEGIN IMMEDIATE`, so two processes cannot both find the conversation free.

use std::fmt;
use std::time::Duration;

use decima_core::{ConversationId, ExecutionId, Timestamp};

use tracing::info;

use crate::BeginWrite;
use crate::executions::ExecutionStatus;
use crate::on_pool;
use crate::process_identity::{GoneHolder, ProcessIdentity};
use crate::rows::{corrupt, named};
use crate::{Result, Store, StoreError};

/// What a claim is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum ClaimKind {
    /// A chat turn: the question and its answer belong together.
    Chat,
    /// A compression (or its undo), which changes what the next request is built from.
    Compression,
}

impl ClaimKind {
    /// The text stored in `conversation_claims.kind`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What keeps a conversation busy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder {
    /// An execution that is running or waits for the analyst.
    Execution {
        /// The execution.
        id: ExecutionId,
        /// `running` or `awaiting_user`.
        status: ExecutionStatus,
        /// What it was asked to do.
        task: String,
        /// When it first ran.
        started_at: Option<Timestamp>,
    },
    /// A chat turn or a compression in progress.
    Claim {
        /// Which.
        kind: ClaimKind,
        /// Who holds it (process and host), as its holder described itself.
        owner: String,
        /// When it was taken.
        claimed_at: Timestamp,
        /// When it lapses unless renewed.
        expires_at: Timestamp,
    },
}

/// A conversation found busy, and by what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Busy {
    /// The conversation.
    pub conversation: ConversationId,
    /// What holds it.
    pub holder: Holder,
}

impl fmt::Display for Busy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.holder {
            Holder::Execution {
                id,
                status: ExecutionStatus::AwaitingUser,
                ..
            } => write!(
                f,
                "conversation {} is busy: execution {id} waits for a choice on a failure; \
                 answer it first (recover it with a choice, or abort it)",
                self.conversation
            ),
            Holder::Execution { id, .. } => write!(
                f,
                "conversation {} is busy: execution {id} is running; wait for it to end, or \
                 stop it first",
                self.conversation
            ),
            Holder::Claim {
                kind,
                owner,
                expires_at,
                ..
            } => write!(
                f,
                "conversation {} is busy: a {} by {owner} is in progress; wait for it to end \
                 (if that process died on another machine, the conversation is free again at \
                 {}; on this one, at once)",
                self.conversation,
                match kind {
                    ClaimKind::Chat => "chat turn",
                    ClaimKind::Compression => "compression",
                },
                expires_at.to_rfc3339()
            ),
        }
    }
}

/// A claim this process holds; give it back with [`Claims::release`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The conversation claimed.
    pub conversation: ConversationId,
    /// What for.
    pub kind: ClaimKind,
    /// Identifies this holder: only it can renew or release the claim.
    pub token: String,
    /// The holder whose claim this one replaced because its process is gone from this
    /// machine, for the note the person sees; `None` when the conversation was free.
    pub took_over: Option<GoneHolder>,
}

impl Claim {
    /// The note for the person when this claim replaced a dead holder's.
    pub fn take_over_note(&self) -> Option<String> {
        self.took_over
            .as_ref()
            .map(|gone| format!("took over the conversation from {gone}"))
    }
}

/// Claims on conversations, borrowed from a [`Store`].
pub struct Claims<'s> {
    store: &'s Store,
}

impl<'s> Claims<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// What keeps the conversation busy, if anything: for the window's Send button and for
    /// messages that say why something was refused. A claim whose process is gone from this
    /// machine keeps nothing busy.
    pub async fn busy(&self, conversation: ConversationId) -> Result<Option<Busy>> {
        on_pool!(self.store, |pool, d| {
            let mut conn = pool.acquire().await?;
            inspect_in(&mut *conn, d, conversation, None, Timestamp::now())
                .await
                .map(|found| found.busy)
        })
    }

    /// Claims the conversation for a chat turn or a compression, for `ttl` unless renewed,
    /// as this process ([`ProcessIdentity::current`]). Refused with [`StoreError::Busy`] while
    /// an execution is active in it or another claim has not lapsed and its holder is not
    /// known to be gone; a gone holder's claim is taken over ([`Claim::took_over`]).
    pub async fn claim(
        &self,
        conversation: ConversationId,
        kind: ClaimKind,
        owner: &str,
        ttl: Duration,
    ) -> Result<Claim> {
        self.claim_as(
            conversation,
            kind,
            owner,
            Some(ProcessIdentity::current()),
            ttl,
        )
        .await
    }

    /// [`Claims::claim`] for the holder `process` (`None`: a holder that is never judged gone
    /// and only lapses): for a process that claims on another's behalf, and for tests.
    pub async fn claim_as(
        &self,
        conversation: ConversationId,
        kind: ClaimKind,
        owner: &str,
        process: Option<&ProcessIdentity>,
        ttl: Duration,
    ) -> Result<Claim> {
        let token = uuid::Uuid::now_v7().to_string();
        let now = Timestamp::now();
        let took_over = on_pool!(self.store, |pool, dialect| {
            let mut tx = pool.begin_write().await?;
            // The conversation's row is locked (on PostgreSQL) until the claim is stored, so
            // two claimants, or a claim and a run starting, queue on it.
            let exists: Option<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                "SELECT id FROM conversations WHERE id = $1 AND deleted_at IS NULL{}",
                dialect.for_update()
            )))
            .bind(conversation.to_string())
            .fetch_optional(&mut *tx)
            .await?;
            if exists.is_none() {
                return Err(StoreError::not_found("conversation", conversation));
            }
            let found = inspect_in(&mut *tx, dialect, conversation, None, now).await?;
            if let Some(busy) = found.busy {
                return Err(StoreError::Busy(Box::new(busy)));
            }
            // A lapsed claim, or one whose process is gone, is taken over; a live one was
            // found above.
            sqlx::query(
                "INSERT INTO conversation_claims (conversation_id, kind, token, owner, claimed_at, \
                 expires_at, pid, boot_id, start_time) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
                 ON CONFLICT (conversation_id) DO UPDATE SET kind = excluded.kind, \
                 token = excluded.token, owner = excluded.owner, claimed_at = excluded.claimed_at, \
                 expires_at = excluded.expires_at, pid = excluded.pid, boot_id = excluded.boot_id, \
                 start_time = excluded.start_time",
            )
            .bind(conversation.to_string())
            .bind(kind.as_str())
            .bind(&token)
            .bind(owner)
            .bind(now.0)
            .bind(expiry(now, ttl))
            .bind(process.map(ProcessIdentity::pid_column))
            .bind(process.and_then(|p| p.boot_id.clone()))
            .bind(process.and_then(ProcessIdentity::start_time_column))
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            found.gone.map(|gone| gone.holder)
        });
        if let Some(gone) = &took_over {
            info!(%conversation, pid = gone.pid, pid_reused = gone.pid_reused,
                "claim taken over from a process that is gone");
        }
        Ok(Claim {
            conversation,
            kind,
            token,
            took_over,
        })
    }

    /// Keeps a claim alive for `ttl` more. False when it is no longer this holder's (it
    /// lapsed and was taken over, or was released).
    pub async fn renew(&self, claim: &Claim, ttl: Duration) -> Result<bool> {
        let done = on_pool!(self.store, |pool, d| {
            sqlx::query(
            "UPDATE conversation_claims SET expires_at = $1 WHERE conversation_id = $2 AND token = $3",
        )
        .bind(expiry(Timestamp::now(), ttl))
        .bind(claim.conversation.to_string())
        .bind(&claim.token)
        .execute(pool)
        .await.map(|r| r.rows_affected())
        })?;
        Ok(done == 1)
    }

    /// Gives a claim back. Releasing a claim that lapsed and was taken over leaves the new
    /// holder's alone.
    pub async fn release(&self, claim: &Claim) -> Result<()> {
        on_pool!(self.store, |pool, d| sqlx::query(
            "DELETE FROM conversation_claims WHERE conversation_id = $1 AND token = $2"
        )
        .bind(claim.conversation.to_string())
        .bind(&claim.token)
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))?;
        Ok(())
    }
}

fn expiry(now: Timestamp, ttl: Duration) -> i64 {
    now.0
        .saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX))
}

/// A claim whose holder is gone from this machine: free, and the token that removes it.
struct GoneClaim {
    token: String,
    holder: GoneHolder,
}

/// What a look at a conversation found: what keeps it busy, and a gone holder's claim that
/// does not.
struct Found {
    busy: Option<Busy>,
    gone: Option<GoneClaim>,
}

/// A claim's row as [`inspect_in`] reads it.
type ClaimRow = (
    String,
    String,
    i64,
    i64,
    String,
    Option<i64>,
    Option<String>,
    Option<i64>,
);

/// What keeps `conversation` busy at `now`, on a connection inside the caller's write
/// transaction (about to take the conversation), leaving out the execution `except` (one that
/// resumes itself). A claim whose process is gone from this machine is removed, as a lapsed
/// one would be overwritten.
pub(crate) async fn busy_in<C, DB>(
    conn: &mut C,
    dialect: crate::Dialect,
    conversation: ConversationId,
    except: Option<ExecutionId>,
    now: Timestamp,
) -> Result<Option<Busy>>
where
    DB: sqlx::Database,
    for<'c> &'c mut C: sqlx::Executor<'c, Database = DB>,
    DB::Arguments: sqlx::IntoArguments<DB>,
    for<'q> String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'r> (String, String, String, Option<i64>): sqlx::FromRow<'r, DB::Row>,
    for<'r> ClaimRow: sqlx::FromRow<'r, DB::Row>,
{
    let found = inspect_in(&mut *conn, dialect, conversation, except, now).await?;
    if found.busy.is_none()
        && let Some(gone) = found.gone
    {
        sqlx::query("DELETE FROM conversation_claims WHERE conversation_id = $1 AND token = $2")
            .bind(conversation.to_string())
            .bind(gone.token)
            .execute(&mut *conn)
            .await?;
        info!(%conversation, pid = gone.holder.pid, "claim of a process that is gone removed");
    }
    Ok(found.busy)
}

/// What keeps `conversation` busy at `now` (see [`busy_in`]), changing nothing.
async fn inspect_in<C, DB>(
    conn: &mut C,
    dialect: crate::Dialect,
    conversation: ConversationId,
    except: Option<ExecutionId>,
    now: Timestamp,
) -> Result<Found>
where
    DB: sqlx::Database,
    for<'c> &'c mut C: sqlx::Executor<'c, Database = DB>,
    DB::Arguments: sqlx::IntoArguments<DB>,
    for<'q> String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'r> (String, String, String, Option<i64>): sqlx::FromRow<'r, DB::Row>,
    for<'r> ClaimRow: sqlx::FromRow<'r, DB::Row>,
{
    if dialect == crate::Dialect::Postgres {
        // Whoever takes the conversation holds its row until the transaction ends, so two
        // desktops cannot both find it free (SQLite's write transaction already excludes them).
        sqlx::query("SELECT id FROM conversations WHERE id = $1 FOR UPDATE")
            .bind(conversation.to_string())
            .execute(&mut *conn)
            .await?;
    }
    let active: Option<(String, String, String, Option<i64>)> = sqlx::query_as(
        "SELECT id, status, task, started_at FROM executions \
         WHERE conversation_id = $1 AND status IN ('running', 'awaiting_user') AND id <> $2 \
         ORDER BY created_at DESC LIMIT 1",
    )
    .bind(conversation.to_string())
    .bind(except.map(|e| e.to_string()).unwrap_or_default())
    .fetch_optional(&mut *conn)
    .await?;
    if let Some((id, status, task, started_at)) = active {
        let holder = Holder::Execution {
            id: id.parse().map_err(|e| corrupt("execution id", e))?,
            status: status.parse().map_err(|e| corrupt("execution status", e))?,
            task,
            started_at: started_at.map(Timestamp),
        };
        return Ok(Found {
            busy: Some(Busy {
                conversation,
                holder,
            }),
            gone: None,
        });
    }
    let claim: Option<ClaimRow> = sqlx::query_as(
        "SELECT kind, owner, claimed_at, expires_at, token, pid, boot_id, start_time \
         FROM conversation_claims WHERE conversation_id = $1 AND expires_at > $2",
    )
    .bind(conversation.to_string())
    .bind(now.0)
    .fetch_optional(&mut *conn)
    .await?;
    match claim {
        Some(row) => judge_claim(conversation, row),
        None => Ok(Found {
            busy: None,
            gone: None,
        }),
    }
}

/// A live claim's row: busy, unless its holder's process is gone from this machine.
fn judge_claim(conversation: ConversationId, row: ClaimRow) -> Result<Found> {
    let (kind, owner, claimed_at, expires_at, token, pid, boot_id, start_time) = row;
    let kind: ClaimKind = named("claim kind", &kind)?;
    let process = ProcessIdentity::from_columns(pid, boot_id, start_time);
    if let Some(holder) = process.and_then(|p| GoneHolder::judged(&p, owner.clone())) {
        return Ok(Found {
            busy: None,
            gone: Some(GoneClaim { token, holder }),
        });
    }
    let holder = Holder::Claim {
        kind,
        owner,
        claimed_at: Timestamp(claimed_at),
        expires_at: Timestamp(expires_at),
    };
    Ok(Found {
        busy: Some(Busy {
            conversation,
            holder,
        }),
        gone: None,
    })
}
