//! Appending messages: one at a time (with the notes the agent loop writes beside it) or in
//! batches, each under the conversation's write lock so that seqs stay gapless.

use decima_core::{ConversationId, Message, MessageId, NewMessage, Timestamp};
use sqlx::Sqlite;

use super::{Messages, StepNotes, insert_batch, insert_error, tool_calls_json};
use crate::{BeginWrite, Result, StoreError, on_pool};

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
/// A message about to be appended, with the id, token count and time the store gave it.
#[derive(Clone, Copy)]
struct Pending<'a> {
    id: &'a MessageId,
    conversation: ConversationId,
    message: &'a NewMessage,
    tokens: u32,
    created_at: Timestamp,
}

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

impl Messages<'_> {
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
        let pending = Pending {
            id: &id,
            conversation,
            message: &message,
            tokens,
            created_at,
        };
        let (seq, steps) = match self.store.backend() {
            crate::Backend::Sqlite(pool) => {
                self.noting_sqlite(pool, &pending, &notes, started).await?
            }
            // Boxed: the transaction's future is large, and this one is on every step's path.
            crate::Backend::Postgres(pool) => {
                Box::pin(self.noting_postgres(pool, &pending, &notes, started)).await?
            }
        };
        Ok((
            stored(id, conversation, seq, message, tokens, created_at),
            steps,
        ))
    }

    /// PostgreSQL: one transaction, so the message, its records and the marker land together.
    /// The message's seq and the records.
    async fn noting_postgres(
        &self,
        pool: &sqlx::PgPool,
        pending: &Pending<'_>,
        notes: &StepNotes<'_>,
        started: Option<String>,
    ) -> Result<(i64, Vec<crate::Step>)> {
        let mut tx = pool.begin().await?;
        let seq = append_postgres_in(
            &mut tx,
            pending.id,
            pending.message,
            pending.tokens,
            pending.created_at,
            pending.conversation,
        )
        .await?;
        let mut steps = Vec::with_capacity(notes.records.len());
        for (kind, content) in notes.records {
            steps.push(
                crate::steps::insert_step(self.store, &mut *tx, notes.execution, *kind, content)
                    .await?,
            );
        }
        if let Some(payload) = started {
            sqlx::query(
                "INSERT INTO events (conversation_id, execution_id, kind, payload, \
                 created_at) VALUES ($1, $2, 'tool.started', $3, $4)",
            )
            .bind(pending.conversation.to_string())
            .bind(notes.execution.to_string())
            .bind(payload)
            .bind(pending.created_at.0)
            .execute(&mut *tx)
            .await
            .map_err(insert_error)?;
        }
        tx.commit().await?;
        Ok((seq, steps))
    }

    /// SQLite: consecutive statements in one exchange with the connection's worker thread, each
    /// committing on its own; the notes only where the message was written. The message's seq
    /// and the records.
    async fn noting_sqlite(
        &self,
        pool: &sqlx::SqlitePool,
        pending: &Pending<'_>,
        notes: &StepNotes<'_>,
        started: Option<String>,
    ) -> Result<(i64, Vec<crate::Step>)> {
        let Pending {
            id,
            conversation,
            message,
            tokens,
            created_at,
        } = *pending;
        let mut sql = String::from(APPEND_SQL);
        if let Some(records) = crate::steps::records_sql(notes.records.len(), ON_MESSAGE) {
            sql.push_str("; ");
            sql.push_str(&records);
        }
        if started.is_some() {
            sql.push_str("; ");
            sql.push_str(&crate::events::marker_sql(ON_MESSAGE));
        }
        push_image_sql(&mut sql, message);
        // The text depends only on how many records there are and whether a call starts;
        // every value is bound.
        let mut query = bind_append(
            sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql)),
            id,
            message,
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
        query = bind_images(query, id, message);
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
        Ok((seq, steps))
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
}
