//! One request to the reviewer and, when its answer does not hold, the one repair request: the
//! same for a review made in one request and for each pass of a longer one. The repair sends
//! the invalid answer back, cut to the room the budget kept for it, so a repair stays within
//! the reviewer's window as the first request does.

use std::collections::BTreeSet;

use decima_core::{ConversationId, Role, TokenCounter};
use decima_llm::{ChatMessage, ChatRequest, JsonSchemaFormat, ProviderConfig};
use decima_store::Store;
use tokio_util::sync::CancellationToken;
use tracing::warn;

use super::answer::{self, Answer};
use super::prompt;
use crate::context::Scale;
use crate::error::{Result, RuntimeError};
use crate::events::NoEvents;
use crate::model_call::{connect, stream_answer};

/// Model tokens the budget keeps for an invalid answer echoed back in a repair request: enough
/// for the reviewer to see what it wrote, and the answer is cut to it when longer.
pub const REPAIR_ECHO: u32 = 1_024;

/// What every request of a review shares.
pub struct Asker<'a> {
    /// The store, to check that cited seqs are live messages.
    pub store: &'a Store,
    /// The conversation reviewed.
    pub conversation: ConversationId,
    /// The reviewer.
    pub config: &'a ProviderConfig,
    /// The system prompt.
    pub system: &'a str,
    /// The answer's room, in the model's tokens.
    pub output: u32,
    /// Store tokens → the reviewer's.
    pub scale: Scale,
    /// Counts what is echoed.
    pub counter: &'a dyn TokenCounter,
    /// Whether findings must cite a seq.
    pub evidence_required: bool,
    /// The open findings shown, the only ones a review may close.
    pub open_ids: &'a BTreeSet<String>,
    /// The answer's schema, for servers that can hold their decoding to it.
    pub format: JsonSchemaFormat,
}

/// A checked answer, and whether it took a repair.
pub struct Asked {
    /// The answer.
    pub answer: Answer,
    /// Whether the first answer was invalid and repaired.
    pub repaired: bool,
}

impl Asker<'_> {
    /// Asks the reviewer about `input`; asks once more with the reason when the answer does
    /// not hold. A second invalid answer is [`RuntimeError::Review`].
    pub async fn ask(&self, input: &str) -> Result<Asked> {
        let checks = answer::Checks {
            evidence_required: self.evidence_required,
            open_ids: self.open_ids,
        };
        let mut messages: Vec<std::sync::Arc<ChatMessage>> = vec![
            ChatMessage::new(Role::System, self.system.to_owned()).into(),
            ChatMessage::new(Role::User, input.to_owned()).into(),
        ];
        let mut repaired = false;
        let provider = connect(self.config)?;
        loop {
            let chat = ChatRequest {
                model: self.config.model.clone(),
                messages: messages.clone(),
                max_tokens: Some(self.output),
                response_format: Some(self.format.clone()),
                ..ChatRequest::default()
            };
            let completion =
                stream_answer(&provider, chat, &NoEvents, &CancellationToken::new()).await?;
            let checked = match answer::parse(&completion.text, &checks) {
                Ok(a) => check_seqs(self.store, self.conversation, a).await?,
                Err(reason) => Err(reason),
            };
            match checked {
                Ok(answer) => return Ok(Asked { answer, repaired }),
                Err(reason) if !repaired => {
                    warn!(%reason, "the reviewer's answer is invalid; asking once for a repair");
                    repaired = true;
                    let echo = self.scale.to_store(REPAIR_ECHO);
                    messages.push(
                        ChatMessage::new(
                            Role::Assistant,
                            cut(&completion.text, echo, self.counter),
                        )
                        .into(),
                    );
                    messages
                        .push(ChatMessage::new(Role::User, prompt::repair_request(&reason)).into());
                }
                Err(reason) => {
                    return Err(RuntimeError::Review(format!(
                        "the reviewer ({}) answered with an invalid review twice ({reason}); \
                         nothing was stored. Try again, or review with another provider",
                        self.config.name
                    )));
                }
            }
        }
    }
}

/// `text` within `max` store tokens: whole when it fits, else its beginning (the reviewer sees
/// how its answer started, and the reason says what was wrong).
fn cut(text: &str, max: u32, counter: &dyn TokenCounter) -> String {
    let tokens = counter.count_text(text);
    if tokens <= max {
        return text.to_owned();
    }
    let mut end = (text.len() as f64 * f64::from(max) / f64::from(tokens.max(1)) * 0.9) as usize;
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = text[..end].to_owned();
    while !out.is_empty() && counter.count_text(&out) > max.saturating_sub(8) {
        let mut to = out.len() * 9 / 10;
        while to > 0 && !out.is_char_boundary(to) {
            to -= 1;
        }
        out.truncate(to);
    }
    out.push_str(" …(cut)");
    out
}

/// Refuses an answer that cites a seq that is not a live message of the conversation.
async fn check_seqs(
    store: &Store,
    conversation: ConversationId,
    answer: Answer,
) -> Result<std::result::Result<Answer, String>> {
    let cited = answer::cited(&answer);
    let live: BTreeSet<i64> = store
        .messages()
        .live_seqs_among(conversation, &cited)
        .await?
        .into_iter()
        .collect();
    let missing: Vec<i64> = cited.into_iter().filter(|s| !live.contains(s)).collect();
    if missing.is_empty() {
        Ok(Ok(answer))
    } else {
        Ok(Err(format!(
            "evidence_seqs {missing:?} are not messages of this conversation; cite only seqs \
             from the `### seq=N` headers shown, or within the seq range of a summary shown"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_invalid_answer_is_cut_to_the_echo_room() {
        let counter = decima_llm::tokens::store_counter();
        let long = "The totals look wrong because refunds were ignored. ".repeat(400);
        let echoed = cut(&long, 300, counter.as_ref());
        assert!(
            counter.count_text(&echoed) <= 300,
            "{}",
            counter.count_text(&echoed)
        );
        assert!(echoed.ends_with("…(cut)"));
        assert_eq!(cut("short", 300, counter.as_ref()), "short");
    }
}
