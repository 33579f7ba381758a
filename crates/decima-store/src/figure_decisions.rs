//! What the analyst decided about the figures of an answer that no source held: verify it,
//! mark it an estimate, correct it to a value they typed, or accept it. Kept per figure (its
//! answer's seq and its byte offset there), so that `decima numbers` and the window show the
//! decision beside the figure, and a decision is never asked for twice.

use decima_core::{ConversationId, Timestamp};
use sqlx::FromRow;

use crate::rows::corrupt;
use crate::{Resolution, Result, Store, StoreError, on_pool};

/// The longest value an analyst may type for a correction.
const MAX_VALUE_CHARS: usize = 64;

/// One decision on one figure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FigureDecision {
    /// The answer's message.
    pub message_seq: i64,
    /// The report the figure is in, when it is a figure of a file the run wrote rather than of
    /// the answer.
    pub path: Option<String>,
    /// The figure's byte offset in the answer (or the report).
    pub start: u32,
    /// The figure as the answer wrote it.
    pub text: String,
    /// Verify, estimate, correct or accept.
    pub decision: Resolution,
    /// The analyst's value, for a correction.
    pub value: Option<String>,
    /// The failure it answered.
    pub failure_id: Option<String>,
}

#[derive(FromRow)]
struct DecisionRow {
    message_seq: i64,
    path: String,
    start: i64,
    text: String,
    decision: String,
    value: Option<String>,
    failure_id: Option<String>,
}

impl TryFrom<DecisionRow> for FigureDecision {
    type Error = StoreError;

    fn try_from(row: DecisionRow) -> Result<Self> {
        Ok(Self {
            message_seq: row.message_seq,
            path: (!row.path.is_empty()).then_some(row.path),
            start: u32::try_from(row.start).map_err(|e| corrupt("figure offset", e))?,
            text: row.text,
            decision: Resolution::parse(&row.decision)?,
            value: row.value,
            failure_id: row.failure_id,
        })
    }
}

/// Figure decisions, borrowed from a [`Store`].
pub struct FigureDecisions<'s> {
    store: &'s Store,
}

impl<'s> FigureDecisions<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Records a decision, replacing an earlier one on the same figure. Only the four answers
    /// to an unlinked figure are decisions; a correction needs a value a person can read.
    pub async fn record(&self, conversation: ConversationId, d: &FigureDecision) -> Result<()> {
        check(d)?;
        on_pool!(self.store, |pool, dialect| {
            sqlx::query(
                "INSERT INTO figure_decisions (conversation_id, message_seq, path, start, text, \
                 decision, value, failure_id, decided_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
                 ON CONFLICT (conversation_id, message_seq, path, start) DO UPDATE SET \
                 text = excluded.text, decision = excluded.decision, value = excluded.value, \
                 failure_id = excluded.failure_id, decided_at = excluded.decided_at",
            )
            .bind(conversation.to_string())
            .bind(d.message_seq)
            .bind(d.path.as_deref().unwrap_or(""))
            .bind(i64::from(d.start))
            .bind(d.text.as_str())
            .bind(d.decision.as_str())
            .bind(d.value.as_deref())
            .bind(d.failure_id.as_deref())
            .bind(Timestamp::now().0)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
        })?;
        Ok(())
    }

    /// The decisions on the figures of one answer and of the reports its run wrote, by report
    /// (the answer's first) and offset.
    pub async fn of_message(
        &self,
        conversation: ConversationId,
        message_seq: i64,
    ) -> Result<Vec<FigureDecision>> {
        let rows: Vec<DecisionRow> = on_pool!(self.store, |pool, d| {
            sqlx::query_as(
                "SELECT message_seq, path, start, text, decision, value, failure_id \
             FROM figure_decisions WHERE conversation_id = $1 AND message_seq = $2 \
             ORDER BY path, start",
            )
            .bind(conversation.to_string())
            .bind(message_seq)
            .fetch_all(pool)
            .await
        })?;
        rows.into_iter().map(FigureDecision::try_from).collect()
    }
}

fn check(d: &FigureDecision) -> Result<()> {
    if !matches!(
        d.decision,
        Resolution::Verify | Resolution::Estimate | Resolution::Correct | Resolution::Accept
    ) {
        return Err(StoreError::InvalidInput(format!(
            "{} is not a decision on a figure: verify, estimate, correct or accept",
            d.decision
        )));
    }
    match (&d.decision, d.value.as_deref().map(str::trim)) {
        (Resolution::Correct, None | Some("")) => Err(StoreError::InvalidInput(
            "a correction needs the right value: type it, as the answer should say it".into(),
        )),
        (Resolution::Correct, Some(v))
            if v.chars().count() > MAX_VALUE_CHARS || v.chars().any(char::is_control) =>
        {
            Err(StoreError::InvalidInput(format!(
                "a corrected value has at most {MAX_VALUE_CHARS} characters on one line"
            )))
        }
        _ => Ok(()),
    }
}
