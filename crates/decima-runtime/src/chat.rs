//! One chat turn: store the user's message, compress if the thresholds say so, build the
//! request, stream the answer through the event sink, and store it once it is complete.

use std::path::Path;

use decima_core::FailureClass;
use decima_core::prompt::Preset;
use decima_core::{ConversationId, Message, NewMessage, Role};
use decima_llm::tokens::{Calibration, TiktokenCounter, counter_for_model, estimate_request};
use decima_llm::{ChatRequest, Completion, LlmError, ProviderConfig, Usage};
use decima_store::{AnswerEnd, ClaimKind, CompactionTrigger, Conversation, Store};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument as _, info, info_span, warn};

use crate::answer;
use crate::busy::ClaimGuard;
use crate::compression::{CompressContext, compress_built};
use crate::context::{Built, Scale, build, preset_of};
use crate::error::{Result, RuntimeError};
use crate::events::{Event, EventSink};
use crate::model_call::{chat_request, connect, stream_answer};
use crate::served_window::{self, Freshness};
use crate::settings::{self, WindowSettings};

/// Longest automatic title taken from the first message.
const TITLE_CHARS: usize = 60;
/// Headroom added when the model's own count shows the store's counts run short.
const RESCALE_MARGIN: f64 = 1.02;

/// What the caller asks of one turn.
pub struct ChatTurn<'a> {
    /// The store.
    pub store: &'a Store,
    /// The data directory (secret store fallback).
    pub data_dir: &'a Path,
    /// The provider by name; `None` picks the only one or the `DECIMA_*` environment.
    pub provider: Option<&'a str>,
    /// The conversation to continue; `None` starts a new one titled from the message.
    pub conversation: Option<ConversationId>,
    /// What the user typed.
    pub message: String,
    /// Where deltas, compactions and stored messages are reported.
    pub events: &'a dyn EventSink,
    /// Stops the answer while it streams: what arrived is stored, marked as stopped, and the
    /// conversation is freed.
    pub cancel: CancellationToken,
}

/// What a completed turn produced.
#[derive(Debug, Clone)]
pub struct TurnOutcome {
    /// The conversation the turn belongs to.
    pub conversation_id: ConversationId,
    /// The stored answer.
    pub answer: Message,
    /// Usage the provider reported, if any.
    pub usage: Option<Usage>,
    /// Whether the answer is whole, cut by the output cap, stopped or ended for looping.
    pub ended: AnswerEnd,
}

/// Runs one chat turn.
pub async fn chat_turn(turn: ChatTurn<'_>) -> Result<TurnOutcome> {
    let mut resolved = settings::resolve(turn.store, turn.data_dir, turn.provider).await?;
    // Fitted to the window the server serves, asked at most every few minutes.
    let fitted = served_window::fit(turn.store, &mut resolved, Freshness::Cached).await?;
    if let Some(warning) = fitted.and_then(|f| f.warning) {
        turn.events.emit(Event::Warning { message: warning });
    }
    let conversation = match turn.conversation {
        Some(id) => turn.store.conversations().get(id).await?,
        None => {
            turn.store
                .conversations()
                .create(&title_from(&turn.message), None)
                .await?
        }
    };
    let span = info_span!(
        "chat_turn",
        conversation = %conversation.id,
        provider = %resolved.config.name,
        model = %resolved.config.model,
    );
    let window = window_for_turn(turn.provider, &resolved)?;
    // The question and its answer belong together: nothing else writes into the conversation
    // until the turn ends, and a turn on a conversation in use is refused before it stores
    // anything.
    crate::lease::interrupt_orphans(turn.store, turn.data_dir).await?;
    let claim = ClaimGuard::take(turn.store, conversation.id, ClaimKind::Chat).await?;
    let outcome = run_turn(&turn, conversation, &resolved, window)
        .instrument(span)
        .await;
    claim.release().await;
    outcome
}

/// The chat's window: `DECIMA_CONTEXT_WINDOW` overrides an unnamed provider's, as for
/// `decima context`, so the meter and the chat agree; a malformed value is refused, not ignored.
pub(crate) fn window_for_turn(
    provider: Option<&str>,
    resolved: &settings::ResolvedProvider,
) -> Result<WindowSettings> {
    if provider.is_none()
        && let Some(window) = settings::env_window()?
    {
        return Ok(WindowSettings::new(window));
    }
    Ok(WindowSettings::of(
        resolved.config.context_window,
        &resolved.settings,
    ))
}

async fn run_turn(
    turn: &ChatTurn<'_>,
    conversation: Conversation,
    resolved: &settings::ResolvedProvider,
    window: WindowSettings,
) -> Result<TurnOutcome> {
    let mut config = resolved.config.clone();
    let store = turn.store;
    let id = conversation.id;
    store_question(turn, id).await?;
    let preset = preset_of(store, &conversation).await?;
    let mut calibration = match store.calibrations().get(&config.model).await? {
        Some((factor, samples)) => Calibration { factor, samples },
        None => Calibration::new(),
    };
    let (completion, fitted) = answer_fitted(
        turn,
        &conversation,
        &preset,
        &mut config,
        &resolved.settings,
        window,
        &calibration,
    )
    .await?;
    let (cap, estimate, needed) = (fitted.request.max_tokens, fitted.estimate, fitted.needed);
    let ended = answer::ending(&completion);
    let completion = storable(completion, ended, &config.name, turn.events)?;
    let answer = store.messages().append(id, completion.to_message()).await?;
    // A server that counted far fewer prompt tokens than were sent dropped part of the prompt;
    // such a count says nothing about the tokenizer and is not learned from.
    let truncated = completion
        .usage
        .is_some_and(|u| calibration.looks_truncated(estimate, u.prompt_tokens));
    store
        .answers()
        .record(
            id,
            answer.id,
            &answer::record(&completion, resolved.settings.prices, truncated, None),
        )
        .await?;
    turn.events.emit(Event::MessageStored {
        seq: answer.seq,
        role: answer.role,
    });
    if let Some(note) = answer::ending_note(ended, cap) {
        turn.events.emit(Event::Warning { message: note });
    }
    if truncated {
        // The window the server serves is read again, so that the next turn fits it.
        served_window::after_truncation(store, &config).await?;
        turn.events.emit(Event::Warning {
            message: truncation_note(&config.name, needed, completion.usage),
        });
    }
    crate::review::digest_cache::warm_when_full(store, id, answer.seq);
    if let Some(usage) = completion.usage
        && !truncated
    {
        calibration.update(estimate, usage.prompt_tokens);
        store
            .calibrations()
            .save(&config.model, calibration.factor, calibration.samples)
            .await?;
    }
    info!(
        seq = answer.seq,
        tool_calls = answer.tool_calls.len(),
        ended = ended.as_str(),
        "answer stored"
    );
    Ok(TurnOutcome {
        conversation_id: id,
        answer,
        usage: completion.usage,
        ended,
    })
}

/// Stores the user's message before anything is sent, so a failed request loses nothing the
/// user typed, and reports the turn started and the message stored.
async fn store_question(turn: &ChatTurn<'_>, id: ConversationId) -> Result<()> {
    let store = turn.store;
    turn.events.emit(Event::TurnStarted {
        conversation_id: id,
    });
    let stored = store
        .messages()
        .append(id, NewMessage::new(Role::User, turn.message.clone()))
        .await?;
    turn.events.emit(Event::MessageStored {
        seq: stored.seq,
        role: stored.role,
    });
    crate::review::digest_cache::warm_when_full(store, id, stored.seq);
    Ok(())
}

/// Fits the request to `window` and streams the answer. A request the server refuses for its
/// length is fitted once more, to the window the server says it serves (which `config` then
/// carries): never twice.
async fn answer_fitted(
    turn: &ChatTurn<'_>,
    conversation: &Conversation,
    preset: &Preset,
    config: &mut ProviderConfig,
    settings: &settings::ProviderSettings,
    mut window: WindowSettings,
    calibration: &Calibration,
) -> Result<(Completion, Fitted)> {
    let mut provider = connect(config)?;
    let mut refitted = false;
    loop {
        let fitted = fit_request(turn, conversation, preset, config, &window, calibration).await?;
        let request = fitted.request.clone();
        match stream_answer(&provider, request, turn.events, &turn.cancel).await {
            Err(RuntimeError::Llm(e))
                if e.class() == FailureClass::ContextOverflow && !refitted =>
            {
                refitted = true;
                let Some(served) = served_window::after_refusal(turn.store, config, &e).await?
                else {
                    return Err(e.into());
                };
                turn.events.emit(Event::Warning {
                    message: format!(
                        "{} refused the request for its length: it serves {} tokens, not {}; \
                         the conversation is compressed to fit and the request sent again",
                        config.name,
                        served_window::thousands(served),
                        served_window::thousands(window.window)
                    ),
                });
                window = WindowSettings::of(served, settings);
                config.context_window = served;
                if config.num_ctx.is_some() {
                    config.num_ctx = Some(served);
                    provider = connect(config)?;
                }
            }
            result => return Ok((result?, fitted)),
        }
    }
}

/// The answer as it may be stored: a stopped answer keeps its words only, a call the output
/// limit cut off is never run or stored as a call (its arguments are incomplete: a truncated
/// file, a half command) and the person is told, and an answer with nothing left is refused.
fn storable(
    mut completion: Completion,
    ended: AnswerEnd,
    provider: &str,
    events: &dyn EventSink,
) -> Result<Completion> {
    let stopped = ended == AnswerEnd::Stopped;
    if stopped {
        completion.tool_calls.clear();
        completion.cut_off_tool_calls.clear();
    }
    if !completion.cut_off_tool_calls.is_empty() {
        let names: Vec<String> = completion
            .cut_off_tool_calls
            .iter()
            .map(|c| c.name.clone())
            .collect();
        warn!(
            calls = names.len(),
            "tool calls cut off by the output limit"
        );
        if completion.text.trim().is_empty() && completion.tool_calls.is_empty() {
            return Err(RuntimeError::CutOff {
                provider: provider.to_owned(),
                calls: names.join(", "),
            });
        }
        events.emit(Event::Warning {
            message: format!(
                "the answer was cut off by the output limit while writing a call to {}; \
                 that call was not run",
                names.join(", ")
            ),
        });
    }
    if completion.text.trim().is_empty() && completion.tool_calls.is_empty() {
        if stopped {
            return Err(LlmError::Cancelled.into());
        }
        // An empty assistant turn would be refused by some providers on every later request
        // (Anthropic rejects empty text blocks), so it is never stored.
        return Err(RuntimeError::EmptyAnswer {
            provider: provider.to_owned(),
        });
    }
    Ok(completion)
}

/// What the analyst is told when the server dropped part of the prompt without a word.
fn truncation_note(provider: &str, sent: u32, usage: Option<Usage>) -> String {
    let counted = usage.map_or(0, |u| u.prompt_tokens);
    format!(
        "{provider} counted {counted} prompt tokens where about {sent} were sent: the server \
         dropped part of the conversation without saying so (its window is smaller than \
         Decima was told); the window it serves is read again and the next request fitted to it"
    )
}

/// A chat request fitted to the window, with the model's own estimate of it.
struct Fitted {
    request: ChatRequest,
    /// The model's uncalibrated count.
    estimate: u32,
    /// The calibrated count: what the request is expected to cost the window.
    needed: u32,
}

/// Builds the turn's request within `window`: compressing when the thresholds say so, and
/// again when the model counts more than the store foresaw. Refused, with the message saved,
/// when even that does not fit.
async fn fit_request(
    turn: &ChatTurn<'_>,
    conversation: &Conversation,
    preset: &Preset,
    config: &ProviderConfig,
    window: &WindowSettings,
    calibration: &Calibration,
) -> Result<Fitted> {
    let store = turn.store;
    let id = conversation.id;
    let mut scale = Scale::new(calibration.factor);
    let compress_ctx = |scale| CompressContext {
        store,
        data_dir: turn.data_dir,
        conversation,
        preset,
        window,
        scale,
        provider: turn.provider,
        events: turn.events,
    };
    let mut built = build(store, conversation, preset, window, scale).await?;
    if compress_built(&compress_ctx(scale), &built, CompactionTrigger::Auto)
        .await?
        .is_some()
    {
        built = build(store, conversation, preset, window, scale).await?;
    }
    let (mut request, mut estimate) = request_for(config, &built, id)?;
    let mut needed = calibration.apply(estimate);
    if needed > built.budgeting.input_room && built.assembled.total > 0 {
        // The model counts this request higher than the store's counts foresaw (another
        // tokenizer): budget with the measured ratio, compress for it, and build again.
        let measured = f64::from(needed) / f64::from(built.assembled.total) * RESCALE_MARGIN;
        scale = Scale::new(measured.max(scale.factor()));
        warn!(
            scale = scale.factor(),
            "the model counts more than the store; compressing"
        );
        built = build(store, conversation, preset, window, scale).await?;
        if compress_built(&compress_ctx(scale), &built, CompactionTrigger::Overflow)
            .await?
            .is_some()
        {
            built = build(store, conversation, preset, window, scale).await?;
        }
        (request, estimate) = request_for(config, &built, id)?;
        needed = calibration.apply(estimate);
    }
    if built.compression_required() {
        return Err(LlmError::ContextOverflow {
            provider: config.name.clone(),
            message: format!(
                "{} messages ({} tokens) do not fit even after compression; your message is saved, \
                 use a model with a larger window",
                built.history.pending_messages, built.history.pending
            ),
        }
        .into());
    }
    if needed > built.budgeting.input_room {
        return Err(LlmError::ContextOverflow {
            provider: config.name.clone(),
            message: format!(
                "the conversation needs about {needed} tokens but {} leaves {} for the prompt \
                 (window {}, {} kept for the answer); your message is saved, compress the \
                 conversation or use a larger model",
                config.model,
                built.budgeting.input_room,
                window.window,
                built.budgeting.output_reserve
            ),
        }
        .into());
    }
    Ok(Fitted {
        request,
        estimate,
        needed,
    })
}

/// The provider request for a built context, and the model's own estimate of its size.
fn request_for(
    config: &ProviderConfig,
    built: &Built,
    conversation: ConversationId,
) -> Result<(ChatRequest, u32)> {
    let request = chat_request(config, built, &[], conversation);
    let estimate = match &config.tokenizer_json {
        Some(path) => estimate_request(
            counter_for_model(&config.model, Some(path))?.as_ref(),
            &request,
        ),
        None => TiktokenCounter::for_model(&config.model).count_request(&request),
    };
    Ok((request, estimate))
}

/// The first line of the message, shortened, as the new conversation's title.
pub fn title_from(message: &str) -> String {
    let line = message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("Chat");
    let mut title: String = line
        .chars()
        .filter(|c| !c.is_control())
        .take(TITLE_CHARS)
        .collect();
    if line.chars().count() > TITLE_CHARS {
        title.push('…');
    }
    title
}
