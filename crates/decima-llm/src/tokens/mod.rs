//! Token counting for the models Decima talks to.
//!
//! The store prices each message once, at insert, with the [`TokenCounter`] of the
//! conversation's model; budgets then only add cached counts. OpenAI models get exact counts
//! from tiktoken ([`TiktokenCounter`]); a model with a configured `tokenizer.json` gets its own
//! tokenizer ([`HfCounter`]); everything else gets cl100k. Whatever remains between our count
//! and the provider's is learned per model by [`Calibration`].

mod calibration;
mod hf;
mod tiktoken;

use std::path::Path;
use std::sync::Arc;

use decima_core::TokenCounter;

pub use calibration::{Calibration, MAX_FACTOR, MIN_FACTOR, MIN_SAMPLE_TOKENS};
pub use hf::HfCounter;
pub use tiktoken::{REPLY_PRIMING, TOKENS_PER_MESSAGE, TOKENS_PER_NAME, TiktokenCounter};

/// The counter for a model: its own tokenizer when a `tokenizer.json` is configured, else
/// tiktoken with the model's encoding (exact for OpenAI models, cl100k for the rest). Loading a
/// tokenizer file takes a moment, so keep the returned counter rather than asking per message.
pub fn counter_for_model(
    model: &str,
    tokenizer_json: Option<&Path>,
) -> Result<Arc<dyn TokenCounter>, crate::LlmError> {
    Ok(match tokenizer_json {
        Some(path) => Arc::new(HfCounter::from_file(path)?),
        None => Arc::new(TiktokenCounter::for_model(model)),
    })
}

/// The counter the store prices every message with, once, at insert. Stored counts must not
/// depend on which provider happens to answer later, so one encoding serves all conversations:
/// o200k, which is exact for current OpenAI models and, on the testkit corpus, closer than cl100k
/// for Qwen and DeepSeek. Per-model calibration corrects the rest.
pub fn store_counter() -> Arc<dyn TokenCounter> {
    Arc::new(TiktokenCounter::o200k_base())
}

/// Estimates a whole request with any counter: each message as the store counts it, the tool
/// definitions as JSON text, and the reply priming. For tiktoken counters prefer
/// [`TiktokenCounter::count_request`], which models OpenAI's tool framing exactly.
pub fn estimate_request(counter: &dyn TokenCounter, request: &crate::ChatRequest) -> u32 {
    let messages = request
        .messages
        .iter()
        .map(|m| counter.count_message(m))
        .fold(0u32, u32::saturating_add);
    let tools = request
        .tools
        .iter()
        .map(|t| counter.count_text(&serde_json::json!({"name": t.name, "description": t.description, "parameters": t.parameters}).to_string()))
        .fold(0u32, u32::saturating_add);
    messages.saturating_add(tools).saturating_add(REPLY_PRIMING)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_match_the_exact_count_for_tiktoken_without_tools() {
        let counter = TiktokenCounter::for_model("gpt-4o");
        let request = crate::ChatRequest {
            model: "gpt-4o".into(),
            messages: [
                crate::ChatMessage::new(decima_core::Role::System, "Be careful."),
                crate::ChatMessage::new(decima_core::Role::User, "列出 /data 下的文件"),
            ]
            .map(std::sync::Arc::new)
            .into(),
            ..crate::ChatRequest::default()
        };
        assert_eq!(
            estimate_request(&counter, &request),
            counter.count_request(&request)
        );
    }

    #[test]
    fn picks_tiktoken_without_a_tokenizer_file() {
        let counter = counter_for_model("gpt-4o", None).unwrap();
        assert_eq!(counter.count_text("hello world"), 2);
    }

    #[test]
    fn a_missing_tokenizer_file_is_an_error() {
        let err = counter_for_model("qwen3", Some(Path::new("/nonexistent/tokenizer.json")))
            .err()
            .unwrap();
        assert!(
            err.to_string().contains("/nonexistent/tokenizer.json"),
            "{err}"
        );
    }
}
