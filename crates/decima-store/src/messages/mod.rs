//! The messages repository: appends with gapless seqs, ranges, pins and rollbacks.

use decima_core::{ConversationId, ExecutionId, Message, NewMessage, Role, Timestamp};

use crate::rows::{
    MessageRow, message_columns, message_columns_m, message_json, messages_from_json,
};
use crate::{BeginWrite, Result, Store, StoreError, on_pool};

mod append;
mod texts;

pub(crate) use append::refuse_nul;
pub use texts::{MessageText, MessageTexts, SeqTotals};

/// Rows per multi-row INSERT: 14 columns × 64 rows stays far below SQLite's 32,766 bind limit,
/// and amortises the per-statement cost that dominates bulk imports.
pub(crate) const INSERT_CHUNK: usize = 64;

/// A draft with its token count, priced before the write lock is taken.
pub(crate) struct Priced<'a> {
    pub(crate) message: &'a NewMessage,
    pub(crate) tokens: u32,
}

/// What the agent loop notes with a message (see [`Messages::append_noting`]).
#[derive(Debug, Clone, Copy)]
pub struct StepNotes<'a> {
    /// The execution the records and the marker belong to.
    pub execution: ExecutionId,
    /// Step records, in order.
    pub records: &'a [(crate::StepKind, &'a str)],
    /// A tool call about to run, as (call id, tool name): its `tool.started` marker, which
    /// resume reads to never run a call twice.
    pub started_call: Option<(&'a str, &'a str)>,
}

/// Message operations, borrowed from a [`Store`].
pub struct Messages<'s> {
    pub(crate) store: &'s Store,
}

impl<'s> Messages<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Counts tokens for each draft. This is the only place a message is ever counted.
    pub(crate) fn price<'a>(&self, messages: &'a [NewMessage]) -> Vec<Priced<'a>> {
        let counter = self.store.counter();
        messages
            .iter()
            .map(|message| Priced {
                message,
                tokens: counter.count_message(message),
            })
            .collect()
    }

    /// One live message by seq.
    pub async fn get(&self, conversation: ConversationId, seq: i64) -> Result<Message> {
        let sql = concat!(
            "SELECT ",
            message_columns!(),
            " FROM messages WHERE conversation_id = $1 AND seq = $2 AND deleted_at IS NULL"
        );
        let row: Option<MessageRow> = on_pool!(self.store, |pool, d| {
            sqlx::query_as(sql)
                .bind(conversation.to_string())
                .bind(seq)
                .fetch_optional(pool)
                .await?
        });
        match row {
            Some(row) => row.try_into(),
            None => Err(StoreError::not_found(
                "message",
                format!("seq {seq} of conversation {conversation}"),
            )),
        }
    }

    /// Live messages with `from <= seq <= to`, in seq order.
    pub async fn range(
        &self,
        conversation: ConversationId,
        from: i64,
        to: i64,
    ) -> Result<Vec<Message>> {
        let sql = concat!(
            "SELECT ",
            message_columns!(),
            " FROM messages WHERE conversation_id = $1 AND seq BETWEEN $2 AND $3 \
             AND deleted_at IS NULL ORDER BY seq"
        );
        let rows: Vec<MessageRow> = on_pool!(self.store, |pool, d| {
            sqlx::query_as(sql)
                .bind(conversation.to_string())
                .bind(from)
                .bind(to)
                .fetch_all(pool)
                .await?
        });
        rows.into_iter().map(Message::try_from).collect()
    }

    /// Which of `seqs` are live messages of the conversation: evidence must point at real ones.
    pub async fn live_seqs_among(
        &self,
        conversation: ConversationId,
        seqs: &[i64],
    ) -> Result<Vec<i64>> {
        if seqs.is_empty() {
            return Ok(Vec::new());
        }
        let list =
            serde_json::to_string(seqs).map_err(|e| StoreError::InvalidInput(e.to_string()))?;
        let found: Vec<i64> = on_pool!(self.store, |pool, d| {
            let each = match d {
                crate::Dialect::Sqlite => "SELECT value FROM json_each($2)",
                crate::Dialect::Postgres => {
                    "SELECT CAST(json_array_elements_text($2::json) AS BIGINT)"
                }
            };
            let sql = format!(
                "SELECT seq FROM messages WHERE conversation_id = $1 AND deleted_at IS NULL \
                 AND seq IN ({each}) ORDER BY seq"
            );
            sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                .bind(conversation.to_string())
                .bind(list)
                .fetch_all(pool)
                .await?
        });
        Ok(found)
    }

    /// Every live message of a conversation, in seq order.
    pub async fn all(&self, conversation: ConversationId) -> Result<Vec<Message>> {
        self.range(conversation, 1, i64::MAX).await
    }

    /// Pins or unpins a message. Pinned messages are never compressed away.
    pub async fn set_pinned(
        &self,
        conversation: ConversationId,
        seq: i64,
        pinned: bool,
    ) -> Result<Message> {
        on_pool!(self.store, |pool, dialect| {
            let mut tx = pool.begin_write().await?;
            let done = sqlx::query(
                "UPDATE messages SET pinned = $1 WHERE conversation_id = $2 AND seq = $3 AND deleted_at IS NULL",
            )
            .bind(pinned)
            .bind(conversation.to_string())
            .bind(seq)
            .execute(&mut *tx)
            .await?;
            if done.rows_affected() == 0 {
                return Err(StoreError::not_found(
                    "message",
                    format!("seq {seq} of conversation {conversation}"),
                ));
            }
            touch!(tx, conversation);
            tx.commit().await?;
        });
        self.get(conversation, seq).await
    }

    /// How many messages were soft-deleted at or after `since`: an export written before a
    /// rollback holds messages that are gone, and must be rewritten rather than appended to.
    pub async fn deleted_since(
        &self,
        conversation: ConversationId,
        since: Timestamp,
    ) -> Result<u64> {
        let n: i64 = on_pool!(self.store, |pool, d| sqlx::query_scalar(
            "SELECT COUNT(*) FROM messages WHERE conversation_id = $1 AND deleted_at >= $2",
        )
        .bind(conversation.to_string())
        .bind(since.0)
        .fetch_one(pool)
        .await)?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// Soft-deletes every live message after `seq` (a rollback). The rows stay, and their seqs are
    /// never reused. Every summary that covers a deleted message is retired in the same
    /// transaction, so rolled-back content never reaches the model through a summary, and an undo
    /// of an older compaction cannot revive one; so are the tenth man's cached summaries of
    /// them. Returns how many messages were deleted.
    pub async fn soft_delete_after(&self, conversation: ConversationId, seq: i64) -> Result<u64> {
        let deleted = on_pool!(self.store, |pool, dialect| {
            let mut tx = pool.begin_write().await?;
            touch!(tx, conversation);
            let now = Timestamp::now().0;
            let done = sqlx::query(
                "UPDATE messages SET deleted_at = $1 WHERE conversation_id = $2 AND seq > $3 AND deleted_at IS NULL",
            )
            .bind(now)
            .bind(conversation.to_string())
            .bind(seq)
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "UPDATE summaries SET rolled_back_at = $1 \
                 WHERE conversation_id = $2 AND end_seq > $3 AND rolled_back_at IS NULL",
            )
            .bind(now)
            .bind(conversation.to_string())
            .bind(seq)
            .execute(&mut *tx)
            .await?;
            // The tenth man's cached summaries of a range that lost messages are gone too (a read
            // would also find them out of date, by their fingerprint).
            sqlx::query(
                "DELETE FROM review_digests WHERE conversation_id = $1 AND through_seq > $2",
            )
            .bind(conversation.to_string())
            .bind(seq)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            done.rows_affected()
        });
        Ok(deleted)
    }

    /// Brings back the messages after `seq` that were soft-deleted at or after `since`, and the
    /// summaries retired with them: the undo of a rollback the analyst asked for, when nothing
    /// was written since. Returns the messages brought back.
    pub async fn restore_deleted_since(
        &self,
        conversation: ConversationId,
        seq: i64,
        since: Timestamp,
    ) -> Result<u64> {
        let restored = on_pool!(self.store, |pool, dialect| {
            let mut tx = pool.begin_write().await?;
            touch!(tx, conversation);
            let done = sqlx::query(
                "UPDATE messages SET deleted_at = NULL WHERE conversation_id = $1 AND seq > $2 \
                 AND deleted_at >= $3",
            )
            .bind(conversation.to_string())
            .bind(seq)
            .bind(since.0)
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "UPDATE summaries SET rolled_back_at = NULL WHERE conversation_id = $1 \
                 AND end_seq > $2 AND rolled_back_at >= $3",
            )
            .bind(conversation.to_string())
            .bind(seq)
            .bind(since.0)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            done.rows_affected()
        });
        Ok(restored)
    }

    /// Whether the conversation holds a live message written by this execution: a resumed
    /// run checks that its task was stored before the process died.
    pub async fn any_of_execution(
        &self,
        conversation: ConversationId,
        execution: ExecutionId,
    ) -> Result<bool> {
        let found: Option<i64> = on_pool!(self.store, |pool, d| {
            sqlx::query_scalar(
            "SELECT CAST(1 AS BIGINT) FROM messages WHERE conversation_id = $1 AND execution_id = $2 \
             AND deleted_at IS NULL LIMIT 1",
        )
        .bind(conversation.to_string())
        .bind(execution.to_string())
        .fetch_optional(pool)
        .await
        })?;
        Ok(found.is_some())
    }

    /// The newest live messages with `after < seq < before`, at most `limit`, returned in seq
    /// order. A step walks the history backwards in such pages and stops once the window is
    /// full, so its cost follows the window rather than the history.
    pub async fn page_before(
        &self,
        conversation: ConversationId,
        after: i64,
        before: i64,
        limit: u32,
    ) -> Result<Vec<Message>> {
        let sql = concat!(
            "SELECT COALESCE(json_group_array(",
            message_json!(),
            "), '[]') FROM (SELECT * FROM messages WHERE conversation_id = $1 AND seq > $2 \
             AND seq < $3 AND deleted_at IS NULL ORDER BY seq DESC LIMIT $4)"
        );
        let pool = match self.store.backend() {
            crate::Backend::Sqlite(pool) => pool,
            crate::Backend::Postgres(pool) => {
                // A server sends rows in one stream; SQLite's JSON detour buys nothing here.
                let sql = concat!(
                    "SELECT ",
                    message_columns!(),
                    " FROM messages WHERE conversation_id = $1 AND seq > $2 AND seq < $3 \
                     AND deleted_at IS NULL ORDER BY seq DESC LIMIT $4"
                );
                let rows: Vec<MessageRow> = Box::pin(
                    sqlx::query_as(sql)
                        .bind(conversation.to_string())
                        .bind(after)
                        .bind(before)
                        .bind(i64::from(limit))
                        .fetch_all(pool),
                )
                .await?;
                let mut messages = rows
                    .into_iter()
                    .map(Message::try_from)
                    .collect::<Result<Vec<_>>>()?;
                messages.reverse();
                return Ok(messages);
            }
        };
        let json: String = sqlx::query_scalar(sql)
            .bind(conversation.to_string())
            .bind(after)
            .bind(before)
            .bind(i64::from(limit))
            .fetch_one(pool)
            .await?;
        let mut messages = messages_from_json(&json)?;
        // An aggregate's order follows its subquery's in SQLite; sorting does not rely on it.
        messages.sort_unstable_by_key(|m| m.seq);
        Ok(messages)
    }

    /// The oldest live messages with `seq > after`, at most `limit`, in seq order: the window
    /// reads downwards from a message it jumped to.
    pub async fn page_after(
        &self,
        conversation: ConversationId,
        after: i64,
        limit: u32,
    ) -> Result<Vec<Message>> {
        let sql = concat!(
            "SELECT ",
            message_columns!(),
            " FROM messages WHERE conversation_id = $1 AND seq > $2 \
             AND deleted_at IS NULL ORDER BY seq LIMIT $3"
        );
        let rows: Vec<MessageRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .bind(conversation.to_string())
            .bind(after)
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await)?;
        rows.into_iter().map(Message::try_from).collect()
    }

    /// The seq of the first live message a run stored, if any: where the run history opens
    /// the conversation to show that run.
    pub async fn first_seq_of_execution(&self, execution: ExecutionId) -> Result<Option<i64>> {
        let seq: Option<i64> = on_pool!(self.store, |pool, d| sqlx::query_scalar(
            "SELECT MIN(seq) FROM messages WHERE execution_id = $1 AND deleted_at IS NULL",
        )
        .bind(execution.to_string())
        .fetch_one(pool)
        .await)?;
        Ok(seq)
    }

    /// The seq of the newest live message stored at or before `at`: where something that
    /// happened then (a recovery choice) stands in the conversation. 0 when none.
    pub async fn last_live_seq_at(
        &self,
        conversation: ConversationId,
        at: Timestamp,
    ) -> Result<i64> {
        let seq: Option<i64> = on_pool!(self.store, |pool, d| sqlx::query_scalar(
            "SELECT MAX(seq) FROM messages WHERE conversation_id = $1 AND created_at <= $2 \
             AND deleted_at IS NULL",
        )
        .bind(conversation.to_string())
        .bind(at.0)
        .fetch_one(pool)
        .await)?;
        Ok(seq.unwrap_or(0))
    }

    /// The seq of the conversation's newest live message from `role`, if any: what "edit the
    /// last message" and "regenerate" start again from.
    pub async fn last_live_of_role(
        &self,
        conversation: ConversationId,
        role: Role,
    ) -> Result<Option<i64>> {
        let seq: Option<i64> = on_pool!(self.store, |pool, d| sqlx::query_scalar(
            "SELECT MAX(seq) FROM messages WHERE conversation_id = $1 AND role = $2 \
             AND deleted_at IS NULL",
        )
        .bind(conversation.to_string())
        .bind(role.as_str())
        .fetch_one(pool)
        .await)?;
        Ok(seq)
    }

    /// Whether a live message exists below (`earlier`) or above `seq`: whether a page has
    /// anything left to read on that side. One probe of the (conversation, seq) index.
    pub async fn any_live_beyond(
        &self,
        conversation: ConversationId,
        seq: i64,
        earlier: bool,
    ) -> Result<bool> {
        let sql = if earlier {
            "SELECT EXISTS (SELECT 1 FROM messages WHERE conversation_id = $1 AND seq < $2 \
             AND deleted_at IS NULL)"
        } else {
            "SELECT EXISTS (SELECT 1 FROM messages WHERE conversation_id = $1 AND seq > $2 \
             AND deleted_at IS NULL)"
        };
        let found: bool = on_pool!(self.store, |pool, d| sqlx::query_scalar(sql)
            .bind(conversation.to_string())
            .bind(seq)
            .fetch_one(pool)
            .await)?;
        Ok(found)
    }

    /// The seq of the `n`-th newest live message (the newest is the first), or of the oldest
    /// when there are fewer: where "the last n messages" start. `None` without messages.
    pub async fn nth_newest_seq(
        &self,
        conversation: ConversationId,
        n: u32,
    ) -> Result<Option<i64>> {
        let seq: Option<i64> = on_pool!(self.store, |pool, d| sqlx::query_scalar(
            "SELECT MIN(seq) FROM (SELECT seq FROM messages WHERE conversation_id = $1 \
             AND deleted_at IS NULL ORDER BY seq DESC LIMIT $2) AS newest",
        )
        .bind(conversation.to_string())
        .bind(i64::from(n.max(1)))
        .fetch_one(pool)
        .await)?;
        Ok(seq)
    }

    /// The pinned messages with `seq <= up_to`, each with the whole tool unit it belongs to (the
    /// assistant's call and every result), in seq order: what [`decima_core::context::select`]
    /// expects as `pinned`. One statement: the `messages_pinned` index finds the pinned rows,
    /// each unit's head is the last non-tool message at or before it and its end the next
    /// non-tool message (`ORDER BY seq … LIMIT 1`, so the seq index is walked only until the
    /// first match; `MAX()` with a role filter would scan the whole prefix), and the rows of
    /// those short ranges are read through the seq index.
    pub async fn pinned_units_through(
        &self,
        conversation: ConversationId,
        up_to: i64,
    ) -> Result<Vec<Message>> {
        let rows: Vec<MessageRow> = on_pool!(self.store, |pool, d| {
            // SQLite is told to use the partial index of pinned rows; PostgreSQL's planner
            // finds it from the condition.
            let (hint, pinned) = match d {
                crate::Dialect::Sqlite => (" INDEXED BY messages_pinned", "p.pinned = 1"),
                crate::Dialect::Postgres => ("", "p.pinned"),
            };
            let sql = format!(
                "WITH pinned AS (\
                   SELECT p.seq AS seq, (SELECT h.seq FROM messages h \
                     WHERE h.conversation_id = p.conversation_id AND h.seq <= p.seq \
                     AND h.role <> 'tool' AND h.deleted_at IS NULL ORDER BY h.seq DESC LIMIT 1) AS head \
                   FROM messages p{hint} \
                   WHERE p.conversation_id = $1 AND {pinned} AND p.deleted_at IS NULL AND p.seq <= $2), \
                 units AS (\
                   SELECT DISTINCT COALESCE(head, seq) AS head, (SELECT n.seq FROM messages n \
                     WHERE n.conversation_id = $1 AND n.seq > COALESCE(pinned.head, pinned.seq) \
                     AND n.role <> 'tool' AND n.deleted_at IS NULL ORDER BY n.seq LIMIT 1) AS next \
                   FROM pinned) \
                 SELECT {} FROM units JOIN messages m ON m.conversation_id = $1 \
                 AND m.seq >= units.head AND m.seq < COALESCE(units.next, 9223372036854775807) \
                 WHERE m.deleted_at IS NULL ORDER BY m.seq",
                message_columns_m!()
            );
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .bind(conversation.to_string())
                .bind(up_to)
                .fetch_all(pool)
                .await?
        });
        let neighbourhoods = rows
            .into_iter()
            .map(Message::try_from)
            .collect::<Result<Vec<_>>>()?;
        // Each range ends before a non-tool message and starts at one, so units computed over
        // the concatenation are the units of the whole history.
        Ok(decima_core::context::pinned_units(&neighbourhoods))
    }
}

/// Marks a live conversation as changed, or reports it missing.
macro_rules! touch {
    ($tx:expr, $conversation:expr) => {{
        let conversation: ConversationId = $conversation;
        let done = sqlx::query(
            "UPDATE conversations SET updated_at = $1 WHERE id = $2 AND deleted_at IS NULL",
        )
        .bind(Timestamp::now().0)
        .bind(conversation.to_string())
        .execute(&mut *$tx)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::not_found("conversation", conversation));
        }
    }};
}
use touch;

/// Inserts `$messages` (priced drafts) after the conversation's last seq in the write
/// transaction `$tx` of either backend, and evaluates to the seqs they got. The conversation's
/// row is read `FOR UPDATE` on PostgreSQL, so concurrent writers queue on it and seqs stay
/// gapless; SQLite's write transaction already excludes them.
macro_rules! insert_batch {
    ($tx:expr, $dialect:expr, $conversation:expr, $messages:expr) => {{
        let conversation: decima_core::ConversationId = $conversation;
        let messages: &[$crate::messages::Priced<'_>] = $messages;
        let tx = $tx;
        if $dialect == $crate::Dialect::Postgres {
            for priced in messages {
                $crate::messages::refuse_nul(priced.message)?;
            }
        }
        let next: Option<i64> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT next_seq FROM conversations WHERE id = $1 AND deleted_at IS NULL{}",
            $dialect.for_update()
        )))
        .bind(conversation.to_string())
        .fetch_optional(&mut **tx)
        .await?;
        let first =
            next.ok_or_else(|| $crate::StoreError::not_found("conversation", conversation))?;
        let now = decima_core::Timestamp::now().0;
        let conversation_id = conversation.to_string();
        // More than one statement's worth on SQLite: the search index takes the rows in one
        // statement at the end, several times faster than its trigger row by row (see the
        // migration `20261210000000_bulk_search_index`). The switch is this transaction's.
        let bulk_index =
            $dialect == $crate::Dialect::Sqlite && messages.len() > $crate::messages::INSERT_CHUNK;
        if bulk_index {
            sqlx::query("UPDATE messages_fts_live SET live = 0 WHERE id = 1")
                .execute(&mut **tx)
                .await?;
        }
        let mut seq = first;
        for chunk in messages.chunks($crate::messages::INSERT_CHUNK) {
            let mut rows = Vec::with_capacity(chunk.len());
            for priced in chunk {
                rows.push((
                    seq,
                    priced,
                    $crate::messages::tool_calls_json(&priced.message.tool_calls)?,
                ));
                seq += 1;
            }
            let mut query = sqlx::QueryBuilder::new(
                "INSERT INTO messages (id, conversation_id, execution_id, seq, role, name, \
                 content, reasoning, reasoning_signature, tool_calls, tool_call_id, tokens, \
                 pinned, created_at) ",
            );
            query.push_values(rows, |mut row, (seq, priced, tool_calls)| {
                let m = priced.message;
                row.push_bind(decima_core::MessageId::new().to_string())
                    .push_bind(conversation_id.as_str())
                    .push_bind(m.execution_id.map(|e| e.to_string()))
                    .push_bind(seq)
                    .push_bind(m.role.as_str())
                    .push_bind(m.name.as_deref())
                    .push_bind(m.content.as_str())
                    .push_bind(m.reasoning.as_deref())
                    .push_bind(m.reasoning_signature.as_deref())
                    .push_bind(tool_calls)
                    .push_bind(m.tool_call_id.as_deref())
                    .push_bind(i64::from(priced.tokens))
                    .push_bind(m.pinned)
                    .push_bind(now);
            });
            query
                .build()
                .execute(&mut **tx)
                .await
                .map_err($crate::messages::insert_error)?;
        }
        if bulk_index {
            sqlx::query(
                "INSERT INTO messages_fts (rowid, body) \
                 SELECT rowid, substr(content, 1, 262144) || char(10) || coalesce(tool_calls, '') \
                 FROM messages WHERE conversation_id = $1 AND seq >= $2 AND seq < $3",
            )
            .bind(conversation_id.as_str())
            .bind(first)
            .bind(seq)
            .execute(&mut **tx)
            .await?;
            sqlx::query("UPDATE messages_fts_live SET live = 1 WHERE id = 1")
                .execute(&mut **tx)
                .await?;
        }
        first..seq
    }};
}
pub(crate) use insert_batch;

/// The JSON stored in `messages.tool_calls`, or NULL for none.
pub(crate) fn tool_calls_json(calls: &[decima_core::ToolCall]) -> Result<Option<String>> {
    if calls.is_empty() {
        return Ok(None);
    }
    serde_json::to_string(calls)
        .map(Some)
        .map_err(|e| StoreError::Corrupt {
            what: "tool_calls",
            detail: e.to_string(),
        })
}

/// A foreign-key failure on insert can only be the execution id: the conversation was checked.
pub(crate) fn insert_error(e: sqlx::Error) -> StoreError {
    match &e {
        sqlx::Error::Database(db) if db.is_foreign_key_violation() => StoreError::not_found(
            "execution",
            "referenced by a message (it must be created before its messages)",
        ),
        _ => StoreError::from(e),
    }
}
