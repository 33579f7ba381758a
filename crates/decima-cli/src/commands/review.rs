//! `decima review`: the tenth man on demand.

use std::fmt::Write as _;
use std::path::Path;

use decima_runtime::agent::CancellationToken;
use decima_runtime::review::{
    self, ReviewContext, ReviewMode, ReviewRequest, ReviewTrigger, ReviewType,
};
use decima_runtime::{Event, EventSink};
use decima_store::{FigureReceipt, Review, Store};

use super::signals::cancel_on_ctrl_c;
use super::{conversation_id, execution_id};
use crate::args::ReviewArgs;
use crate::error::CliError;
use crate::output;

/// Progress on stderr: a review takes a model call, so say it started.
struct Progress;

impl EventSink for Progress {
    fn emit(&self, event: Event) {
        match event {
            Event::ReviewStarted {
                mode, review_type, ..
            } => eprintln!("[tenth man: {review_type} review of {mode}…]"),
            Event::Warning { message } => eprintln!("warning: {message}"),
            _ => {}
        }
    }
}

/// `decima review`: one review (or its cached twin), printed for a person or as JSON.
pub async fn run(store: &Store, data_dir: &Path, args: ReviewArgs) -> Result<(), CliError> {
    let conversation = conversation_id(&args.conversation)?;
    let execution = args.execution.as_deref().map(execution_id).transpose()?;
    let mode = ReviewMode::parse(&args.mode)?;
    let review_type = ReviewType::parse(&args.review_type)?;
    if !args.figures.is_empty() && review_type != ReviewType::Recompute {
        return Err(CliError::Provider(
            "--figure marks figures for a recompute review: add --type recompute".into(),
        ));
    }
    // Ctrl-C or SIGTERM stops the review as it stops a run: nothing of it is stored.
    let cancel = CancellationToken::new();
    let watcher = tokio::spawn(cancel_on_ctrl_c(
        cancel.clone(),
        "the review stops and stores nothing",
    ));
    let outcome = review::review_until(
        &ReviewContext {
            store,
            data_dir,
            events: &Progress,
            agent_provider: None,
        },
        ReviewRequest {
            conversation,
            execution,
            mode,
            review_type,
            focus: args.focus,
            trigger: ReviewTrigger::User,
            reviewer: args.reviewer_provider,
            final_review: false,
            figures: args.figures,
        },
        &cancel,
    )
    .await;
    watcher.abort();
    let outcome = outcome?;
    if args.json {
        let text = serde_json::to_string_pretty(&outcome.review)
            .map_err(|e| CliError::Output(std::io::Error::other(e)))?;
        return output::print(&format!("{text}\n"));
    }
    if outcome.cached {
        eprintln!("(from the cache: nothing changed since this review was made)");
    }
    let open = store
        .reviews()
        .open_findings(conversation, execution)
        .await?;
    let mut text = render(&outcome.review, open.len());
    if outcome.review.review_type == ReviewType::Recompute.name() {
        let receipts = store
            .figure_receipts()
            .of_review(&outcome.review.id)
            .await?;
        text.push_str(&render_receipts(&receipts));
    }
    output::print(&text)
}

/// The review for a person: verdict, findings with their evidence, questions.
fn render(review: &Review, open: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Risk: {}   (review {}, {} {}, through seq {})",
        review.risk_level.as_str().to_uppercase(),
        review.id,
        review.review_type,
        review.mode,
        review.reviewed_through_seq
    );
    if review.passes.len() > 1 {
        let _ = writeln!(
            out,
            "Read in {} passes (the history is far above the reviewer's budget):",
            review.passes.len()
        );
        for p in &review.passes {
            let _ = writeln!(
                out,
                "  pass {}: seqs {}–{}{}, {} tokens, risk {}",
                p.pass,
                p.from_seq,
                p.through_seq,
                p.summarised
                    .map(|(a, b)| format!(" ({a}–{b} summarised for the review)"))
                    .unwrap_or_default(),
                p.input_tokens,
                p.risk_level
            );
        }
    }
    let _ = writeln!(out, "\n{}", review.summary);
    for (i, f) in review.findings.iter().enumerate() {
        let _ = writeln!(
            out,
            "\n{}. [{}] {}\n   Argument: {}\n   Evidence: seqs {:?}\n   Recommendation: {}",
            i + 1,
            f.body.severity,
            f.body.title,
            f.body.argument,
            f.body.evidence_seqs,
            f.body.recommendation
        );
    }
    if !review.open_questions.is_empty() {
        let _ = writeln!(out, "\nOpen questions:");
        for q in &review.open_questions {
            let _ = writeln!(out, "- {q}");
        }
    }
    let _ = writeln!(out, "\nOpen findings in this scope: {open}");
    out
}

/// A recompute review's receipts, figure by figure, after the review.
fn render_receipts(receipts: &[FigureReceipt]) -> String {
    let mut out = String::from("\nFigures recomputed:\n");
    for r in receipts {
        let verdict = match (&r.recomputed, r.agrees) {
            (Some(v), true) => format!("{v}, agrees: verified"),
            (Some(v), false) => format!("{v}, DIFFERS"),
            (None, _) => "no value".to_owned(),
        };
        let _ = writeln!(out, "- {} → {verdict}\n  how: {}", r.text, r.derivation);
        for line in r.code.lines().take(12) {
            let _ = writeln!(out, "  | {line}");
        }
        if r.code.lines().count() > 12 {
            let _ = writeln!(out, "  | … (the whole receipt: decima numbers … --json)");
        }
    }
    out
}
