//! `decima context ID [--provider NAME] [--json]`: the request the next step would send, with
//! its layers and how full the window is.

use std::fmt::Write as _;

use decima_core::context::ThresholdState;
use decima_core::prompt::Layer;
use decima_runtime::context::{build, preset_of};
use decima_runtime::settings;
use decima_store::Store;
use serde::Serialize;

use super::conversation_id;
use crate::error::CliError;
use crate::output;

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
    output_reserve: u32,
    input_room: u32,
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

pub async fn run(
    store: &Store,
    id: &str,
    provider: Option<&str>,
    json: bool,
) -> Result<(), CliError> {
    let id = conversation_id(id)?;
    let conversation = store.conversations().get(id).await?;
    let preset = preset_of(store, &conversation).await?;
    let settings = settings::window_settings(store, provider).await?;
    let window = settings.window;
    let scale = settings::calibration_scale(store, provider).await?;
    let built = build(store, &conversation, &preset, &settings, scale).await?;
    if built.compression_required() {
        eprintln!(
            "warning: {} messages ({} tokens) no longer fit the window; run `decima compress {id}` before the next request",
            built.history.pending_messages, built.history.pending
        );
    }
    let assembled = &built.assembled;
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
            output_reserve: built.budgeting.output_reserve,
            input_room: built.budgeting.input_room,
            tokens: built.report.total,
            usage: built.report.usage,
            state: state_name(built.report.state),
            compression_required: built.compression_required(),
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
        "{} tokens of the {} the {window}-token window leaves for the prompt ({} kept for the answer): {:.1}% ({})\n",
        built.report.total,
        built.budgeting.input_room,
        built.budgeting.output_reserve,
        built.report.usage * 100.0,
        state_name(built.report.state)
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
