//! The steps of one review: check what it is of, serve it from the cache or pick and size the
//! reviewer, build its input, ask about each pass, then store the merged review and say so.

use std::collections::BTreeSet;
use std::sync::Arc;

use decima_core::{ConversationId, ExecutionId, Role, TokenCounter};
use decima_store::{Conversation, Execution, NewReview, Review, ReviewPass, Store};
use serde_json::json;
use sha2::{Digest as _, Sha256};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument as _, info, info_span, warn};

use super::{
    ReviewContext, ReviewMode, ReviewOutcome, ReviewRequest, ReviewType, ask, history, input,
    merge, prompt, schema,
};
use crate::context::Scale;
use crate::error::{Result, RuntimeError};
use crate::events::Event;
use crate::memo::{field, hex};
use crate::settings::{self, WindowSettings};

/// Makes one review, or finds it in the cache.
pub(super) async fn run(
    ctx: &ReviewContext<'_>,
    request: ReviewRequest,
    cancel: &CancellationToken,
) -> Result<ReviewOutcome> {
    let scope = Scope::check(ctx.store, &request).await?;
    if let Some(hit) = ctx.store.reviews().cached(&scope.key).await? {
        info!(review = %hit.id, "review served from the cache");
        return finished(ctx, &request, hit, true).await;
    }
    let reviewer = Reviewer::prepare(ctx, &request, &scope).await?;
    let reading = read_input(ctx.store, &request, &scope, &reviewer).await?;
    announce_start(ctx, &request, scope.conversation.id, &reading);
    let asker = reviewer.asker(ctx.store, &request, &scope, &reading.open_ids);
    let answered = ask_in_passes(&asker, &reading.built, cancel).await?;
    let review = store_review(
        ctx.store,
        &request,
        scope,
        &reviewer,
        &reading.built,
        answered,
    )
    .await?;
    finished(ctx, &request, review, false).await
}

/// What a review is of, checked before anything is asked: the conversation, the run, the last
/// seq it reads through, the focus, and the cache key they make.
struct Scope {
    conversation: Conversation,
    execution: Option<Execution>,
    last_seq: i64,
    focus: Option<String>,
    key: String,
}

impl Scope {
    /// Reads and checks what the request names: a review of a run of another conversation, or
    /// of a history with no messages, is refused here.
    async fn check(store: &Store, request: &ReviewRequest) -> Result<Self> {
        let conversation = store.conversations().get(request.conversation).await?;
        let execution = execution_in(store, &conversation, request.execution).await?;
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
        let key = cache_key(request, focus.as_deref(), last_seq);
        Ok(Self {
            conversation,
            execution,
            last_seq,
            focus,
            key,
        })
    }
}

/// The run a review is of, when it names one: it must belong to the conversation reviewed.
async fn execution_in(
    store: &Store,
    conversation: &Conversation,
    execution: Option<ExecutionId>,
) -> Result<Option<Execution>> {
    let Some(id) = execution else {
        return Ok(None);
    };
    let execution = store.executions().get(id).await?;
    if execution.conversation_id != conversation.id {
        return Err(RuntimeError::Config(format!(
            "execution {id} does not belong to conversation {}",
            conversation.id
        )));
    }
    Ok(Some(execution))
}

/// The reviewer's model, what it is told, and how much each request to it may hold.
struct Reviewer {
    resolved: settings::ResolvedProvider,
    /// The goal the review argues against: the run's task, else the conversation's.
    task: String,
    language: Option<prompt::Language>,
    system: String,
    counter: Arc<dyn TokenCounter>,
    /// The answer's room, in the reviewer's tokens.
    output: u32,
    scale: Scale,
    /// Each request's input, in store tokens.
    budget: u32,
}

impl Reviewer {
    /// Picks the reviewer (the request's, else the conversation's, else the agent's), and
    /// sizes its requests to its window.
    async fn prepare(
        ctx: &ReviewContext<'_>,
        request: &ReviewRequest,
        scope: &Scope,
    ) -> Result<Self> {
        let store = ctx.store;
        let reviewer = super::reviewer_name(ctx, request, scope.conversation.id).await?;
        let resolved = settings::resolve(store, ctx.data_dir, reviewer.as_deref()).await?;
        let window = WindowSettings::of(resolved.config.context_window, &resolved.settings);
        let task = match &scope.execution {
            Some(e) => e.task.clone(),
            None => goal_of(store, scope.conversation.id).await?,
        };
        let language = prompt::detect_language(&format!(
            "{task}\n{}",
            scope.focus.as_deref().unwrap_or_default()
        ));
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
        let room = input_room(window.window, output, scale, &system, counter.as_ref());
        let budget = match request.review_type {
            ReviewType::Quick => room / 4,
            ReviewType::Full | ReviewType::Recompute => room,
        };
        Ok(Self {
            resolved,
            task,
            language,
            system,
            counter,
            output,
            scale,
            budget,
        })
    }

    /// What every request of this review shares: the reviewer, its prompt, and the answer's
    /// checks and schema.
    fn asker<'r>(
        &'r self,
        store: &'r Store,
        request: &ReviewRequest,
        scope: &Scope,
        open_ids: &'r BTreeSet<String>,
    ) -> ask::Asker<'r> {
        let evidence_required = !matches!(request.mode, ReviewMode::SpecificContent { .. });
        ask::Asker {
            store,
            conversation: scope.conversation.id,
            config: &self.resolved.config,
            system: &self.system,
            output: self.output,
            scale: self.scale,
            counter: self.counter.as_ref(),
            evidence_required,
            open_ids,
            format: schema::review_format(
                match request.review_type {
                    ReviewType::Quick => schema::QUICK_FINDINGS,
                    ReviewType::Full | ReviewType::Recompute => schema::FULL_FINDINGS,
                },
                self.output,
                open_ids,
                evidence_required.then_some(scope.last_seq),
            ),
        }
    }
}

/// The store tokens a request's input may take in a reviewer's `window`: what is left beside
/// the answer, the system prompt and, should the answer need a repair, the invalid answer
/// echoed back with the repair request, so that a repair stays within the window too.
fn input_room(
    window: u32,
    output: u32,
    scale: Scale,
    system: &str,
    counter: &dyn TokenCounter,
) -> u32 {
    let repair = ask::REPAIR_ECHO.saturating_add(scale.to_model(u64::from(
        counter.count_text(&prompt::repair_request(&"x".repeat(400))),
    )));
    scale.to_store(
        window
            .saturating_sub(output)
            .saturating_sub(scale.to_model(u64::from(counter.count_text(system))))
            .saturating_sub(repair)
            .saturating_sub(64),
    )
}

/// The reviewer's input, and the open findings it shows.
struct Reading {
    built: input::Input,
    /// The ids of the open findings shown: the only ones the review may close.
    open_ids: BTreeSet<String>,
    /// Whether it reads only what came after an earlier full-history review.
    incremental: bool,
}

/// Builds the reviewer's input: after the last full-history review of the same scope when
/// there is one, with the findings still open.
async fn read_input(
    store: &Store,
    request: &ReviewRequest,
    scope: &Scope,
    reviewer: &Reviewer,
) -> Result<Reading> {
    let conversation = &scope.conversation;
    let previous = match request.mode {
        ReviewMode::FullHistory => store
            .reviews()
            .latest(conversation.id, request.execution, Some("full_history"))
            .await?
            .filter(|p| p.reviewed_through_seq < scope.last_seq),
        _ => None,
    };
    let open = store
        .reviews()
        .open_findings(conversation.id, request.execution)
        .await?;
    let built = input::build(
        store,
        &input::Parts {
            conversation,
            task: &reviewer.task,
            focus: scope.focus.as_deref(),
            mode: &request.mode,
            open: &open,
            after_seq: previous.as_ref().map(|p| p.reviewed_through_seq),
            budget: reviewer.budget,
            passes: request.review_type == ReviewType::Full,
        },
        reviewer.counter.as_ref(),
    )
    .await?;
    Ok(Reading {
        built,
        open_ids: open.iter().map(|f| f.id.clone()).collect(),
        incremental: previous.is_some(),
    })
}

/// Says the review started, to the caller's events and to the log with what it reads.
fn announce_start(
    ctx: &ReviewContext<'_>,
    request: &ReviewRequest,
    conversation: ConversationId,
    reading: &Reading,
) {
    ctx.events.emit(Event::ReviewStarted {
        conversation_id: conversation,
        execution_id: request.execution,
        trigger: request.trigger,
        mode: request.mode.scope(),
        review_type: request.review_type,
    });
    let built = &reading.built;
    info!(
        input_tokens = built.tokens(),
        passes = built.passes.len(),
        shown = built.shown,
        summarised = built.summarised,
        summary_read = built.summary_read,
        incremental = reading.incremental,
        "asking the reviewer"
    );
}

/// What the passes brought back: their answers to merge, their records to store, and whether
/// any answer took a repair.
struct Answered {
    answers: Vec<merge::PassAnswer>,
    records: Vec<ReviewPass>,
    repaired: bool,
}

/// Asks the reviewer about each pass in turn, checking for a cancel before each and while it
/// runs: a cancelled review stops between passes, and nothing of it is stored.
async fn ask_in_passes(
    asker: &ask::Asker<'_>,
    built: &input::Input,
    cancel: &CancellationToken,
) -> Result<Answered> {
    let n = built.passes.len();
    let mut answered = Answered {
        answers: Vec::with_capacity(n),
        records: Vec::with_capacity(n),
        repaired: false,
    };
    for (k, pass) in built.passes.iter().enumerate() {
        let asked = ask_pass(asker, pass, k + 1, n, cancel).await?;
        answered.repaired |= asked.repaired;
        info!(
            pass = k + 1,
            of = n,
            risk = %asked.answer.risk_level,
            findings = asked.answer.findings.len(),
            "reviewer answered"
        );
        answered.records.push(ReviewPass {
            pass: u32::try_from(k + 1).unwrap_or(u32::MAX),
            from_seq: pass.from_seq,
            through_seq: pass.through_seq,
            summarised: pass.summarised,
            verbatim: pass.verbatim,
            input_tokens: pass.tokens,
            risk_level: asked.answer.risk_level,
            findings: u32::try_from(asked.answer.findings.len()).unwrap_or(u32::MAX),
        });
        answered.answers.push(merge::PassAnswer {
            label: format!(
                "Pass {} of {n} ({})",
                k + 1,
                history::seqs(pass.from_seq.max(1), pass.through_seq)
            ),
            answer: asked.answer,
        });
    }
    Ok(answered)
}

/// Asks about pass `number` of `n` in its own span, unless `cancel` comes first.
async fn ask_pass(
    asker: &ask::Asker<'_>,
    pass: &input::PassInput,
    number: usize,
    n: usize,
    cancel: &CancellationToken,
) -> Result<ask::Asked> {
    let cancelled = || {
        info!(pass = number, of = n, "review cancelled");
        RuntimeError::Review(format!(
            "the review was cancelled before pass {number} of {n} finished; nothing was stored"
        ))
    };
    if cancel.is_cancelled() {
        return Err(cancelled());
    }
    let asking = asker.ask(&pass.text).instrument(info_span!(
        "pass",
        pass = number,
        of = n,
        input_tokens = pass.tokens
    ));
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(cancelled()),
        asked = asking => asked,
    }
}

/// Merges the passes' answers and stores the review with its passes, noting it in the events
/// log.
async fn store_review(
    store: &Store,
    request: &ReviewRequest,
    scope: Scope,
    reviewer: &Reviewer,
    built: &input::Input,
    answered: Answered,
) -> Result<Review> {
    let answer = merge::merge(answered.answers);
    let review = store
        .reviews()
        .insert(&NewReview {
            conversation_id: scope.conversation.id,
            execution_id: request.execution,
            mode: request.mode.name().to_owned(),
            mode_argument: request.mode.argument(),
            review_type: request.review_type.name().to_owned(),
            focus: scope.focus,
            trigger: request.trigger.name().to_owned(),
            risk_level: answer.risk_level,
            summary: answer.summary,
            findings: answer.findings,
            open_questions: answer.open_questions,
            closes: answer.closes,
            reviewed_from_seq: built.from_seq,
            reviewed_through_seq: scope.last_seq,
            language: reviewer.language.as_ref().map(|l| l.code.to_owned()),
            provider: Some(reviewer.resolved.config.name.clone()),
            model: Some(reviewer.resolved.config.model.clone()),
            input_tokens: built.tokens(),
            passes: answered.records,
            cache_key: scope.key,
        })
        .await?;
    store
        .events()
        .append(
            request.execution,
            Some(scope.conversation.id),
            "review.finished",
            &json!({
                "review_id": review.id,
                "trigger": review.trigger,
                "risk_level": review.risk_level,
                "findings": review.findings.len(),
                "passes": review.passes.len(),
                "repaired": answered.repaired,
            }),
        )
        .await?;
    info!(review = %review.id, risk = %review.risk_level, "review stored");
    Ok(review)
}

/// Ends a review, stored or found in the cache: a contesting final review marks its run, and
/// the caller is told.
async fn finished(
    ctx: &ReviewContext<'_>,
    request: &ReviewRequest,
    review: Review,
    cached: bool,
) -> Result<ReviewOutcome> {
    let contested = mark_contested(ctx, request, &review).await?;
    ctx.events.emit(Event::ReviewFinished {
        review_id: review.id.clone(),
        risk_level: review.risk_level,
        findings: u32::try_from(review.findings.len()).unwrap_or(u32::MAX),
        cached,
        contested,
    });
    Ok(ReviewOutcome { review, cached })
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
