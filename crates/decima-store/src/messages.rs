//! The messages repository: appends with gapless seqs, ranges, pins and rollbacks.

use decima_core::{ConversationId, Message, MessageId, NewMessage, Timestamp};
use sqlx::{QueryBuilder, Sqlite, Transaction};

use crate::rows::{MessageRow, message_columns};
use crate::{Result, Store, StoreError};

/// Rows per multi-row INSERT: 14 columns × 64 rows stays far below SQLite's 32,766 bind limit,
/// and amortises the per-statement cost that dominates bulk imports.
const INSERT_CHUNK: usize = 64;

/// A draft with its token count, priced before the write lock is taken.
pub(crate) struct Priced<'a> {
    message: &'a NewMessage,
    tokens: u32,
}

/// Message operations, borrowed from a [`Store`].
pub struct Messages<'s> {
    store: &'s Store,
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

    /// Appends one message and returns it as stored, with its seq and token count.
    pub async fn append(
        &self,
        conversation: ConversationId,
        message: NewMessage,
    ) -> Result<Message> {
        let seqs = self
            .append_many(conversation, std::slice::from_ref(&message))
            .await?;
        self.get(conversation, seqs.start).await
    }

    /// Appends messages in one transaction and returns the seqs they got. The seqs follow the last
    /// one without a gap, whatever other writers do at the same time.
    pub async fn append_many(
        &self,
        conversation: ConversationId,
        messages: &[NewMessage],
    ) -> Result<std::ops::Range<i64>> {
        for m in messages {
            m.validate()?;
        }
        let priced = self.price(messages);
        let mut tx = self.store.begin_write().await?;
        let seqs = insert_batch(&mut tx, conversation, &priced).await?;
        tx.commit().await?;
        Ok(seqs)
    }

    /// One live message by seq.
    pub async fn get(&self, conversation: ConversationId, seq: i64) -> Result<Message> {
        let sql = concat!(
            "SELECT ",
            message_columns!(),
            " FROM messages WHERE conversation_id = ? AND seq = ? AND deleted_at IS NULL"
        );
        let row: Option<MessageRow> = sqlx::query_as(sql)
            .bind(conversation.to_string())
            .bind(seq)
            .fetch_optional(self.store.pool())
            .await?;
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
            " FROM messages WHERE conversation_id = ? AND seq BETWEEN ? AND ? \
             AND deleted_at IS NULL ORDER BY seq"
        );
        let rows: Vec<MessageRow> = sqlx::query_as(sql)
            .bind(conversation.to_string())
            .bind(from)
            .bind(to)
            .fetch_all(self.store.pool())
            .await?;
        rows.into_iter().map(Message::try_from).collect()
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
        let mut tx = self.store.begin_write().await?;
        let done = sqlx::query(
            "UPDATE messages SET pinned = ? WHERE conversation_id = ? AND seq = ? AND deleted_at IS NULL",
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
        touch(&mut tx, conversation).await?;
        tx.commit().await?;
        self.get(conversation, seq).await
    }

    /// Soft-deletes every live message after `seq` (a rollback). The rows stay, and their seqs are
    /// never reused. Returns how many messages were deleted.
    pub async fn soft_delete_after(&self, conversation: ConversationId, seq: i64) -> Result<u64> {
        let mut tx = self.store.begin_write().await?;
        touch(&mut tx, conversation).await?;
        let done = sqlx::query(
            "UPDATE messages SET deleted_at = ? WHERE conversation_id = ? AND seq > ? AND deleted_at IS NULL",
        )
        .bind(Timestamp::now().0)
        .bind(conversation.to_string())
        .bind(seq)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(done.rows_affected())
    }
}

/// Marks a live conversation as changed, or reports it missing.
async fn touch(tx: &mut Transaction<'static, Sqlite>, conversation: ConversationId) -> Result<()> {
    let done =
        sqlx::query("UPDATE conversations SET updated_at = ? WHERE id = ? AND deleted_at IS NULL")
            .bind(Timestamp::now().0)
            .bind(conversation.to_string())
            .execute(&mut **tx)
            .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::not_found("conversation", conversation));
    }
    Ok(())
}

/// Reserves `messages.len()` seqs on the conversation row and inserts the messages with them.
/// Must run inside a write transaction: the UPDATE takes the row, so seqs can neither repeat nor
/// skip, and a rolled-back transaction returns its seqs.
pub(crate) async fn insert_batch(
    tx: &mut Transaction<'static, Sqlite>,
    conversation: ConversationId,
    messages: &[Priced<'_>],
) -> Result<std::ops::Range<i64>> {
    let count = i64::try_from(messages.len()).map_err(|_| StoreError::Corrupt {
        what: "batch size",
        detail: "too many messages in one batch".into(),
    })?;
    let now = Timestamp::now().0;
    let next: Option<i64> = sqlx::query_scalar(
        "UPDATE conversations SET next_seq = next_seq + ?, updated_at = ? \
         WHERE id = ? AND deleted_at IS NULL RETURNING next_seq",
    )
    .bind(count)
    .bind(now)
    .bind(conversation.to_string())
    .fetch_optional(&mut **tx)
    .await?;
    let end = next.ok_or_else(|| StoreError::not_found("conversation", conversation))?;
    let first = end - count;
    let conversation_id = conversation.to_string();

    for (chunk_index, chunk) in messages.chunks(INSERT_CHUNK).enumerate() {
        let chunk_first = first + (chunk_index * INSERT_CHUNK) as i64;
        let mut rows = Vec::with_capacity(chunk.len());
        for (i, priced) in chunk.iter().enumerate() {
            let tool_calls = if priced.message.tool_calls.is_empty() {
                None
            } else {
                Some(
                    serde_json::to_string(&priced.message.tool_calls).map_err(|e| {
                        StoreError::Corrupt {
                            what: "tool_calls",
                            detail: e.to_string(),
                        }
                    })?,
                )
            };
            rows.push((chunk_first + i as i64, priced, tool_calls));
        }
        let mut query = QueryBuilder::<Sqlite>::new(
            "INSERT INTO messages (id, conversation_id, execution_id, seq, role, name, content, \
             reasoning, reasoning_signature, tool_calls, tool_call_id, tokens, pinned, created_at) ",
        );
        query.push_values(rows, |mut row, (seq, priced, tool_calls)| {
            let m = priced.message;
            row.push_bind(MessageId::new().to_string())
                .push_bind(conversation_id.clone())
                .push_bind(m.execution_id.map(|e| e.to_string()))
                .push_bind(seq)
                .push_bind(m.role.as_str())
                .push_bind(m.name.clone())
                .push_bind(m.content.clone())
                .push_bind(m.reasoning.clone())
                .push_bind(m.reasoning_signature.clone())
                .push_bind(tool_calls)
                .push_bind(m.tool_call_id.clone())
                .push_bind(i64::from(priced.tokens))
                .push_bind(m.pinned)
                .push_bind(now);
        });
        query
            .build()
            .execute(&mut **tx)
            .await
            .map_err(|e| match &e {
                sqlx::Error::Database(db) if db.is_foreign_key_violation() => {
                    StoreError::not_found(
                        "execution",
                        "referenced by a message (it must be created before its messages)",
                    )
                }
                _ => StoreError::Database(e),
            })?;
    }
    Ok(first..end)
}
