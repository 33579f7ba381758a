//! Reading the images of tool results, kept beside their messages (`message_images`); they are
//! written with their message by [`Messages::append`] and [`Messages::append_noting`]. And where
//! a call's result is, for the window to show it.

use decima_core::{ConversationId, ImagePart};

use crate::on_pool;
use crate::{Messages, Result};

impl Messages<'_> {
    /// The images of the conversation's live tool results, with the call each result answers,
    /// in the order of the history: what a model that takes images in tool results is shown
    /// again in every request that carries the result.
    pub async fn tool_result_images(
        &self,
        conversation: ConversationId,
    ) -> Result<Vec<(String, Vec<ImagePart>)>> {
        let rows: Vec<(Option<String>, String, String, i64)> =
            on_pool!(self.store, |pool, d| sqlx::query_as(
                "SELECT m.tool_call_id, i.media_type, i.data, i.tokens FROM message_images i \
             JOIN messages m ON m.id = i.message_id \
             WHERE m.conversation_id = $1 AND m.deleted_at IS NULL ORDER BY m.seq, i.ordinal",
            )
            .bind(conversation.to_string())
            .fetch_all(pool)
            .await)?;
        let mut out: Vec<(String, Vec<ImagePart>)> = Vec::new();
        for (call, media_type, data, tokens) in rows {
            let image = image_part(media_type, data, tokens);
            let call = call.unwrap_or_default();
            match out.last_mut() {
                Some((last, images)) if *last == call => images.push(image),
                _ => out.push((call, vec![image])),
            }
        }
        Ok(out)
    }

    /// The images of the live result of one tool call (none for most), in order: what the
    /// window shows on the call's card and on its result.
    pub async fn result_images(
        &self,
        conversation: ConversationId,
        call_id: &str,
    ) -> Result<Vec<ImagePart>> {
        let rows: Vec<(String, String, i64)> = on_pool!(self.store, |pool, d| sqlx::query_as(
            "SELECT i.media_type, i.data, i.tokens FROM message_images i \
             JOIN messages m ON m.id = i.message_id \
             WHERE m.conversation_id = $1 AND m.tool_call_id = $2 AND m.deleted_at IS NULL \
             ORDER BY m.seq, i.ordinal",
        )
        .bind(conversation.to_string())
        .bind(call_id)
        .fetch_all(pool)
        .await)?;
        Ok(rows
            .into_iter()
            .map(|(media_type, data, tokens)| image_part(media_type, data, tokens))
            .collect())
    }
}

impl Messages<'_> {
    /// The seq of the live result of one tool call, if it is stored: where the window scrolls to
    /// show the call that wrote a workspace file, however far back it is. A call id is not
    /// unique (servers that number calls per response reuse `call_0` at every step): with
    /// `after`, the seq of the answer that holds the call, it is the first result after that
    /// answer, and `None` when that answer's result is no longer live (set aside by a
    /// Regenerate); without it, the newest result of that id.
    pub async fn seq_of_result(
        &self,
        conversation: ConversationId,
        call_id: &str,
        after: Option<i64>,
    ) -> Result<Option<i64>> {
        let rows: Vec<(i64,)> = match after {
            Some(after) => on_pool!(self.store, |pool, d| sqlx::query_as(
                "SELECT seq FROM messages WHERE conversation_id = $1 AND tool_call_id = $2 \
                 AND seq > $3 AND deleted_at IS NULL AND NOT EXISTS (SELECT 1 FROM messages a \
                 WHERE a.conversation_id = $1 AND a.seq = $3 AND a.deleted_at IS NOT NULL) \
                 ORDER BY seq LIMIT 1",
            )
            .bind(conversation.to_string())
            .bind(call_id)
            .bind(after)
            .fetch_all(pool)
            .await)?,
            None => on_pool!(self.store, |pool, d| sqlx::query_as(
                "SELECT seq FROM messages WHERE conversation_id = $1 AND tool_call_id = $2 \
                 AND deleted_at IS NULL ORDER BY seq DESC LIMIT 1",
            )
            .bind(conversation.to_string())
            .bind(call_id)
            .fetch_all(pool)
            .await)?,
        };
        Ok(rows.first().map(|(seq,)| *seq))
    }
}

fn image_part(media_type: String, data: String, tokens: i64) -> ImagePart {
    ImagePart {
        media_type,
        data: data.into(),
        tokens: u32::try_from(tokens).unwrap_or(0),
    }
}
