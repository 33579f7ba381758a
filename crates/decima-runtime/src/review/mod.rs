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
pub mod passes;
pub mod prompt;
mod risky;
pub mod schema;
mod steps;
pub mod tool;

use std::path::Path;

use decima_core::{ConversationId, ExecutionId};
use decima_store::{Review, Store};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument as _, info_span};

pub use risky::{RiskyCalls, is_risky};

use crate::error::{Result, RuntimeError};
use crate::events::EventSink;

/// The tool's name, as offered to the model.
pub const TENTH_MAN_REVIEW: &str = "tenth_man_review";

/// What part of the history the reviewer reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewMode {
    /// The whole history through the sliding window (the default).
    FullHistory,
    /// The last `count` messages.
    RecentMessages {
        /// How many.
        count: u32,
    },
    /// Content given with the request (a draft, a call about to run).
    SpecificContent {
        /// The content.
        content: String,
    },
}

impl ReviewMode {
    /// The name stored with the review.
    pub fn name(&self) -> &'static str {
        match self {
            Self::FullHistory => "full_history",
            Self::RecentMessages { .. } => "recent_messages",
            Self::SpecificContent { .. } => "specific_content",
        }
    }

    fn argument(&self) -> Option<String> {
        match self {
            Self::FullHistory => None,
            Self::RecentMessages { count } => Some(count.to_string()),
            Self::SpecificContent { content } => Some(content.clone()),
        }
    }

    /// Reads `full`, `recent:N` or `content:TEXT` (the CLI's spelling).
    pub fn parse(text: &str) -> Result<Self> {
        if text == "full" || text == "full_history" {
            return Ok(Self::FullHistory);
        }
        if let Some(n) = text.strip_prefix("recent:") {
            return match n.trim().parse::<u32>() {
                Ok(count) if count > 0 => Ok(Self::RecentMessages { count }),
                _ => Err(RuntimeError::Config(format!(
                    "recent:{} needs a message count above 0, like recent:20",
                    decima_core::names::echo_untrusted(n)
                ))),
            };
        }
        if let Some(content) = text.strip_prefix("content:") {
            if content.trim().is_empty() {
                return Err(RuntimeError::Config(
                    "content: needs the text to review, like content:\"the draft\"".into(),
                ));
            }
            return Ok(Self::SpecificContent {
                content: content.to_owned(),
            });
        }
        Err(RuntimeError::Config(format!(
            "unknown review mode {:?}: use full, recent:N or content:TEXT",
            decima_core::names::echo_untrusted(text)
        )))
    }
}

/// How deep the review goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ReviewType {
    /// A fast risk check: a quarter of the budget, at most three findings.
    Quick,
    /// A complete critique.
    #[default]
    Full,
}

impl ReviewType {
    /// The name stored with the review.
    pub fn name(self) -> &'static str {
        match self {
            Self::Quick => "quick",
            Self::Full => "full",
        }
    }

    /// Reads `quick` or `full`.
    pub fn parse(text: &str) -> Result<Self> {
        match text {
            "quick" => Ok(Self::Quick),
            "full" => Ok(Self::Full),
            other => Err(RuntimeError::Config(format!(
                "unknown review type {:?}: use quick or full",
                decima_core::names::echo_untrusted(other)
            ))),
        }
    }

    fn max_output(self) -> u32 {
        match self {
            Self::Quick => 1_500,
            Self::Full => 4_096,
        }
    }
}

/// What asked for the review.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewTrigger {
    /// The agent called `tenth_man_review`.
    Tool,
    /// The runtime: the final review, or one before a risky call.
    System,
    /// The analyst (`decima review`, the button).
    User,
}

impl ReviewTrigger {
    fn name(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::System => "system",
            Self::User => "user",
        }
    }
}

/// Where the tenth man runs during an execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TenthManMode {
    /// Never.
    Off,
    /// Only when the agent calls the tool.
    ToolOnly,
    /// Only the runtime's reviews: the final one, and before risky calls when enabled.
    SystemOnly,
    /// The tool and the runtime's reviews.
    #[default]
    Hybrid,
}

impl TenthManMode {
    /// Whether the agent is offered the tool.
    pub fn tool(self) -> bool {
        matches!(self, Self::ToolOnly | Self::Hybrid)
    }

    /// Whether the runtime reviews on its own.
    pub fn system(self) -> bool {
        matches!(self, Self::SystemOnly | Self::Hybrid)
    }

    /// Reads off, tool_only, system_only or hybrid.
    pub fn parse(text: &str) -> Result<Self> {
        match text {
            "off" => Ok(Self::Off),
            "tool_only" => Ok(Self::ToolOnly),
            "system_only" => Ok(Self::SystemOnly),
            "hybrid" => Ok(Self::Hybrid),
            other => Err(RuntimeError::Config(format!(
                "unknown tenth-man mode {:?}: use off, tool_only, system_only or hybrid",
                decima_core::names::echo_untrusted(other)
            ))),
        }
    }
}

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
    steps::run(ctx, request, cancel).instrument(span).await
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
