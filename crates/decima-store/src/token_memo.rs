//! Remembered token counts of texts a step counts afresh (a preset's parts, the session context),
//! so a short-lived process can build a request without building the tokenizer's tables when
//! nothing it counts has changed. See the `token_memo` table.

use std::collections::HashMap;

use decima_core::{ConversationId, Timestamp};

use crate::{BeginWrite, Result, Store, on_pool};

/// Rows kept per conversation: a preset has a handful of parts, and the session context changes
/// with every compaction, so a few dozen cover the steady state.
const KEEP_PER_CONVERSATION: i64 = 64;

/// Token-memo operations, borrowed from a [`Store`].
pub struct TokenMemo<'s> {
    store: &'s Store,
}

impl<'s> TokenMemo<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Every remembered count of the conversation, by digest.
    pub async fn load(&self, conversation: ConversationId) -> Result<HashMap<String, u32>> {
        let rows: Vec<(String, i64)> = on_pool!(self.store, |pool, d| sqlx::query_as(
            "SELECT digest, tokens FROM token_memo WHERE conversation_id = $1"
        )
        .bind(conversation.to_string())
        .fetch_all(pool)
        .await)?;
        Ok(rows
            .into_iter()
            .filter_map(|(digest, tokens)| Some((digest, u32::try_from(tokens).ok()?)))
            .collect())
    }

    /// Remembers new counts and forgets the least recently used beyond the per-conversation cap,
    /// in one write transaction.
    pub async fn remember(
        &self,
        conversation: ConversationId,
        counts: &[(String, u32)],
    ) -> Result<()> {
        if counts.is_empty() {
            return Ok(());
        }
        let now = Timestamp::now().0;
        let id = conversation.to_string();
        on_pool!(self.store, |pool, d| {
            let mut tx = pool.begin_write().await?;
            for (digest, tokens) in counts {
                sqlx::query(
                    "INSERT INTO token_memo (conversation_id, digest, tokens, used_at) \
                     SELECT id, $1, $2, $3 FROM conversations WHERE id = $4 \
                     ON CONFLICT (conversation_id, digest) DO UPDATE SET used_at = excluded.used_at",
                )
                .bind(digest)
                .bind(i64::from(*tokens))
                .bind(now)
                .bind(&id)
                .execute(&mut *tx)
                .await?;
            }
            sqlx::query(
                "DELETE FROM token_memo WHERE conversation_id = $1 AND digest NOT IN \
                 (SELECT digest FROM token_memo WHERE conversation_id = $2 \
                  ORDER BY used_at DESC, digest LIMIT $3)",
            )
            .bind(&id)
            .bind(&id)
            .bind(KEEP_PER_CONVERSATION)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
        });
        Ok(())
    }
}
