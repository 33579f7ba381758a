//! What a test scripts: the replies the server gives, one per request.

use std::time::{Duration, SystemTime};

use super::profiles::OpenAiQuirks;

/// One scripted answer to one request; the server pops them in FIFO order.
// A turn with its quirks is far larger than the other replies, and boxing it would make every
// script write `Box::new`: a few hundred bytes per queued reply do not matter in a test server.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Reply {
    /// A streamed turn, rendered in the protocol the request path asks for
    /// (path ending in "/chat/completions" → OpenAI, ending in "/v1/messages" → Anthropic).
    Stream(Turn),
    /// A non-streamed error or any status: status code, extra headers, body, sent verbatim.
    Status {
        /// The HTTP status code.
        status: u16,
        /// Extra headers; a `content-type` here replaces the default `application/json`.
        headers: Vec<(String, String)>,
        /// The body, sent with a content-length.
        body: String,
    },
    /// Raw SSE body bytes written verbatim as HTTP chunks, each after its delay (for framing tests).
    RawSse {
        /// (delay before the chunk, the chunk's bytes); empty chunks are skipped, since a
        /// zero-length chunk would end the body.
        chunks: Vec<(Duration, Vec<u8>)>,
    },
    /// A provider-shaped error whose body is rendered for the request's protocol at send time.
    /// Built by the constructors below ([`Reply::rate_limited`], [`Reply::unauthorized`], ...).
    Error(ErrorReply),
}

/// A protocol-neutral provider error: the server renders it as an OpenAI or an Anthropic error
/// body depending on the path the request came in on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorReply {
    pub(crate) kind: ErrorKind,
}

/// The errors both providers have, before they are given a protocol's shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    /// 429; the value of the retry-after header (seconds or an HTTP-date).
    RateLimited { retry_after: String },
    /// A 5xx (or any other) server-side failure.
    Server(u16),
    /// 401.
    Unauthorized,
    /// 403.
    Forbidden,
    /// 404 for the requested model.
    ModelNotFound,
    /// 400 invalid_request_error with this message.
    BadRequest(String),
    /// 400 with the provider's real context-length error.
    ContextOverflow,
}

impl Reply {
    fn error(kind: ErrorKind) -> Reply {
        Reply::Error(ErrorReply { kind })
    }

    /// 429 with `retry-after: N` (seconds) and a provider-shaped body, to test backoff.
    pub fn rate_limited(retry_after_secs: u64) -> Reply {
        Reply::error(ErrorKind::RateLimited {
            retry_after: retry_after_secs.to_string(),
        })
    }

    /// 429 with `retry-after` as an HTTP-date, the other form the header may take.
    pub fn rate_limited_until(at: SystemTime) -> Reply {
        Reply::error(ErrorKind::RateLimited {
            retry_after: httpdate::fmt_http_date(at),
        })
    }

    /// A server-side failure (500/502/503/529, or any status) with a realistic provider body.
    pub fn server_error(status: u16) -> Reply {
        Reply::error(ErrorKind::Server(status))
    }

    /// 401 invalid API key, provider-shaped, to test the "fix your key" path.
    pub fn unauthorized() -> Reply {
        Reply::error(ErrorKind::Unauthorized)
    }

    /// 403 permission error, provider-shaped.
    pub fn forbidden() -> Reply {
        Reply::error(ErrorKind::Forbidden)
    }

    /// 404 model not found (naming the request's model), provider-shaped.
    pub fn model_not_found() -> Reply {
        Reply::error(ErrorKind::ModelNotFound)
    }

    /// 400 invalid_request_error carrying `message`.
    pub fn bad_request(message: &str) -> Reply {
        Reply::error(ErrorKind::BadRequest(message.to_owned()))
    }

    /// 400 with the provider's real context-length error body, to test overflow detection.
    pub fn context_overflow() -> Reply {
        Reply::error(ErrorKind::ContextOverflow)
    }
}

/// One streamed assistant turn, rendered per protocol.
#[derive(Clone, Debug, Default)]
pub struct Turn {
    /// Echoed in the chunks; "test-model" if empty.
    pub model: String,
    /// Reasoning deltas, streamed before the text.
    pub reasoning: Vec<String>,
    /// OpenAI only: which delta field carries the reasoning.
    pub reasoning_field: ReasoningField,
    /// Anthropic only: a `signature_delta` at the end of the thinking block.
    pub reasoning_signature: Option<String>,
    /// Text deltas.
    pub text: Vec<String>,
    /// Tool calls, streamed after the text, one after the other.
    pub tool_calls: Vec<ScriptedToolCall>,
    /// (prompt/input tokens, completion/output tokens). OpenAI: sent as a last `"choices":[]`
    /// chunk only if the request set `stream_options.include_usage`. Anthropic: in
    /// `message_start` / `message_delta`, 0 when None.
    pub usage: Option<(u32, u32)>,
    /// Of the prompt tokens in `usage`, (read from the prompt cache, written to it), in each
    /// server's own fields: Anthropic's `cache_read_input_tokens` and
    /// `cache_creation_input_tokens` (its `input_tokens` is then the rest), OpenAI's
    /// `prompt_tokens_details.cached_tokens`, DeepSeek's `prompt_cache_hit_tokens` and
    /// `prompt_cache_miss_tokens`. The OpenAI-compatible servers report no writes.
    pub cached: Option<(u32, u32)>,
    /// The finish / stop reason, sent verbatim; by default OpenAI "tool_calls" or "stop",
    /// Anthropic "tool_use" or "end_turn".
    pub finish: Option<String>,
    /// Framing variations.
    pub options: StreamOptions,
    /// Anthropic only: stream shapes of the real API and of proxies in front of it.
    pub anthropic: AnthropicQuirks,
    /// OpenAI only: the quirks of a real OpenAI-compatible server (see [`super::Profile`]).
    pub openai: OpenAiQuirks,
    /// A fault to inject into the stream.
    pub fault: Option<StreamFault>,
}

/// Which OpenAI-compatible delta field carries reasoning, since providers disagree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReasoningField {
    /// `reasoning_content` (DeepSeek and others).
    #[default]
    ReasoningContent,
    /// `reasoning` (OpenRouter and others).
    Reasoning,
    /// Both in the same delta, with the same text (vLLM keeps them in sync while it renames the
    /// field, vllm-project/vllm#34030).
    Both,
}

/// One scripted tool call, its arguments streamed in the given pieces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptedToolCall {
    /// The call id, sent verbatim (e.g. "call_1" or "toolu_1"); a default one if empty.
    pub id: String,
    /// The function / tool name.
    pub name: String,
    /// The argument JSON text, in the pieces it is streamed in.
    pub argument_chunks: Vec<String>,
}

/// Framing variations real servers show, so the client's SSE parsing is tested against them.
#[derive(Clone, Debug, Default)]
pub struct StreamOptions {
    /// Frame SSE lines with `\r\n` instead of `\n`.
    pub crlf: bool,
    /// Write the SSE body in HTTP chunks (and TCP writes) of at most n bytes, with a ~1 ms pause
    /// between, so events split across reads.
    pub split_every: Option<usize>,
    /// Put a `: keep-alive` comment before every event (OpenRouter sends such comments).
    pub keepalive_comments: bool,
    /// The text of those comments instead of `keep-alive` (OpenRouter: `OPENROUTER PROCESSING`).
    pub keepalive_text: Option<String>,
    /// Anthropic: put an `event: ping` between events, as after `message_start` in real streams.
    pub ping_events: bool,
    /// OpenAI: no final `data: [DONE]`.
    pub omit_done: bool,
    /// The very last event ends without its terminating newline and blank line.
    pub no_trailing_newline: bool,
    /// A pause before every event but the first (comments and pings fall in its middle).
    pub event_delay: Option<Duration>,
}

/// A failure injected into a stream. "After N events" counts the SSE events of the rendered
/// stream from the first, not the keep-alive comments or pings put between them; an N past the
/// end means after the last event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamFault {
    /// After N events, close the TCP connection abruptly (no final 0-length chunk).
    CutAfter(usize),
    /// After N events, send nothing more but keep the connection open until the client goes
    /// away, then record `disconnected_at`.
    StallAfter(usize),
    /// After N events, send one event whose data is not valid JSON, then continue normally.
    MalformedAfter(usize),
    /// After N events, send the provider's in-stream error event and end the stream.
    ErrorEventAfter(usize),
}

/// Anthropic stream shapes beyond the plain path, each seen from the real API or from a proxy in
/// front of it, so the client meets them in tests before it meets them in the field. All off by
/// default, which keeps the default rendering byte for byte as before.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AnthropicQuirks {
    /// More thinking blocks, streamed in this order after the `reasoning` block (if any) and
    /// before the text: signed `thinking` blocks and `redacted_thinking` blocks, which arrive
    /// whole in their `content_block_start` and must go back unchanged, in order.
    pub thinking_blocks: Vec<ThinkingBlock>,
    /// Every `tool_use` block's first `input_json_delta` has `"partial_json":""`, as the real API
    /// sends it (and as its only delta for a tool without arguments).
    pub empty_first_input_delta: bool,
    /// Where the `tool_use` input goes: in the deltas (the API), or already in
    /// `content_block_start` (proxies that synthesise Anthropic streams).
    pub input_in_start: InputInStart,
    /// The last `tool_use` block gets no `content_block_stop`: the API ends the message that way
    /// when `max_tokens` cuts a tool call, and some proxies forget the stop.
    pub leave_last_tool_use_open: bool,
    /// `message_delta` carries the cumulative usage with input and cache tokens, as the API has
    /// done since 2025, not only `output_tokens`.
    pub full_usage_in_message_delta: bool,
}

/// One extra thinking block of an Anthropic turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ThinkingBlock {
    /// A `thinking` block: its text in deltas, then its `signature_delta`.
    Thinking {
        /// The `thinking_delta` pieces.
        deltas: Vec<String>,
        /// The signature, sent whole in one `signature_delta`.
        signature: String,
    },
    /// A `redacted_thinking` block: opaque `data`, whole in `content_block_start`, no deltas.
    Redacted {
        /// The encrypted data.
        data: String,
    },
}

/// Where a scripted `tool_use` block carries its input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InputInStart {
    /// `"input":{}` in the start, the arguments in `input_json_delta` pieces (the API).
    #[default]
    No,
    /// The whole input in the start and no deltas at all.
    Only,
    /// The whole input in the start, then one empty `input_json_delta`.
    WithEmptyDelta,
    /// The whole input in the start, and the deltas repeat it.
    AndDeltas,
}
