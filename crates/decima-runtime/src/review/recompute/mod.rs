//! The tenth man recomputes: a review that works an answer's figures out again instead of
//! arguing about them. It takes the figures that matter (the unsupported ones, the ones the
//! analyst marked, the headline ones: [`chosen`]), restores the run's inputs as they were when
//! it started into a fresh sandbox ([`inputs`]), and has the reviewer's model compute each
//! figure there with its own code, seeing only the question, the figure's sentence and the
//! input files ([`worker`]). A figure that agrees within its precision is verified, with the
//! reviewer's code kept as its receipt; one that differs becomes a finding with both values
//! and both derivations ([`verdict`]).

mod chosen;
mod verdict;
mod worker;

use std::fmt::Write as _;

use decima_core::{ConversationId, Timestamp};
use decima_store::{Conversation, Execution, FigureReceipt, NewReview, Review, Store};
use serde_json::json;
use sha2::{Digest as _, Sha256};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument as _, info, info_span};

pub use chosen::MAX_FIGURES;
pub use worker::{MAX_STEPS, REPORT_VALUE};

use super::{ReviewContext, ReviewOutcome, ReviewRequest, prompt};
use crate::error::{Result, RuntimeError};
use crate::events::Event;
use crate::figures::{NumbersReport, check_execution};
use crate::memo::{field, hex};
use crate::settings;
use crate::tools::Registry;
use chosen::Chosen;
use verdict::Verdict;
use worker::Recomputed;

/// Recomputes the figures of a run's answer: the run named, else the conversation's newest.
pub(super) async fn run(
    ctx: &ReviewContext<'_>,
    request: ReviewRequest,
    cancel: &CancellationToken,
) -> Result<ReviewOutcome> {
    let store = ctx.store;
    let conversation = store.conversations().get(request.conversation).await?;
    let execution = the_run(store, &conversation, &request).await?;
    let report = check_execution(store, ctx.data_dir, execution.id).await?;
    let chosen = chosen::choose(&report, &request.figures)?;
    if chosen.is_empty() {
        return Err(RuntimeError::Config(format!(
            "the answer of run {} states no figure to recompute",
            execution.id
        )));
    }
    let reviewer = super::reviewer_name(ctx, &request, conversation.id).await?;
    let resolved = settings::resolve(store, ctx.data_dir, reviewer.as_deref()).await?;
    ctx.events.emit(Event::ReviewStarted {
        conversation_id: conversation.id,
        execution_id: Some(execution.id),
        trigger: request.trigger,
        mode: request.mode.scope(),
        review_type: request.review_type,
    });
    info!(figures = chosen.len(), run = %execution.id, "recomputing the answer's figures");
    let fresh =
        crate::fresh_sandbox::FreshSandbox::open(store, ctx.data_dir, &execution, "recompute")
            .await?;
    let worked = work_out(&resolved.config, &fresh, &execution, &chosen, cancel).await;
    fresh.close().await;
    let results = worked?;
    let review = store_review(
        store,
        &request,
        &conversation,
        &execution,
        &report,
        &chosen,
        &results,
        &resolved.config,
    )
    .await?;
    ctx.events.emit(Event::ReviewFinished {
        review_id: review.id.clone(),
        risk_level: review.risk_level,
        findings: u32::try_from(review.findings.len()).unwrap_or(u32::MAX),
        cached: false,
        contested: false,
    });
    Ok(ReviewOutcome {
        review,
        cached: false,
    })
}

/// The run whose answer is recomputed: the one the request names (of this conversation), else
/// the conversation's newest.
async fn the_run(
    store: &Store,
    conversation: &Conversation,
    request: &ReviewRequest,
) -> Result<Execution> {
    if let Some(id) = request.execution {
        let execution = store.executions().get(id).await?;
        if execution.conversation_id != conversation.id {
            return Err(RuntimeError::Config(format!(
                "execution {id} does not belong to conversation {}",
                conversation.id
            )));
        }
        return Ok(execution);
    }
    store
        .executions()
        .list_by_conversation(conversation.id)
        .await?
        .into_iter()
        .filter(|e| e.parent_id.is_none())
        .max_by_key(|e| e.created_at)
        .ok_or_else(|| {
            RuntimeError::Config(format!(
                "conversation {} has no run whose figures could be recomputed: a recompute \
                 review works from a run's inputs",
                conversation.id
            ))
        })
}

/// Each chosen figure worked out in the fresh sandbox, in turn.
async fn work_out(
    config: &decima_llm::ProviderConfig,
    fresh: &crate::fresh_sandbox::FreshSandbox,
    execution: &Execution,
    chosen: &[Chosen],
    cancel: &CancellationToken,
) -> Result<Vec<Recomputed>> {
    let registry = Registry::new(fresh.sandbox());
    let language = prompt::detect_language(&execution.task);
    let system = system_prompt(language.as_ref().map(|l| l.name));
    let mut results = Vec::with_capacity(chosen.len());
    for (k, c) in chosen.iter().enumerate() {
        let job = worker::Job {
            config,
            registry: &registry,
            system: &system,
            brief: brief(&execution.task, c, &fresh.files),
        };
        let got = worker::recompute(&job, cancel)
            .instrument(info_span!("figure", n = k + 1, of = chosen.len()))
            .await?;
        info!(
            figure = c.number,
            steps = got.steps,
            computed = got.value.is_some(),
            "figure recomputed"
        );
        results.push(got);
    }
    Ok(results)
}

/// The reviewer's instructions.
fn system_prompt(language: Option<&str>) -> String {
    let mut out = format!(
        "You are the tenth man: you check one figure of an analyst's answer by working it out \
         again, on your own. Your workspace holds the run's input files as they were before \
         the run started; nothing the agent wrote is there, and you do not see its code. Do \
         not trust the answer's figure: compute what its sentence claims from the inputs, \
         with your own commands (`shell`, whose description names its shell) or a script you write with \
         `write_file` and run. Read the files first. When you have the value, call \
         `{REPORT_VALUE}` with it at full precision and with its unit (a % sign, a currency), \
         and one or two sentences on how you got it. If the inputs cannot give it, call \
         `{REPORT_VALUE}` with null and say why."
    );
    if let Some(name) = language {
        let _ = write!(out, " Write the derivation in {name}.");
    }
    out
}

/// The reviewer's first message: the question, the figure in its sentence, the input files.
fn brief(
    task: &str,
    chosen: &Chosen,
    files: &[decima_sandbox::host::listing::WorkspaceFile],
) -> String {
    const LISTED: usize = 200;
    let f = &chosen.figure;
    let mut out = format!(
        "The question the run answered:\n{task}\n\nThe figure to recompute: {}\nIts sentence in \
         the answer: \"{}\"\n",
        f.text, f.sentence
    );
    if !f.subject.is_empty() {
        let _ = writeln!(out, "What the answer says it is about: {}", f.subject);
    }
    out.push_str("\nThe input files in your workspace:\n");
    if files.is_empty() {
        out.push_str("(none: the workspace was empty when the run started)\n");
    }
    for file in files.iter().take(LISTED) {
        let _ = writeln!(out, "- {} ({} bytes)", file.path, file.size);
    }
    if files.len() > LISTED {
        let _ = writeln!(out, "(and {} more)", files.len() - LISTED);
    }
    out
}

/// What the recomputations say, before anything is stored: each figure's verdict, a finding
/// per figure that differs, a question per figure not computed, and the summary.
struct Judged {
    verdicts: Vec<Verdict>,
    findings: Vec<decima_store::NewFinding>,
    questions: Vec<String>,
    summary: String,
}

impl Judged {
    fn of(answer_seq: i64, chosen: &[Chosen], results: &[Recomputed]) -> Self {
        let verdicts: Vec<Verdict> = chosen
            .iter()
            .zip(results)
            .map(|(c, got)| verdict::judge(&c.figure, got))
            .collect();
        let mut findings = Vec::new();
        let mut questions = Vec::new();
        for ((c, got), v) in chosen.iter().zip(results).zip(&verdicts) {
            match v {
                Verdict::Differs => findings.push(verdict::finding(answer_seq, c, got)),
                Verdict::NotComputed => questions.push(verdict::question(c, got)),
                Verdict::Agrees => {}
            }
        }
        let count = |wanted: Verdict| verdicts.iter().filter(|v| **v == wanted).count();
        let summary = format!(
            "Recomputed {} figure{} of the answer (message {answer_seq}) from the run's inputs \
             as they were when it started, in a fresh sandbox: {} agree, {} differ, {} could \
             not be computed.",
            chosen.len(),
            if chosen.len() == 1 { "" } else { "s" },
            count(Verdict::Agrees),
            count(Verdict::Differs),
            count(Verdict::NotComputed),
        );
        Self {
            verdicts,
            findings,
            questions,
            summary,
        }
    }
}

/// Stores the review, with a finding per figure that differs and a receipt per figure.
#[allow(clippy::too_many_arguments)]
async fn store_review(
    store: &Store,
    request: &ReviewRequest,
    conversation: &Conversation,
    execution: &Execution,
    report: &NumbersReport,
    chosen: &[Chosen],
    results: &[Recomputed],
    config: &decima_llm::ProviderConfig,
) -> Result<Review> {
    let judged = Judged::of(report.message_seq, chosen, results);
    let numbers: Vec<String> = chosen.iter().map(|c| c.number.to_string()).collect();
    let review = store
        .reviews()
        .insert(&NewReview {
            conversation_id: conversation.id,
            execution_id: Some(execution.id),
            mode: "specific_content".to_owned(),
            mode_argument: Some(format!(
                "figures {} of message {}",
                numbers.join(", "),
                report.message_seq
            )),
            review_type: request.review_type.name().to_owned(),
            focus: None,
            trigger: request.trigger.name().to_owned(),
            risk_level: verdict::risk(&judged.verdicts),
            summary: judged.summary,
            findings: judged.findings,
            open_questions: judged.questions,
            closes: Vec::new(),
            reviewed_from_seq: report.message_seq,
            reviewed_through_seq: report.message_seq,
            language: None,
            provider: Some(config.name.clone()),
            model: Some(config.model.clone()),
            input_tokens: 0,
            passes: Vec::new(),
            cache_key: key(conversation.id, execution, report.message_seq, &numbers),
        })
        .await?;
    record_receipts(
        store,
        &review,
        report.message_seq,
        chosen,
        results,
        &judged.verdicts,
    )
    .await?;
    store
        .events()
        .append(
            Some(execution.id),
            Some(conversation.id),
            "review.finished",
            &json!({
                "review_id": review.id,
                "trigger": review.trigger,
                "risk_level": review.risk_level,
                "findings": review.findings.len(),
                "recomputed": chosen.len(),
            }),
        )
        .await?;
    info!(review = %review.id, risk = %review.risk_level, "recompute review stored");
    Ok(review)
}

/// One receipt per recomputed figure: the value, whether it agrees, and the reviewer's code.
async fn record_receipts(
    store: &Store,
    review: &Review,
    answer_seq: i64,
    chosen: &[Chosen],
    results: &[Recomputed],
    verdicts: &[Verdict],
) -> Result<()> {
    let now = Timestamp::now();
    for ((c, got), v) in chosen.iter().zip(results).zip(verdicts) {
        store
            .figure_receipts()
            .record(
                review.conversation_id,
                &FigureReceipt {
                    message_seq: answer_seq,
                    start: c.figure.start,
                    review_id: review.id.clone(),
                    text: c.figure.text.clone(),
                    recomputed: got.value.clone(),
                    agrees: *v == Verdict::Agrees,
                    derivation: got.derivation.clone(),
                    code: got.code.clone(),
                    created_at: now,
                },
            )
            .await?;
    }
    Ok(())
}

/// A key no other review shares: a recompute is never served from the cache (the analyst asks
/// for the work to be done again), but every review has one.
fn key(
    conversation: ConversationId,
    execution: &Execution,
    seq: i64,
    numbers: &[String],
) -> String {
    let mut hasher = Sha256::new();
    for part in [
        b"recompute/1".as_slice(),
        conversation.to_string().as_bytes(),
        execution.id.to_string().as_bytes(),
        &seq.to_le_bytes(),
        numbers.join(",").as_bytes(),
        &Timestamp::now().0.to_le_bytes(),
    ] {
        field(&mut hasher, part);
    }
    hex(&hasher.finalize())
}
