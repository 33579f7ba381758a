//! The messages repository: appends with gapless seqs, ranges, pins and rollbacks.

use decima_core::{
    ConversationId, ExecutionId, Message, MessageId, NewMessage, Role, Timestamp, ToolCall,
};
use sqlx::Sqlite;

use crate::rows::{
    MessageRow, corrupt, message_columns, message_columns_m, message_json, messages_from_json,
};
use crate::{BeginWrite, Result, SeqFingerprint, Store, StoreError, on_pool};

/// Rows per multi-row INSERT: 14 columns × 64 rows stays far below SQLite's 32,766 bind limit,
/// and amortises the per-statement cost that dominates bulk imports.
pub(crate) const INSERT_CHUNK: usize = 64;

/// A draft with its token count, priced before the write lock is taken.
pub(crate) struct Priced<'a> {
    pub(crate) message: &'a NewMessage,
    pub(crate) tokens: u32,
}

/// Appends one message: `INSERT … SELECT` takes the seq from `conversations.next_seq`.
const APPEND_SQL: &str = "INSERT INTO messages (id, conversation_id, execution_id, seq, role, \
    name, content, reasoning, reasoning_signature, tool_calls, tool_call_id, tokens, pinned, \
    created_at) SELECT ?, c.id, ?, c.next_seq, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? \
    FROM conversations c WHERE c.id = ? AND c.deleted_at IS NULL RETURNING seq";

/// Stores one image of the message whose id is bound last (see [`ON_MESSAGE`]).
const IMAGE_SQL: &str = "INSERT INTO message_images (message_id, ordinal, media_type, data, \
    tokens) SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM messages WHERE id = ?)";

/// The condition that makes a note written with a message depend on it: the message's id is
/// bound after the note's own values.
const ON_MESSAGE: &str = " AND EXISTS (SELECT 1 FROM messages WHERE id = ?)";

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

type Scalar<'q> = sqlx::query::QueryScalar<'q, Sqlite, i64, sqlx::sqlite::SqliteArguments>;

/// Appends one message on PostgreSQL: the conversation's row is locked by the `INSERT … SELECT
/// … FOR UPDATE`, so concurrent appenders, on any machine, queue on it and each reads the
/// `next_seq` the one before it left; the message and its images commit together.
async fn append_postgres(
    pool: &sqlx::PgPool,
    id: &MessageId,
    message: &NewMessage,
    tokens: u32,
    created_at: Timestamp,
    conversation: ConversationId,
) -> Result<i64> {
    refuse_nul(message)?;
    let mut tx = pool.begin().await?;
    let seq = append_postgres_in(&mut tx, id, message, tokens, created_at, conversation).await?;
    tx.commit().await?;
    Ok(seq)
}

/// [`append_postgres`] inside the caller's transaction.
async fn append_postgres_in(
    tx: &mut sqlx::PgConnection,
    id: &MessageId,
    message: &NewMessage,
    tokens: u32,
    created_at: Timestamp,
    conversation: ConversationId,
) -> Result<i64> {
    refuse_nul(message)?;
    let seq: Option<i64> = sqlx::query_scalar(
        "INSERT INTO messages (id, conversation_id, execution_id, seq, role, name, content, \
         reasoning, reasoning_signature, tool_calls, tool_call_id, tokens, pinned, created_at) \
         SELECT $1, c.id, $2, c.next_seq, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 \
         FROM conversations c WHERE c.id = $13 AND c.deleted_at IS NULL FOR UPDATE \
         RETURNING seq",
    )
    .bind(id.to_string())
    .bind(message.execution_id.map(|e| e.to_string()))
    .bind(message.role.as_str())
    .bind(message.name.as_deref())
    .bind(message.content.as_str())
    .bind(message.reasoning.as_deref())
    .bind(message.reasoning_signature.as_deref())
    .bind(tool_calls_json(&message.tool_calls)?)
    .bind(message.tool_call_id.as_deref())
    .bind(i64::from(tokens))
    .bind(message.pinned)
    .bind(created_at.0)
    .bind(conversation.to_string())
    .fetch_optional(&mut *tx)
    .await
    .map_err(insert_error)?;
    let seq = seq.ok_or_else(|| StoreError::not_found("conversation", conversation))?;
    for (ordinal, image) in message.images.iter().enumerate() {
        sqlx::query(
            "INSERT INTO message_images (message_id, ordinal, media_type, data, tokens) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(id.to_string())
        .bind(i64::try_from(ordinal).unwrap_or(i64::MAX))
        .bind(image.media_type.as_str())
        .bind(&*image.data)
        .bind(i64::from(image.tokens))
        .execute(&mut *tx)
        .await?;
    }
    Ok(seq)
}

/// PostgreSQL's text cannot hold the character U+0000, which SQLite's can: a message that
/// carries one is refused whole, with a reason, rather than stored altered.
pub(crate) fn refuse_nul(message: &NewMessage) -> Result<()> {
    let fields = [
        ("content", Some(message.content.as_str())),
        ("name", message.name.as_deref()),
        ("reasoning", message.reasoning.as_deref()),
        ("tool call id", message.tool_call_id.as_deref()),
    ];
    let in_calls = message
        .tool_calls
        .iter()
        .any(|c| c.name.contains('\0') || c.arguments.contains('\0') || c.id.contains('\0'));
    if let Some((field, _)) = fields
        .iter()
        .find(|(_, text)| text.is_some_and(|t| t.contains('\0')))
        .or(in_calls.then_some(&("tool calls", None)))
    {
        return Err(StoreError::InvalidInput(format!(
            "the message's {field} holds the NUL character (U+0000), which a PostgreSQL store \
             cannot keep; nothing was stored (remove it, or use a local SQLite store)"
        )));
    }
    Ok(())
}

/// Binds [`APPEND_SQL`]'s values.
fn bind_append<'q>(
    query: Scalar<'q>,
    id: &MessageId,
    message: &'q NewMessage,
    tokens: u32,
    created_at: Timestamp,
    conversation: ConversationId,
) -> Result<Scalar<'q>> {
    Ok(query
        .bind(id.to_string())
        .bind(message.execution_id.map(|e| e.to_string()))
        .bind(message.role.as_str())
        .bind(message.name.as_deref())
        .bind(message.content.as_str())
        .bind(message.reasoning.as_deref())
        .bind(message.reasoning_signature.as_deref())
        .bind(tool_calls_json(&message.tool_calls)?)
        .bind(message.tool_call_id.as_deref())
        .bind(i64::from(tokens))
        .bind(message.pinned)
        .bind(created_at.0)
        .bind(conversation.to_string()))
}

/// The statements that store a message's images after it, chained to `sql`.
fn push_image_sql(sql: &mut String, message: &NewMessage) {
    for _ in &message.images {
        sql.push_str("; ");
        sql.push_str(IMAGE_SQL);
    }
}

/// Binds the values of the statements [`push_image_sql`] chained.
fn bind_images<'q>(mut query: Scalar<'q>, id: &MessageId, message: &'q NewMessage) -> Scalar<'q> {
    for (ordinal, image) in message.images.iter().enumerate() {
        query = query
            .bind(id.to_string())
            .bind(i64::try_from(ordinal).unwrap_or(i64::MAX))
            .bind(image.media_type.as_str())
            .bind(&*image.data)
            .bind(i64::from(image.tokens))
            .bind(id.to_string());
    }
    query
}

/// A draft as stored.
fn stored(
    id: MessageId,
    conversation: ConversationId,
    seq: i64,
    message: NewMessage,
    tokens: u32,
    created_at: Timestamp,
) -> Message {
    Message {
        id,
        conversation_id: conversation,
        execution_id: message.execution_id,
        seq,
        role: message.role,
        name: message.name,
        content: message.content,
        reasoning: message.reasoning,
        reasoning_signature: message.reasoning_signature,
        tool_calls: message.tool_calls,
        tool_call_id: message.tool_call_id,
        tokens,
        pinned: message.pinned,
        created_at,
        deleted_at: None,
    }
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

    /// Appends one message and returns it as stored, with its seq and token count.
    ///
    /// This is one SQL statement, so one round trip: `INSERT … SELECT` takes the seq from
    /// `conversations.next_seq` and the `messages_advance_seq` trigger advances it. SQLite runs a
    /// lone write statement as a write transaction that takes the write lock before it reads,
    /// which is what `BEGIN IMMEDIATE` buys multi-statement transactions.
    pub async fn append(
        &self,
        conversation: ConversationId,
        message: NewMessage,
    ) -> Result<Message> {
        message.validate()?;
        let tokens = self.store.counter().count_message(&message);
        let id = MessageId::new();
        let created_at = Timestamp::now();
        let pool = match self.store.backend() {
            crate::Backend::Sqlite(pool) => pool,
            crate::Backend::Postgres(pool) => {
                // Boxed, as `on_pool!` boxes the PostgreSQL side.
                let seq = Box::pin(append_postgres(
                    pool,
                    &id,
                    &message,
                    tokens,
                    created_at,
                    conversation,
                ))
                .await?;
                return Ok(stored(id, conversation, seq, message, tokens, created_at));
            }
        };
        // A tool result's images go in the same exchange, each stored only with its message.
        let mut sql = String::from(APPEND_SQL);
        push_image_sql(&mut sql, &message);
        // fetch_all steps the statement to completion in one exchange with sqlx's SQLite worker;
        // fetch_optional would drop the row stream mid-way and cost a cancellation round.
        let query = bind_append(
            sqlx::query_scalar(sqlx::AssertSqlSafe(sql)),
            &id,
            &message,
            tokens,
            created_at,
            conversation,
        )?;
        let seqs: Vec<i64> = bind_images(query, &id, &message)
            .fetch_all(pool)
            .await
            .map_err(insert_error)?;
        let seq = *seqs
            .first()
            .ok_or_else(|| StoreError::not_found("conversation", conversation))?;
        Ok(stored(id, conversation, seq, message, tokens, created_at))
    }

    /// Appends one message together with what the agent loop notes at the same moment: the
    /// step records it gives rise to, and the marker of the tool call about to run. All of it
    /// goes to SQLite in one exchange, as consecutive statements: a step's writes cost one
    /// round trip to the connection's worker thread instead of three. Each statement commits on
    /// its own, as three separate calls would; the notes are only written when the message was,
    /// so a missing conversation leaves nothing behind.
    pub async fn append_noting(
        &self,
        conversation: ConversationId,
        message: NewMessage,
        notes: StepNotes<'_>,
    ) -> Result<(Message, Vec<crate::Step>)> {
        message.validate()?;
        let started = notes
            .started_call
            .map(|(id, name)| serde_json::json!({ "call_id": id, "name": name }).to_string());
        let tokens = self.store.counter().count_message(&message);
        let id = MessageId::new();
        let created_at = Timestamp::now();
        let pool = match self.store.backend() {
            crate::Backend::Sqlite(pool) => pool,
            crate::Backend::Postgres(pool) => {
                // One transaction: the message, its records and the marker land together.
                let (seq, steps) = Box::pin(async {
                    let mut tx = pool.begin().await?;
                    let seq = append_postgres_in(
                        &mut tx,
                        &id,
                        &message,
                        tokens,
                        created_at,
                        conversation,
                    )
                    .await?;
                    let mut steps = Vec::with_capacity(notes.records.len());
                    for (kind, content) in notes.records {
                        steps.push(
                            crate::steps::insert_step(
                                self.store,
                                &mut *tx,
                                notes.execution,
                                *kind,
                                content,
                            )
                            .await?,
                        );
                    }
                    if let Some(payload) = started {
                        sqlx::query(
                            "INSERT INTO events (conversation_id, execution_id, kind, payload, \
                         created_at) VALUES ($1, $2, 'tool.started', $3, $4)",
                        )
                        .bind(conversation.to_string())
                        .bind(notes.execution.to_string())
                        .bind(payload)
                        .bind(created_at.0)
                        .execute(&mut *tx)
                        .await
                        .map_err(insert_error)?;
                    }
                    tx.commit().await?;
                    Ok::<_, StoreError>((seq, steps))
                })
                .await?;
                return Ok((
                    stored(id, conversation, seq, message, tokens, created_at),
                    steps,
                ));
            }
        };
        let mut sql = String::from(APPEND_SQL);
        if let Some(records) = crate::steps::records_sql(notes.records.len(), ON_MESSAGE) {
            sql.push_str("; ");
            sql.push_str(&records);
        }
        if started.is_some() {
            sql.push_str("; ");
            sql.push_str(&crate::events::marker_sql(ON_MESSAGE));
        }
        push_image_sql(&mut sql, &message);
        // The text depends only on how many records there are and whether a call starts;
        // every value is bound.
        let mut query = bind_append(
            sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql)),
            &id,
            &message,
            tokens,
            created_at,
            conversation,
        )?;
        let mut steps = Vec::with_capacity(notes.records.len());
        for (kind, content) in notes.records {
            let step_id = uuid::Uuid::now_v7().to_string();
            let step_tokens = self.store.counter().count_text(content);
            query = crate::steps::bind_record(
                query,
                &step_id,
                *kind,
                content,
                step_tokens,
                created_at,
                notes.execution,
            )
            .bind(id.to_string());
            steps.push(crate::Step {
                id: step_id,
                execution_id: notes.execution,
                seq: 0,
                kind: kind.as_str().to_owned(),
                content: (*content).to_owned(),
                tokens: step_tokens,
                created_at,
            });
        }
        if let Some(payload) = started {
            query = query
                .bind(conversation.to_string())
                .bind(notes.execution.to_string())
                .bind("tool.started")
                .bind(payload)
                .bind(created_at.0)
                .bind(id.to_string());
        }
        query = bind_images(query, &id, &message);
        let returned = query.fetch_all(pool).await.map_err(insert_error)?;
        // The message's seq, then each record's, then the marker's id.
        let expected = 1 + steps.len() + usize::from(notes.started_call.is_some());
        let Some((&seq, rest)) = returned.split_first() else {
            return Err(StoreError::not_found("conversation", conversation));
        };
        if returned.len() != expected {
            return Err(StoreError::not_found("execution", notes.execution));
        }
        let mut record_seqs = rest[..steps.len()].to_vec();
        record_seqs.sort_unstable();
        for (step, seq) in steps.iter_mut().zip(record_seqs) {
            step.seq = seq;
        }
        Ok((
            stored(id, conversation, seq, message, tokens, created_at),
            steps,
        ))
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
            if !m.images.is_empty() {
                // A batch is an import of text; images arrive one tool result at a time.
                return Err(StoreError::InvalidInput(
                    "a batch of messages cannot carry images; append the tool result alone".into(),
                ));
            }
        }
        let priced = self.price(messages);
        let seqs = on_pool!(self.store, |pool, dialect| {
            let mut tx = pool.begin_write().await?;
            let seqs = insert_batch!(&mut tx, dialect, conversation, &priced);
            tx.commit().await?;
            seqs
        });
        Ok(seqs)
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
