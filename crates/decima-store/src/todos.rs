//! The plans of executions. Pinned todos are part of every request's session context, verbatim:
//! they are not messages, so no compression can summarise them away.

use decima_core::ConversationId;
use sqlx::FromRow;

use crate::{Result, Store};

/// A todo as the context pipeline renders it.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct PinnedTodo {
    /// What to do.
    pub title: String,
    /// pending, in_progress, completed, failed or skipped.
    pub status: String,
    /// The phase it belongs to, if the plan has phases.
    pub phase: Option<String>,
}

/// Todo operations, borrowed from a [`Store`].
pub struct Todos<'s> {
    store: &'s Store,
}

impl<'s> Todos<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// The pinned, live todos of every execution of a conversation, in plan order.
    pub async fn pinned_in_conversation(
        &self,
        conversation: ConversationId,
    ) -> Result<Vec<PinnedTodo>> {
        Ok(sqlx::query_as(
            "SELECT t.title, t.status, t.phase FROM todos t JOIN executions e ON e.id = t.execution_id \
             WHERE e.conversation_id = ? AND t.pinned = 1 AND t.deleted_at IS NULL \
             ORDER BY e.created_at, e.id, t.position",
        )
        .bind(conversation.to_string())
        .fetch_all(self.store.pool())
        .await?)
    }
}
