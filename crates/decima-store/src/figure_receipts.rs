//! What the tenth man got when it recomputed a figure of an answer: the value it reached in a
//! fresh sandbox, whether that agrees with the figure within the figure's precision, how it got
//! there, and its code and commands as the receipt. Kept per figure (its answer's seq and its
//! byte offset there) and per review, so `decima numbers` and the window show a figure as
//! verified, with its receipt, and a later recompute adds to the record instead of erasing it.

use decima_core::{ConversationId, Timestamp};
use sqlx::FromRow;

use crate::rows::corrupt;
use crate::{Result, Store, StoreError, on_pool};

/// The most a receipt's code may hold: the reviewer's commands and files, cut at this size.
pub const MAX_RECEIPT_BYTES: usize = 64 * 1024;

/// One recomputation of one figure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FigureReceipt {
    /// The answer's message.
    pub message_seq: i64,
    /// The figure's byte offset in the answer.
    pub start: u32,
    /// The recompute review that made it.
    pub review_id: String,
    /// The figure as the answer wrote it.
    pub text: String,
    /// The value the reviewer reached, as it wrote it; none when it could not compute one.
    pub recomputed: Option<String>,
    /// Whether that value agrees with the figure within the figure's precision.
    pub agrees: bool,
    /// How the reviewer reached it, in its words.
    pub derivation: String,
    /// The reviewer's commands and the files it wrote, in order: the receipt.
    pub code: String,
    /// When it was recorded.
    pub created_at: Timestamp,
}

macro_rules! receipt_select {
    () => {
        "SELECT message_seq, start, review_id, text, recomputed, agrees, derivation, code, \
         created_at FROM figure_receipts"
    };
}

#[derive(FromRow)]
struct ReceiptRow {
    message_seq: i64,
    start: i64,
    review_id: String,
    text: String,
    recomputed: Option<String>,
    agrees: bool,
    derivation: String,
    code: String,
    created_at: i64,
}

impl TryFrom<ReceiptRow> for FigureReceipt {
    type Error = StoreError;

    fn try_from(row: ReceiptRow) -> Result<Self> {
        Ok(Self {
            message_seq: row.message_seq,
            start: u32::try_from(row.start).map_err(|e| corrupt("figure offset", e))?,
            review_id: row.review_id,
            text: row.text,
            recomputed: row.recomputed,
            agrees: row.agrees,
            derivation: row.derivation,
            code: row.code,
            created_at: Timestamp(row.created_at),
        })
    }
}

/// Figure receipts, borrowed from a [`Store`].
pub struct FigureReceipts<'s> {
    store: &'s Store,
}

impl<'s> FigureReceipts<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Records what a review got for one figure. The receipt's code is cut to
    /// [`MAX_RECEIPT_BYTES`], on a character boundary, with a note that it was.
    pub async fn record(&self, conversation: ConversationId, r: &FigureReceipt) -> Result<()> {
        let code = bounded(&r.code);
        on_pool!(self.store, |pool, dialect| {
            sqlx::query(
                "INSERT INTO figure_receipts (conversation_id, message_seq, start, review_id, \
                 text, recomputed, agrees, derivation, code, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            )
            .bind(conversation.to_string())
            .bind(r.message_seq)
            .bind(i64::from(r.start))
            .bind(r.review_id.as_str())
            .bind(r.text.as_str())
            .bind(r.recomputed.as_deref())
            .bind(r.agrees)
            .bind(r.derivation.as_str())
            .bind(code.as_str())
            .bind(r.created_at.0)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
        })?;
        Ok(())
    }

    /// The receipts of one answer's figures, oldest first.
    pub async fn of_message(
        &self,
        conversation: ConversationId,
        message_seq: i64,
    ) -> Result<Vec<FigureReceipt>> {
        let rows: Vec<ReceiptRow> = on_pool!(self.store, |pool, d| {
            sqlx::query_as(concat!(
                receipt_select!(),
                " WHERE conversation_id = $1 AND message_seq = $2 ORDER BY created_at, start"
            ))
            .bind(conversation.to_string())
            .bind(message_seq)
            .fetch_all(pool)
            .await
        })?;
        rows.into_iter().map(FigureReceipt::try_from).collect()
    }

    /// The receipts one review recorded, in the answer's order.
    pub async fn of_review(&self, review_id: &str) -> Result<Vec<FigureReceipt>> {
        let rows: Vec<ReceiptRow> = on_pool!(self.store, |pool, d| {
            sqlx::query_as(concat!(
                receipt_select!(),
                " WHERE review_id = $1 ORDER BY message_seq, start"
            ))
            .bind(review_id)
            .fetch_all(pool)
            .await
        })?;
        rows.into_iter().map(FigureReceipt::try_from).collect()
    }
}

/// `code` within [`MAX_RECEIPT_BYTES`].
fn bounded(code: &str) -> String {
    if code.len() <= MAX_RECEIPT_BYTES {
        return code.to_owned();
    }
    let note = "\n[… the rest of the receipt was cut at 64 KiB]";
    let mut end = MAX_RECEIPT_BYTES - note.len();
    while !code.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{note}", &code[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_receipt_is_cut_on_a_character_boundary_and_says_so() {
        let code = "é".repeat(MAX_RECEIPT_BYTES);
        let cut = bounded(&code);
        assert!(cut.len() <= MAX_RECEIPT_BYTES);
        assert!(cut.ends_with("cut at 64 KiB]"));
        assert_eq!(bounded("echo 1"), "echo 1");
    }
}
