//! What a run cost and how it ended: its model calls with their tokens and prices, the sums
//! per execution and per conversation, whether the final review contested it, and who ended it.

use decima_core::{ConversationId, ExecutionId, Timestamp};

use super::Executions;
use crate::on_pool;
use crate::rows::corrupt;
use crate::{Result, StoreError};

/// A run's model calls and the tokens the provider reported for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunUsage {
    /// Requests answered by the model.
    pub model_calls: u32,
    /// Tokens sent (the provider's prompt tokens, summed over the calls).
    pub tokens_in: u64,
    /// Tokens received.
    pub tokens_out: u64,
    /// Of the tokens sent, those the provider read from its prompt cache: what a request
    /// layout that keeps its prefix stable saves.
    pub cache_read_tokens: u64,
    /// Of the tokens sent, those written to the provider's prompt cache.
    pub cache_write_tokens: u64,
    /// The estimated cost in millionths of a US dollar, from the provider's prices when each
    /// call was answered; `None` when no call was priced (no prices set, or no usage reported).
    pub cost_microdollars: Option<u64>,
}

impl RunUsage {
    /// The estimated cost in US dollars, as the CLI and the window show it; `None` when no
    /// call was priced.
    pub fn cost_usd(&self) -> Option<f64> {
        self.cost_microdollars.map(|c| c as f64 / 1_000_000.0)
    }

    /// The share of the tokens sent that were read from the cache, in percent (0 with none
    /// sent).
    pub fn cached_percent(&self) -> u32 {
        if self.tokens_in == 0 {
            return 0;
        }
        u32::try_from(self.cache_read_tokens.min(self.tokens_in) * 100 / self.tokens_in)
            .unwrap_or(100)
    }
}

/// What the provider reported for one model call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CallUsage {
    /// Prompt tokens, cache reads and writes included.
    pub tokens_in: u32,
    /// Tokens generated.
    pub tokens_out: u32,
    /// Of the prompt, read from the prompt cache.
    pub cache_read_tokens: u32,
    /// Of the prompt, written to the prompt cache.
    pub cache_write_tokens: u32,
}

/// One model call of a run, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelCall {
    /// 1, 2, ... within the run.
    pub n: u32,
    /// What the provider reported; `None` when it reported nothing.
    pub usage: Option<CallUsage>,
    /// When it was answered.
    pub at: Timestamp,
}

/// The analyst ended a run: with Stop, or by aborting it after a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunEnding {
    /// How.
    pub by: EndedBy,
    /// The steps it had taken.
    pub step: u32,
    /// The conversation's last seq when it ended: the row goes after it.
    pub after_seq: i64,
}

/// Which of the analyst's actions ended a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum EndedBy {
    /// The Stop button or Ctrl-C.
    Stop,
    /// Abort, as the answer to a failure.
    Abort,
}

impl EndedBy {
    /// The text stored in `executions.ended_by`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl Executions<'_> {
    /// Marks the run's result as contested (a high or critical final review) or not. The
    /// answer itself is never touched.
    pub async fn set_contested(&self, id: ExecutionId, contested: bool) -> Result<()> {
        let done = on_pool!(self.store, |pool, d| sqlx::query(
            "UPDATE executions SET contested = $1, updated_at = $2 WHERE id = $3"
        )
        .bind(contested)
        .bind(Timestamp::now().0)
        .bind(id.to_string())
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))?;
        if done == 0 {
            return Err(StoreError::not_found("execution", id));
        }
        Ok(())
    }

    /// Records that the analyst ended the run (`by`) at `step`, with the conversation's last
    /// live seq then (a rollback may have removed later ones), so the conversation can show
    /// where.
    pub async fn record_ending(&self, id: ExecutionId, by: EndedBy, step: u32) -> Result<()> {
        let done = on_pool!(self.store, |pool, d| sqlx::query(
            "UPDATE executions SET ended_by = $1, ended_at_step = $2, \
             ended_after_seq = (SELECT COALESCE(MAX(seq), 0) FROM messages \
                                WHERE messages.conversation_id = executions.conversation_id \
                                  AND deleted_at IS NULL), \
             updated_at = $3 WHERE id = $4",
        )
        .bind(by.as_str())
        .bind(i64::from(step))
        .bind(Timestamp::now().0)
        .bind(id.to_string())
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))?;
        if done == 0 {
            return Err(StoreError::not_found("execution", id));
        }
        Ok(())
    }

    /// Adds one answered model call and what the provider reported for it (`None` when it
    /// reported nothing: the call still counts). One statement: the call's number comes from
    /// the run's count, and a trigger adds it to the run's sums.
    pub async fn add_model_call(
        &self,
        id: ExecutionId,
        usage: Option<CallUsage>,
        cost_microdollars: Option<u64>,
    ) -> Result<()> {
        let figure = |f: fn(&CallUsage) -> u32| usage.as_ref().map(|u| i64::from(f(u)));
        let cost = cost_microdollars
            .map(i64::try_from)
            .transpose()
            .map_err(|_| StoreError::InvalidInput("a model call's cost is out of range".into()))?;
        let done = on_pool!(self.store, |pool, d| sqlx::query(
            "INSERT INTO model_calls (execution_id, n, tokens_in, tokens_out, \
             cache_read_tokens, cache_write_tokens, cost_microdollars, created_at) \
             SELECT id, model_calls + 1, $1, $2, $3, $4, $5, $6 FROM executions WHERE id = $7",
        )
        .bind(figure(|u| u.tokens_in))
        .bind(figure(|u| u.tokens_out))
        .bind(figure(|u| u.cache_read_tokens))
        .bind(figure(|u| u.cache_write_tokens))
        .bind(cost)
        .bind(Timestamp::now().0)
        .bind(id.to_string())
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))?;
        if done == 0 {
            return Err(StoreError::not_found("execution", id));
        }
        Ok(())
    }

    /// A run's model calls, in order, with what each carried.
    pub async fn model_calls(&self, id: ExecutionId) -> Result<Vec<ModelCall>> {
        type Row = (i64, Option<i64>, Option<i64>, Option<i64>, Option<i64>, i64);
        let rows: Vec<Row> = on_pool!(self.store, |pool, d| {
            sqlx::query_as(
            "SELECT n, tokens_in, tokens_out, cache_read_tokens, cache_write_tokens, created_at \
             FROM model_calls WHERE execution_id = $1 ORDER BY n",
        )
        .bind(id.to_string())
        .fetch_all(pool)
        .await
        })?;
        let count = |v: Option<i64>, what: &'static str| -> Result<u32> {
            u32::try_from(v.unwrap_or(0)).map_err(|e| corrupt(what, e))
        };
        rows.into_iter()
            .map(|(n, tokens_in, tokens_out, read, write, at)| {
                let reported = tokens_in.is_some() || tokens_out.is_some();
                Ok(ModelCall {
                    n: u32::try_from(n).map_err(|e| corrupt("model call number", e))?,
                    usage: if reported {
                        Some(CallUsage {
                            tokens_in: count(tokens_in, "tokens in")?,
                            tokens_out: count(tokens_out, "tokens out")?,
                            cache_read_tokens: count(read, "cache read tokens")?,
                            cache_write_tokens: count(write, "cache write tokens")?,
                        })
                    } else {
                        None
                    },
                    at: Timestamp(at),
                })
            })
            .collect()
    }

    /// What a conversation's runs cost, summed (its subagents run in their own
    /// conversations, and are not in it).
    pub async fn conversation_usage(&self, conversation: ConversationId) -> Result<RunUsage> {
        type Row = (i64, i64, i64, i64, i64, Option<i64>);
        let (calls, tokens_in, tokens_out, read, write, cost): Row =
            on_pool!(self.store, |pool, d| sqlx::query_as(
                // The casts: PostgreSQL sums BIGINTs as NUMERIC.
                "SELECT CAST(COALESCE(SUM(model_calls), 0) AS BIGINT), \
                 CAST(COALESCE(SUM(tokens_in), 0) AS BIGINT), \
                 CAST(COALESCE(SUM(tokens_out), 0) AS BIGINT), \
                 CAST(COALESCE(SUM(cache_read_tokens), 0) AS BIGINT), \
                 CAST(COALESCE(SUM(cache_write_tokens), 0) AS BIGINT), \
                 CAST(SUM(cost_microdollars) AS BIGINT) \
                 FROM executions WHERE conversation_id = $1",
            )
            .bind(conversation.to_string())
            .fetch_one(pool)
            .await)?;
        let total = |v: i64, what: &'static str| u64::try_from(v).map_err(|e| corrupt(what, e));
        Ok(RunUsage {
            model_calls: u32::try_from(calls).map_err(|e| corrupt("model call count", e))?,
            tokens_in: total(tokens_in, "tokens in")?,
            tokens_out: total(tokens_out, "tokens out")?,
            cache_read_tokens: total(read, "cache read tokens")?,
            cache_write_tokens: total(write, "cache write tokens")?,
            cost_microdollars: cost.map(|c| total(c, "run cost")).transpose()?,
        })
    }

    /// How many compactions the run made: those of its conversation stored while it ran, that a
    /// person did not ask for. Each one changes the summaries, so the providers' caches miss
    /// from the first summary on at the next request; the run history shows the count. (A
    /// conversation runs one execution at a time, so the window of time is the run's own.)
    pub async fn compressions(&self, id: ExecutionId) -> Result<u32> {
        let n: Option<i64> = on_pool!(self.store, |pool, d| {
            sqlx::query_scalar(
            "SELECT (SELECT COUNT(*) FROM compactions c                      WHERE c.conversation_id = e.conversation_id AND c.trigger <> 'manual'                        AND c.created_at >= COALESCE(e.started_at, e.created_at)                        AND (e.finished_at IS NULL OR c.created_at <= e.finished_at))              FROM executions e WHERE e.id = $1",
        )
        .bind(id.to_string())
        .fetch_optional(pool)
        .await
        })?;
        let n = n.ok_or_else(|| StoreError::not_found("execution", id))?;
        u32::try_from(n).map_err(|e| corrupt("compression count", e))
    }

    /// Whether a final review contested the run's result.
    pub async fn contested(&self, id: ExecutionId) -> Result<bool> {
        let row: Option<bool> = on_pool!(self.store, |pool, d| sqlx::query_scalar(
            "SELECT contested FROM executions WHERE id = $1"
        )
        .bind(id.to_string())
        .fetch_optional(pool)
        .await)?;
        row.ok_or_else(|| StoreError::not_found("execution", id))
    }
}
