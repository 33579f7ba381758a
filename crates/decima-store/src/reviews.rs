//! Tenth-man reviews and their findings. A review is written once, with its findings, in one
//! transaction; the findings of earlier reviews of the same scope that it closes are closed in
//! that same transaction, so "open" never disagrees with what the reviews say.

use decima_core::{ConversationId, ExecutionId, RiskLevel, Severity, Timestamp};
use sqlx::FromRow;

use crate::BeginWrite;
use crate::on_pool;
use crate::rows::corrupt;
use crate::{Result, Store, StoreError};

/// One finding as written by a review.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NewFinding {
    /// A short name for it.
    pub title: String,
    /// How grave it is.
    pub severity: Severity,
    /// Why the reviewer believes it.
    pub argument: String,
    /// Message seqs of the conversation that support it.
    pub evidence_seqs: Vec<i64>,
    /// What to do about it.
    pub recommendation: String,
}

/// A stored finding, with whether a later review closed it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// Its id, which a later review names to close it.
    pub id: String,
    /// The review that raised it.
    pub review_id: String,
    /// Its place in that review.
    pub position: i64,
    /// The finding itself.
    #[serde(flatten)]
    pub body: NewFinding,
    /// The review that closed it, if any.
    pub closed_by: Option<String>,
    /// Why it was closed.
    pub closed_reason: Option<String>,
}

/// One request of a review: which part of the history it read and how, what it cost and the
/// risk it found. A review made in one request has one; a full review of a history far above
/// the reviewer's budget has one per pass, whose findings were merged into the review.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReviewPass {
    /// Its place among the review's requests, from 1.
    pub pass: u32,
    /// The first seq of the part of the history it covers (through summaries or verbatim).
    pub from_seq: i64,
    /// The last seq of that part.
    pub through_seq: i64,
    /// The seqs within it that were summarised for the review (extract, no model), if any.
    pub summarised: Option<(i64, i64)>,
    /// The seqs within it shown verbatim, if any.
    pub verbatim: Option<(i64, i64)>,
    /// Tokens of its input, as the store counts them.
    pub input_tokens: u32,
    /// The risk level it answered with.
    pub risk_level: RiskLevel,
    /// How many findings it reported before the merge.
    pub findings: u32,
}

/// Everything a review writes.
#[derive(Debug, Clone, PartialEq)]
pub struct NewReview {
    /// The conversation reviewed.
    pub conversation_id: ConversationId,
    /// The execution reviewed, when the review was of one run.
    pub execution_id: Option<ExecutionId>,
    /// full_history, recent_messages or specific_content.
    pub mode: String,
    /// The mode's argument: the count, or the content reviewed.
    pub mode_argument: Option<String>,
    /// quick or full.
    pub review_type: String,
    /// What the reviewer was asked to look at hardest.
    pub focus: Option<String>,
    /// tool, system or user.
    pub trigger: String,
    /// How much it thinks is wrong.
    pub risk_level: RiskLevel,
    /// The reviewer's summary.
    pub summary: String,
    /// Its findings, in order.
    pub findings: Vec<NewFinding>,
    /// Questions the history does not answer.
    pub open_questions: Vec<String>,
    /// Earlier findings this review closes, with the reason.
    pub closes: Vec<(String, String)>,
    /// The first seq it read (0 for all).
    pub reviewed_from_seq: i64,
    /// The last seq of the conversation when it ran.
    pub reviewed_through_seq: i64,
    /// The language it answered in (an ISO 639-3 code).
    pub language: Option<String>,
    /// The provider and model that wrote it.
    pub provider: Option<String>,
    /// The model that wrote it.
    pub model: Option<String>,
    /// Tokens of its input, as the store counts them: every pass's, summed.
    pub input_tokens: u32,
    /// The requests it made, in order (see [`ReviewPass`]).
    pub passes: Vec<ReviewPass>,
    /// (scope, mode, type, focus, last seq), hashed.
    pub cache_key: String,
}

/// A stored review.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Review {
    /// Its id (UUIDv7 text).
    pub id: String,
    /// The conversation reviewed.
    pub conversation_id: ConversationId,
    /// The execution reviewed.
    pub execution_id: Option<ExecutionId>,
    /// The mode.
    pub mode: String,
    /// The mode's argument.
    pub mode_argument: Option<String>,
    /// The type.
    pub review_type: String,
    /// The focus.
    pub focus: Option<String>,
    /// What asked for it.
    pub trigger: String,
    /// The risk level.
    pub risk_level: RiskLevel,
    /// The summary.
    pub summary: String,
    /// Its findings, each with whether it is still open.
    pub findings: Vec<Finding>,
    /// Open questions.
    pub open_questions: Vec<String>,
    /// The first seq it read.
    pub reviewed_from_seq: i64,
    /// The last seq when it ran.
    pub reviewed_through_seq: i64,
    /// Its language.
    pub language: Option<String>,
    /// The provider that wrote it.
    pub provider: Option<String>,
    /// The model that wrote it.
    pub model: Option<String>,
    /// Tokens of its input, every pass's summed.
    pub input_tokens: u32,
    /// The requests it made (empty for reviews made before passes were recorded).
    pub passes: Vec<ReviewPass>,
    /// Its cache key.
    pub cache_key: String,
    /// When it was written.
    pub created_at: Timestamp,
}

#[derive(FromRow)]
struct ReviewRow {
    id: String,
    conversation_id: String,
    execution_id: Option<String>,
    mode: String,
    mode_argument: Option<String>,
    review_type: String,
    focus: Option<String>,
    trigger: String,
    risk_level: String,
    summary: String,
    open_questions: String,
    reviewed_from_seq: i64,
    reviewed_through_seq: i64,
    language: Option<String>,
    provider: Option<String>,
    model: Option<String>,
    input_tokens: i64,
    passes: String,
    cache_key: String,
    created_at: i64,
}

#[derive(FromRow)]
struct FindingRow {
    id: String,
    review_id: String,
    position: i64,
    title: String,
    severity: String,
    argument: String,
    evidence_seqs: String,
    recommendation: String,
    closed_by: Option<String>,
    closed_reason: Option<String>,
}

impl TryFrom<FindingRow> for Finding {
    type Error = StoreError;

    fn try_from(row: FindingRow) -> Result<Self> {
        Ok(Finding {
            body: NewFinding {
                title: row.title,
                severity: row
                    .severity
                    .parse()
                    .map_err(|e| corrupt("finding severity", e))?,
                argument: row.argument,
                evidence_seqs: serde_json::from_str(&row.evidence_seqs)
                    .map_err(|e| corrupt("finding evidence", e))?,
                recommendation: row.recommendation,
            },
            id: row.id,
            review_id: row.review_id,
            position: row.position,
            closed_by: row.closed_by,
            closed_reason: row.closed_reason,
        })
    }
}

macro_rules! review_select {
    () => {
        "SELECT id, conversation_id, execution_id, mode, mode_argument, review_type, focus, \
         trigger, risk_level, summary, open_questions, reviewed_from_seq, reviewed_through_seq, \
         language, provider, model, input_tokens, passes, cache_key, created_at FROM reviews"
    };
}

macro_rules! finding_select {
    () => {
        "SELECT id, review_id, position, title, severity, argument, evidence_seqs, \
         recommendation, closed_by, closed_reason FROM review_findings"
    };
}

/// Review operations, borrowed from a [`Store`].
pub struct Reviews<'s> {
    store: &'s Store,
}

impl<'s> Reviews<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Writes a review and its findings, and closes the earlier findings it names, in one
    /// transaction. A finding to close must be open and of the same conversation.
    pub async fn insert(&self, new: &NewReview) -> Result<Review> {
        let id = uuid::Uuid::now_v7().to_string();
        let created_at = Timestamp::now();
        on_pool!(self.store, |pool, dialect| {
            let mut tx = pool.begin_write().await?;
            sqlx::query(
                "INSERT INTO reviews (id, conversation_id, execution_id, mode, mode_argument, \
                 review_type, focus, trigger, risk_level, summary, findings, open_questions, \
                 reviewed_from_seq, reviewed_through_seq, language, provider, model, input_tokens, \
                 passes, cache_key, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)",
            )
            .bind(&id)
            .bind(new.conversation_id.to_string())
            .bind(new.execution_id.map(|e| e.to_string()))
            .bind(&new.mode)
            .bind(new.mode_argument.as_deref())
            .bind(&new.review_type)
            .bind(new.focus.as_deref())
            .bind(&new.trigger)
            .bind(new.risk_level.as_str())
            .bind(&new.summary)
            .bind(serde_json::to_string(&new.findings).map_err(|e| corrupt("findings", e))?)
            .bind(serde_json::to_string(&new.open_questions).map_err(|e| corrupt("questions", e))?)
            .bind(new.reviewed_from_seq)
            .bind(new.reviewed_through_seq)
            .bind(new.language.as_deref())
            .bind(new.provider.as_deref())
            .bind(new.model.as_deref())
            .bind(i64::from(new.input_tokens))
            .bind(serde_json::to_string(&new.passes).map_err(|e| corrupt("passes", e))?)
            .bind(&new.cache_key)
            .bind(created_at.0)
            .execute(&mut *tx)
            .await?;
            for (position, f) in new.findings.iter().enumerate() {
                sqlx::query(
                    "INSERT INTO review_findings (id, review_id, conversation_id, execution_id, \
                     position, title, severity, argument, evidence_seqs, recommendation) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                )
                .bind(uuid::Uuid::now_v7().to_string())
                .bind(&id)
                .bind(new.conversation_id.to_string())
                .bind(new.execution_id.map(|e| e.to_string()))
                .bind(position as i64)
                .bind(&f.title)
                .bind(f.severity.as_str())
                .bind(&f.argument)
                .bind(serde_json::to_string(&f.evidence_seqs).map_err(|e| corrupt("evidence", e))?)
                .bind(&f.recommendation)
                .execute(&mut *tx)
                .await?;
            }
            for (finding, reason) in &new.closes {
                let done = sqlx::query(
                    "UPDATE review_findings SET closed_by = $1, closed_reason = $2 \
                     WHERE id = $3 AND conversation_id = $4 AND closed_by IS NULL",
                )
                .bind(&id)
                .bind(reason)
                .bind(finding)
                .bind(new.conversation_id.to_string())
                .execute(&mut *tx)
                .await?;
                if done.rows_affected() == 0 {
                    return Err(StoreError::InvalidInput(format!(
                        "finding {finding} is not an open finding of this conversation"
                    )));
                }
            }
            tx.commit().await?;
        });
        self.get(&id).await
    }

    /// One review, with its findings.
    pub async fn get(&self, id: &str) -> Result<Review> {
        let row: Option<ReviewRow> = on_pool!(self.store, |pool, d| sqlx::query_as(concat!(
            review_select!(),
            " WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(pool)
        .await)?;
        let row = row.ok_or_else(|| StoreError::not_found("review", id))?;
        self.complete(row).await
    }

    /// The newest review with this cache key, if any: a hit makes no request.
    pub async fn cached(&self, cache_key: &str) -> Result<Option<Review>> {
        let row: Option<ReviewRow> = on_pool!(self.store, |pool, d| sqlx::query_as(concat!(
            review_select!(),
            " WHERE cache_key = $1 ORDER BY created_at DESC, id DESC LIMIT 1"
        ))
        .bind(cache_key)
        .fetch_optional(pool)
        .await)?;
        Ok(self.complete_all(row).await?.pop())
    }

    /// The newest review of a scope (an execution, or the whole conversation when `None`),
    /// of one mode when given.
    pub async fn latest(
        &self,
        conversation: ConversationId,
        execution: Option<ExecutionId>,
        mode: Option<&str>,
    ) -> Result<Option<Review>> {
        let row: Option<ReviewRow> = on_pool!(self.store, |pool, d| sqlx::query_as(concat!(
            review_select!(),
            " WHERE conversation_id = $1 AND execution_id IS $2 AND ($3 IS NULL OR mode = $4) \
              ORDER BY created_at DESC, id DESC LIMIT 1"
        ))
        .bind(conversation.to_string())
        .bind(execution.map(|e| e.to_string()))
        .bind(mode)
        .bind(mode)
        .fetch_optional(pool)
        .await)?;
        Ok(self.complete_all(row).await?.pop())
    }

    /// Every review of a conversation, oldest first.
    pub async fn list(&self, conversation: ConversationId) -> Result<Vec<Review>> {
        let rows: Vec<ReviewRow> = on_pool!(self.store, |pool, d| sqlx::query_as(concat!(
            review_select!(),
            " WHERE conversation_id = $1 ORDER BY created_at, id"
        ))
        .bind(conversation.to_string())
        .fetch_all(pool)
        .await)?;
        self.complete_all(rows).await
    }

    /// Every review of one execution, oldest first.
    pub async fn list_for_execution(&self, execution: ExecutionId) -> Result<Vec<Review>> {
        let rows: Vec<ReviewRow> = on_pool!(self.store, |pool, d| sqlx::query_as(concat!(
            review_select!(),
            " WHERE execution_id = $1 ORDER BY created_at, id"
        ))
        .bind(execution.to_string())
        .fetch_all(pool)
        .await)?;
        self.complete_all(rows).await
    }

    /// The findings of a scope that no review has closed, oldest first.
    pub async fn open_findings(
        &self,
        conversation: ConversationId,
        execution: Option<ExecutionId>,
    ) -> Result<Vec<Finding>> {
        let rows: Vec<FindingRow> = on_pool!(self.store, |pool, d| sqlx::query_as(concat!(
            finding_select!(),
            " WHERE conversation_id = $1 AND execution_id IS $2 AND closed_by IS NULL \
              ORDER BY review_id, position"
        ))
        .bind(conversation.to_string())
        .bind(execution.map(|e| e.to_string()))
        .fetch_all(pool)
        .await)?;
        rows.into_iter().map(Finding::try_from).collect()
    }

    /// Each row with its findings.
    async fn complete_all(&self, rows: impl IntoIterator<Item = ReviewRow>) -> Result<Vec<Review>> {
        let mut out = Vec::new();
        for row in rows {
            out.push(self.complete(row).await?);
        }
        Ok(out)
    }

    async fn complete(&self, row: ReviewRow) -> Result<Review> {
        let findings: Vec<FindingRow> = on_pool!(self.store, |pool, d| sqlx::query_as(concat!(
            finding_select!(),
            " WHERE review_id = $1 ORDER BY position"
        ))
        .bind(&row.id)
        .fetch_all(pool)
        .await)?;
        Ok(Review {
            conversation_id: row
                .conversation_id
                .parse()
                .map_err(|e| corrupt("conversation id", e))?,
            execution_id: row
                .execution_id
                .as_deref()
                .map(str::parse)
                .transpose()
                .map_err(|e| corrupt("execution id", e))?,
            findings: findings
                .into_iter()
                .map(Finding::try_from)
                .collect::<Result<_>>()?,
            open_questions: serde_json::from_str(&row.open_questions)
                .map_err(|e| corrupt("open questions", e))?,
            input_tokens: u32::try_from(row.input_tokens).unwrap_or(u32::MAX),
            passes: serde_json::from_str(&row.passes).map_err(|e| corrupt("review passes", e))?,
            id: row.id,
            mode: row.mode,
            mode_argument: row.mode_argument,
            review_type: row.review_type,
            focus: row.focus,
            trigger: row.trigger,
            risk_level: row
                .risk_level
                .parse()
                .map_err(|e| corrupt("review risk level", e))?,
            summary: row.summary,
            reviewed_from_seq: row.reviewed_from_seq,
            reviewed_through_seq: row.reviewed_through_seq,
            language: row.language,
            provider: row.provider,
            model: row.model,
            cache_key: row.cache_key,
            created_at: Timestamp(row.created_at),
        })
    }
}
