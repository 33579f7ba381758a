//! The one error type of decima-llm. Every value maps to a [`FailureClass`], which decides what
//! the runtime does next (retry, roll back, replan, compress).

use std::path::PathBuf;
use std::time::Duration;

use decima_core::FailureClass;
use thiserror::Error;

/// Why a request to a provider failed.
#[derive(Debug, Error)]
pub enum LlmError {
    /// The provider answered with an error status.
    #[error("{provider} answered HTTP {status}: {message}")]
    Http {
        /// The provider's configured name.
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The provider's own message (with any API key redacted).
        message: String,
        /// How long the provider asked us to wait, from `Retry-After`.
        retry_after: Option<Duration>,
        /// The class the status and body map to.
        class: FailureClass,
    },
    /// The connection could not be made or broke before a response arrived.
    #[error("cannot reach {provider} at {url}: {detail}")]
    Connect {
        /// The provider's configured name.
        provider: String,
        /// Where we tried to connect.
        url: String,
        /// What failed.
        detail: String,
    },
    /// No stream event arrived within the idle timeout.
    #[error("{provider} sent nothing for {} s (idle timeout)", .timeout.as_secs())]
    IdleTimeout {
        /// The provider's configured name.
        provider: String,
        /// The configured idle timeout.
        timeout: Duration,
    },
    /// The whole response took longer than the total cap.
    #[error("{provider} did not finish within {} s (total timeout)", .timeout.as_secs())]
    TotalTimeout {
        /// The provider's configured name.
        provider: String,
        /// The configured cap.
        timeout: Duration,
    },
    /// The stream broke mid-way or ended before the model finished.
    #[error("the stream from {provider} broke: {detail}")]
    Stream {
        /// The provider's configured name.
        provider: String,
        /// What happened.
        detail: String,
    },
    /// The provider sent data that does not follow its protocol (e.g. a malformed JSON chunk).
    #[error("{provider} sent malformed data: {detail}")]
    Protocol {
        /// The provider's configured name.
        provider: String,
        /// What was wrong.
        detail: String,
    },
    /// An error event inside an otherwise successful stream.
    #[error("{provider} reported an error mid-stream ({kind}): {message}")]
    StreamError {
        /// The provider's configured name.
        provider: String,
        /// The provider's error type, e.g. `overloaded_error`.
        kind: String,
        /// The provider's message.
        message: String,
        /// The class it maps to.
        class: FailureClass,
    },
    /// A tool call whose arguments are not valid JSON, even after repair.
    #[error("the model called {tool} with arguments that are not valid JSON ({detail})")]
    InvalidToolArguments {
        /// The tool's name.
        tool: String,
        /// The parse error.
        detail: String,
    },
    /// The provider says the request does not fit the model's context window.
    #[error("the request does not fit the context window of {provider}: {message}")]
    ContextOverflow {
        /// The provider's configured name.
        provider: String,
        /// The provider's message.
        message: String,
    },
    /// A model-written summary that is empty or does not validate.
    #[error("{0}")]
    InvalidSummary(String),
    /// The caller stopped the request.
    #[error("the request was cancelled")]
    Cancelled,
    /// The request or configuration is unusable before anything is sent.
    #[error("{0}")]
    Config(String),
    /// The request breaks the pairing of tool calls and results, which every provider
    /// refuses: a bug in what built it. It was not sent.
    #[error("a malformed request was not sent: {0}")]
    MalformedRequest(String),
    /// The configured `tokenizer.json` is missing or unreadable.
    #[error("cannot read tokenizer file {}: {source}", path.display())]
    TokenizerUnreadable {
        /// The configured path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file was read but is not a tokenizer the `tokenizers` crate can load.
    #[error("tokenizer file {} is not a valid tokenizer.json: {reason}", path.display())]
    TokenizerInvalid {
        /// The configured path.
        path: PathBuf,
        /// What the parser said.
        reason: String,
    },
    /// A provider name that could be a path, an injection or garbage.
    #[error("invalid provider name {name:?}: {reason}")]
    InvalidProviderName {
        /// The name, made printable and bounded.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A key that cannot be right (empty, with spaces or line breaks, absurdly long).
    #[error("invalid API key: {0}")]
    InvalidKey(&'static str),
    /// `DECIMA_SECRET_BACKEND` holds something unknown.
    #[error("DECIMA_SECRET_BACKEND must be \"auto\", \"keyring\" or \"file\", not {value:?}")]
    InvalidSecretBackend {
        /// The value found, made printable and bounded.
        value: String,
    },
    /// The keyring was required but does not answer.
    #[error(
        "the OS keyring is not available ({detail}); set DECIMA_SECRET_BACKEND=file to keep API keys in a 0600 file in the data directory instead"
    )]
    KeyringUnavailable {
        /// What the keyring said.
        detail: String,
    },
    /// The keyring answered but refused, e.g. because it is locked.
    #[error(
        "the OS keyring could not {action} the API key of {provider}: {detail} (unlock the keyring and try again)"
    )]
    Keyring {
        /// "read", "store" or "delete".
        action: &'static str,
        /// The provider whose key it was.
        provider: String,
        /// What the keyring said.
        detail: String,
    },
    /// The fallback file or its directory cannot be read or written.
    #[error("cannot {action} {}: {source}", path.display())]
    SecretsIo {
        /// What was being done, e.g. "read".
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// `secrets.json` does not parse. It is left as it is, since it may hold the only copy of a key.
    #[error(
        "{} is not a valid secrets file ({problem} at line {line}, column {column}); Decima leaves it untouched: repair it or move it away, then set the API keys again",
        path.display()
    )]
    CorruptSecretsFile {
        /// The file.
        path: PathBuf,
        /// "not valid JSON" or "not the expected layout"; never the parser's text, which can quote content.
        problem: &'static str,
        /// Where the parser stopped.
        line: usize,
        /// Where the parser stopped.
        column: usize,
    },
    /// `secrets.json` comes from a newer Decima.
    #[error(
        "{} has format version {version}, which this Decima does not know; upgrade Decima or move the file away",
        path.display()
    )]
    UnsupportedSecretsFile {
        /// The file.
        path: PathBuf,
        /// The version it declares.
        version: u64,
    },
}

impl LlmError {
    /// The failure class the recovery policy acts on.
    pub fn class(&self) -> FailureClass {
        match self {
            LlmError::Http { class, .. } | LlmError::StreamError { class, .. } => *class,
            LlmError::Connect { .. }
            | LlmError::IdleTimeout { .. }
            | LlmError::TotalTimeout { .. }
            | LlmError::Stream { .. }
            | LlmError::Protocol { .. } => FailureClass::Transient,
            LlmError::InvalidToolArguments { .. } | LlmError::InvalidSummary(_) => {
                FailureClass::Logic
            }
            LlmError::ContextOverflow { .. } => FailureClass::ContextOverflow,
            LlmError::Cancelled => FailureClass::Cancelled,
            LlmError::Config(_)
            | LlmError::TokenizerUnreadable { .. }
            | LlmError::TokenizerInvalid { .. }
            | LlmError::InvalidProviderName { .. }
            | LlmError::InvalidKey(_)
            | LlmError::InvalidSecretBackend { .. } => FailureClass::Data,
            LlmError::KeyringUnavailable { .. } | LlmError::Keyring { .. } => {
                FailureClass::Permission
            }
            LlmError::SecretsIo { .. }
            | LlmError::CorruptSecretsFile { .. }
            | LlmError::UnsupportedSecretsFile { .. }
            | LlmError::MalformedRequest(_) => FailureClass::System,
        }
    }

    /// How long the provider asked us to wait before retrying, if it said.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::Http { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The HTTP status, for errors that came with one.
    pub fn status(&self) -> Option<u16> {
        match self {
            LlmError::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// A fixed name for the kind of failure, for logs: unlike the message, it can never quote a
    /// provider's text (which may echo the prompt) or a path.
    pub fn kind(&self) -> &'static str {
        match self {
            LlmError::Http { .. } => "http_status",
            LlmError::Connect { .. } => "connect",
            LlmError::IdleTimeout { .. } => "idle_timeout",
            LlmError::TotalTimeout { .. } => "total_timeout",
            LlmError::Stream { .. } => "stream_broken",
            LlmError::Protocol { .. } => "protocol",
            LlmError::StreamError { .. } => "stream_error",
            LlmError::InvalidToolArguments { .. } => "invalid_tool_arguments",
            LlmError::ContextOverflow { .. } => "context_overflow",
            LlmError::InvalidSummary(_) => "invalid_summary",
            LlmError::Cancelled => "cancelled",
            LlmError::Config(_) => "config",
            LlmError::MalformedRequest(_) => "malformed_request",
            LlmError::TokenizerUnreadable { .. } => "tokenizer_unreadable",
            LlmError::TokenizerInvalid { .. } => "tokenizer_invalid",
            LlmError::InvalidProviderName { .. } => "invalid_provider_name",
            LlmError::InvalidKey(_) => "invalid_key",
            LlmError::InvalidSecretBackend { .. } => "invalid_secret_backend",
            LlmError::KeyringUnavailable { .. } => "keyring_unavailable",
            LlmError::Keyring { .. } => "keyring",
            LlmError::SecretsIo { .. } => "secrets_io",
            LlmError::CorruptSecretsFile { .. } => "corrupt_secrets_file",
            LlmError::UnsupportedSecretsFile { .. } => "unsupported_secrets_file",
        }
    }
}

/// Maps an HTTP error status and body to a class. A context-length error is recognised by the
/// wording of each provider Decima has a preset for (see [`is_context_overflow`]), whatever the
/// status: Ollama sends some with a 500. A 429 stays a rate limit even when it speaks of tokens.
pub fn classify_status(status: u16, message: &str) -> FailureClass {
    if status != 429 && (status == 413 || is_context_overflow(message)) {
        return FailureClass::ContextOverflow;
    }
    match status {
        401 | 403 => FailureClass::Permission,
        408 | 409 | 425 | 429 => FailureClass::Transient,
        500..=599 => FailureClass::Transient,
        _ => FailureClass::Data,
    }
}

/// The error for an error object inside a stream (OpenAI's `{"error": {...}}` chunk or
/// Anthropic's `error` event), classified by its type.
pub(crate) fn stream_error(
    provider: &str,
    error: Option<&serde_json::Value>,
    default_kind: &str,
) -> LlmError {
    let field = |key: &str| {
        error
            .and_then(|e| e.get(key))
            .and_then(serde_json::Value::as_str)
    };
    let message = field("message").unwrap_or("unknown error").to_string();
    let kind = field("type").unwrap_or(default_kind).to_string();
    let class = classify_error_kind(&kind, &message);
    LlmError::StreamError {
        provider: provider.to_string(),
        kind,
        message,
        class,
    }
}

/// Maps an in-stream error type (Anthropic's `error.type`, OpenAI's `error.type`) to a class.
pub fn classify_error_kind(kind: &str, message: &str) -> FailureClass {
    if kind != "rate_limit_error" && is_context_overflow(message) {
        return FailureClass::ContextOverflow;
    }
    match kind {
        "overloaded_error" | "rate_limit_error" | "api_error" | "server_error"
        | "timeout_error" => FailureClass::Transient,
        "authentication_error" | "permission_error" => FailureClass::Permission,
        _ => FailureClass::Data,
    }
}

/// How servers say a request does not fit the model's window, lowercased. Each entry is a set of
/// fragments that must all appear, so that a generic word ("exceeds the maximum") only counts
/// next to what makes it the window's. Sources are in `tests/provider_failures.rs`.
const OVERFLOW_WORDING: &[&[&str]] = &[
    // OpenAI's error code, and its wording.
    &["context_length_exceeded"],
    &["context length exceeded"],
    // OpenAI, DeepSeek, OpenRouter ("this endpoint's maximum context length"), vLLM.
    &["maximum context length"],
    &["context window"],
    // Anthropic: the prompt alone, and the prompt plus `max_tokens`.
    &["prompt is too long"],
    &["exceed context limit"],
    // llama.cpp's server, and Ollama passing on its runner's error.
    &["exceeds the available context size"],
    &["exceed_context_size_error"],
    // Ollama.
    &["longer than the context length"],
    &["exceeds the context length"],
    &["exceeds context length"],
    // LM Studio (llama.cpp engine, then MLX engine).
    &["when context the overflows"],
    &["tokens to keep from the initial prompt is greater than the context length"],
    &["context size has been exceeded"],
    // vLLM V1.
    &["longer than the maximum model length"],
    // Qwen on DashScope.
    &["range of input length should be"],
    // Moonshot.
    &["exceeded model token limit"],
    // Zhipu GLM (error 1261).
    &["prompt exceeds max length"],
    // Gemini's OpenAI-compatible endpoint.
    &["input token count", "exceeds the maximum number of tokens"],
    // SGLang, Volcano Engine.
    &["input length", "exceeds the maximum"],
    // Bedrock, and others seen before.
    &["input is too long"],
    &["too many tokens"],
];

/// True for the context-length wording of every provider Decima has a preset for (OpenAI,
/// Anthropic, DeepSeek, Qwen, Moonshot, Zhipu, OpenRouter, Ollama, LM Studio, llama.cpp, vLLM)
/// and of Gemini and SGLang.
pub fn is_context_overflow(message: &str) -> bool {
    let m = message.to_lowercase();
    OVERFLOW_WORDING
        .iter()
        .any(|fragments| fragments.iter().all(|f| m.contains(f)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mapping_table_holds() {
        assert_eq!(classify_status(401, "bad key"), FailureClass::Permission);
        assert_eq!(classify_status(403, "forbidden"), FailureClass::Permission);
        assert_eq!(classify_status(400, "invalid request"), FailureClass::Data);
        assert_eq!(classify_status(404, "model not found"), FailureClass::Data);
        for s in [408, 429, 500, 502, 503, 504, 529] {
            assert_eq!(classify_status(s, "x"), FailureClass::Transient, "{s}");
        }
        assert_eq!(
            classify_status(400, "This model's maximum context length is 128000 tokens."),
            FailureClass::ContextOverflow
        );
        assert_eq!(
            classify_status(400, "prompt is too long: 210034 tokens > 200000 maximum"),
            FailureClass::ContextOverflow
        );
        assert_eq!(
            classify_error_kind("overloaded_error", "Overloaded"),
            FailureClass::Transient
        );
        assert_eq!(
            classify_error_kind("invalid_request_error", "x"),
            FailureClass::Data
        );
        assert_eq!(
            classify_status(
                400,
                "input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000"
            ),
            FailureClass::ContextOverflow
        );
        assert_eq!(
            classify_status(500, "the input length exceeds the context length"),
            FailureClass::ContextOverflow
        );
        assert_eq!(
            classify_status(429, "too many tokens per minute; prompt is too long"),
            FailureClass::Transient
        );
        assert_eq!(
            classify_error_kind("rate_limit_error", "maximum context length of your tier"),
            FailureClass::Transient
        );
    }
}
