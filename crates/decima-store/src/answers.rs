//! How each answer of the model ended and what it cost. A chat turn, a run's step and a stopped
//! stream all store their answer as a message; this table says, beside it, whether the answer is
//! whole (or was cut by the output cap, stopped by the analyst, or ended by Decima because it
//! repeated itself), what the provider reported for the request that produced it, and whether
//! the server silently dropped part of that request. `conversation show --json` and the window
//! read it per message, and a conversation's total cost is its sum.

use decima_core::{ConversationId, MessageId, Timestamp};

use crate::executions::CallUsage;
use crate::rows::{corrupt, named};
use crate::{Result, Store, StoreError, on_pool};

/// How an answer ended.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Default,
    serde::Serialize,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum AnswerEnd {
    /// The model finished it.
    #[default]
    Complete,
    /// The output cap ended it: its text may stop mid-sentence.
    Cut,
    /// The analyst stopped it while it streamed; what had arrived is kept.
    Stopped,
    /// Decima ended it because the stream kept repeating the same run of text.
    Looping,
}

impl AnswerEnd {
    /// The text stored in `answers.ended`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What is recorded of one answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AnswerRecord {
    /// How it ended.
    pub ended: AnswerEnd,
    /// What the provider reported for the request; `None` when it reported nothing (a stopped
    /// stream, a server without usage).
    pub usage: Option<CallUsage>,
    /// The estimated cost in millionths of a dollar; `None` without prices or usage.
    pub cost_microdollars: Option<u64>,
    /// The server counted fewer prompt tokens than were sent, by more than the counting error.
    pub prompt_truncated: bool,
    /// The written form of tool calls read back from the answer's text, if any.
    pub calls_from_text: Option<String>,
}

/// An answer's record with the message it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAnswer {
    /// The answer's message.
    pub message_id: MessageId,
    /// Its seq in the conversation.
    pub seq: i64,
    /// What was recorded.
    pub record: AnswerRecord,
}

/// A conversation's chat answers summed: what its chat turns cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AnswerTotals {
    /// Answers recorded.
    pub answers: u64,
    /// Prompt tokens reported.
    pub tokens_in: u64,
    /// Output tokens reported.
    pub tokens_out: u64,
    /// Prompt tokens read from the provider's cache.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache.
    pub cache_write_tokens: u64,
    /// The estimated cost in millionths of a dollar; `None` when no answer was priced.
    pub cost_microdollars: Option<u64>,
}

/// Answer records, borrowed from a [`Store`].
pub struct Answers<'s> {
    store: &'s Store,
}

type Row = (
    String,
    i64,
    String,
    Option<i64>,
    Option<i64>,
    Option<i64>,
    Option<i64>,
    Option<i64>,
    bool,
    Option<String>,
);

impl<'s> Answers<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Records how the answer `message` of `conversation` ended and what it cost. Recording it
    /// again replaces the record (a stopped answer that is continued stays one message).
    pub async fn record(
        &self,
        conversation: ConversationId,
        message: MessageId,
        record: &AnswerRecord,
    ) -> Result<()> {
        let usage = record.usage;
        let cost = record
            .cost_microdollars
            .map(i64::try_from)
            .transpose()
            .map_err(|_| StoreError::InvalidInput("an answer's cost is out of range".into()))?;
        on_pool!(self.store, |pool, d| sqlx::query(
            "INSERT INTO answers (message_id, conversation_id, ended, tokens_in, tokens_out, \
             cache_read_tokens, cache_write_tokens, cost_microdollars, prompt_truncated, \
             calls_from_text, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
             ON CONFLICT (message_id) DO UPDATE SET ended = excluded.ended, \
             tokens_in = excluded.tokens_in, tokens_out = excluded.tokens_out, \
             cache_read_tokens = excluded.cache_read_tokens, \
             cache_write_tokens = excluded.cache_write_tokens, \
             cost_microdollars = excluded.cost_microdollars, \
             prompt_truncated = excluded.prompt_truncated, \
             calls_from_text = excluded.calls_from_text"
        )
        .bind(message.to_string())
        .bind(conversation.to_string())
        .bind(record.ended.as_str())
        .bind(usage.map(|u| i64::from(u.tokens_in)))
        .bind(usage.map(|u| i64::from(u.tokens_out)))
        .bind(usage.map(|u| i64::from(u.cache_read_tokens)))
        .bind(usage.map(|u| i64::from(u.cache_write_tokens)))
        .bind(cost)
        .bind(record.prompt_truncated)
        .bind(record.calls_from_text.as_deref())
        .bind(Timestamp::now().0)
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))?;
        Ok(())
    }

    /// The records of a conversation's live answers, in seq order.
    pub async fn of_conversation(&self, conversation: ConversationId) -> Result<Vec<StoredAnswer>> {
        self.within(conversation, i64::MIN, i64::MAX).await
    }

    /// The records of the live answers with `first <= seq <= last`, in seq order: what a page
    /// of the conversation shows beside its messages.
    pub async fn within(
        &self,
        conversation: ConversationId,
        first: i64,
        last: i64,
    ) -> Result<Vec<StoredAnswer>> {
        let rows: Vec<Row> = on_pool!(self.store, |pool, d| sqlx::query_as(
            "SELECT a.message_id, m.seq, a.ended, a.tokens_in, a.tokens_out, \
             a.cache_read_tokens, a.cache_write_tokens, a.cost_microdollars, \
             a.prompt_truncated, a.calls_from_text \
             FROM answers a JOIN messages m ON m.id = a.message_id \
             WHERE a.conversation_id = $1 AND m.seq BETWEEN $2 AND $3 \
             AND m.deleted_at IS NULL ORDER BY m.seq"
        )
        .bind(conversation.to_string())
        .bind(first)
        .bind(last)
        .fetch_all(pool)
        .await)?;
        rows.into_iter().map(stored).collect()
    }

    /// What a conversation's chat turns cost together: its live answers outside runs (a run's
    /// calls, answered or not, are summed per run in `model_calls`).
    pub async fn chat_totals(&self, conversation: ConversationId) -> Result<AnswerTotals> {
        let row: (i64, i64, i64, i64, i64, Option<i64>) = on_pool!(self.store, |pool, d| {
            sqlx::query_as(
                // The casts: PostgreSQL sums BIGINTs as NUMERIC.
                "SELECT CAST(COUNT(*) AS BIGINT), CAST(COALESCE(SUM(a.tokens_in), 0) AS BIGINT), \
                 CAST(COALESCE(SUM(a.tokens_out), 0) AS BIGINT), \
                 CAST(COALESCE(SUM(a.cache_read_tokens), 0) AS BIGINT), \
                 CAST(COALESCE(SUM(a.cache_write_tokens), 0) AS BIGINT), \
                 CAST(SUM(a.cost_microdollars) AS BIGINT) \
                 FROM answers a JOIN messages m ON m.id = a.message_id \
                 WHERE a.conversation_id = $1 AND m.deleted_at IS NULL \
                 AND m.execution_id IS NULL",
            )
            .bind(conversation.to_string())
            .fetch_one(pool)
            .await
        })?;
        let count = |v: i64| u64::try_from(v).map_err(|e| corrupt("answer totals", e));
        Ok(AnswerTotals {
            answers: count(row.0)?,
            tokens_in: count(row.1)?,
            tokens_out: count(row.2)?,
            cache_read_tokens: count(row.3)?,
            cache_write_tokens: count(row.4)?,
            cost_microdollars: row.5.map(count).transpose()?,
        })
    }
}

fn stored(row: Row) -> Result<StoredAnswer> {
    let (id, seq, ended, tokens_in, tokens_out, cache_read, cache_write, cost, truncated, form) =
        row;
    let number = |v: i64| u32::try_from(v).map_err(|e| corrupt("answer usage", e));
    let usage = match (tokens_in, tokens_out) {
        (Some(tokens_in), Some(tokens_out)) => Some(CallUsage {
            tokens_in: number(tokens_in)?,
            tokens_out: number(tokens_out)?,
            cache_read_tokens: number(cache_read.unwrap_or(0))?,
            cache_write_tokens: number(cache_write.unwrap_or(0))?,
        }),
        _ => None,
    };
    Ok(StoredAnswer {
        message_id: id.parse().map_err(|e| corrupt("answer message id", e))?,
        seq,
        record: AnswerRecord {
            ended: named("answer end", &ended)?,
            usage,
            cost_microdollars: cost
                .map(u64::try_from)
                .transpose()
                .map_err(|e| corrupt("answer cost", e))?,
            prompt_truncated: truncated,
            calls_from_text: form,
        },
    })
}
