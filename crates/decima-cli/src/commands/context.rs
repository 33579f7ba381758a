//! `decima context ID [--provider NAME] [--json]`: the request the next step would send, with
//! its layers and how full the window is.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use decima_core::context::{
    ContextReport, HistoryBudget, Layer as ReportLayer, ThresholdState, pinned_units, select,
};
use decima_core::prompt::{AssembleInput, Layer, Preset, assemble};
use decima_core::{Message, NewMessage};
use decima_store::Store;
use serde::Serialize;

use super::compress::output_reserve;
use super::conversation_id;
use crate::error::CliError;
use crate::{output, provider_config};

#[derive(Serialize)]
struct LayerJson {
    name: &'static str,
    tokens: u32,
}

#[derive(Serialize)]
struct MessageJson<'a> {
    role: &'static str,
    content: &'a str,
    layer: &'static str,
}

#[derive(Serialize)]
struct ContextJson<'a> {
    window: u32,
    tokens: u32,
    usage: f64,
    state: &'static str,
    compression_required: bool,
    layers: Vec<LayerJson>,
    messages: Vec<MessageJson<'a>>,
}

fn state_name(state: ThresholdState) -> &'static str {
    match state {
        ThresholdState::Ok => "ok",
        ThresholdState::Warn => "warn",
        ThresholdState::Compress => "compress",
        ThresholdState::Deep => "deep",
    }
}

fn draft(m: &Message) -> NewMessage {
    NewMessage {
        role: m.role,
        name: m.name.clone(),
        content: m.content.clone(),
        reasoning: m.reasoning.clone(),
        reasoning_signature: m.reasoning_signature.clone(),
        tool_calls: m.tool_calls.clone(),
        tool_call_id: m.tool_call_id.clone(),
        execution_id: m.execution_id,
        pinned: m.pinned,
    }
}

pub async fn run(
    store: &Store,
    data_dir: &Path,
    id: &str,
    provider: Option<&str>,
    json: bool,
) -> Result<(), CliError> {
    let id = conversation_id(id)?;
    let conversation = store.conversations().get(id).await?;
    let preset: Preset = match &conversation.preset_id {
        Some(preset_id) => {
            let record = store.presets().get(preset_id).await?;
            serde_json::from_value(record.body).map_err(|e| {
                CliError::Provider(format!(
                    "preset {preset_id} cannot be read as a Decima preset: {e}"
                ))
            })?
        }
        None => Preset::default(),
    };
    let (window, thresholds) = provider_config::context_window(store, data_dir, provider).await?;
    let counter = decima_llm::tokens::store_counter();
    let placeholders = BTreeMap::new();

    // The fixed layers first, to know what is left for the history.
    let mut probe = AssembleInput::new(&[]);
    probe.placeholders = &placeholders;
    let fixed = assemble(&preset, &probe, counter.as_ref())
        .tokens
        .system_constants;
    let budget = HistoryBudget::new(
        window
            .saturating_sub(output_reserve(window))
            .saturating_sub(fixed),
    );

    let messages = store.messages().all(id).await?;
    let pinned = pinned_units(&messages);
    let summaries = store.compactions().live_summaries(id).await?;
    let selection = select(&messages, &pinned, &summaries, &budget)?;
    let report = ContextReport::from_selection(
        vec![ReportLayer::new("system_constants", fixed)],
        &selection,
        window,
        &thresholds,
    );

    // Session context: the summaries, global first. Working context: pinned units, then the tail.
    let mut session = String::new();
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
        .map(draft)
        .collect();
    let mut input = AssembleInput::new(&working);
    input.session_context = session.trim_end();
    input.placeholders = &placeholders;
    let assembled = assemble(&preset, &input, counter.as_ref());

    if selection.compression_required() {
        eprintln!(
            "warning: {} messages ({} tokens) no longer fit the window; run `decima compress {id}` before the next request",
            selection.pending.len(),
            selection.pending_tokens
        );
    }
    let layers: Vec<LayerJson> = Layer::ALL
        .iter()
        .map(|l| LayerJson {
            name: l.name(),
            tokens: *assembled.tokens.get(*l),
        })
        .collect();
    if json {
        return output::print_json(&ContextJson {
            window,
            tokens: assembled.total,
            usage: report.usage,
            state: state_name(report.state),
            compression_required: selection.compression_required(),
            layers,
            messages: assembled
                .messages
                .iter()
                .map(|m| MessageJson {
                    role: m.message.role.as_str(),
                    content: &m.message.content,
                    layer: m.layer.name(),
                })
                .collect(),
        });
    }
    let mut text = format!(
        "{} tokens of a {window}-token window: {:.1}% ({})\n",
        assembled.total,
        report.usage * 100.0,
        state_name(report.state)
    );
    for l in &layers {
        let _ = writeln!(text, "  {:<18} {:>9}", l.name, l.tokens);
    }
    text.push('\n');
    for m in &assembled.messages {
        let _ = writeln!(text, "--- {} ({})", m.message.role, m.layer.name());
        text.push_str(&m.message.content);
        if !m.message.content.ends_with('\n') {
            text.push('\n');
        }
    }
    output::print(&text)
}
