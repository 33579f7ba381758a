//! Moving in: a local SQLite store copied into a team's shared PostgreSQL store.
//!
//! Rows cross as JSON objects, one per row, built by SQLite (`json_object`) and read by
//! PostgreSQL into the table's own row type (`json_populate_recordset`), so every column keeps
//! its value and takes the target's type (a 0/1 flag becomes a boolean) without a per-table
//! mapping to keep in step with the schema: the columns are read from the source's catalogue.
//!
//! What is copied: the settings-like tables (presets, providers without their keys, which live in
//! the keyring, app settings, token calibrations, MCP servers), then each conversation with
//! everything that hangs off it (messages with their images and answer records, compactions and summaries, runs with
//! their todos, snapshots' records, failures, steps, model calls and events, reviews and their
//! findings and cached summaries, remembered token counts, MCP switches and approvals, the
//! analyst's decisions on figures), each
//! conversation in one transaction, oldest first, so that a subagent's run finds its parent's.
//! Not copied: claims (a chat turn in flight on this machine) and history exports (paths on
//! this machine).
//!
//! Safe to run twice: a conversation whose id the target holds already is left alone and
//! counted as such, and settings rows whose key is there already are kept as they are. Ids are
//! UUIDs, so a conversation's id names it on every machine; the event log's numbers are the
//! one exception, and events get the target's numbers.

use std::fmt::Write as _;

use futures_util::TryStreamExt as _;
use sha2::{Digest as _, Sha256};
use sqlx::{PgPool, Postgres, SqlitePool, Transaction};

use crate::{Backend, Result, Store, StoreError};

/// Rows per `json_populate_recordset` statement.
const BATCH: usize = 500;

/// Tables copied whole, before any conversation, in an order their foreign keys allow. A row
/// whose key the target holds is kept as the target has it.
const SETTINGS_TABLES: &[&str] = &[
    "presets",
    "providers",
    "app_settings",
    "token_calibrations",
    "mcp_servers",
];

/// One table of a conversation's rows: which rows, in what order, and how they go in.
struct Part {
    table: &'static str,
    /// `WHERE …` over the source table, with `?1` the conversation's id.
    rows: &'static str,
    order: &'static str,
    /// A column pointing at another row of the same table, set once every row is in.
    self_reference: Option<&'static str>,
    /// Columns the target numbers itself (left out of the insert).
    renumbered: Option<&'static str>,
}

const RUNS: &str = "execution_id IN (SELECT id FROM executions WHERE conversation_id = ?1)";

/// A conversation's tables, parents first.
const PARTS: &[Part] = &[
    Part {
        table: "conversations",
        rows: "id = ?1",
        order: "id",
        self_reference: None,
        renumbered: None,
    },
    Part {
        table: "executions",
        rows: "conversation_id = ?1",
        order: "created_at, id",
        self_reference: None,
        renumbered: None,
    },
    Part {
        table: "compactions",
        rows: "conversation_id = ?1",
        order: "created_at, id",
        self_reference: None,
        renumbered: None,
    },
    Part {
        table: "summaries",
        rows: "conversation_id = ?1",
        order: "created_at, id",
        self_reference: Some("superseded_by"),
        renumbered: None,
    },
    Part {
        table: "messages",
        rows: "conversation_id = ?1",
        order: "seq",
        self_reference: None,
        renumbered: None,
    },
    Part {
        table: "answers",
        rows: "conversation_id = ?1",
        order: "created_at, message_id",
        self_reference: None,
        renumbered: None,
    },
    Part {
        table: "message_images",
        rows: "message_id IN (SELECT id FROM messages WHERE conversation_id = ?1)",
        order: "message_id, ordinal",
        self_reference: None,
        renumbered: None,
    },
    Part {
        table: "todos",
        rows: RUNS,
        order: "execution_id, position, id",
        self_reference: None,
        renumbered: None,
    },
    Part {
        table: "snapshots",
        rows: RUNS,
        order: "created_at, id",
        self_reference: None,
        renumbered: None,
    },
    Part {
        table: "failures",
        rows: RUNS,
        order: "created_at, id",
        self_reference: None,
        renumbered: None,
    },
    Part {
        table: "steps",
        rows: RUNS,
        order: "execution_id, seq",
        self_reference: Some("superseded_by"),
        renumbered: None,
    },
    Part {
        table: "model_calls",
        rows: RUNS,
        order: "execution_id, n",
        self_reference: None,
        renumbered: None,
    },
    Part {
        table: "events",
        rows: "conversation_id = ?1 OR execution_id IN (SELECT id FROM executions WHERE conversation_id = ?1)",
        order: "id",
        self_reference: None,
        renumbered: Some("id"),
    },
    Part {
        table: "reviews",
        rows: "conversation_id = ?1",
        order: "created_at, id",
        self_reference: None,
        renumbered: None,
    },
    Part {
        table: "review_findings",
        rows: "conversation_id = ?1",
        order: "review_id, position",
        self_reference: None,
        renumbered: None,
    },
    Part {
        table: "review_digests",
        rows: "conversation_id = ?1",
        order: "version, from_seq, through_seq, budget",
        self_reference: None,
        renumbered: None,
    },
    Part {
        table: "token_memo",
        rows: "conversation_id = ?1",
        order: "digest",
        self_reference: None,
        renumbered: None,
    },
    Part {
        table: "conversation_mcp_servers",
        rows: "conversation_id = ?1",
        order: "server",
        self_reference: None,
        renumbered: None,
    },
    Part {
        table: "mcp_approvals",
        rows: "conversation_id = ?1",
        order: "server, tool",
        self_reference: None,
        renumbered: None,
    },
    Part {
        table: "figure_decisions",
        rows: "conversation_id = ?1",
        order: "message_seq, start",
        self_reference: None,
        renumbered: None,
    },
    Part {
        table: "figure_receipts",
        rows: "conversation_id = ?1",
        order: "message_seq, start, review_id",
        self_reference: None,
        renumbered: None,
    },
];

/// Columns that the target's triggers change as rows go in (a message advances its
/// conversation's seq and counts, a model call adds to its run's totals): they are set back to
/// the source's values once a conversation's rows are in.
const RESTORED: &[(&str, &str)] = &[
    (
        "conversations",
        "next_seq, live_messages, live_tokens, updated_at",
    ),
    (
        "executions",
        "model_calls, tokens_in, tokens_out, cache_read_tokens, cache_write_tokens, \
         cost_microdollars",
    ),
];

/// What a copy did, and the evidence that nothing was lost.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CopyReport {
    /// Conversations copied now.
    pub conversations_copied: u64,
    /// Conversations the target held already (a second run), left alone.
    pub conversations_present: u64,
    /// Rows copied, per table, in copy order.
    pub rows: Vec<(String, u64)>,
    /// Messages of the source's conversations, live or rolled back.
    pub source_messages: u64,
    /// The same conversations' messages in the target after the copy.
    pub target_messages: u64,
    /// SHA-256 of every message of the source's conversations (conversation, seq, role,
    /// content, tool calls), in order.
    pub source_checksum: String,
    /// The same over the target, after the copy: equal when nothing was lost or changed.
    pub target_checksum: String,
}

impl Store {
    /// Copies this SQLite store into the PostgreSQL store `target` (see the module
    /// documentation).
    ///
    /// # Errors
    /// [`StoreError::InvalidInput`] unless this is SQLite and `target` PostgreSQL; a conversation
    /// whose rows the target refuses stops the copy with nothing of that conversation written.
    pub async fn copy_to(&self, target: &Store) -> Result<CopyReport> {
        let (Backend::Sqlite(from), Backend::Postgres(to)) = (self.backend(), target.backend())
        else {
            return Err(StoreError::InvalidInput(
                "a copy goes from a local SQLite store to a shared PostgreSQL one".into(),
            ));
        };
        let mut report = CopyReport::default();
        let mut counts: Vec<(String, u64)> = Vec::new();
        let mut add = |table: &str, n: u64| match counts.iter_mut().find(|(t, _)| t == table) {
            Some((_, total)) => *total += n,
            None => counts.push((table.to_owned(), n)),
        };

        for table in SETTINGS_TABLES {
            let mut tx = to.begin().await?;
            let n = copy_rows(from, &mut tx, table, "1 = 1", "1", None, None, None).await?;
            tx.commit().await?;
            add(table, n);
        }

        let ids: Vec<String> =
            sqlx::query_scalar("SELECT id FROM conversations ORDER BY created_at, id")
                .fetch_all(from)
                .await?;
        for id in &ids {
            let present: Option<String> =
                sqlx::query_scalar("SELECT id FROM conversations WHERE id = $1")
                    .bind(id)
                    .fetch_optional(to)
                    .await?;
            if present.is_some() {
                report.conversations_present += 1;
                continue;
            }
            let mut tx = to.begin().await?;
            for part in PARTS {
                let n = copy_rows(
                    from,
                    &mut tx,
                    part.table,
                    part.rows,
                    part.order,
                    Some(id),
                    part.self_reference,
                    part.renumbered,
                )
                .await
                .map_err(|e| copy_error(id, part.table, e))?;
                add(part.table, n);
            }
            for (table, columns) in RESTORED {
                restore_columns(from, &mut tx, table, columns, id)
                    .await
                    .map_err(|e| copy_error(id, table, e))?;
            }
            tx.commit().await?;
            report.conversations_copied += 1;
        }
        report.rows = counts;
        let (n, sum) = sqlite_checksum(from).await?;
        report.source_messages = n;
        report.source_checksum = sum;
        let (n, sum) = postgres_checksum(to, &ids).await?;
        report.target_messages = n;
        report.target_checksum = sum;
        Ok(report)
    }
}

fn copy_error(conversation: &str, table: &str, e: StoreError) -> StoreError {
    StoreError::Conflict(format!(
        "conversation {conversation} could not be copied (its {table}): {e}; nothing of it was \
         written"
    ))
}

/// The source table's columns, from its catalogue.
async fn columns(from: &SqlitePool, table: &str) -> Result<Vec<String>> {
    Ok(
        sqlx::query_scalar("SELECT name FROM pragma_table_info(?1) ORDER BY cid")
            .bind(table)
            .fetch_all(from)
            .await?,
    )
}

/// Copies the rows of `table` that `rows` selects (bound to `conversation`) into the target,
/// in batches; returns how many went in. Rows whose key the target holds are skipped.
#[allow(clippy::too_many_arguments)]
async fn copy_rows(
    from: &SqlitePool,
    to: &mut Transaction<'static, Postgres>,
    table: &str,
    rows: &str,
    order: &str,
    conversation: Option<&str>,
    self_reference: Option<&str>,
    renumbered: Option<&str>,
) -> Result<u64> {
    let columns: Vec<String> = columns(from, table)
        .await?
        .into_iter()
        .filter(|c| Some(c.as_str()) != renumbered)
        .collect();
    let mut object = String::from("json_object(");
    for (i, c) in columns.iter().enumerate() {
        if i > 0 {
            object.push_str(", ");
        }
        // Self-references are set afterwards, when every row they may point at is in.
        if Some(c.as_str()) == self_reference {
            let _ = write!(object, "'{c}', NULL");
        } else {
            let _ = write!(object, "'{c}', \"{c}\"");
        }
    }
    object.push(')');
    let select = format!("SELECT {object} FROM {table} WHERE {rows} ORDER BY {order}");
    let list = columns
        .iter()
        .map(|c| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let insert = format!(
        "INSERT INTO {table} ({list}) SELECT {list} FROM \
         json_populate_recordset(NULL::{table}, $1::json) ON CONFLICT DO NOTHING"
    );
    let mut query = sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(select));
    if let Some(id) = conversation {
        query = query.bind(id.to_owned());
    }
    let mut stream = query.fetch(from);
    let mut batch: Vec<String> = Vec::with_capacity(BATCH);
    let mut copied = 0u64;
    while let Some(row) = stream.try_next().await? {
        batch.push(row);
        if batch.len() == BATCH {
            copied += insert_batch(to, &insert, &mut batch).await?;
        }
    }
    drop(stream);
    if !batch.is_empty() {
        copied += insert_batch(to, &insert, &mut batch).await?;
    }
    if let Some(column) = self_reference {
        let pairs: Vec<(String, String)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT id, \"{column}\" FROM {table} WHERE ({rows}) AND \"{column}\" IS NOT NULL"
        )))
        .bind(conversation.unwrap_or_default().to_owned())
        .fetch_all(from)
        .await?;
        for (id, target) in pairs {
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "UPDATE {table} SET \"{column}\" = $1 WHERE id = $2"
            )))
            .bind(target)
            .bind(id)
            .execute(&mut **to)
            .await?;
        }
    }
    Ok(copied)
}

async fn insert_batch(
    to: &mut Transaction<'static, Postgres>,
    insert: &str,
    batch: &mut Vec<String>,
) -> Result<u64> {
    let json = format!("[{}]", batch.join(","));
    batch.clear();
    Ok(sqlx::query(sqlx::AssertSqlSafe(insert.to_owned()))
        .bind(json)
        .execute(&mut **to)
        .await?
        .rows_affected())
}

/// Sets `columns` of the conversation's rows of `table` back to the source's values.
async fn restore_columns(
    from: &SqlitePool,
    to: &mut Transaction<'static, Postgres>,
    table: &str,
    columns: &str,
    conversation: &str,
) -> Result<()> {
    let names: Vec<&str> = columns.split(',').map(str::trim).collect();
    let object = names
        .iter()
        .map(|c| format!("'{c}', {c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let key = if table == "conversations" {
        "id"
    } else {
        "conversation_id"
    };
    let rows: Vec<(String, String)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT id, json_object({object}) FROM {table} WHERE {key} = ?1"
    )))
    .bind(conversation)
    .fetch_all(from)
    .await?;
    let set = names
        .iter()
        .map(|c| format!("{c} = r.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    for (id, values) in rows {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE {table} t SET {set} FROM json_populate_record(NULL::{table}, $1::json) r \
             WHERE t.id = $2"
        )))
        .bind(values)
        .bind(id)
        .execute(&mut **to)
        .await?;
    }
    Ok(())
}

/// Hashes one message's identity and text into `hasher`.
fn hash_message(hasher: &mut Sha256, row: &(String, i64, String, String, Option<String>)) {
    let (conversation, seq, role, content, tool_calls) = row;
    for part in [
        conversation.as_bytes(),
        seq.to_string().as_bytes(),
        role.as_bytes(),
        content.as_bytes(),
        tool_calls.as_deref().unwrap_or("").as_bytes(),
    ] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

async fn sqlite_checksum(from: &SqlitePool) -> Result<(u64, String)> {
    let mut hasher = Sha256::new();
    let mut n = 0u64;
    let mut rows = sqlx::query_as::<_, (String, i64, String, String, Option<String>)>(
        "SELECT m.conversation_id, m.seq, m.role, m.content, m.tool_calls FROM messages m \
         JOIN conversations c ON c.id = m.conversation_id \
         ORDER BY c.created_at, c.id, m.seq",
    )
    .fetch(from);
    while let Some(row) = rows.try_next().await? {
        hash_message(&mut hasher, &row);
        n += 1;
    }
    Ok((n, hex(&hasher.finalize())))
}

/// The checksum of the target's messages of the source's conversations (`ids`, in the
/// source's order).
async fn postgres_checksum(to: &PgPool, ids: &[String]) -> Result<(u64, String)> {
    let mut hasher = Sha256::new();
    let mut n = 0u64;
    for id in ids {
        let mut rows = sqlx::query_as::<_, (String, i64, String, String, Option<String>)>(
            "SELECT conversation_id, seq, role, content, tool_calls FROM messages \
             WHERE conversation_id = $1 ORDER BY seq",
        )
        .bind(id)
        .fetch(to);
        while let Some(row) = rows.try_next().await? {
            hash_message(&mut hasher, &row);
            n += 1;
        }
    }
    Ok((n, hex(&hasher.finalize())))
}
