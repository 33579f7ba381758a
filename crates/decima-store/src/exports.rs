//! Where each conversation's history was exported, so the next export appends only what is new.

use decima_core::{ConversationId, Timestamp};
use sqlx::FromRow;

use crate::{Result, Store, on_pool};

/// The last export of a conversation to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryExport {
    /// The conversation.
    pub conversation_id: ConversationId,
    /// The file, as an absolute path.
    pub path: String,
    /// `text`, `jsonl` or `md`.
    pub format: String,
    /// The highest seq written.
    pub last_seq: i64,
    /// The file's length right after the export.
    pub bytes: u64,
    /// When it happened.
    pub updated_at: Timestamp,
}

#[derive(FromRow)]
struct ExportRow {
    format: String,
    last_seq: i64,
    bytes: i64,
    updated_at: i64,
}

/// Export bookkeeping, borrowed from a [`Store`].
pub struct Exports<'s> {
    store: &'s Store,
}

impl<'s> Exports<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// The last export of `conversation` to `path`, if any.
    pub async fn get(
        &self,
        conversation: ConversationId,
        path: &str,
    ) -> Result<Option<HistoryExport>> {
        let row: Option<ExportRow> = on_pool!(self.store, |pool, d| sqlx::query_as(
            "SELECT format, last_seq, bytes, updated_at FROM history_exports \
             WHERE conversation_id = $1 AND path = $2",
        )
        .bind(conversation.to_string())
        .bind(path)
        .fetch_optional(pool)
        .await)?;
        Ok(row.map(|r| HistoryExport {
            conversation_id: conversation,
            path: path.to_string(),
            format: r.format,
            last_seq: r.last_seq,
            bytes: u64::try_from(r.bytes).unwrap_or(0),
            updated_at: Timestamp(r.updated_at),
        }))
    }

    /// Records an export (one statement: an upsert).
    pub async fn record(
        &self,
        conversation: ConversationId,
        path: &str,
        format: &str,
        last_seq: i64,
        bytes: u64,
    ) -> Result<()> {
        on_pool!(self.store, |pool, d| {
            sqlx::query(
            "INSERT INTO history_exports (conversation_id, path, format, last_seq, bytes, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (conversation_id, path) DO UPDATE SET \
             format = excluded.format, last_seq = excluded.last_seq, bytes = excluded.bytes, \
             updated_at = excluded.updated_at",
        )
        .bind(conversation.to_string())
        .bind(path)
        .bind(format)
        .bind(last_seq)
        .bind(i64::try_from(bytes).unwrap_or(i64::MAX))
        .bind(Timestamp::now().0)
        .execute(pool)
        .await.map(|r| r.rows_affected())
        })?;
        Ok(())
    }
}
