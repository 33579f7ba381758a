//! One call of the model, shared by a chat turn, a run's step, a review and a title: the
//! request for a built context with its prompt-cache plan, the provider kept for a session, and
//! the answer streamed through the event sink.

use std::sync::Arc;

use decima_core::ConversationId;
use decima_core::Role;
use decima_core::prompt::{Assembled, Layer};
use decima_llm::repetition::RepetitionGuard;
use decima_llm::{
    ChatRequest, Completion, FinishReason, HttpProvider, PromptCache, Provider, ProviderConfig,
    RetryPolicy, StreamEvent, with_retry,
};
use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;
use tracing::warn;

use crate::context::Built;
use crate::error::Result;
use crate::events::{Event, EventSink};

/// The provider request for a built context, offering `tools`, with its cache plan keyed by
/// the conversation.
pub(crate) fn chat_request(
    config: &ProviderConfig,
    built: &Built,
    tools: &[decima_llm::ToolSpec],
    conversation: ConversationId,
) -> ChatRequest {
    ChatRequest {
        model: config.model.clone(),
        messages: built
            .assembled
            .messages
            .iter()
            .map(|m| Arc::clone(&m.message))
            .collect(),
        tools: tools.to_vec(),
        // Every answer has a cap inside the budget: the window keeps this much for it, and a
        // reply that never reaches its end of sequence stops here rather than at the window.
        max_tokens: Some(built.budgeting.output_reserve),
        cache: cache_plan(&built.assembled, conversation),
        ..ChatRequest::default()
    }
}

/// Where the request's stable parts end, for the providers' prompt caches: the preset's text
/// (after which the tools and system are cached), the summaries (which change only with a
/// compaction), the end of the history this request shares with the last one, and the end of
/// its own history. The trailing instant context is the volatile tail.
pub fn cache_plan(assembled: &Assembled, conversation: ConversationId) -> PromptCache {
    let messages = &assembled.messages;
    let volatile_tail = messages
        .iter()
        .rev()
        .take_while(|m| m.layer == Layer::InstantContext)
        .count();
    let end = messages.len() - volatile_tail;
    let history_start = messages[..end]
        .iter()
        .position(|m| m.layer == Layer::WorkingContext)
        .unwrap_or(end);
    let before_history = &messages[..history_start];
    let preset_end = before_history
        .iter()
        .rposition(|m| m.layer == Layer::SystemConstants);
    let summaries_end = before_history
        .iter()
        .rposition(|m| m.layer == Layer::SessionContext);
    let last = (end > history_start).then(|| end - 1);
    // The last request ended where this one's last answer begins.
    let shared_end = last
        .and_then(|last| {
            messages[history_start..last]
                .iter()
                .rposition(|m| m.message.role == Role::Assistant)
        })
        .and_then(|answer| (history_start + answer).checked_sub(1))
        .filter(|&i| i >= history_start);
    PromptCache {
        key: Some(conversation.to_string()),
        breakpoints: [preset_end, summaries_end, shared_end, last]
            .into_iter()
            .flatten()
            .collect(),
        volatile_tail,
    }
}

/// The provider a turn, a run or a review talks to: built once and kept, so that its HTTP
/// client's connections are reused from one model call to the next.
pub(crate) fn connect(config: &ProviderConfig) -> Result<Arc<dyn Provider>> {
    Ok(Arc::new(HttpProvider::new(config.clone())?))
}

/// Streams the answer, forwarding deltas, and returns it once complete. A retry's discarded
/// partial answer is reported and dropped. Two things end the stream early and keep what
/// arrived: `cancel` (the answer is returned with [`FinishReason::Stopped`]) and a text that
/// keeps repeating one run (cut after its first occurrence, with [`FinishReason::Repetition`]);
/// dropping the stream aborts the request, so the server stops writing too.
pub(crate) async fn stream_answer(
    provider: &Arc<dyn Provider>,
    request: ChatRequest,
    events: &dyn EventSink,
    cancel: &CancellationToken,
) -> Result<Completion> {
    let mut stream = with_retry(Arc::clone(provider), request, RetryPolicy::default());
    let mut completion = Completion::default();
    let mut guard = RepetitionGuard::default();
    loop {
        let event = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                completion.finish = Some(FinishReason::Stopped);
                break;
            }
            event = stream.next() => event,
        };
        let Some(event) = event else { break };
        let event = event?;
        let mut looping = None;
        match &event {
            StreamEvent::TextDelta(text) => {
                events.emit(Event::TextDelta { text: text.clone() });
                looping = guard.push(text);
            }
            StreamEvent::ReasoningDelta(text) => {
                events.emit(Event::ReasoningDelta { text: text.clone() })
            }
            StreamEvent::Discarded { reason } => {
                guard = RepetitionGuard::default();
                events.emit(Event::Discarded {
                    reason: reason.clone(),
                })
            }
            _ => {}
        }
        completion.apply(event);
        if let Some(found) = looping {
            warn!(
                period = found.period,
                "the answer kept repeating itself; ended it"
            );
            completion.text.truncate(guard.keep_until(found));
            completion.finish = Some(FinishReason::Repetition);
            break;
        }
    }
    Ok(completion)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use decima_core::prompt::{AssembleInput, Preset, assemble};
    use decima_core::{ConversationId, EstimateCounter, NewMessage, Role, ToolCall};

    use super::cache_plan;

    #[test]
    fn the_cache_plan_ends_the_preset_the_summaries_and_both_histories_and_marks_the_tail() {
        let mut call = NewMessage::new(Role::Assistant, "");
        call.tool_calls.push(ToolCall {
            id: "c1".into(),
            name: "shell".into(),
            arguments: "{}".into(),
            signature: None,
        });
        let mut result = NewMessage::new(Role::Tool, "a.csv");
        result.tool_call_id = Some("c1".into());
        let history: Vec<Arc<NewMessage>> =
            [NewMessage::new(Role::User, "List files"), call, result]
                .into_iter()
                .map(Arc::new)
                .collect();
        let mut input = AssembleInput::new(&history);
        input.session_context = "[global summary of messages 1–40]";
        input.instant_context = "# Recent steps";
        let assembled = assemble(&Preset::simple("SYS"), &input, &EstimateCounter);
        let texts: Vec<&str> = assembled
            .messages
            .iter()
            .map(|m| m.message.content.as_str())
            .collect();
        assert_eq!(
            texts,
            [
                "SYS",
                "[global summary of messages 1–40]",
                "List files",
                "",
                "a.csv",
                "# Recent steps"
            ]
        );
        let conversation = ConversationId::new();
        let plan = cache_plan(&assembled, conversation);
        // The preset, the summaries, the end of the last request (before its answer), this one's.
        assert_eq!(plan.breakpoints, [0, 1, 2, 4]);
        assert_eq!(plan.volatile_tail, 1);
        assert_eq!(plan.key, Some(conversation.to_string()));

        // Nothing but a history: its end is the only breakpoint, and there is no tail.
        let bare = assemble(
            &Preset::default(),
            &AssembleInput::new(&history[..1]),
            &EstimateCounter,
        );
        let plan = cache_plan(&bare, conversation);
        assert_eq!(
            (plan.breakpoints.as_slice(), plan.volatile_tail),
            (&[0][..], 0)
        );
    }
}
