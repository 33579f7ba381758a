//! What a resumed execution repairs before its next step: calls left without a result, and
//! todos left in progress without a snapshot.

use super::Runner;
use crate::agent::dangling;
use crate::error::Result;
use decima_store::{SnapshotReason, TodoStatus};

impl Runner<'_, '_> {
    /// After a crash: every call of the last answer without a stored result gets one that
    /// says it was interrupted. Nothing is run again.
    pub(super) async fn answer_interrupted_calls(&mut self) -> Result<()> {
        let open = dangling::unanswered(self.store(), self.conversation.id).await?;
        if open.is_empty() {
            return Ok(());
        }
        let started = dangling::started_calls(self.store(), self.execution.id).await?;
        for call in open {
            let text = if started.contains(&call.id) {
                "[interrupted] Decima stopped while this call ran; it was not run again and its \
                 effect is unknown: check before you repeat it"
            } else {
                "[interrupted] Decima stopped before this call started; it did not run"
            };
            self.answer_unrun(&call, text.to_owned(), None).await?;
        }
        Ok(())
    }

    /// A todo marked in_progress whose snapshot a crash prevented gets one now.
    pub(super) async fn snapshot_unsnapshotted_todos(&mut self) -> Result<()> {
        let plan = self.plan().await?;
        for todo in plan.iter().filter(|t| t.status == TodoStatus::InProgress) {
            if self
                .store()
                .snapshots()
                .latest_for_todo(&todo.id)
                .await?
                .is_none()
            {
                let seq = self.last_seq().await?;
                self.take_snapshot(Some(&todo.id), SnapshotReason::TodoStart, seq, &plan)
                    .await?;
            }
        }
        Ok(())
    }

    pub(super) async fn last_seq(&self) -> Result<i64> {
        Ok(self
            .store()
            .messages()
            .page_before(self.conversation.id, 0, i64::MAX, 1)
            .await?
            .last()
            .map_or(0, |m| m.seq))
    }
}
