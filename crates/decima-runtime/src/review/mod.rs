//! The tenth man: an adversarial review of a conversation's history, which argues against the
//! current conclusion. One entry point, [`review`], serves the agent's `tenth_man_review` tool,
//! the automatic final review of a run, the review before a risky call, and `decima review`.
//!
//! A review reads its input through the context pipeline ([`input`]): every live message of a
//! full-history review reaches the reviewer, verbatim, through a stored summary, or through a
//! summary made for the review ([`digest_cache`]); a full review of a history far above the
//! budget reads it in passes ([`passes`]). It asks the reviewer's model for one JSON object per
//! request, checks it ([`answer`]) and asks once for a repair when it does not hold ([`ask`]),
//! merges the passes' answers ([`merge`]), then stores one review with its findings and its
//! passes. Reviews are cached by (scope, mode, type, focus, last seq): a hit makes no request. A
//! later full-history review of the same scope reads only what came after the last one,
//! together with the findings still open.

pub mod answer;
pub mod ask;
pub mod digest_cache;
pub mod history;
pub mod input;
pub mod merge;
mod modes;
pub mod passes;
pub mod prompt;
pub mod recompute;
mod risky;
pub mod schema;
mod steps;
pub mod tool;

use std::path::Path;

use decima_core::{ConversationId, ExecutionId};
use decima_store::{Review, Store};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument as _, info_span};

pub use modes::{ReviewMode, ReviewScope, ReviewTrigger, ReviewType, TenthManMode};
pub use risky::{RiskyCalls, is_risky};

use crate::error::Result;
use crate::events::EventSink;

/// The tool's name, as offered to the model.
pub const TENTH_MAN_REVIEW: &str = "tenth_man_review";

/// One review to make.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewRequest {
    /// The conversation to review.
    pub conversation: ConversationId,
    /// The run to review, when the review is of one run (its task is the goal).
    pub execution: Option<ExecutionId>,
    /// What to read.
    pub mode: ReviewMode,
    /// How deep.
    pub review_type: ReviewType,
    /// What to look at hardest.
    pub focus: Option<String>,
    /// What asked.
    pub trigger: ReviewTrigger,
    /// The reviewer's provider by name; else the conversation's reviewer, else the agent's.
    pub reviewer: Option<String>,
    /// The final review of `execution`: a high or critical one marks its result contested.
    pub final_review: bool,
    /// For a recompute: the figures the analyst marked, by their number in the answer's list
    /// (`decima execution numbers`), besides the unlinked and the headline ones.
    pub figures: Vec<u32>,
}

/// What a review needs from its caller.
pub struct ReviewContext<'a> {
    /// The store.
    pub store: &'a Store,
    /// The data directory (keys).
    pub data_dir: &'a Path,
    /// Where progress goes.
    pub events: &'a dyn EventSink,
    /// The agent's provider, the last fallback for the reviewer.
    pub agent_provider: Option<&'a str>,
}

/// A review and how it was obtained.
#[derive(Debug, Clone)]
pub struct ReviewOutcome {
    /// The stored review.
    pub review: Review,
    /// Found in the cache: no request was made.
    pub cached: bool,
}

/// Makes (or finds in the cache) one review.
pub async fn review(ctx: &ReviewContext<'_>, request: ReviewRequest) -> Result<ReviewOutcome> {
    review_until(ctx, request, &CancellationToken::new()).await
}

/// [`review`], stopped by `cancel`: a review in passes checks it before each pass and while
/// one runs, and a cancelled review stores nothing ([`RuntimeError::Review`] says so).
pub async fn review_until(
    ctx: &ReviewContext<'_>,
    request: ReviewRequest,
    cancel: &CancellationToken,
) -> Result<ReviewOutcome> {
    let span = info_span!(
        "review",
        conversation = %request.conversation,
        trigger = request.trigger.name(),
        mode = request.mode.name(),
        review_type = request.review_type.name(),
    );
    if request.review_type == ReviewType::Recompute {
        return recompute::run(ctx, request, cancel).instrument(span).await;
    }
    steps::run(ctx, request, cancel).instrument(span).await
}

/// The reviewer of a request: the one it names, else the conversation's, else the agent's.
async fn reviewer_name(
    ctx: &ReviewContext<'_>,
    request: &ReviewRequest,
    conversation: ConversationId,
) -> Result<Option<String>> {
    Ok(match &request.reviewer {
        Some(name) => Some(name.clone()),
        None => ctx
            .store
            .conversations()
            .reviewer_provider(conversation)
            .await?
            .or(ctx.agent_provider.map(str::to_owned)),
    })
}

/// The short digest the agent gets back from its tool call; the full review is stored.
pub fn digest(review: &Review, cached: bool) -> String {
    let mut out = format!(
        "Tenth-man review {} ({}{}): risk {}. {}",
        review.id,
        review.review_type,
        if cached { ", from the cache" } else { "" },
        review.risk_level,
        review.summary
    );
    for (i, f) in review.findings.iter().enumerate() {
        out.push_str(&format!(
            "\n{}. [{}] {} (seqs {:?}): {}",
            i + 1,
            f.body.severity,
            f.body.title,
            f.body.evidence_seqs,
            f.body.recommendation
        ));
    }
    if !review.open_questions.is_empty() {
        out.push_str("\nOpen questions: ");
        out.push_str(&review.open_questions.join(" | "));
    }
    out
}
