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
pub mod tool;

use std::collections::BTreeSet;
use std::path::Path;

use decima_core::{ConversationId, ExecutionId, Role};
use decima_store::{NewReview, Review, ReviewPass, Store};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest as _, Sha256};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument as _, info, info_span, warn};

pub use risky::{RiskyCalls, is_risky};

use crate::context::Scale;
use crate::error::{Result, RuntimeError};
use crate::events::{Event, EventSink};
use crate::memo::{field, hex};
use crate::settings::{self, WindowSettings};

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
    run(ctx, request, cancel).instrument(span).await
}

async fn run(
    ctx: &ReviewContext<'_>,
    request: ReviewRequest,
    cancel: &CancellationToken,
) -> Result<ReviewOutcome> {
    let store = ctx.store;
    let conversation = store.conversations().get(request.conversation).await?;
    let execution = match request.execution {
        Some(id) => {
            let execution = store.executions().get(id).await?;
            if execution.conversation_id != conversation.id {
                return Err(RuntimeError::Config(format!(
                    "execution {id} does not belong to conversation {}",
                    conversation.id
                )));
            }
            Some(execution)
        }
        None => None,
    };
    let last_seq = store
        .messages()
        .page_before(conversation.id, 0, i64::MAX, 1)
        .await?
        .first()
        .map_or(0, |m| m.seq);
    if last_seq == 0 && !matches!(request.mode, ReviewMode::SpecificContent { .. }) {
        return Err(RuntimeError::Config(format!(
            "conversation {} has no messages to review",
            conversation.id
        )));
    }
    let focus = request
        .focus
        .as_deref()
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(str::to_owned);
    let key = cache_key(&request, focus.as_deref(), last_seq);
    if let Some(hit) = store.reviews().cached(&key).await? {
        info!(review = %hit.id, "review served from the cache");
        let contested = mark_contested(ctx, &request, &hit).await?;
        ctx.events.emit(Event::ReviewFinished {
            review_id: hit.id.clone(),
            risk_level: hit.risk_level,
            findings: hit.findings.len(),
            cached: true,
            contested,
        });
        return Ok(ReviewOutcome {
            review: hit,
            cached: true,
        });
    }

    let reviewer = match &request.reviewer {
        Some(name) => Some(name.clone()),
        None => store
            .conversations()
            .reviewer_provider(conversation.id)
            .await?
            .or(ctx.agent_provider.map(str::to_owned)),
    };
    let resolved = settings::resolve(store, ctx.data_dir, reviewer.as_deref()).await?;
    let window = WindowSettings::of(resolved.config.context_window, &resolved.settings);
    let task = match &execution {
        Some(e) => e.task.clone(),
        None => goal_of(store, conversation.id).await?,
    };
    let language =
        prompt::detect_language(&format!("{task}\n{}", focus.as_deref().unwrap_or_default()));
    let system = prompt::system_prompt(request.review_type, language.as_ref());
    let counter = decima_llm::tokens::store_counter();
    let output = request
        .review_type
        .max_output()
        .min(window.window / 4)
        .max(256);
    // The budget is the reviewer's: its window in its own tokens, converted to the store's
    // counts with the calibration learned from its reported usage (as an agent step does).
    let scale = match store.calibrations().get(&resolved.config.model).await? {
        Some((factor, _samples)) => Scale::new(factor),
        None => Scale::ONE,
    };
    // Each request's input leaves room for the answer, the system prompt and, should the
    // answer need a repair, the invalid answer echoed back with the repair request: a repair
    // stays within the reviewer's window too.
    let repair = ask::REPAIR_ECHO.saturating_add(scale.to_model(u64::from(
        counter.count_text(&prompt::repair_request(&"x".repeat(400))),
    )));
    let room = scale.to_store(
        window
            .window
            .saturating_sub(output)
            .saturating_sub(scale.to_model(u64::from(counter.count_text(&system))))
            .saturating_sub(repair)
            .saturating_sub(64),
    );
    let budget = match request.review_type {
        ReviewType::Quick => room / 4,
        ReviewType::Full => room,
    };
    let previous = match request.mode {
        ReviewMode::FullHistory => store
            .reviews()
            .latest(conversation.id, request.execution, Some("full_history"))
            .await?
            .filter(|p| p.reviewed_through_seq < last_seq),
        _ => None,
    };
    let open = store
        .reviews()
        .open_findings(conversation.id, request.execution)
        .await?;
    let built = input::build(
        store,
        &input::Parts {
            conversation: &conversation,
            task: &task,
            focus: focus.as_deref(),
            mode: &request.mode,
            open: &open,
            after_seq: previous.as_ref().map(|p| p.reviewed_through_seq),
            budget,
            passes: request.review_type == ReviewType::Full,
        },
        counter.as_ref(),
    )
    .await?;
    ctx.events.emit(Event::ReviewStarted {
        conversation_id: conversation.id,
        execution_id: request.execution,
        trigger: request.trigger.name(),
        mode: request.mode.name(),
        review_type: request.review_type.name(),
    });
    let n = built.passes.len();
    info!(
        input_tokens = built.tokens(),
        passes = n,
        shown = built.shown,
        summarised = built.summarised,
        summary_read = built.summary_read,
        incremental = previous.is_some(),
        "asking the reviewer"
    );
    let open_ids: BTreeSet<String> = open.iter().map(|f| f.id.clone()).collect();
    let asker = ask::Asker {
        store,
        conversation: conversation.id,
        config: &resolved.config,
        system: &system,
        output,
        scale,
        counter: counter.as_ref(),
        evidence_required: !matches!(request.mode, ReviewMode::SpecificContent { .. }),
        open_ids: &open_ids,
        format: schema::review_format(
            match request.review_type {
                ReviewType::Quick => schema::QUICK_FINDINGS,
                ReviewType::Full => schema::FULL_FINDINGS,
            },
            output,
            &open_ids,
            (!matches!(request.mode, ReviewMode::SpecificContent { .. })).then_some(last_seq),
        ),
    };
    // One pass after the other, checking for a cancel before each and while it runs: a
    // cancelled review stops between passes, and nothing of it is stored.
    let mut answers = Vec::with_capacity(n);
    let mut records = Vec::with_capacity(n);
    let mut repaired = false;
    for (k, pass) in built.passes.iter().enumerate() {
        let cancelled = || {
            info!(pass = k + 1, of = n, "review cancelled");
            RuntimeError::Review(format!(
                "the review was cancelled before pass {} of {n} finished; nothing was stored",
                k + 1
            ))
        };
        if cancel.is_cancelled() {
            return Err(cancelled());
        }
        let asking = asker.ask(&pass.text).instrument(info_span!(
            "pass",
            pass = k + 1,
            of = n,
            input_tokens = pass.tokens
        ));
        let asked = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(cancelled()),
            asked = asking => asked?,
        };
        repaired |= asked.repaired;
        info!(
            pass = k + 1,
            of = n,
            risk = %asked.answer.risk_level,
            findings = asked.answer.findings.len(),
            "reviewer answered"
        );
        records.push(ReviewPass {
            pass: u32::try_from(k + 1).unwrap_or(u32::MAX),
            from_seq: pass.from_seq,
            through_seq: pass.through_seq,
            summarised: pass.summarised,
            verbatim: pass.verbatim,
            input_tokens: pass.tokens,
            risk_level: asked.answer.risk_level,
            findings: u32::try_from(asked.answer.findings.len()).unwrap_or(u32::MAX),
        });
        answers.push(merge::PassAnswer {
            label: format!(
                "Pass {} of {n} ({})",
                k + 1,
                history::seqs(pass.from_seq.max(1), pass.through_seq)
            ),
            answer: asked.answer,
        });
    }
    let answer = merge::merge(answers);
    let review = store
        .reviews()
        .insert(&NewReview {
            conversation_id: conversation.id,
            execution_id: request.execution,
            mode: request.mode.name().to_owned(),
            mode_argument: request.mode.argument(),
            review_type: request.review_type.name().to_owned(),
            focus,
            trigger: request.trigger.name().to_owned(),
            risk_level: answer.risk_level,
            summary: answer.summary,
            findings: answer.findings,
            open_questions: answer.open_questions,
            closes: answer.closes,
            reviewed_from_seq: built.from_seq,
            reviewed_through_seq: last_seq,
            language: language.map(|l| l.code.to_owned()),
            provider: Some(resolved.config.name.clone()),
            model: Some(resolved.config.model.clone()),
            input_tokens: built.tokens(),
            passes: records,
            cache_key: key,
        })
        .await?;
    store
        .events()
        .append(
            request.execution,
            Some(conversation.id),
            "review.finished",
            &json!({
                "review_id": review.id,
                "trigger": review.trigger,
                "risk_level": review.risk_level,
                "findings": review.findings.len(),
                "passes": review.passes.len(),
                "repaired": repaired,
            }),
        )
        .await?;
    info!(review = %review.id, risk = %review.risk_level, "review stored");
    let contested = mark_contested(ctx, &request, &review).await?;
    ctx.events.emit(Event::ReviewFinished {
        review_id: review.id.clone(),
        risk_level: review.risk_level,
        findings: review.findings.len(),
        cached: false,
        contested,
    });
    Ok(ReviewOutcome {
        review,
        cached: false,
    })
}

/// Marks a final review's execution contested when the review is high or critical, and says so
/// in the events log. Returns whether it did.
async fn mark_contested(
    ctx: &ReviewContext<'_>,
    request: &ReviewRequest,
    review: &Review,
) -> Result<bool> {
    let (true, Some(execution)) = (request.final_review, request.execution) else {
        return Ok(false);
    };
    if !review.risk_level.contests() {
        return Ok(false);
    }
    ctx.store
        .executions()
        .set_contested(execution, true)
        .await?;
    ctx.store
        .events()
        .append(
            Some(execution),
            Some(review.conversation_id),
            "execution.contested",
            &json!({ "review_id": review.id, "risk_level": review.risk_level }),
        )
        .await?;
    warn!(review = %review.id, risk = %review.risk_level, "the final review contests the result");
    Ok(true)
}

/// The goal of a conversation reviewed as a whole: its newest run's task, else its first
/// message from the person.
async fn goal_of(store: &Store, conversation: ConversationId) -> Result<String> {
    if let Some(run) = store
        .executions()
        .list_by_conversation(conversation)
        .await?
        .into_iter()
        .max_by_key(|e| e.created_at)
    {
        return Ok(run.task);
    }
    let first_user = store
        .messages()
        .range(conversation, 1, 50)
        .await?
        .into_iter()
        .find(|m| m.role == Role::User);
    Ok(first_user.map_or_else(
        || "(no task was stated)".to_owned(),
        |m| m.content.chars().take(4_000).collect(),
    ))
}

/// (scope, mode, type, focus, last seq), hashed: the same question about the same history.
fn cache_key(request: &ReviewRequest, focus: Option<&str>, last_seq: i64) -> String {
    let mut hasher = Sha256::new();
    let execution = request.execution.map(|e| e.to_string()).unwrap_or_default();
    let argument = request.mode.argument().unwrap_or_default();
    for part in [
        b"review/1".as_slice(),
        request.conversation.to_string().as_bytes(),
        execution.as_bytes(),
        request.mode.name().as_bytes(),
        argument.as_bytes(),
        request.review_type.name().as_bytes(),
        focus.unwrap_or_default().as_bytes(),
        &last_seq.to_le_bytes(),
    ] {
        field(&mut hasher, part);
    }
    hex(&hasher.finalize())
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
