//! Compactions and the summaries they make. A compaction is applied in one transaction and can be
//! undone, newest first; messages are never touched by either.

use decima_core::context::{CompactionPlan, CompressionLevel, Summary};
use decima_core::{ConversationId, Timestamp};
use sqlx::FromRow;

use crate::BeginWrite;
use crate::on_pool;
use crate::rows::{corrupt, named};
use crate::{Result, Store, StoreError};

/// What set a compaction off, as stored in `compactions.trigger`. The window words a
/// compression notice by it, so it crosses to the webview as a union.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum CompactionTrigger {
    /// The context passed the compression threshold.
    Auto,
    /// The analyst asked for it.
    Manual,
    /// A phase of the plan was completed.
    Phase,
    /// A checkpoint todo passed.
    Checkpoint,
    /// The provider refused a request as too long.
    Overflow,
}

impl CompactionTrigger {
    /// Every trigger.
    pub const ALL: [CompactionTrigger; 5] = [
        Self::Auto,
        Self::Manual,
        Self::Phase,
        Self::Checkpoint,
        Self::Overflow,
    ];

    /// The text stored in `compactions.trigger`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl CompactionTrigger {
    /// The trigger a stored name stands for; `None` for a name no version of Decima wrote.
    pub fn parse(name: &str) -> Option<Self> {
        name.parse().ok()
    }
}

/// A recorded compaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionRecord {
    /// Its id (UUIDv7 text).
    pub id: String,
    /// The conversation.
    pub conversation_id: ConversationId,
    /// How far it compressed.
    pub level: CompressionLevel,
    /// What set it off.
    pub trigger: CompactionTrigger,
    /// extract, llm or structured.
    pub strategy: String,
    /// Tokens the history needed before.
    pub tokens_before: u32,
    /// And after.
    pub tokens_after: u32,
    /// When it ran.
    pub created_at: Timestamp,
    /// When it was undone, if it was.
    pub undone_at: Option<Timestamp>,
}

#[derive(FromRow)]
struct CompactionRow {
    id: String,
    conversation_id: String,
    level: String,
    trigger: String,
    strategy: String,
    tokens_before: i64,
    tokens_after: i64,
    created_at: i64,
    undone_at: Option<i64>,
}

#[derive(FromRow)]
struct SummaryRow {
    id: String,
    level: String,
    start_seq: i64,
    end_seq: i64,
    text: String,
    tokens: i64,
    strategy: String,
}

impl TryFrom<SummaryRow> for Summary {
    type Error = StoreError;

    fn try_from(row: SummaryRow) -> Result<Self> {
        Ok(Summary {
            level: named("summary level", &row.level)?,
            strategy: named("summary strategy", &row.strategy)?,
            tokens: u32::try_from(row.tokens).map_err(|_| corrupt("summary tokens", row.tokens))?,
            id: row.id,
            start_seq: row.start_seq,
            end_seq: row.end_seq,
            text: row.text,
        })
    }
}

/// Compaction operations, borrowed from a [`Store`].
pub struct Compactions<'s> {
    store: &'s Store,
}

impl<'s> Compactions<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// The summaries in force: not superseded, made by a compaction that was not undone. Global
    /// first, then segments in seq order.
    pub async fn live_summaries(&self, conversation: ConversationId) -> Result<Vec<Summary>> {
        let rows: Vec<SummaryRow> = on_pool!(self.store, |pool, d| sqlx::query_as(
            "SELECT s.id, s.level, s.start_seq, s.end_seq, s.text, s.tokens, s.strategy \
             FROM summaries s LEFT JOIN compactions c ON c.id = s.compaction_id \
             WHERE s.conversation_id = $1 AND s.superseded_by IS NULL AND s.rolled_back_at IS NULL \
             AND c.undone_at IS NULL \
             ORDER BY CASE s.level WHEN 'global' THEN 0 ELSE 1 END, s.start_seq",
        )
        .bind(conversation.to_string())
        .fetch_all(pool)
        .await)?;
        rows.into_iter().map(Summary::try_from).collect()
    }

    /// What a step checks, in one query, before it trusts the window it read last time: the
    /// conversation's live message count and tokens (kept by triggers), its next seq, its
    /// pinned todos, and the ids of its live
    /// summaries, in the order [`Compactions::live_summaries`] returns them. A deleted or
    /// missing conversation is not found.
    pub async fn live_state(&self, conversation: ConversationId) -> Result<LiveState> {
        let row: Option<(i64, i64, i64, String, String)> = on_pool!(self.store, |pool, d| {
            let sql = format!(
                "SELECT c.live_messages, c.live_tokens, c.next_seq, \
                 (SELECT {todos} FROM ( \
                    SELECT t.title, t.status, t.phase FROM todos t \
                    JOIN executions e ON e.id = t.execution_id \
                    WHERE e.conversation_id = c.id AND t.pinned = {truth} AND t.deleted_at IS NULL \
                    ORDER BY e.created_at, e.id, t.position) AS pinned), \
                 (SELECT {ids} FROM ( \
                    SELECT s.id FROM summaries s LEFT JOIN compactions k ON k.id = s.compaction_id \
                    WHERE s.conversation_id = c.id AND s.superseded_by IS NULL \
                    AND s.rolled_back_at IS NULL AND k.undone_at IS NULL \
                    ORDER BY CASE s.level WHEN 'global' THEN 0 ELSE 1 END, s.start_seq) AS live) \
                 FROM conversations c WHERE c.id = $1 AND c.deleted_at IS NULL",
                todos = d.json_group_array(&format!("{}(title, status, phase)", d.json_array())),
                ids = d.json_group_array("id"),
                truth = d.truth(),
            );
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .bind(conversation.to_string())
                .fetch_optional(pool)
                .await?
        });
        let (messages, tokens, next_seq, todos, ids) =
            row.ok_or_else(|| StoreError::not_found("conversation", conversation))?;
        let todos: Vec<(String, String, Option<String>)> =
            serde_json::from_str(&todos).map_err(|e| corrupt("pinned todos", e))?;
        Ok(LiveState {
            next_seq,
            pinned_todos: todos
                .into_iter()
                .map(|(title, status, phase)| crate::PinnedTodo {
                    title,
                    status,
                    phase,
                })
                .collect(),
            messages: u64::try_from(messages).map_err(|e| corrupt("live message count", e))?,
            tokens: u64::try_from(tokens).map_err(|e| corrupt("live token count", e))?,
            summary_ids: serde_json::from_str(&ids).map_err(|e| corrupt("summary ids", e))?,
        })
    }

    /// Records the plan: its new summaries, the summaries they supersede, and the compaction row,
    /// all in one write transaction. Returns the compaction's id.
    pub async fn apply(
        &self,
        conversation: ConversationId,
        plan: &CompactionPlan,
        trigger: CompactionTrigger,
    ) -> Result<String> {
        if plan.is_empty() {
            return Err(StoreError::InvalidInput(
                "the compaction plan changes nothing".into(),
            ));
        }
        let replacement = plan.new_summaries.first().map(|s| s.id.clone());
        if !plan.superseded.is_empty() && replacement.is_none() {
            return Err(StoreError::InvalidInput(
                "a compaction that supersedes summaries must make a new one".into(),
            ));
        }
        let id = uuid::Uuid::now_v7().to_string();
        let now = Timestamp::now().0;
        let conversation_id = conversation.to_string();
        on_pool!(self.store, |pool, dialect| {
            let mut tx = pool.begin_write().await?;
            sqlx::query(
                "INSERT INTO compactions (id, conversation_id, level, trigger, strategy, tokens_before, \
                 tokens_after, created_at) SELECT $1, id, $2, $3, $4, $5, $6, $7 FROM conversations \
                 WHERE id = $8 AND deleted_at IS NULL",
            )
            .bind(&id)
            .bind(plan.level.as_str())
            .bind(trigger.as_str())
            .bind(plan.strategy.as_str())
            .bind(i64::from(plan.tokens_before))
            .bind(i64::from(plan.tokens_after))
            .bind(now)
            .bind(&conversation_id)
            .execute(&mut *tx)
            .await
            .and_then(|done| {
                if done.rows_affected() == 0 {
                    Err(sqlx::Error::RowNotFound)
                } else {
                    Ok(done)
                }
            })
            .map_err(|e| match e {
                sqlx::Error::RowNotFound => StoreError::not_found("conversation", conversation),
                other => other.into(),
            })?;
            for s in &plan.new_summaries {
                sqlx::query(
                    "INSERT INTO summaries (id, conversation_id, compaction_id, level, start_seq, end_seq, \
                     text, tokens, strategy, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                )
                .bind(&s.id)
                .bind(&conversation_id)
                .bind(&id)
                .bind(s.level.as_str())
                .bind(s.start_seq)
                .bind(s.end_seq)
                .bind(&s.text)
                .bind(i64::from(s.tokens))
                .bind(s.strategy.as_str())
                .bind(now)
                .execute(&mut *tx)
                .await
                .map_err(|e| match &e {
                    sqlx::Error::Database(db) if db.is_unique_violation() => StoreError::InvalidInput(
                        "this compaction was already applied; preview the compaction again".into(),
                    ),
                    _ => StoreError::from(e),
                })?;
            }
            for superseded in &plan.superseded {
                let done = sqlx::query(
                    "UPDATE summaries SET superseded_by = $1 \
                     WHERE id = $2 AND conversation_id = $3 AND superseded_by IS NULL",
                )
                .bind(replacement.as_deref())
                .bind(superseded)
                .bind(&conversation_id)
                .execute(&mut *tx)
                .await?;
                if done.rows_affected() == 0 {
                    // The plan was made from a stale view: another compaction got there first.
                    return Err(StoreError::InvalidInput(format!(
                        "summary {} is no longer live; preview the compaction again",
                        decima_core::names::echo_untrusted(superseded)
                    )));
                }
            }
            tx.commit().await?;
        });
        Ok(id)
    }

    /// Undoes a compaction: its summaries stop being in force and the ones it superseded are
    /// live again. Only the conversation's newest compaction in force can be undone, since later
    /// ones were made on top of it.
    pub async fn undo(&self, compaction_id: &str) -> Result<CompactionRecord> {
        let record = self.get(compaction_id).await?;
        if record.undone_at.is_some() {
            return Err(StoreError::InvalidInput(format!(
                "compaction {compaction_id} was already undone"
            )));
        }
        on_pool!(self.store, |pool, dialect| {
            let mut tx = pool.begin_write().await?;
            let newer: Option<String> = sqlx::query_scalar(
                "SELECT id FROM compactions WHERE conversation_id = $1 AND undone_at IS NULL AND \
                 (created_at > $2 OR (created_at = $3 AND id > $4)) ORDER BY created_at DESC, id DESC LIMIT 1",
            )
            .bind(record.conversation_id.to_string())
            .bind(record.created_at.0)
            .bind(record.created_at.0)
            .bind(&record.id)
            .fetch_optional(&mut *tx)
            .await?;
            if let Some(newer) = newer {
                return Err(StoreError::InvalidInput(format!(
                    "compaction {newer} was made after this one; undo it first"
                )));
            }
            sqlx::query(
                "UPDATE summaries SET superseded_by = NULL \
                 WHERE superseded_by IN (SELECT id FROM summaries WHERE compaction_id = $1)",
            )
            .bind(&record.id)
            .execute(&mut *tx)
            .await?;
            sqlx::query("UPDATE compactions SET undone_at = $1 WHERE id = $2")
                .bind(Timestamp::now().0)
                .bind(&record.id)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
        });
        self.get(compaction_id).await
    }

    /// The conversation's compactions still in force, oldest first, each with the seqs its
    /// summaries cover: where the conversation view puts a marker with undo.
    pub async fn in_force(
        &self,
        conversation: ConversationId,
    ) -> Result<Vec<(CompactionRecord, Option<(i64, i64)>)>> {
        let rows: Vec<(String, Option<i64>, Option<i64>)> =
            on_pool!(self.store, |pool, d| sqlx::query_as(
                "SELECT c.id, MIN(s.start_seq), MAX(s.end_seq) FROM compactions c \
             LEFT JOIN summaries s ON s.compaction_id = c.id \
             WHERE c.conversation_id = $1 AND c.undone_at IS NULL \
             GROUP BY c.id ORDER BY c.created_at, c.id",
            )
            .bind(conversation.to_string())
            .fetch_all(pool)
            .await)?;
        let mut out = Vec::with_capacity(rows.len());
        for (id, start, end) in rows {
            let range = start.zip(end);
            out.push((self.get(&id).await?, range));
        }
        Ok(out)
    }

    /// One compaction.
    pub async fn get(&self, compaction_id: &str) -> Result<CompactionRecord> {
        let row: Option<CompactionRow> = on_pool!(self.store, |pool, d| {
            sqlx::query_as(
            "SELECT id, conversation_id, level, trigger, strategy, tokens_before, tokens_after, \
             created_at, undone_at FROM compactions WHERE id = $1",
        )
        .bind(compaction_id)
        .fetch_optional(pool)
        .await
        })?;
        let Some(row) = row else {
            return Err(StoreError::not_found(
                "compaction",
                decima_core::names::echo_untrusted(compaction_id),
            ));
        };
        Ok(CompactionRecord {
            conversation_id: row
                .conversation_id
                .parse()
                .map_err(|e: decima_core::CoreError| StoreError::Corrupt {
                    what: "conversation id",
                    detail: e.to_string(),
                })?,
            id: row.id,
            level: named("compaction level", &row.level)?,
            trigger: named("compaction trigger", &row.trigger)?,
            strategy: row.strategy,
            tokens_before: u32::try_from(row.tokens_before).unwrap_or(0),
            tokens_after: u32::try_from(row.tokens_after).unwrap_or(0),
            created_at: Timestamp(row.created_at),
            undone_at: row.undone_at.map(Timestamp),
        })
    }
}

/// See [`Compactions::live_state`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveState {
    /// Live messages.
    pub messages: u64,
    /// Their cached tokens.
    pub tokens: u64,
    /// The live summaries' ids, global first, then by start.
    pub summary_ids: Vec<String>,
    /// The seq the next message will get: every seq below it is taken.
    pub next_seq: i64,
    /// The conversation's pinned todos, as [`crate::Todos::pinned_in_conversation`] lists
    /// them: read in the same query, since a step shows them in its session context.
    pub pinned_todos: Vec<crate::PinnedTodo>,
}
