//! `decima chat [--provider NAME] [--conversation ID] MESSAGE`

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;

use decima_core::{NewMessage, Role};
use decima_llm::tokens::{Calibration, TiktokenCounter, counter_for_model, estimate_request};
use decima_llm::{
    ChatMessage, ChatRequest, Completion, HttpProvider, LlmError, RetryPolicy, StreamEvent,
    with_retry,
};
use decima_store::Store;
use futures_util::StreamExt;

use super::conversation_id;
use crate::error::CliError;
use crate::{context_build, provider_config};

/// Longest automatic title taken from the first message.
const TITLE_CHARS: usize = 60;

pub async fn run(
    store: &Store,
    data_dir: &Path,
    provider: Option<&str>,
    conversation: Option<&str>,
    message: String,
) -> Result<(), CliError> {
    let config = provider_config::resolve(store, data_dir, provider).await?;
    let conversation = match conversation {
        Some(id) => store.conversations().get(conversation_id(id)?).await?,
        None => {
            store
                .conversations()
                .create(&title_from(&message), None)
                .await?
        }
    };
    eprintln!("conversation {}", conversation.id);

    // The user's message is stored before anything is sent, so a failed request loses nothing
    // the user typed.
    store
        .messages()
        .append(conversation.id, NewMessage::new(Role::User, message))
        .await?;

    // The request goes through the context pipeline: compress first when the thresholds say so,
    // then select and assemble with the conversation's preset.
    let preset = context_build::preset_of(store, &conversation).await?;
    let (window, thresholds) = provider_config::context_window(store, data_dir, provider).await?;
    if let Some(done) =
        context_build::compress_if_needed(store, conversation.id, &preset, window, &thresholds)
            .await?
    {
        eprintln!(
            "[compressed the history before sending: {} → {} tokens; `decima compress undo {}` reverts it]",
            done.tokens_before, done.tokens_after, done.id
        );
    }
    let built = context_build::build(store, conversation.id, &preset, window, &thresholds).await?;
    if built.compression_required() {
        return Err(LlmError::ContextOverflow {
            provider: config.name.clone(),
            message: format!(
                "{} messages ({} tokens) do not fit even after compression; your message is saved, \
                 use a model with a larger window",
                built.pending, built.pending_tokens
            ),
        }
        .into());
    }
    let request = ChatRequest {
        model: config.model.clone(),
        messages: built
            .assembled
            .request()
            .iter()
            .map(ChatMessage::from)
            .collect(),
        ..ChatRequest::default()
    };
    let estimate = match &config.tokenizer_json {
        Some(path) => estimate_request(
            counter_for_model(&config.model, Some(path))?.as_ref(),
            &request,
        ),
        None => TiktokenCounter::for_model(&config.model).count_request(&request),
    };
    let mut calibration = match store.calibrations().get(&config.model).await? {
        Some((factor, samples)) => Calibration { factor, samples },
        None => Calibration::new(),
    };
    // The budget decision uses the calibrated figure: what this model has been seen to count.
    let needed = calibration.apply(estimate);
    if needed > config.context_window {
        return Err(LlmError::ContextOverflow {
            provider: config.name.clone(),
            message: format!(
                "the conversation needs about {needed} tokens but the window of {} is {}; \
                 your message is saved, compress the conversation or use a larger model",
                config.model, config.context_window
            ),
        }
        .into());
    }
    let model = config.model.clone();
    let provider = Arc::new(HttpProvider::new(config)?);
    let mut stream = with_retry(provider, request, RetryPolicy::default());
    let mut completion = Completion::default();
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    while let Some(event) = stream.next().await {
        let event = event?;
        match &event {
            StreamEvent::TextDelta(text) => {
                stdout
                    .write_all(text.as_bytes())
                    .map_err(CliError::Output)?;
                stdout.flush().map_err(CliError::Output)?;
            }
            StreamEvent::ReasoningDelta(text) => {
                let _ = stderr.write_all(text.as_bytes());
                let _ = stderr.flush();
            }
            StreamEvent::Discarded { reason } => {
                let _ = writeln!(
                    stderr,
                    "\n[the partial answer above is discarded: {reason}]"
                );
            }
            _ => {}
        }
        completion.apply(event);
    }
    if !completion.text.ends_with('\n') {
        stdout.write_all(b"\n").map_err(CliError::Output)?;
    }
    // Only a complete answer is stored.
    store
        .messages()
        .append(conversation.id, NewMessage::from(&completion.to_message()))
        .await?;
    if let Some(usage) = completion.usage {
        calibration.update(estimate, usage.prompt_tokens);
        store
            .calibrations()
            .save(&model, calibration.factor, calibration.samples)
            .await?;
    }
    Ok(())
}

/// The first line of the message, shortened, as the new conversation's title.
fn title_from(message: &str) -> String {
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
