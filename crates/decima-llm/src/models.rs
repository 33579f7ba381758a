//! The models a server offers: `GET {base}/models` (OpenAI-compatible servers: OpenAI, vLLM,
//! Ollama, LM Studio, llama.cpp) or `GET {base}/v1/models` (Anthropic). The first-start setup
//! fills its model list from it, so the analyst picks a model rather than typing its id.

use std::time::Duration;

use serde::Deserialize;

use crate::provider::{ProviderConfig, shared_client};
use crate::transport::{error_message, redact};
use crate::{LlmError, Protocol, anthropic, classify_status, ollama, openai};

/// How long the listing may take: a server that is up answers it at once.
const LIST_TIMEOUT: Duration = Duration::from_secs(10);
/// The most ids kept: a router may list thousands, and a picker of more helps nobody.
const MAX_MODELS: usize = 500;
/// The most of an error body read for its message.
const MAX_ERROR_BODY: usize = 16 * 1024;

/// Both protocols answer `{"data": [{"id": …}, …]}` (with more fields, ignored here).
#[derive(Deserialize)]
struct Listing {
    data: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    id: String,
}

/// The ids of the models the configured server offers, sorted, without repeats.
pub async fn list(config: &ProviderConfig) -> Result<Vec<String>, LlmError> {
    let base = config.base_url.trim_end_matches('/');
    let (url, headers) = match config.protocol {
        Protocol::OpenAi => (format!("{base}/models"), openai::headers(config)),
        Protocol::Anthropic => (format!("{base}/v1/models"), anthropic::headers(config)),
        // Ollama lists its models in this shape on its OpenAI-compatible side only.
        Protocol::Ollama => (
            format!("{}/v1/models", ollama::root(base)),
            ollama::headers(config),
        ),
    };
    let unreachable = |detail: String| LlmError::Connect {
        provider: config.name.clone(),
        url: url.clone(),
        detail: redact(config, &detail),
    };
    let http = shared_client(config.timeouts.connect)
        .map_err(|e| LlmError::Config(format!("cannot set up HTTP for {}: {e}", config.name)))?;
    let mut request = http.get(&url).timeout(LIST_TIMEOUT);
    for (name, value) in headers {
        request = request.header(name, value);
    }
    let response = request
        .send()
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    let status = response.status().as_u16();
    let body = response
        .bytes()
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    if !(200..300).contains(&status) {
        let message = redact(
            config,
            &error_message(&body[..body.len().min(MAX_ERROR_BODY)]),
        );
        return Err(LlmError::Http {
            provider: config.name.clone(),
            status,
            class: classify_status(status, &message),
            message,
            retry_after: None,
        });
    }
    let listing: Listing = serde_json::from_slice(&body).map_err(|e| LlmError::Protocol {
        provider: config.name.clone(),
        detail: format!("the model list at {url} is not the expected JSON: {e}"),
    })?;
    let mut ids: Vec<String> = listing
        .data
        .into_iter()
        .map(|e| e.id)
        .filter(|id| !id.trim().is_empty())
        .collect();
    ids.sort();
    ids.dedup();
    ids.truncate(MAX_MODELS);
    Ok(ids)
}
