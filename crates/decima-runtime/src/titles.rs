//! A conversation's title written by the model from its first exchange, where a provider is
//! configured: "Q3 revenue by region" says more in the list than the first 60 characters of
//! "hi, can you look at the attached file and…". The window titles a new conversation by rules
//! at once, then asks for this one; the analyst's own title is never replaced.

use std::path::Path;
use std::time::Duration;

use decima_core::{ConversationId, Role};
use decima_llm::{ChatMessage, ChatRequest};
use decima_store::Store;
use tokio_util::sync::CancellationToken;

use crate::error::{Result, RuntimeError};
use crate::events::NoEvents;
use crate::model_call::{connect, stream_answer};
use crate::settings;

/// Messages read for the first exchange: its question, its answer and the calls between.
const FIRST_MESSAGES: i64 = 40;
/// Characters of the question and of the answer shown to the model.
const SHOWN_CHARS: usize = 2_000;
/// The longest title kept, in characters.
const TITLE_CHARS: usize = 80;
/// Room for the answer: a title, or a reasoning model's short thought before it.
const OUTPUT_TOKENS: u32 = 256;
/// A title is a courtesy: a slow server is not waited on.
const TIMEOUT: Duration = Duration::from_secs(45);

const SYSTEM: &str = "You name an analyst's conversations. Reply with a title of at most six \
words that says what the conversation is about, in the language the analyst wrote in. Reply \
with the title alone: no quotes, no final full stop, no explanation.";

/// Asks `provider` (by name; `None`: the only configured one) for a title of `conversation`
/// from its first question and answer, and gives it to the conversation when its title is
/// still `expected` (the one the window gave it by rules): the analyst may have renamed it
/// meanwhile. `None` when there is no answer yet, the model's reply is not a title, or the
/// title changed.
#[tracing::instrument(skip(store, data_dir, expected), fields(%conversation))]
pub async fn title_from_model(
    store: &Store,
    data_dir: &Path,
    provider: Option<&str>,
    conversation: ConversationId,
    expected: &str,
) -> Result<Option<String>> {
    let messages = store
        .messages()
        .range(conversation, 1, FIRST_MESSAGES)
        .await?;
    let question = messages.iter().find(|m| m.role == Role::User);
    let answer = messages
        .iter()
        .find(|m| m.role == Role::Assistant && !m.content.trim().is_empty());
    let (Some(question), Some(answer)) = (question, answer) else {
        return Ok(None);
    };
    if store.conversations().get(conversation).await?.title != expected {
        return Ok(None);
    }
    let resolved = settings::resolve(store, data_dir, provider).await?;
    let request = ChatRequest {
        model: resolved.config.model.clone(),
        messages: vec![
            ChatMessage::new(Role::System, SYSTEM.to_owned()).into(),
            ChatMessage::new(
                Role::User,
                format!(
                    "The analyst asked:\n{}\n\nThe answer began:\n{}",
                    head(&question.content),
                    head(&answer.content)
                ),
            )
            .into(),
        ],
        max_tokens: Some(OUTPUT_TOKENS),
        ..ChatRequest::default()
    };
    let provider = connect(&resolved.config)?;
    let cancel = CancellationToken::new();
    let completion = tokio::time::timeout(
        TIMEOUT,
        stream_answer(&provider, request, &NoEvents, &cancel),
    )
    .await
    .map_err(|_| {
        cancel.cancel();
        RuntimeError::Config(format!(
            "{} did not answer within {} s; the title stays as it is",
            resolved.config.name,
            TIMEOUT.as_secs()
        ))
    })??;
    let Some(title) = cleaned(&completion.text) else {
        tracing::info!("the model's reply was not a title");
        return Ok(None);
    };
    let current = store.conversations().get(conversation).await?;
    if current.title != expected {
        tracing::info!("the conversation was renamed meanwhile; its title stays");
        return Ok(None);
    }
    store.conversations().rename(conversation, &title).await?;
    Ok(Some(title))
}

/// The start of `text`, at most [`SHOWN_CHARS`] characters.
fn head(text: &str) -> String {
    text.chars().take(SHOWN_CHARS).collect()
}

/// The model's reply as a title: its reasoning left out, its first line, without the quotes,
/// "Title:" and final full stop models add; `None` when nothing is left.
pub fn cleaned(reply: &str) -> Option<String> {
    let reply = match reply.rfind("</think>") {
        Some(end) => &reply[end + "</think>".len()..],
        None => reply,
    };
    let line = reply.lines().map(str::trim).find(|l| !l.is_empty())?;
    let line = line
        .trim_start_matches('#')
        .trim()
        .trim_start_matches("Title:")
        .trim_start_matches("title:")
        .trim_start_matches("标题：")
        .trim_start_matches("标题:")
        .trim();
    let line = line
        .trim_matches(|c: char| matches!(c, '"' | '\'' | '“' | '”' | '「' | '」' | '*' | '`'))
        .trim_end_matches(['.', '。'])
        .trim();
    let title: String = line
        .chars()
        .filter(|c| !c.is_control())
        .take(TITLE_CHARS)
        .collect();
    let title = title.trim();
    (!title.is_empty()).then(|| title.to_owned())
}

#[cfg(test)]
mod tests {
    use super::cleaned;

    #[test]
    fn a_reply_is_cleaned_to_its_title() {
        assert_eq!(
            cleaned("Q3 revenue by region").as_deref(),
            Some("Q3 revenue by region")
        );
        assert_eq!(
            cleaned("\"Q3 revenue by region.\"\n").as_deref(),
            Some("Q3 revenue by region")
        );
        assert_eq!(
            cleaned("Title: **Churn drivers**").as_deref(),
            Some("Churn drivers")
        );
        assert_eq!(
            cleaned("<think>hmm</think>\n\n第三季度收入。").as_deref(),
            Some("第三季度收入")
        );
        assert_eq!(cleaned("  \n  "), None);
        assert_eq!(
            cleaned(&"x".repeat(500)).map(|t| t.chars().count()),
            Some(80)
        );
    }
}
