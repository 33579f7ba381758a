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
    // llama.cpp's server, and Ollama passing on its runner's error: a prompt over a slot's
    // context, then an embedding input over it (tools/server/server-context.cpp).
    &["exceeds the available context size"],
    &["exceed_context_size_error"],
    &["larger than the max context size"],
    // Ollama: "the prompt is longer than the context length currently available to the model"
    // (llm/llama_server.go), "the input length exceeds the context length" (server/routes.go);
    // its MLX runner says "maximum context length" (x/mlxrunner/pipeline.go).
    &["longer than the context length"],
    &["exceeds the context length"],
    &["exceeds context length"],
    // LM Studio (llama.cpp engine, then MLX engine), and LM Studio 0.4's "Cannot truncate prompt
    // with n_keep (N) >= n_ctx (M)" (anomalyco/opencode#11141).
    &["when context the overflows"],
    &["tokens to keep from the initial prompt is greater than the context length"],
    &["context size has been exceeded"],
    &["cannot truncate prompt with n_keep"],
    // vLLM V1's input processor, then its renderer's check, "the model's context length is only
    // N tokens" (vllm/renderers/params.py, TokenizeParams._token_len_check).
    &["longer than the maximum model length"],
    &["context length is only"],
    // Qwen on DashScope.
    &["range of input length should be"],
    // Moonshot.
    &["exceeded model token limit"],
    // Zhipu GLM (error 1261).
    &["prompt exceeds max length"],
    // Gemini's OpenAI-compatible endpoint.
    &["input token count", "exceeds the maximum number of tokens"],
    // SGLang: "Input length (N tokens) exceeds the maximum allowed length (M tokens)"
    // (python/sglang/srt/managers/utils.py), "The input (N tokens) is longer than the model's
    // context length (M tokens)" (tokenizer_manager.py); Volcano Engine.
    &["input length", "exceeds the maximum"],
    &["longer than the model's context length"],
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

/// Where servers put their limit in a context-length error, lowercased: the number right after
/// `anchor`, found after `after` (empty: anywhere). In order of preference.
const LIMIT_AFTER: &[(&str, &str)] = &[
    // llama.cpp: "request (3031 tokens) exceeds the available context size (2048 tokens), try
    // increasing it", and for an embedding "input (N tokens) is larger than the max context size
    // (M tokens)" (tools/server/server-context.cpp); the error object's "n_ctx", which Ollama
    // passes on inside its message.
    ("", "available context size ("),
    ("", "max context size ("),
    ("", "\"n_ctx\":"),
    // vLLM's renderer: "However, the model's context length is only N tokens"
    // (vllm/renderers/params.py).
    ("", "context length is only "),
    // OpenAI, DeepSeek, OpenRouter, older vLLM: "maximum context length is N tokens".
    ("", "maximum context length is "),
    // Ollama's MLX runner: "exceeds the model's maximum context length (N tokens)".
    ("", "maximum context length ("),
    // vLLM V1: "is longer than the maximum model length of N".
    ("", "maximum model length of "),
    // SGLang: "longer than the model's context length (N tokens)", "exceeds the maximum allowed
    // length (N tokens)".
    ("", "model's context length ("),
    ("", "maximum allowed length ("),
    // LM Studio: "loaded with context length of only N tokens", "(n_keep: K>= n_ctx: N)",
    // "n_keep (K) >= n_ctx (N)".
    ("", "context length of only "),
    ("", "n_ctx: "),
    ("", "n_ctx ("),
    // Anthropic: "prompt is too long: N tokens > M maximum", "exceed context limit: N + K > M".
    ("prompt is too long", "> "),
    ("exceed context limit", "> "),
    // Moonshot, Gemini, Qwen on DashScope.
    ("", "model token limit: "),
    ("", "tokens allowed ("),
    ("", "input length should be [1, "),
];

/// The limit a server names in its context-length error (2048 for llama.cpp's "exceeds the
/// available context size (2048 tokens)", N for vLLM's "maximum context length is N tokens"),
/// so a window taken on trust can be corrected from the refusal. None when the message names
/// none.
pub fn served_limit(message: &str) -> Option<u32> {
    let m = message.to_lowercase();
    LIMIT_AFTER.iter().find_map(|(after, anchor)| {
        let from = m.find(after)?;
        let at = m[from..].find(anchor)? + from + anchor.len();
        let digits: String = m[at..]
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse::<u32>().ok().filter(|n| *n > 0)
    })
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

    /// Context-length errors as each server sends them, with the limit it names: the message as
    /// the transport reads it from the body must be an overflow, and name that limit.
    const REFUSALS: &[(&str, Option<u32>, &str)] = &[
        (
            r#"{"error":{"code":400,"message":"request (3031 tokens) exceeds the available context size (2048 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":3031,"n_ctx":2048}}"#,
            Some(2048),
            "llama.cpp, seen from the real server (tools/server/server-context.cpp)",
        ),
        (
            r#"{"error":{"code":400,"message":"input (3100 tokens) is larger than the max context size (2048 tokens). skipping","type":"exceed_context_size_error","n_prompt_tokens":3100,"n_ctx":2048}}"#,
            Some(2048),
            "llama.cpp, an embedding input (tools/server/server-context.cpp)",
        ),
        (
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}"#,
            None,
            "llama.cpp before the counts were in the message: the message alone names none",
        ),
        (
            r#"{"error":"{\"error\":{\"code\":400,\"message\":\"request (8889 tokens) exceeds the available context size (4096 tokens), try increasing it\",\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":8889,\"n_ctx\":4096}}"}"#,
            Some(4096),
            "Ollama passing on its llama-server's error (llm/llama_server.go)",
        ),
        (
            r#"{"error":{"message":"the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length","type":"invalid_request_error","param":null,"code":null}}"#,
            None,
            "Ollama's /v1 (llm/llama_server.go through openai.NewError)",
        ),
        (
            r#"{"error":"input length (9000 tokens) exceeds the model's maximum context length (8192 tokens)"}"#,
            Some(8192),
            "Ollama's MLX runner (x/mlxrunner/pipeline.go)",
        ),
        (
            r#"{"error":{"message":"You passed 40001 input tokens and requested 0 output tokens. However, the model's context length is only 32768 tokens, resulting in a maximum input length of 32768 tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=40001)","type":"BadRequestError","param":"input_tokens","code":400}}"#,
            Some(32768),
            "vLLM's renderer (vllm/renderers/params.py, vllm/exceptions.py)",
        ),
        (
            r#"{"error":{"message":"This model's maximum context length is 65536 tokens. However, your request has 93196 input tokens. Please reduce the length of the input messages. (parameter=input_tokens, value=93196)","type":"BadRequestError","param":null,"code":400}}"#,
            Some(65536),
            "vLLM's serving layer before the renderer",
        ),
        (
            r#"{"error":{"message":"The decoder prompt (length 2136) is longer than the maximum model length of 2048.","type":"BadRequestError","param":null,"code":400}}"#,
            Some(2048),
            "vLLM V1's input processor",
        ),
        (
            r#"{"object":"error","message":"The input (263247 tokens) is longer than the model's context length (262144 tokens).","type":"BadRequestError","param":null,"code":400}"#,
            Some(262_144),
            "SGLang (tokenizer_manager.py)",
        ),
        (
            r#"{"object":"error","message":"Input length (160062 tokens) exceeds the maximum allowed length (59862 tokens). Use a shorter input or enable --allow-auto-truncate.","type":"BadRequestError","param":null,"code":400}"#,
            Some(59862),
            "SGLang (managers/utils.py)",
        ),
        (
            r#"{"error":"Trying to keep the first 15857 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}"#,
            Some(4096),
            "LM Studio (lmstudio-ai/lmstudio-bug-tracker#237)",
        ),
        (
            r#"{"error":"The number of tokens to keep from the initial prompt is greater than the context length (n_keep: 13055>= n_ctx: 4096). Try to load the model with a larger context length, or provide a shorter input."}"#,
            Some(4096),
            "LM Studio (lmstudio-ai/lmstudio-bug-tracker#2205)",
        ),
        (
            r#"{"error":"Cannot truncate prompt with n_keep (15028) >= n_ctx (7424)"}"#,
            Some(7424),
            "LM Studio 0.4 (anomalyco/opencode#11141)",
        ),
        (
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130415 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            Some(128_000),
            "OpenAI",
        ),
        (
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210034 tokens > 200000 maximum"}}"#,
            Some(200_000),
            "Anthropic",
        ),
        (
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease input length or `max_tokens` and try again"}}"#,
            Some(200_000),
            "Anthropic, prompt plus max_tokens",
        ),
        (
            r#"{"error":{"message":"Invalid request: Your request exceeded model token limit: 262144 (requested: 269030)","type":"invalid_request_error"}}"#,
            Some(262_144),
            "Moonshot",
        ),
        (
            r#"[{"error":{"code":400,"message":"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]"#,
            Some(1_048_576),
            "Gemini's OpenAI-compatible endpoint",
        ),
        (
            r#"{"error":{"code":"1261","message":"Prompt exceeds max length"}}"#,
            None,
            "Zhipu names no limit",
        ),
    ];

    #[test]
    fn every_servers_refusal_is_an_overflow_naming_its_limit() {
        for (body, limit, source) in REFUSALS {
            let message = crate::transport::error_message(body.as_bytes());
            assert!(is_context_overflow(&message), "{source}: {message}");
            assert_eq!(served_limit(&message), *limit, "{source}: {message}");
        }
    }

    #[test]
    fn messages_without_a_limit_name_none() {
        for message in [
            "",
            "rate limit reached: 30000 tokens per minute",
            "maximum context length is unknown",
            "available context size (0 tokens)",
            "maximum context length is 99999999999 tokens",
        ] {
            assert_eq!(served_limit(message), None, "{message}");
        }
    }
}
