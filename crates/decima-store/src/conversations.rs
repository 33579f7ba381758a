//! The conversations repository.

use crate::messages::insert_batch;
use crate::rows::{ConversationRow, conversation_select};
use crate::{BeginWrite, Result, Store, StoreError, on_pool};
use decima_core::{ConversationId, NewMessage, Timestamp};

/// Longest title accepted; longer ones are a paste accident, not a title.
pub const MAX_TITLE_CHARS: usize = 500;

/// A conversation as the sidebar and the CLI show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversation {
    /// Its id.
    pub id: ConversationId,
    /// What the user called it.
    pub title: String,
    /// The prompt preset it uses, if any.
    pub preset_id: Option<String>,
    /// Messages not soft-deleted.
    pub message_count: u64,
    /// Cached tokens of those messages.
    pub tokens: u64,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it or its messages last changed.
    pub updated_at: Timestamp,
    /// Set while it sits in the trash.
    pub deleted_at: Option<Timestamp>,
    /// The conversation whose run spawned this one (a subagent's), if any: the window nests it
    /// there.
    pub parent_id: Option<ConversationId>,
}

/// Conversation operations, borrowed from a [`Store`].
pub struct Conversations<'s> {
    store: &'s Store,
}

impl<'s> Conversations<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Creates an empty conversation.
    pub async fn create(&self, title: &str, preset_id: Option<&str>) -> Result<Conversation> {
        let title = checked_title(title)?;
        let id = ConversationId::new();
        on_pool!(self.store, |pool, dialect| {
            let mut tx = pool.begin_write().await?;
            insert!(&mut *tx, id, &title, preset_id);
            tx.commit().await?;
        });
        self.get(id).await
    }

    /// Creates a conversation holding `messages`, all in one transaction: either every message is
    /// stored or nothing is.
    pub async fn import(
        &self,
        title: &str,
        preset_id: Option<&str>,
        messages: &[NewMessage],
    ) -> Result<Conversation> {
        let title = checked_title(title)?;
        for m in messages {
            m.validate()?;
        }
        let priced = self.store.messages().price(messages);
        let id = ConversationId::new();
        on_pool!(self.store, |pool, dialect| {
            let mut tx = pool.begin_write().await?;
            insert!(&mut *tx, id, &title, preset_id);
            insert_batch!(&mut tx, dialect, id, &priced);
            tx.commit().await?;
        });
        self.get(id).await
    }

    /// Live conversations, most recently updated first.
    pub async fn list(&self) -> Result<Vec<Conversation>> {
        let sql = concat!(
            conversation_select!(),
            " WHERE c.deleted_at IS NULL ORDER BY c.updated_at DESC, c.id DESC"
        );
        let rows: Vec<ConversationRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .fetch_all(pool)
            .await?);
        rows.into_iter().map(Conversation::try_from).collect()
    }

    /// Conversations in the trash, most recently deleted first.
    pub async fn list_deleted(&self) -> Result<Vec<Conversation>> {
        let sql = concat!(
            conversation_select!(),
            " WHERE c.deleted_at IS NOT NULL ORDER BY c.deleted_at DESC"
        );
        let rows: Vec<ConversationRow> = on_pool!(self.store, |pool, d| sqlx::query_as(sql)
            .fetch_all(pool)
            .await?);
        rows.into_iter().map(Conversation::try_from).collect()
    }

    /// One live conversation; a deleted one counts as not found.
    pub async fn get(&self, id: ConversationId) -> Result<Conversation> {
        let found = self.find(id).await?;
        match found {
            Some(c) if c.deleted_at.is_none() => Ok(c),
            _ => Err(StoreError::not_found("conversation", id)),
        }
    }

    /// A conversation whether live or deleted.
    pub async fn find(&self, id: ConversationId) -> Result<Option<Conversation>> {
        let sql = concat!(conversation_select!(), " WHERE c.id = $1");
        let row: Option<ConversationRow> = on_pool!(self.store, |pool, d| {
            sqlx::query_as(sql)
                .bind(id.to_string())
                .fetch_optional(pool)
                .await?
        });
        row.map(Conversation::try_from).transpose()
    }

    /// Renames a live conversation.
    pub async fn rename(&self, id: ConversationId, title: &str) -> Result<Conversation> {
        let title = checked_title(title)?;
        let done = on_pool!(self.store, |pool, d| {
            sqlx::query(
                "UPDATE conversations SET title = $1, updated_at = $2 \
                 WHERE id = $3 AND deleted_at IS NULL",
            )
            .bind(&title)
            .bind(Timestamp::now().0)
            .bind(id.to_string())
            .execute(pool)
            .await?
            .rows_affected()
        });
        if done == 0 {
            return Err(StoreError::not_found("conversation", id));
        }
        self.get(id).await
    }

    /// The conversation's Docker sandbox settings as stored (`None`: the defaults). The
    /// runtime owns their shape; the store keeps any JSON object.
    pub async fn sandbox_config(&self, id: ConversationId) -> Result<Option<serde_json::Value>> {
        let row: Option<(Option<String>,)> = on_pool!(self.store, |pool, d| {
            sqlx::query_as(
                "SELECT sandbox_config FROM conversations WHERE id = $1 AND deleted_at IS NULL",
            )
            .bind(id.to_string())
            .fetch_optional(pool)
            .await?
        });
        let (text,) = row.ok_or_else(|| StoreError::not_found("conversation", id))?;
        text.map(|t| {
            serde_json::from_str(&t).map_err(|e| crate::rows::corrupt("sandbox settings", e))
        })
        .transpose()
    }

    /// Stores the conversation's Docker sandbox settings (`None` goes back to the defaults).
    pub async fn set_sandbox_config(
        &self,
        id: ConversationId,
        config: Option<&serde_json::Value>,
    ) -> Result<()> {
        if config.is_some_and(|c| !c.is_object()) {
            return Err(StoreError::InvalidInput(
                "sandbox settings must be a JSON object".into(),
            ));
        }
        let done = on_pool!(self.store, |pool, d| {
            sqlx::query(
                "UPDATE conversations SET sandbox_config = $1, updated_at = $2 \
                 WHERE id = $3 AND deleted_at IS NULL",
            )
            .bind(config.map(|c| c.to_string()))
            .bind(Timestamp::now().0)
            .bind(id.to_string())
            .execute(pool)
            .await?
            .rows_affected()
        });
        if done == 0 {
            return Err(StoreError::not_found("conversation", id));
        }
        Ok(())
    }

    /// The provider that reviews this conversation when none is named (`None`: the agent's).
    pub async fn reviewer_provider(&self, id: ConversationId) -> Result<Option<String>> {
        let row: Option<(Option<String>,)> = on_pool!(self.store, |pool, d| {
            sqlx::query_as(
                "SELECT reviewer_provider FROM conversations WHERE id = $1 AND deleted_at IS NULL",
            )
            .bind(id.to_string())
            .fetch_optional(pool)
            .await?
        });
        let (name,) = row.ok_or_else(|| StoreError::not_found("conversation", id))?;
        Ok(name)
    }

    /// Sets who reviews this conversation; `None` goes back to the agent's own provider.
    pub async fn set_reviewer_provider(
        &self,
        id: ConversationId,
        name: Option<&str>,
    ) -> Result<()> {
        let done = on_pool!(self.store, |pool, d| {
            sqlx::query(
                "UPDATE conversations SET reviewer_provider = $1, updated_at = $2 \
                 WHERE id = $3 AND deleted_at IS NULL",
            )
            .bind(name)
            .bind(Timestamp::now().0)
            .bind(id.to_string())
            .execute(pool)
            .await?
            .rows_affected()
        });
        if done == 0 {
            return Err(StoreError::not_found("conversation", id));
        }
        Ok(())
    }

    /// Moves a conversation to the trash. Its messages stay untouched, so restore is exact.
    pub async fn soft_delete(&self, id: ConversationId) -> Result<()> {
        self.set_deleted(id, Some(Timestamp::now())).await
    }

    /// Takes a conversation out of the trash.
    pub async fn restore(&self, id: ConversationId) -> Result<Conversation> {
        self.set_deleted(id, None).await?;
        self.get(id).await
    }

    async fn set_deleted(&self, id: ConversationId, at: Option<Timestamp>) -> Result<()> {
        let sql = if at.is_some() {
            "UPDATE conversations SET deleted_at = $1 WHERE id = $2 AND deleted_at IS NULL"
        } else {
            "UPDATE conversations SET deleted_at = $1 WHERE id = $2 AND deleted_at IS NOT NULL"
        };
        let done = on_pool!(self.store, |pool, d| {
            sqlx::query(sql)
                .bind(at.map(|t| t.0))
                .bind(id.to_string())
                .execute(pool)
                .await?
                .rows_affected()
        });
        if done == 0 {
            let what = if at.is_some() {
                "conversation"
            } else {
                "deleted conversation"
            };
            return Err(StoreError::not_found(what, id));
        }
        Ok(())
    }
}

/// Inserts a conversation row on `$executor` (a transaction of either backend).
macro_rules! insert {
    ($executor:expr, $id:expr, $title:expr, $preset_id:expr) => {{
        let now = Timestamp::now().0;
        sqlx::query(
            "INSERT INTO conversations (id, title, preset_id, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind($id.to_string())
        .bind($title)
        .bind($preset_id)
        .bind(now)
        .bind(now)
        .execute($executor)
        .await
        .map_err(|e| match &e {
            sqlx::Error::Database(db) if db.is_foreign_key_violation() => {
                StoreError::not_found("preset", $preset_id.unwrap_or_default())
            }
            _ => StoreError::from(e),
        })?;
    }};
}
use insert;

/// Trims the title and refuses ones no list could show.
fn checked_title(title: &str) -> Result<String> {
    let title = title.trim();
    if title.is_empty() {
        return Err(StoreError::InvalidInput(
            "a conversation title cannot be empty".into(),
        ));
    }
    if title.chars().count() > MAX_TITLE_CHARS {
        return Err(StoreError::InvalidInput(format!(
            "a conversation title can have at most {MAX_TITLE_CHARS} characters"
        )));
    }
    if title.chars().any(|c| c.is_control()) {
        return Err(StoreError::InvalidInput(
            "a conversation title cannot contain control characters or line breaks".into(),
        ));
    }
    Ok(title.to_string())
}
