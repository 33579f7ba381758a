//! The analyst's MCP servers, their per-conversation switches, and the approvals of their
//! tools. The store keeps a server's configuration as an opaque JSON object (the runtime gives
//! it its type) and refuses one that still carries a value of an environment variable or a
//! header: those belong in the secret store, whatever their names.

use decima_core::{ConversationId, Timestamp};
use serde_json::Value;

use crate::BeginWrite;
use crate::on_pool;
use crate::{Result, Store, StoreError};

/// A stored server.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerRecord {
    /// Its unique name.
    pub name: String,
    /// Its configuration, without secret values.
    pub config: Value,
}

/// MCP server operations, borrowed from a [`Store`].
pub struct McpServers<'s> {
    store: &'s Store,
}

impl<'s> McpServers<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Every server, in the order they were added.
    pub async fn list(&self) -> Result<Vec<McpServerRecord>> {
        let rows: Vec<(String, String)> = on_pool!(self.store, |pool, d| sqlx::query_as(
            "SELECT name, config FROM mcp_servers ORDER BY position, name"
        )
        .fetch_all(pool)
        .await)?;
        rows.into_iter()
            .map(|(name, text)| {
                let config = serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
                    what: "MCP server",
                    detail: e.to_string(),
                })?;
                Ok(McpServerRecord { name, config })
            })
            .collect()
    }

    /// Adds servers in one transaction: all of them or, when a name is taken (by a stored
    /// server or twice in `servers`), none.
    pub async fn add(&self, servers: &[McpServerRecord]) -> Result<()> {
        for s in servers {
            check(s)?;
        }
        on_pool!(self.store, |pool, dialect| {
            let mut tx = pool.begin_write().await?;
            let (position,): (i64,) =
                sqlx::query_as("SELECT COALESCE(MAX(position), 0) FROM mcp_servers")
                    .fetch_one(&mut *tx)
                    .await?;
            let now = Timestamp::now().0;
            for (i, s) in servers.iter().enumerate() {
                let taken: Option<(String,)> =
                    sqlx::query_as("SELECT name FROM mcp_servers WHERE name = $1")
                        .bind(&s.name)
                        .fetch_optional(&mut *tx)
                        .await?;
                if taken.is_some() {
                    return Err(StoreError::Conflict(format!(
                        "an MCP server named {:?} exists already; remove it first or pick another \
                         name",
                        s.name
                    )));
                }
                sqlx::query(
                    "INSERT INTO mcp_servers (name, config, position, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5)",
                )
                .bind(&s.name)
                .bind(s.config.to_string())
                .bind(position + 1 + i as i64)
                .bind(now)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
        });
        Ok(())
    }

    /// Replaces a stored server's configuration (enable, timeouts, lists).
    pub async fn update(&self, server: &McpServerRecord) -> Result<()> {
        check(server)?;
        let done = on_pool!(self.store, |pool, d| sqlx::query(
            "UPDATE mcp_servers SET config = $1, updated_at = $2 WHERE name = $3"
        )
        .bind(server.config.to_string())
        .bind(Timestamp::now().0)
        .bind(&server.name)
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))?;
        if done == 0 {
            return Err(StoreError::not_found("MCP server", &server.name));
        }
        Ok(())
    }

    /// Removes a server with its switches and approvals; `false` when there was none.
    pub async fn remove(&self, name: &str) -> Result<bool> {
        let done = on_pool!(self.store, |pool, d| sqlx::query(
            "DELETE FROM mcp_servers WHERE name = $1"
        )
        .bind(name)
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))?;
        Ok(done > 0)
    }

    /// Switches a server on or off for one conversation.
    pub async fn set_for_conversation(
        &self,
        conversation: ConversationId,
        server: &str,
        enabled: bool,
    ) -> Result<()> {
        on_pool!(self.store, |pool, d| sqlx::query(
            "INSERT INTO conversation_mcp_servers (conversation_id, server, enabled) \
             VALUES ($1, $2, $3) ON CONFLICT (conversation_id, server) \
             DO UPDATE SET enabled = excluded.enabled",
        )
        .bind(conversation.to_string())
        .bind(server)
        .bind(enabled)
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))
        .map_err(|e| foreign(e, server))?;
        Ok(())
    }

    /// The servers a conversation switched off.
    pub async fn switched_off(&self, conversation: ConversationId) -> Result<Vec<String>> {
        let rows: Vec<(String,)> = on_pool!(self.store, |pool, d| {
            sqlx::query_as(
            "SELECT server FROM conversation_mcp_servers WHERE conversation_id = $1 AND NOT enabled",
        )
        .bind(conversation.to_string())
        .fetch_all(pool)
        .await
        })?;
        Ok(rows.into_iter().map(|(s,)| s).collect())
    }

    /// Approves a server's tool for one conversation, or always when `conversation` is `None`.
    pub async fn approve(
        &self,
        server: &str,
        tool: &str,
        conversation: Option<ConversationId>,
    ) -> Result<()> {
        on_pool!(self.store, |pool, d| sqlx::query(
            "INSERT INTO mcp_approvals (server, tool, conversation_id, created_at) \
             VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
        )
        .bind(server)
        .bind(tool)
        .bind(conversation.map(|c| c.to_string()))
        .bind(Timestamp::now().0)
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))
        .map_err(|e| foreign(e, server))?;
        Ok(())
    }

    /// Whether a server's tool was approved always or for this conversation.
    pub async fn approved(
        &self,
        server: &str,
        tool: &str,
        conversation: ConversationId,
    ) -> Result<bool> {
        let row: Option<(i64,)> = on_pool!(self.store, |pool, d| sqlx::query_as(
            "SELECT CAST(1 AS BIGINT) FROM mcp_approvals WHERE server = $1 AND tool = $2 \
             AND (conversation_id IS NULL OR conversation_id = $3) LIMIT 1",
        )
        .bind(server)
        .bind(tool)
        .bind(conversation.to_string())
        .fetch_optional(pool)
        .await)?;
        Ok(row.is_some())
    }
}

/// A server's row as the schema requires it, and without a secret value.
fn check(server: &McpServerRecord) -> Result<()> {
    if !server.config.is_object() {
        return Err(StoreError::InvalidInput(format!(
            "the configuration of MCP server {:?} must be a JSON object",
            server.name
        )));
    }
    let transport = server.config.get("transport");
    if transport
        .and_then(|t| t.get("bearer_token"))
        .and_then(Value::as_str)
        .is_some_and(|t| !t.is_empty())
    {
        return Err(StoreError::InvalidInput(format!(
            "the configuration of MCP server {:?} holds its bearer token; it belongs in the \
             secret store",
            server.name
        )));
    }
    for field in ["env", "headers"] {
        let held = transport
            .and_then(|t| t.get(field))
            .and_then(Value::as_object)
            .and_then(|m| {
                m.iter()
                    .find(|(_, v)| v.as_str().is_none_or(|s| !s.is_empty()))
            });
        if let Some((key, _)) = held {
            return Err(StoreError::InvalidInput(format!(
                "the configuration of MCP server {:?} holds the value of {key}; values of \
                 environment variables and headers belong in the secret store",
                server.name
            )));
        }
    }
    Ok(())
}

/// A switch or an approval for a server that does not exist.
fn foreign(e: sqlx::Error, server: &str) -> StoreError {
    match &e {
        sqlx::Error::Database(d) if d.is_foreign_key_violation() => {
            StoreError::not_found("MCP server or conversation", server)
        }
        _ => e.into(),
    }
}
