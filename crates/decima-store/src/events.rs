//! The append-only event log of everything the runtime did, rollbacks included. Ids are
//! increasing integers, so a reader (the UI, a resumed loop) catches up with "everything after
//! the last id I saw".

use decima_core::names::echo_untrusted;
use decima_core::{ConversationId, ExecutionId, Timestamp};
use sqlx::FromRow;

use crate::on_pool;
use crate::rows::corrupt;
use crate::{Result, Store, StoreError};

/// The longest event kind accepted: kinds are program-chosen names, not free text.
const MAX_KIND_LEN: usize = 64;

/// A stored event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Its id, increasing in append order.
    pub id: i64,
    /// The conversation it concerns.
    pub conversation_id: Option<ConversationId>,
    /// The execution it concerns.
    pub execution_id: Option<ExecutionId>,
    /// What happened, e.g. `todo.started` (stored in `events.kind`).
    pub kind: String,
    /// The details, a JSON value.
    pub payload: serde_json::Value,
    /// When it was appended.
    pub created_at: Timestamp,
}

#[derive(FromRow)]
struct EventRow {
    id: i64,
    conversation_id: Option<String>,
    execution_id: Option<String>,
    kind: String,
    payload: String,
    created_at: i64,
}

impl TryFrom<EventRow> for Event {
    type Error = StoreError;

    fn try_from(row: EventRow) -> Result<Self> {
        Ok(Event {
            id: row.id,
            conversation_id: row
                .conversation_id
                .map(|c| c.parse())
                .transpose()
                .map_err(|e| corrupt("conversation id", e))?,
            execution_id: row
                .execution_id
                .map(|e| e.parse())
                .transpose()
                .map_err(|e| corrupt("execution id", e))?,
            kind: row.kind,
            payload: serde_json::from_str(&row.payload).map_err(|e| corrupt("event payload", e))?,
            created_at: Timestamp(row.created_at),
        })
    }
}

macro_rules! event_select {
    () => {
        "SELECT id, conversation_id, execution_id, kind, payload, created_at FROM events"
    };
}

/// Event operations, borrowed from a [`Store`].
pub struct Events<'s> {
    store: &'s Store,
}

impl<'s> Events<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Appends an event and returns its id. One statement, so it needs no explicit transaction.
    /// The kind must be a short dotted name (`[a-z0-9_.]`), since readers dispatch on it.
    pub async fn append(
        &self,
        execution: Option<ExecutionId>,
        conversation: Option<ConversationId>,
        kind: &str,
        payload: &serde_json::Value,
    ) -> Result<i64> {
        let valid = !kind.is_empty()
            && kind.len() <= MAX_KIND_LEN
            && kind
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'.');
        if !valid {
            return Err(StoreError::InvalidInput(format!(
                "{:?} is not an event kind (lowercase letters, digits, '_' and '.')",
                echo_untrusted(kind)
            )));
        }
        let ids: Vec<i64> = on_pool!(self.store, |pool, d| sqlx::query_scalar(
            "INSERT INTO events (conversation_id, execution_id, kind, payload, created_at) \
             VALUES ($1, $2, $3, $4, $5) RETURNING id",
        )
        .bind(conversation.map(|c| c.to_string()))
        .bind(execution.map(|e| e.to_string()))
        .bind(kind)
        .bind(payload.to_string())
        .bind(Timestamp::now().0)
        .fetch_all(pool)
        .await)
        .map_err(|e| match &e {
            sqlx::Error::Database(db) if db.is_foreign_key_violation() => {
                StoreError::not_found("execution or conversation", "referenced by an event")
            }
            _ => StoreError::from(e),
        })?;
        ids.first()
            .copied()
            .ok_or_else(|| StoreError::Database(sqlx::Error::RowNotFound))
    }

    /// Up to `limit` events with an id above `after`, oldest first, across the whole store.
    pub async fn after(&self, after: i64, limit: u32) -> Result<Vec<Event>> {
        let sql = concat!(event_select!(), " WHERE id > $1 ORDER BY id LIMIT $2");
        let rows: Vec<EventRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .bind(after)
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await)?;
        rows.into_iter().map(Event::try_from).collect()
    }

    /// Up to `limit` events of one execution with an id above `after`, oldest first.
    pub async fn execution_after(
        &self,
        execution: ExecutionId,
        after: i64,
        limit: u32,
    ) -> Result<Vec<Event>> {
        let sql = concat!(
            event_select!(),
            " WHERE execution_id = $1 AND id > $2 ORDER BY id LIMIT $3"
        );
        let rows: Vec<EventRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .bind(execution.to_string())
            .bind(after)
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await)?;
        rows.into_iter().map(Event::try_from).collect()
    }

    /// Up to `limit` events of one conversation with an id above `after`, oldest first.
    pub async fn conversation_after(
        &self,
        conversation: ConversationId,
        after: i64,
        limit: u32,
    ) -> Result<Vec<Event>> {
        let sql = concat!(
            event_select!(),
            " WHERE conversation_id = $1 AND id > $2 ORDER BY id LIMIT $3"
        );
        let rows: Vec<EventRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .bind(conversation.to_string())
            .bind(after)
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await)?;
        rows.into_iter().map(Event::try_from).collect()
    }
}

impl Events<'_> {
    /// The newest `limit` events of the given kinds that concern a conversation or a run
    /// descending from one of its runs (a subagent's, whose conversation is another), newest
    /// first: what was done in a workspace the tree shares.
    pub async fn in_tree_of_kinds(
        &self,
        conversation: ConversationId,
        kinds: &[&str],
        limit: u32,
    ) -> Result<Vec<Event>> {
        if kinds.is_empty() {
            return Ok(Vec::new());
        }
        let n = kinds.len();
        let marks: Vec<String> = (2..n + 2).map(|i| format!("${i}")).collect();
        let sql = format!(
            "WITH RECURSIVE tree(id) AS ( \
               SELECT id FROM executions WHERE conversation_id = $1 \
               UNION SELECT e.id FROM executions e JOIN tree t ON e.parent_id = t.id) \
             {} WHERE kind IN ({}) \
               AND (conversation_id = $1 OR execution_id IN (SELECT id FROM tree)) \
             ORDER BY id DESC LIMIT ${}",
            event_select!(),
            marks.join(", "),
            n + 2
        );
        // Only placeholders are formatted in; every value is bound.
        let rows: Vec<EventRow> = on_pool!(self.store, |pool, d| {
            let mut query = sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(conversation.to_string());
            for kind in kinds {
                query = query.bind(*kind);
            }
            query.bind(i64::from(limit)).fetch_all(pool).await?
        });
        rows.into_iter().map(Event::try_from).collect()
    }
}

/// Inserts a marker event for a conversation and an execution, under `guard` (see
/// [`crate::Messages::append_noting`]): bound as conversation, execution, kind, payload,
/// created_at, then the guard's values.
pub(crate) fn marker_sql(guard: &str) -> String {
    format!(
        "INSERT INTO events (conversation_id, execution_id, kind, payload, created_at) \
         SELECT ?, ?, ?, ?, ? WHERE 1{guard} RETURNING id"
    )
}
