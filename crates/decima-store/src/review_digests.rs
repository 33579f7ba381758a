//! The tenth man's own summaries of seq ranges, made with the extract strategy for a review and
//! cached here so the next review (in any process: the CLI is a new one each time) reuses them
//! without reading the messages again. They are not compactions: no agent step and no
//! compaction list reads this table. See the `review_digests` table.
//!
//! A row is only as good as the messages it summarised: each carries the live count, tokens and
//! seq sum of its range when it was made, and [`ReviewDigests::fingerprints`] measures them
//! again with one SQL aggregate over the cached per-message token counts, never the contents.

use decima_core::{ConversationId, Timestamp};
use sqlx::FromRow;

use crate::BeginWrite;
use crate::on_pool;
use crate::rows::corrupt;
use crate::{Result, Store};

/// Ready-to-send renderings kept per conversation: a few reviewers, types and ranges. Block
/// digests are not capped: there is one per block of history.
const RENDERED_PER_CONVERSATION: i64 = 16;

/// What the live messages of a seq range were when a digest of them was made: a rollback (or
/// any other change of which messages are live) changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SeqFingerprint {
    /// Live messages in the range.
    pub messages: u64,
    /// Their cached token counts, summed.
    pub tokens: u64,
    /// Their seqs, summed: which messages are live, not only how many.
    pub seq_sum: i64,
}

/// Two adjacent ranges' fingerprints add up to their union's: counts and sums add.
impl std::ops::Add for SeqFingerprint {
    type Output = Self;

    fn add(self, other: Self) -> Self {
        Self {
            messages: self.messages + other.messages,
            tokens: self.tokens + other.tokens,
            seq_sum: self.seq_sum + other.seq_sum,
        }
    }
}

/// One cached summary of the live messages `from_seq..=through_seq`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewDigest {
    /// The first seq it covers.
    pub from_seq: i64,
    /// The last seq it covers.
    pub through_seq: i64,
    /// 0: the whole digest of a block, to be parsed back and merged; above 0: the range
    /// rendered within this many tokens.
    pub budget: u32,
    /// The live messages it was made from.
    pub fingerprint: SeqFingerprint,
    /// The digest's text.
    pub text: String,
    /// Its tokens (store counts).
    pub tokens: u32,
}

#[derive(FromRow)]
struct DigestRow {
    from_seq: i64,
    through_seq: i64,
    budget: i64,
    live_messages: i64,
    live_tokens: i64,
    seq_sum: i64,
    text: String,
    tokens: i64,
}

impl TryFrom<DigestRow> for ReviewDigest {
    type Error = crate::StoreError;

    fn try_from(row: DigestRow) -> Result<Self> {
        Ok(ReviewDigest {
            from_seq: row.from_seq,
            through_seq: row.through_seq,
            budget: u32::try_from(row.budget).map_err(|e| corrupt("digest budget", e))?,
            fingerprint: SeqFingerprint {
                messages: u64::try_from(row.live_messages)
                    .map_err(|e| corrupt("digest messages", e))?,
                tokens: u64::try_from(row.live_tokens).map_err(|e| corrupt("digest tokens", e))?,
                seq_sum: row.seq_sum,
            },
            text: row.text,
            tokens: u32::try_from(row.tokens).map_err(|e| corrupt("digest tokens", e))?,
        })
    }
}

/// Review-digest operations, borrowed from a [`Store`].
pub struct ReviewDigests<'s> {
    store: &'s Store,
}

impl<'s> ReviewDigests<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// The rows of `version` that lie within `from..=through` with the given budget, ordered by
    /// start, then end. They are not checked: see [`ReviewDigests::fingerprints`].
    pub async fn within(
        &self,
        conversation: ConversationId,
        version: u32,
        from: i64,
        through: i64,
        budget: u32,
    ) -> Result<Vec<ReviewDigest>> {
        let rows: Vec<DigestRow> = on_pool!(self.store, |pool, d| {
            sqlx::query_as(
            "SELECT from_seq, through_seq, budget, live_messages, live_tokens, seq_sum, text, \
             tokens FROM review_digests WHERE conversation_id = $1 AND version = $2 \
             AND from_seq >= $3 AND through_seq <= $4 AND budget = $5 ORDER BY from_seq, through_seq",
        )
        .bind(conversation.to_string())
        .bind(i64::from(version))
        .bind(from)
        .bind(through)
        .bind(i64::from(budget))
        .fetch_all(pool)
        .await
        })?;
        rows.into_iter().map(ReviewDigest::try_from).collect()
    }

    /// The live count, tokens and seq sum of each range `(from, through)`, inclusive, in the
    /// order given: one indexed aggregate over the cached token counts, which never reads a
    /// message's content.
    pub async fn fingerprints(
        &self,
        conversation: ConversationId,
        ranges: &[(i64, i64)],
    ) -> Result<Vec<SeqFingerprint>> {
        if ranges.is_empty() {
            return Ok(Vec::new());
        }
        let list = serde_json::to_string(ranges).map_err(|e| corrupt("seq ranges", e))?;
        let rows: Vec<(i64, i64, i64, i64)> = on_pool!(self.store, |pool, d| {
            let sql = match d {
                crate::Dialect::Sqlite => {
                    "SELECT r.key, COUNT(m.seq), COALESCE(SUM(m.tokens), 0), \
                     COALESCE(SUM(m.seq), 0) \
                     FROM json_each($2) r LEFT JOIN messages m ON m.conversation_id = $1 \
                     AND m.seq >= json_extract(r.value, '$[0]') \
                     AND m.seq <= json_extract(r.value, '$[1]') \
                     AND m.deleted_at IS NULL GROUP BY r.key ORDER BY r.key"
                }
                crate::Dialect::Postgres => {
                    "SELECT r.ord, COUNT(m.seq), CAST(COALESCE(SUM(m.tokens), 0) AS BIGINT), \
                     CAST(COALESCE(SUM(m.seq), 0) AS BIGINT) \
                     FROM json_array_elements($2::json) WITH ORDINALITY AS r(value, ord) \
                     LEFT JOIN messages m ON m.conversation_id = $1 \
                     AND m.seq >= (r.value->>0)::bigint AND m.seq <= (r.value->>1)::bigint \
                     AND m.deleted_at IS NULL GROUP BY r.ord ORDER BY r.ord"
                }
            };
            sqlx::query_as(sql)
                .bind(conversation.to_string())
                .bind(list)
                .fetch_all(pool)
                .await?
        });
        rows.into_iter()
            .map(|(_, messages, tokens, seq_sum)| {
                Ok(SeqFingerprint {
                    messages: u64::try_from(messages).map_err(|e| corrupt("count", e))?,
                    tokens: u64::try_from(tokens).map_err(|e| corrupt("tokens", e))?,
                    seq_sum,
                })
            })
            .collect()
    }

    /// Stores digests and forgets the rows in `stale` (the smaller digests they replace, or
    /// rows found out of date), in one write transaction. Renderings beyond the
    /// per-conversation cap are forgotten, least recently used first.
    pub async fn put(
        &self,
        conversation: ConversationId,
        version: u32,
        digests: &[ReviewDigest],
        stale: &[(i64, i64, u32)],
    ) -> Result<()> {
        if digests.is_empty() && stale.is_empty() {
            return Ok(());
        }
        let id = conversation.to_string();
        let now = Timestamp::now().0;
        on_pool!(self.store, |pool, dialect| {
            let mut tx = pool.begin_write().await?;
            for (from, through, budget) in stale {
                sqlx::query(
                    "DELETE FROM review_digests WHERE conversation_id = $1 AND version = $2 \
                     AND from_seq = $3 AND through_seq = $4 AND budget = $5",
                )
                .bind(&id)
                .bind(i64::from(version))
                .bind(from)
                .bind(through)
                .bind(i64::from(*budget))
                .execute(&mut *tx)
                .await?;
            }
            // Rows of an older format are never read again.
            sqlx::query("DELETE FROM review_digests WHERE conversation_id = $1 AND version <> $2")
                .bind(&id)
                .bind(i64::from(version))
                .execute(&mut *tx)
                .await?;
            for d in digests {
                sqlx::query(
                    "INSERT INTO review_digests (conversation_id, version, from_seq, through_seq, \
                     budget, live_messages, live_tokens, seq_sum, text, tokens, used_at) \
                     SELECT id, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 FROM conversations WHERE id = $11 \
                     ON CONFLICT (conversation_id, version, from_seq, through_seq, budget) DO UPDATE \
                     SET live_messages = excluded.live_messages, live_tokens = excluded.live_tokens, \
                     seq_sum = excluded.seq_sum, text = excluded.text, tokens = excluded.tokens, \
                     used_at = excluded.used_at",
                )
                .bind(i64::from(version))
                .bind(d.from_seq)
                .bind(d.through_seq)
                .bind(i64::from(d.budget))
                .bind(i64::try_from(d.fingerprint.messages).unwrap_or(i64::MAX))
                .bind(i64::try_from(d.fingerprint.tokens).unwrap_or(i64::MAX))
                .bind(d.fingerprint.seq_sum)
                .bind(&d.text)
                .bind(i64::from(d.tokens))
                .bind(now)
                .bind(&id)
                .execute(&mut *tx)
                .await?;
            }
            sqlx::query(
                "DELETE FROM review_digests WHERE conversation_id = $1 AND budget > 0 AND \
                 (from_seq, through_seq, budget) NOT IN (SELECT from_seq, through_seq, budget \
                  FROM review_digests WHERE conversation_id = $1 AND budget > 0 \
                  ORDER BY used_at DESC, through_seq DESC LIMIT $2)",
            )
            .bind(&id)
            .bind(RENDERED_PER_CONVERSATION)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
        });
        Ok(())
    }

    /// How many rows the conversation has, of any version and budget: for tests and the
    /// benchmark, which check that a review summary was cached rather than stored elsewhere.
    pub async fn count(&self, conversation: ConversationId) -> Result<u64> {
        let n: i64 = on_pool!(self.store, |pool, d| sqlx::query_scalar(
            "SELECT COUNT(*) FROM review_digests WHERE conversation_id = $1"
        )
        .bind(conversation.to_string())
        .fetch_one(pool)
        .await)?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}
