//! Deciding and running compression: the level that follows usage, the strategy with its
//! fallback, the automatic policy a step applies before it sends, and the compaction record.

use std::path::Path;

use decima_core::FailureClass;
use decima_core::context::compress::PlanInput;
use decima_core::context::{
    CompactionPlan, CompressionLevel, HistoryBudget, Strategy, compaction_range, plan, select,
};
use decima_core::prompt::Preset;
use decima_store::{ClaimKind, CompactionRecord, CompactionTrigger, Conversation, Store};
use tracing::{Instrument as _, info, info_span, warn};

use crate::busy::ClaimGuard;
use crate::context::{Built, Scale, build};
use crate::error::Result;
use crate::events::{Event, EventSink};
use crate::settings::{self, WindowSettings};

/// What the person asked for.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CompressRequest {
    /// The level; `None` follows the usage (standard from 85%, deep from 90%).
    pub level: Option<CompressionLevel>,
    /// Extract, or a model-written summary.
    pub strategy: Strategy,
    /// Plan and report, store nothing.
    pub dry_run: bool,
    /// A summary a model wrote for an earlier preview. Used instead of asking the model again
    /// when it was written for this strategy, level and range of messages, so that confirming
    /// a preview stores the text the person read.
    pub written: Option<WrittenSummary>,
}

/// A model-written summary and what it was written for.
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenSummary {
    /// `llm` or `structured`.
    pub strategy: Strategy,
    /// The level it was written at.
    pub level: CompressionLevel,
    /// The seqs of the first and last message it summarises.
    pub covers: (i64, i64),
    /// The summary.
    pub text: String,
}

/// What a compression did.
#[derive(Debug, Clone, PartialEq)]
pub enum CompressOutcome {
    /// No level was given and usage is below the compression threshold.
    BelowThreshold {
        /// The usage fraction.
        usage: f64,
        /// The model's window.
        window: u32,
    },
    /// The plan (empty when there was nothing to compress), and the compaction when stored.
    Planned {
        /// The plan: the preview, or what was applied.
        plan: CompactionPlan,
        /// The stored compaction's id, unless this was a dry run or the plan was empty.
        compaction_id: Option<String>,
        /// The model's summary the plan uses, if a model wrote one: a preview keeps it for the
        /// confirmation.
        written: Option<WrittenSummary>,
    },
}

/// Everything a compression needs from its caller.
pub struct CompressContext<'a> {
    /// The store.
    pub store: &'a Store,
    /// For the secret store, when a model writes the summary.
    pub data_dir: &'a Path,
    /// The conversation.
    pub conversation: &'a Conversation,
    /// Its preset.
    pub preset: &'a Preset,
    /// The window it is measured against.
    pub window: &'a WindowSettings,
    /// Store tokens → model tokens.
    pub scale: Scale,
    /// The provider that writes `llm` and `structured` summaries.
    pub provider: Option<&'a str>,
    /// Where warnings and the compaction event go.
    pub events: &'a dyn EventSink,
}

/// Compresses on request: `decima compress` and the desktop's compression dialog.
pub async fn compress(
    ctx: &CompressContext<'_>,
    request: CompressRequest,
) -> Result<CompressOutcome> {
    let span =
        info_span!("compress", conversation = %ctx.conversation.id, dry_run = request.dry_run);
    async {
        // A preview only reads. Applying changes what the next request is built from, so it
        // waits for nobody: it is refused while anything else uses the conversation.
        let claim = if request.dry_run {
            None
        } else {
            crate::lease::interrupt_orphans(ctx.store, ctx.data_dir).await?;
            Some(ClaimGuard::take(ctx.store, ctx.conversation.id, ClaimKind::Compression).await?)
        };
        let outcome = compress_claimed(ctx, request).await;
        if let Some(claim) = claim {
            claim.release().await;
        }
        outcome
    }
    .instrument(span)
    .await
}

/// Undoes a compaction (the newest in force first): its summaries are retired and the messages
/// they covered are sent verbatim again. Refused, like applying one, while anything else uses
/// the conversation.
pub async fn undo(store: &Store, data_dir: &Path, compaction_id: &str) -> Result<CompactionRecord> {
    let conversation = store
        .compactions()
        .get(compaction_id)
        .await?
        .conversation_id;
    crate::lease::interrupt_orphans(store, data_dir).await?;
    let claim = ClaimGuard::take(store, conversation, ClaimKind::Compression).await?;
    let undone = store.compactions().undo(compaction_id).await;
    claim.release().await;
    Ok(undone?)
}

async fn compress_claimed(
    ctx: &CompressContext<'_>,
    request: CompressRequest,
) -> Result<CompressOutcome> {
    {
        let built = build(
            ctx.store,
            ctx.conversation,
            ctx.preset,
            ctx.window,
            ctx.scale,
        )
        .await?;
        let level = match request.level {
            Some(level) => level,
            None => match level_for(&built, ctx.window) {
                Some(level) => level,
                None => {
                    return Ok(CompressOutcome::BelowThreshold {
                        usage: built.report.usage,
                        window: ctx.window.window,
                    });
                }
            },
        };
        let trigger = CompactionTrigger::Manual;
        let apply = if request.dry_run {
            Apply::DryRun
        } else {
            Apply::Always
        };
        let written = request.written.as_ref();
        run(
            ctx,
            &built,
            built.budgeting.history,
            level,
            request.strategy,
            apply,
            trigger,
            written,
        )
        .await
    }
}

/// An automatic compression takes the request down to this fraction of the compression
/// threshold (85% → 51% of the input room), not just under it. Every compression changes the
/// summaries, so the providers' prompt caches miss from the first summary on at the next
/// request; compressing only to just under the threshold compressed again a few steps later
/// (16 times in a 200-step run), and each time the history was re-sent uncached.
pub const COMPRESS_DOWN_TO: f64 = 0.6;

/// The history budget an automatic compression plans with: what is left of
/// [`COMPRESS_DOWN_TO`] of the threshold once the preset, the summaries' headers and the tail
/// are counted, never more than the real budget and never under a quarter of it (a preset that
/// fills most of the window must not squeeze the summaries to nothing).
pub fn hysteresis_budget(built: &Built, compress_at: f64) -> HistoryBudget {
    let b = &built.budgeting;
    let fraction = (compress_at * COMPRESS_DOWN_TO).clamp(0.0, 1.0);
    let target = (f64::from(b.input_room_store) * fraction).floor() as u32;
    let tokens = target
        .saturating_sub(b.system_constants)
        .saturating_sub(b.session_overhead)
        .clamp(b.history.tokens / 4, b.history.tokens);
    HistoryBudget {
        tokens,
        shares: b.history.shares,
    }
}

/// The level the usage calls for, if any. Uncovered messages that no longer fit always call for
/// deep compression, even with thresholds above 100%.
pub fn level_for(built: &Built, window: &WindowSettings) -> Option<CompressionLevel> {
    match (built.report.state.level(), built.compression_required()) {
        (Some(level), _) => Some(level),
        (None, true) if window.thresholds.enabled => Some(CompressionLevel::Deep),
        _ => None,
    }
}

/// What an automatic compression did.
#[derive(Debug, Clone, PartialEq)]
pub struct AutoCompaction {
    /// The stored compaction, for undo.
    pub id: String,
    /// The level it ran at.
    pub level: CompressionLevel,
    /// Tokens the history needed before and after.
    pub tokens_before: u32,
    /// After.
    pub tokens_after: u32,
}

/// Compresses with the extract strategy when the thresholds say so (or when messages no longer
/// fit), as a step does before it sends. Nothing happens when compression is turned off.
pub async fn compress_if_needed(
    ctx: &CompressContext<'_>,
    trigger: CompactionTrigger,
) -> Result<Option<AutoCompaction>> {
    if !ctx.window.thresholds.enabled {
        return Ok(None);
    }
    let built = build(
        ctx.store,
        ctx.conversation,
        ctx.preset,
        ctx.window,
        ctx.scale,
    )
    .await?;
    compress_built(ctx, &built, trigger).await
}

/// The same policy on a context the caller already built with `ctx`'s settings, so a step that
/// needs the built request anyway reads the store once when nothing is due.
pub async fn compress_built(
    ctx: &CompressContext<'_>,
    built: &Built,
    trigger: CompactionTrigger,
) -> Result<Option<AutoCompaction>> {
    if !ctx.window.thresholds.enabled {
        return Ok(None);
    }
    let Some(level) = level_for(built, ctx.window) else {
        return Ok(None);
    };
    compress_at(ctx, built, level, trigger).await
}

/// What the whole request will take after `plan` is applied, counted as the context meter
/// counts it (system prompt, preset, tools and history), from what it takes now: the plan's
/// own figures are the history's alone, and a preview that showed them promised far less
/// than the meter then read.
///
/// `request_now` is the meter's figure (model tokens); the plan's are store tokens, turned
/// into model tokens with `scale`.
pub fn request_after(
    request_now: u32,
    plan: &decima_core::context::CompactionPlan,
    scale: Scale,
) -> u32 {
    request_now
        .saturating_sub(scale.to_model(u64::from(plan.tokens_before)))
        .saturating_add(scale.to_model(u64::from(plan.tokens_after)))
}

/// Compresses at a level the caller chose (a finished phase, a passed checkpoint, a context
/// overflow), with the extract strategy, whatever the usage. `None` when there was nothing to
/// compress, compression is turned off, or the plan would not make the history smaller (a short
/// history whose summary costs more than its messages is left as it is).
pub async fn compress_at(
    ctx: &CompressContext<'_>,
    built: &Built,
    level: CompressionLevel,
    trigger: CompactionTrigger,
) -> Result<Option<AutoCompaction>> {
    if !ctx.window.thresholds.enabled {
        return Ok(None);
    }
    // A compression the usage or an overflow called for goes well below the threshold; one a
    // finished phase or a checkpoint called for summarises what it finished, at the usual shares.
    let budget = match level {
        CompressionLevel::Standard | CompressionLevel::Deep => {
            hysteresis_budget(built, ctx.window.thresholds.compress)
        }
        CompressionLevel::Phase | CompressionLevel::Checkpoint => built.budgeting.history,
    };
    match run(
        ctx,
        built,
        budget,
        level,
        Strategy::Extract,
        Apply::IfSmaller,
        trigger,
        None,
    )
    .await?
    {
        CompressOutcome::Planned {
            plan,
            compaction_id: Some(id),
            ..
        } => Ok(Some(AutoCompaction {
            id,
            level,
            tokens_before: plan.tokens_before,
            tokens_after: plan.tokens_after,
        })),
        _ => Ok(None),
    }
}

/// Plans at `level` with `strategy` over what `built` loaded plus the uncovered messages, and
/// stores the compaction unless `dry_run`.
/// Whether a plan is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Apply {
    /// Never: a preview.
    DryRun,
    /// Whatever it saves: the person asked for it.
    Always,
    /// Only when it makes the history smaller: an automatic compression.
    IfSmaller,
}

#[allow(clippy::too_many_arguments)]
async fn run(
    ctx: &CompressContext<'_>,
    built: &Built,
    budget: HistoryBudget,
    level: CompressionLevel,
    strategy: Strategy,
    apply: Apply,
    trigger: CompactionTrigger,
    earlier: Option<&WrittenSummary>,
) -> Result<CompressOutcome> {
    let id = ctx.conversation.id;
    // Compression reads what it compresses: every uncovered message, from the frontier on.
    let uncovered = ctx
        .store
        .messages()
        .range(id, built.frontier + 1, i64::MAX)
        .await?;
    let counter = decima_llm::tokens::store_counter();
    let mut input = PlanInput {
        messages: &uncovered,
        pinned: &built.pinned,
        summaries: &built.summaries,
        level,
        strategy: Strategy::Extract,
        budget,
        counter: counter.as_ref(),
        written: None,
    };
    let written = match strategy {
        Strategy::Extract => None,
        Strategy::Llm | Strategy::Structured => summary_for(ctx, &input, strategy, earlier).await?,
    };
    if let Some(summary) = &written {
        input.strategy = strategy;
        input.written = Some(&summary.text);
    }
    let mut plan = plan(input)?;
    if !plan.is_empty() {
        count_as_sent(&mut plan, built, &uncovered, counter.as_ref())?;
    }
    let skip = match apply {
        Apply::DryRun => true,
        Apply::Always => false,
        Apply::IfSmaller => plan.tokens_after >= plan.tokens_before,
    };
    if plan.is_empty() || skip {
        return Ok(CompressOutcome::Planned {
            plan,
            compaction_id: None,
            written,
        });
    }
    let compaction_id = ctx.store.compactions().apply(id, &plan, trigger).await?;
    info!(
        conversation = %id,
        compaction = %compaction_id,
        level = level.as_str(),
        trigger = trigger.as_str(),
        tokens_before = plan.tokens_before,
        tokens_after = plan.tokens_after,
        "compacted"
    );
    ctx.events.emit(Event::Compacted {
        compaction_id: compaction_id.clone(),
        level,
        trigger,
        tokens_before: plan.tokens_before,
        tokens_after: plan.tokens_after,
    });
    Ok(CompressOutcome::Planned {
        plan,
        compaction_id: Some(compaction_id),
        written,
    })
}

/// Recounts `plan`'s history before and after as the request will send it. The plan fits its
/// summaries under the compression's own target, counting their text alone. Once they are in
/// force, the request carries them under their headers, and the window is built with the full
/// budget less those headers, keeping more recent messages verbatim and the pinned messages
/// the summaries cover beside them. What the preview, the notice and the record say is that:
/// what the meter then reads.
fn count_as_sent(
    plan: &mut CompactionPlan,
    built: &Built,
    uncovered: &[decima_core::Message],
    counter: &dyn decima_core::TokenCounter,
) -> Result<()> {
    let after = plan.apply(&built.summaries);
    let overhead_before = crate::context::summaries_overhead(&built.summaries, counter);
    let overhead_after = crate::context::summaries_overhead(&after, counter);
    let budget_after = HistoryBudget::new(
        built
            .budgeting
            .history
            .tokens
            .saturating_sub(overhead_after.saturating_sub(overhead_before)),
    );
    plan.tokens_before = select(
        uncovered,
        &built.pinned,
        &built.summaries,
        &built.budgeting.history,
    )?
    .required_tokens()
    .saturating_add(overhead_before);
    // The loader reads only the pinned messages already covered; those among the uncovered
    // that the new summaries cover are added.
    let mut pinned_after: Vec<decima_core::Message> = built.pinned.to_vec();
    for unit in decima_core::context::pinned_units(uncovered) {
        if !pinned_after.iter().any(|p| p.seq == unit.seq) {
            pinned_after.push(unit);
        }
    }
    pinned_after.sort_by_key(|m| m.seq);
    plan.tokens_after = select(uncovered, &pinned_after, &after, &budget_after)?
        .required_tokens()
        .saturating_add(overhead_after);
    Ok(())
}

/// The model's summary of the range the next compaction covers: the earlier one when it was
/// written for exactly this strategy, level and range, else a new one. `None` when there is
/// nothing to summarise or a structured summary fell back to extract.
async fn summary_for(
    ctx: &CompressContext<'_>,
    input: &PlanInput<'_>,
    strategy: Strategy,
    earlier: Option<&WrittenSummary>,
) -> Result<Option<WrittenSummary>> {
    let Some(range) = compaction_range(input)? else {
        return Ok(None);
    };
    let covered = &input.messages[range];
    let (Some(first), Some(last)) = (covered.first(), covered.last()) else {
        return Ok(None);
    };
    let covers = (first.seq, last.seq);
    if let Some(earlier) = earlier
        && earlier.strategy == strategy
        && earlier.level == input.level
        && earlier.covers == covers
    {
        return Ok(Some(earlier.clone()));
    }
    let text = written_by_model(ctx, input, strategy == Strategy::Structured).await?;
    Ok(text.map(|text| WrittenSummary {
        strategy,
        level: input.level,
        covers,
        text,
    }))
}

/// The summary a model writes for the range the next compaction covers. A structured summary
/// that does not validate falls back to extract (`None`), as the design asks; other failures end
/// the operation.
async fn written_by_model(
    ctx: &CompressContext<'_>,
    input: &PlanInput<'_>,
    structured: bool,
) -> Result<Option<String>> {
    let Some(range) = compaction_range(input)? else {
        return Ok(None);
    };
    let resolved = settings::resolve(ctx.store, ctx.data_dir, ctx.provider).await?;
    let provider = decima_llm::HttpProvider::new(resolved.config)?;
    match decima_llm::summarize::write_summary(
        &provider,
        &input.messages[range],
        input.level,
        structured,
    )
    .await
    {
        Ok(text) => Ok(Some(text)),
        Err(e) if structured && e.class() == FailureClass::Logic => {
            warn!(class = %e.class(), "structured summary refused; falling back to extract");
            ctx.events.emit(Event::Warning {
                message: format!("{e}; falling back to the extract strategy"),
            });
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}
