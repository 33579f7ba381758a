//! Building a conversation's request through the context pipeline, shared by `context` (which
//! prints it), `compress` (which budgets with it) and `chat` (which sends it).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use decima_core::context::compress::PlanInput;
use decima_core::context::{
    CompressionLevel, ContextReport, HistoryBudget, Layer as ReportLayer, Strategy, Thresholds,
    pinned_units, plan, select,
};
use decima_core::prompt::{AssembleInput, Assembled, Preset, assemble};
use decima_core::{ConversationId, NewMessage};
use decima_store::{Conversation, Store};

use crate::error::CliError;

/// Tokens kept free for the answer: a quarter of the window, at most 8,192.
pub fn output_reserve(window: u32) -> u32 {
    (window / 4).min(8_192)
}

/// The conversation's preset, or the plain one (the history, and summaries as session context).
pub async fn preset_of(store: &Store, conversation: &Conversation) -> Result<Preset, CliError> {
    match &conversation.preset_id {
        Some(preset_id) => {
            let record = store.presets().get(preset_id).await?;
            serde_json::from_value(record.body).map_err(|e| {
                CliError::Provider(format!(
                    "preset {preset_id} cannot be read as a Decima preset: {e}"
                ))
            })
        }
        None => Ok(Preset::default()),
    }
}

/// The history budget: the window minus the answer's reserve and the preset's fixed layers.
/// Returns the budget and the fixed layers' tokens.
pub fn history_budget(preset: &Preset, window: u32) -> (HistoryBudget, u32) {
    let counter = decima_llm::tokens::store_counter();
    let placeholders = BTreeMap::new();
    let mut probe = AssembleInput::new(&[]);
    probe.placeholders = &placeholders;
    let fixed = assemble(preset, &probe, counter.as_ref())
        .tokens
        .system_constants;
    let budget = HistoryBudget::new(
        window
            .saturating_sub(output_reserve(window))
            .saturating_sub(fixed),
    );
    (budget, fixed)
}

/// The assembled request and its measurements.
pub struct Built {
    /// The request, with layers and tokens.
    pub assembled: Assembled,
    /// Usage and threshold state.
    pub report: ContextReport,
    /// Uncovered messages that do not fit: compression must run first.
    pub pending: usize,
    /// Their tokens.
    pub pending_tokens: u32,
}

impl Built {
    /// True when some uncovered message could not be placed.
    pub fn compression_required(&self) -> bool {
        self.pending > 0
    }
}

/// Selects, measures and assembles the request for the conversation as it is stored now.
pub async fn build(
    store: &Store,
    id: ConversationId,
    preset: &Preset,
    window: u32,
    thresholds: &Thresholds,
) -> Result<Built, CliError> {
    let (budget, fixed) = history_budget(preset, window);
    let messages = store.messages().all(id).await?;
    let pinned = pinned_units(&messages);
    let summaries = store.compactions().live_summaries(id).await?;
    let selection = select(&messages, &pinned, &summaries, &budget)?;
    let report = ContextReport::from_selection(
        vec![ReportLayer::new("system_constants", fixed)],
        &selection,
        window,
        thresholds,
    );
    // Session context: the pinned todos verbatim, then the summaries, global first. Working
    // context: pinned units, then the tail.
    let mut session = String::new();
    let todos = store.todos().pinned_in_conversation(id).await?;
    if !todos.is_empty() {
        session.push_str("Pinned todos:\n");
        for t in &todos {
            let _ = match &t.phase {
                Some(phase) => writeln!(session, "- [{}] {} (phase: {phase})", t.status, t.title),
                None => writeln!(session, "- [{}] {}", t.status, t.title),
            };
        }
        session.push('\n');
    }
    for s in selection.global.iter().chain(selection.segments.iter()) {
        let _ = writeln!(
            session,
            "[{} summary of messages {}–{}]\n{}\n",
            s.level.as_str(),
            s.start_seq,
            s.end_seq,
            s.text.trim_end()
        );
    }
    let working: Vec<NewMessage> = selection
        .pinned
        .iter()
        .copied()
        .chain(selection.recent.iter())
        .map(NewMessage::from)
        .collect();
    let tokens: Vec<u32> = selection
        .pinned
        .iter()
        .copied()
        .chain(selection.recent.iter())
        .map(|m| m.tokens)
        .collect();
    let placeholders = BTreeMap::new();
    let mut input = AssembleInput::new(&working);
    input.history_tokens = Some(&tokens);
    input.session_context = session.trim_end();
    input.placeholders = &placeholders;
    let counter = decima_llm::tokens::store_counter();
    let assembled = assemble(preset, &input, counter.as_ref());
    Ok(Built {
        assembled,
        report,
        pending: selection.pending.len(),
        pending_tokens: selection.pending_tokens,
    })
}

/// What an automatic compression did.
pub struct AutoCompaction {
    /// The stored compaction, for undo.
    pub id: String,
    /// Tokens the history needed before and after.
    pub tokens_before: u32,
    /// After.
    pub tokens_after: u32,
}

/// Compresses with the extract strategy when the thresholds say so (or when messages no longer
/// fit), as a step does before it sends. Nothing happens when compression is turned off.
pub async fn compress_if_needed(
    store: &Store,
    id: ConversationId,
    preset: &Preset,
    window: u32,
    thresholds: &Thresholds,
) -> Result<Option<AutoCompaction>, CliError> {
    if !thresholds.enabled {
        return Ok(None);
    }
    let (budget, _) = history_budget(preset, window);
    let messages = store.messages().all(id).await?;
    let pinned = pinned_units(&messages);
    let summaries = store.compactions().live_summaries(id).await?;
    let selection = select(&messages, &pinned, &summaries, &budget)?;
    let report = ContextReport::from_selection(Vec::new(), &selection, window, thresholds);
    let level = match (report.state.level(), selection.compression_required()) {
        (Some(level), _) => level,
        (None, true) => CompressionLevel::Deep,
        (None, false) => return Ok(None),
    };
    let counter = decima_llm::tokens::store_counter();
    let plan = plan(PlanInput {
        messages: &messages,
        pinned: &pinned,
        summaries: &summaries,
        level,
        strategy: Strategy::Extract,
        budget,
        counter: counter.as_ref(),
        written: None,
    })?;
    if plan.is_empty() {
        return Ok(None);
    }
    let compaction = store.compactions().apply(id, &plan, "auto").await?;
    Ok(Some(AutoCompaction {
        id: compaction,
        tokens_before: plan.tokens_before,
        tokens_after: plan.tokens_after,
    }))
}
