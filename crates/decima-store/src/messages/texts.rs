//! A seq range's texts and totals, read in one row built by the database: what summaries and
//! reviews read from long histories.

use decima_core::{ConversationId, Role, ToolCall};

use super::Messages;
use crate::rows::corrupt;
use crate::{Result, SeqFingerprint, on_pool};

/// The texts of a seq range's live messages as SQLite builds them, in one row: what a summary
/// needs (role, content, tool calls, the call a result answers) without the per-row cost of
/// reading thousands of rows one by one. [`MessageTexts::parse`] reads them, on whichever
/// thread the caller chooses.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MessageTexts {
    json: String,
    fingerprint: SeqFingerprint,
}

/// One message's text, as [`MessageTexts::parse`] gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageText {
    /// Its seq.
    pub seq: i64,
    /// Who said it.
    pub role: Role,
    /// The text.
    pub content: String,
    /// Its tool calls.
    pub tool_calls: Vec<ToolCall>,
    /// The call it answers, for a tool result.
    pub tool_call_id: Option<String>,
}

impl MessageTexts {
    /// How many messages it holds.
    pub fn len(&self) -> u64 {
        self.fingerprint.messages
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.fingerprint.messages == 0
    }

    /// The live count, tokens and seq sum of the messages it holds, read with them.
    pub fn fingerprint(&self) -> SeqFingerprint {
        self.fingerprint
    }

    /// The messages, in seq order.
    pub fn parse(&self) -> Result<Vec<MessageText>> {
        type Row = (i64, String, String, Option<Vec<ToolCall>>, Option<String>);
        let rows: Vec<Row> =
            serde_json::from_str(&self.json).map_err(|e| corrupt("message texts", e))?;
        let mut out = rows
            .into_iter()
            .map(|(seq, role, content, tool_calls, tool_call_id)| {
                Ok(MessageText {
                    seq,
                    role: role.parse::<Role>().map_err(|e| corrupt("role", e))?,
                    content,
                    tool_calls: tool_calls.unwrap_or_default(),
                    tool_call_id,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        out.sort_by_key(|m| m.seq);
        Ok(out)
    }
}

/// A count of messages and their cached tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SeqTotals {
    /// Live messages in the range.
    pub count: u64,
    /// Their cached token counts, summed.
    pub tokens: u64,
}

impl Messages<'_> {
    /// The texts of the live messages `from..=through` (see [`MessageTexts`]): one row that
    /// SQLite builds, for a summary of thousands of messages, with the fingerprint of what it
    /// read, so a digest of them is cached against exactly those messages.
    pub async fn texts_between(
        &self,
        conversation: ConversationId,
        from: i64,
        through: i64,
    ) -> Result<MessageTexts> {
        let (count, tokens, seq_sum, json): (i64, i64, i64, String) =
            on_pool!(self.store, |pool, d| {
                let calls = match d {
                    crate::Dialect::Sqlite => "json(tool_calls)",
                    crate::Dialect::Postgres => "tool_calls::json",
                };
                let sql = format!(
                    "SELECT COUNT(*), CAST(COALESCE(SUM(tokens), 0) AS BIGINT), \
                     CAST(COALESCE(SUM(seq), 0) AS BIGINT), {} \
                     FROM (SELECT seq, role, content, tool_calls, tool_call_id, tokens \
                     FROM messages WHERE conversation_id = $1 AND seq >= $2 AND seq <= $3 \
                     AND deleted_at IS NULL ORDER BY seq) AS texts",
                    d.json_group_array(&format!(
                        "{}(seq, role, content, {calls}, tool_call_id)",
                        d.json_array()
                    ))
                );
                sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(conversation.to_string())
                    .bind(from)
                    .bind(through)
                    .fetch_one(pool)
                    .await?
            });
        Ok(MessageTexts {
            json,
            fingerprint: SeqFingerprint {
                messages: u64::try_from(count).map_err(|e| corrupt("count", e))?,
                tokens: u64::try_from(tokens).map_err(|e| corrupt("tokens", e))?,
                seq_sum,
            },
        })
    }

    /// How many live messages lie in `after < seq < before`, and their cached tokens, summed by
    /// SQLite: measuring what is not loaded costs one indexed aggregate, not its contents.
    pub async fn totals_between(
        &self,
        conversation: ConversationId,
        after: i64,
        before: i64,
    ) -> Result<SeqTotals> {
        let (count, tokens): (i64, i64) = on_pool!(self.store, |pool, d| sqlx::query_as(
            "SELECT COUNT(*), CAST(COALESCE(SUM(tokens), 0) AS BIGINT) FROM messages \
             WHERE conversation_id = $1 AND seq > $2 AND seq < $3 AND deleted_at IS NULL",
        )
        .bind(conversation.to_string())
        .bind(after)
        .bind(before)
        .fetch_one(pool)
        .await)?;
        Ok(SeqTotals {
            count: u64::try_from(count).unwrap_or(0),
            tokens: u64::try_from(tokens).unwrap_or(0),
        })
    }
}
