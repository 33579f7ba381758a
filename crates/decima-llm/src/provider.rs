//! The stream-first provider trait and its HTTP implementation, shared by every wire protocol.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{Stream, StreamExt};

use crate::presets::ReasoningField;
use crate::secrets::SecretString;
use crate::transport::{self, Request};
use crate::{ChatRequest, Completion, LlmError, Protocol, StreamEvent, anthropic, ollama, openai};

/// A completion as it streams. Dropping it aborts the HTTP request.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, LlmError>> + Send>>;

/// Anything that streams completions. The runtime, the CLI and tests all go through this trait.
pub trait Provider: Send + Sync {
    /// The provider's settings.
    fn config(&self) -> &ProviderConfig;

    /// Starts a completion. Nothing is sent until the stream is first polled.
    fn stream(&self, request: &ChatRequest) -> EventStream;
}

/// Collects a stream into a completion; a `Discarded` event resets what was collected.
pub async fn collect(mut stream: EventStream) -> Result<Completion, LlmError> {
    let mut completion = Completion::default();
    while let Some(event) = stream.next().await {
        completion.apply(event?);
    }
    Ok(completion)
}

/// How long to wait for what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// To establish the TCP (and TLS) connection.
    pub connect: Duration,
    /// Between two stream events, and for the response headers.
    pub idle: Duration,
    /// For the whole response.
    pub total: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            idle: Duration::from_secs(120),
            total: Duration::from_secs(600),
        }
    }
}

/// Everything needed to talk to one provider. The key is held in a redacting wrapper: it never
/// shows in Debug output, logs or errors.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    /// The user's name for it, used in error messages.
    pub name: String,
    /// Its wire protocol.
    pub protocol: Protocol,
    /// OpenAI-compatible: up to the `/v1`-style prefix; Anthropic: the host root; Ollama: the
    /// root, with or without its `/v1`.
    pub base_url: String,
    /// The model id.
    pub model: String,
    /// The model's context window, in tokens.
    pub context_window: u32,
    /// The API key, if the provider needs one.
    pub api_key: Option<SecretString>,
    /// Send earlier reasoning back on assistant turns (DeepSeek and Qwen reasoning models want it).
    pub reasoning_echo: bool,
    /// Which reasoning field to echo.
    pub reasoning_field: ReasoningField,
    /// The provider accepts `response_format: {type: json_schema}`.
    pub supports_json_schema: bool,
    /// Timeouts.
    pub timeouts: Timeouts,
    /// The model's own `tokenizer.json`, for exact counts of non-OpenAI models.
    pub tokenizer_json: Option<std::path::PathBuf>,
    /// The server takes OpenAI's `prompt_cache_key` (strict servers refuse unknown fields).
    pub prompt_cache_key: bool,
    /// How long Anthropic keeps what the breakpoints cache.
    pub cache_ttl: crate::CacheTtl,
    /// The window to ask the server to load the model with, where the protocol can (Ollama's
    /// `options.num_ctx`): the runtime sets the window it plans for, so the server does not cut
    /// the prompt to its own smaller default. None leaves the server's choice.
    pub num_ctx: Option<u32>,
    /// The server decodes structured answers under a grammar compiled from the schema
    /// (llama.cpp, Ollama, vLLM, SGLang, LM Studio), which honours string lengths; strict hosted
    /// APIs refuse `minLength`/`maxLength`, so those keywords are only sent where this is set.
    pub grammar_decoding: bool,
    /// The output cap goes as `max_completion_tokens` (OpenAI's current name; its reasoning
    /// models refuse `max_tokens`).
    pub max_completion_tokens: bool,
}

impl ProviderConfig {
    /// A config with defaults for everything but the essentials.
    pub fn new(
        name: impl Into<String>,
        protocol: Protocol,
        base_url: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            protocol,
            base_url: base_url.into(),
            model: model.into(),
            context_window: 128_000,
            api_key: None,
            reasoning_echo: false,
            reasoning_field: ReasoningField::ReasoningContent,
            supports_json_schema: false,
            timeouts: Timeouts::default(),
            tokenizer_json: None,
            prompt_cache_key: false,
            cache_ttl: crate::CacheTtl::default(),
            num_ctx: None,
            grammar_decoding: false,
            max_completion_tokens: false,
        }
    }
}

/// A provider reached over HTTP with one of the wire protocols.
pub struct HttpProvider {
    config: Arc<ProviderConfig>,
    http: reqwest::Client,
}

impl HttpProvider {
    /// Builds the HTTP client. Fails only on a malformed base URL or TLS setup.
    pub fn new(config: ProviderConfig) -> Result<Self, LlmError> {
        let url = reqwest::Url::parse(&config.base_url).map_err(|e| {
            LlmError::Config(format!(
                "the base URL '{}' of {} is not valid: {e}",
                config.base_url, config.name
            ))
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(LlmError::Config(format!(
                "the base URL of {} must start with http:// or https://",
                config.name
            )));
        }
        let http = shared_client(config.timeouts.connect).map_err(|e| {
            LlmError::Config(format!("cannot set up HTTP for {}: {e}", config.name))
        })?;
        Ok(Self {
            config: Arc::new(config),
            http,
        })
    }
}

/// One HTTP client per connect timeout, for the life of the process. Building a client loads
/// the system's TLS roots, which took about 60 ms per model call on the test machines (an agent
/// step and a subagent spawn each build a provider). Idle connections are not pooled: a pooled
/// connection belongs to the async runtime that opened it, and a process may run several (the
/// desktop app's commands, the tests); every request opens its own, as before.
pub(crate) fn shared_client(connect: Duration) -> Result<reqwest::Client, reqwest::Error> {
    static CLIENTS: std::sync::Mutex<Option<HashMap<Duration, reqwest::Client>>> =
        std::sync::Mutex::new(None);
    let mut clients = CLIENTS.lock().unwrap_or_else(|p| p.into_inner());
    let clients = clients.get_or_insert_with(HashMap::new);
    if let Some(client) = clients.get(&connect) {
        return Ok(client.clone());
    }
    let client = reqwest::Client::builder()
        .connect_timeout(connect)
        .pool_max_idle_per_host(0)
        .build()?;
    clients.insert(connect, client.clone());
    Ok(client)
}

impl Provider for HttpProvider {
    fn config(&self) -> &ProviderConfig {
        &self.config
    }

    fn stream(&self, request: &ChatRequest) -> EventStream {
        if let Err(malformed) = crate::pairing::check_tool_pairing(request) {
            tracing::error!(error = %malformed, "refusing to send a malformed request");
            return Box::pin(futures_util::stream::once(async move { Err(malformed) }));
        }
        let config = Arc::clone(&self.config);
        let (url, headers, body) = match config.protocol {
            Protocol::OpenAi => (
                format!("{}/chat/completions", config.base_url.trim_end_matches('/')),
                openai::headers(&config),
                openai::request_body(&config, request),
            ),
            Protocol::Anthropic => (
                format!("{}/v1/messages", config.base_url.trim_end_matches('/')),
                anthropic::headers(&config),
                anthropic::request_body(&config, request),
            ),
            Protocol::Ollama => (
                ollama::chat_url(&config.base_url),
                ollama::headers(&config),
                ollama::request_body(&config, request),
            ),
        };
        let decoder = match config.protocol {
            Protocol::OpenAi => transport::Decoder::OpenAi(openai::Decoder::default()),
            Protocol::Anthropic => transport::Decoder::Anthropic(anthropic::Decoder::default()),
            Protocol::Ollama => transport::Decoder::Ollama(ollama::Decoder::default()),
        };
        let answer_tool = match config.protocol {
            Protocol::Anthropic => anthropic::answers_through_tool(request).map(str::to_owned),
            Protocol::OpenAi | Protocol::Ollama => None,
        };
        let stream = transport::stream(
            self.http.clone(),
            config,
            Request { url, headers, body },
            decoder,
        );
        match answer_tool {
            // The forced answer tool's call is the answer's text.
            Some(tool) => Box::pin(
                stream
                    .map(move |event| event.map(|event| anthropic::answer_from_tool(event, &tool))),
            ),
            None => stream,
        }
    }
}
