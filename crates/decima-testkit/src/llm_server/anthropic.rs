//! The Anthropic Messages stream and error bodies, byte for byte.

use super::openai::turn_model;
use super::script::{AnthropicQuirks, ErrorKind, InputInStart, ThinkingBlock, Turn};
use super::sse::SseEvent;
use super::{RenderCtx, json_str};

impl AnthropicQuirks {
    /// What the real API does on every turn beyond the plain shape: an empty first
    /// `input_json_delta` for each tool call (docs.claude.com streaming example;
    /// quarkiverse/quarkus-langchain4j#1778) and cumulative usage with input and cache tokens in
    /// `message_delta` (docs.claude.com streaming: "token counts in message_delta are
    /// cumulative"). Pings are framing: [`super::StreamOptions::ping_events`].
    pub fn real_api() -> AnthropicQuirks {
        AnthropicQuirks {
            empty_first_input_delta: true,
            full_usage_in_message_delta: true,
            ..AnthropicQuirks::default()
        }
    }
}

/// The events of one streamed turn, `message_start` to `message_stop`.
pub(crate) fn render(turn: &Turn, ctx: &RenderCtx) -> Vec<SseEvent> {
    let model = turn_model(turn);
    let (prompt_tokens, output_tokens) = turn.usage.unwrap_or((0, 0));
    // Anthropic's `input_tokens` leaves out what was read from the cache or written to it.
    let (cache_read, cache_write) = turn.cached.unwrap_or((0, 0));
    let input_tokens = prompt_tokens
        .saturating_sub(cache_read)
        .saturating_sub(cache_write);
    let mut events = vec![SseEvent::named(
        "message_start",
        format!(
            concat!(
                r#"{{"type":"message_start","message":{{"id":"msg_test{seq}","type":"message","#,
                r#""role":"assistant","model":{model},"content":[],"stop_reason":null,"#,
                r#""stop_sequence":null,"usage":{{"input_tokens":{input},{cache}"#,
                r#""output_tokens":1}}}}}}"#
            ),
            seq = ctx.seq,
            model = json_str(&model),
            input = input_tokens,
            // As in the documented example without a cache; the cache fields where it served.
            cache = if turn.cached.is_some() {
                format!(
                    r#""cache_creation_input_tokens":{cache_write},"cache_read_input_tokens":{cache_read},"#
                )
            } else {
                String::new()
            },
        ),
    )];
    let mut index = 0usize;
    let start = |index: usize, block: &str| {
        SseEvent::named(
            "content_block_start",
            format!(r#"{{"type":"content_block_start","index":{index},"content_block":{block}}}"#),
        )
    };
    let delta = |index: usize, delta: String| {
        SseEvent::named(
            "content_block_delta",
            format!(r#"{{"type":"content_block_delta","index":{index},"delta":{delta}}}"#),
        )
    };
    let stop = |index: usize| {
        SseEvent::named(
            "content_block_stop",
            format!(r#"{{"type":"content_block_stop","index":{index}}}"#),
        )
    };
    if !turn.reasoning.is_empty() || turn.reasoning_signature.is_some() {
        events.push(start(index, r#"{"type":"thinking","thinking":""}"#));
        for piece in &turn.reasoning {
            events.push(delta(
                index,
                format!(
                    r#"{{"type":"thinking_delta","thinking":{}}}"#,
                    json_str(piece)
                ),
            ));
        }
        if let Some(signature) = &turn.reasoning_signature {
            events.push(delta(
                index,
                format!(
                    r#"{{"type":"signature_delta","signature":{}}}"#,
                    json_str(signature)
                ),
            ));
        }
        events.push(stop(index));
        index += 1;
    }
    for block in &turn.anthropic.thinking_blocks {
        match block {
            ThinkingBlock::Thinking { deltas, signature } => {
                events.push(start(index, r#"{"type":"thinking","thinking":""}"#));
                for piece in deltas {
                    events.push(delta(
                        index,
                        format!(
                            r#"{{"type":"thinking_delta","thinking":{}}}"#,
                            json_str(piece)
                        ),
                    ));
                }
                events.push(delta(
                    index,
                    format!(
                        r#"{{"type":"signature_delta","signature":{}}}"#,
                        json_str(signature)
                    ),
                ));
            }
            ThinkingBlock::Redacted { data } => events.push(start(
                index,
                &format!(
                    r#"{{"type":"redacted_thinking","data":{}}}"#,
                    json_str(data)
                ),
            )),
        }
        events.push(stop(index));
        index += 1;
    }
    if !turn.text.is_empty() {
        events.push(start(index, r#"{"type":"text","text":""}"#));
        for piece in &turn.text {
            events.push(delta(
                index,
                format!(r#"{{"type":"text_delta","text":{}}}"#, json_str(piece)),
            ));
        }
        events.push(stop(index));
        index += 1;
    }
    let quirks = &turn.anthropic;
    let input_delta = |index: usize, piece: &str| {
        delta(
            index,
            format!(
                r#"{{"type":"input_json_delta","partial_json":{}}}"#,
                json_str(piece)
            ),
        )
    };
    for (i, call) in turn.tool_calls.iter().enumerate() {
        let id = if call.id.is_empty() {
            format!("toolu_test_{i}")
        } else {
            call.id.clone()
        };
        let input = match quirks.input_in_start {
            InputInStart::No => "{}".to_owned(),
            // The whole input, as a parsed object the way a proxy holding the full call writes
            // it; arguments that are not JSON become `{}`.
            _ => serde_json::from_str::<serde_json::Value>(&call.argument_chunks.concat())
                .map(|v| v.to_string())
                .unwrap_or_else(|_| "{}".to_owned()),
        };
        events.push(start(
            index,
            &format!(
                r#"{{"type":"tool_use","id":{},"name":{},"input":{input}}}"#,
                json_str(&id),
                json_str(&call.name)
            ),
        ));
        if quirks.empty_first_input_delta || quirks.input_in_start == InputInStart::WithEmptyDelta {
            events.push(input_delta(index, ""));
        }
        if matches!(
            quirks.input_in_start,
            InputInStart::No | InputInStart::AndDeltas
        ) {
            for piece in &call.argument_chunks {
                events.push(input_delta(index, piece));
            }
        }
        let last = i + 1 == turn.tool_calls.len();
        if !(last && quirks.leave_last_tool_use_open) {
            events.push(stop(index));
        }
        index += 1;
    }
    let stop_reason = match &turn.finish {
        Some(f) => f.clone(),
        None if turn.tool_calls.is_empty() => "end_turn".to_owned(),
        None => "tool_use".to_owned(),
    };
    let usage = if quirks.full_usage_in_message_delta {
        format!(
            r#"{{"input_tokens":{input_tokens},"cache_creation_input_tokens":{cache_write},"cache_read_input_tokens":{cache_read},"output_tokens":{output_tokens}}}"#
        )
    } else {
        format!(r#"{{"output_tokens":{output_tokens}}}"#)
    };
    events.push(SseEvent::named(
        "message_delta",
        format!(
            r#"{{"type":"message_delta","delta":{{"stop_reason":{},"stop_sequence":null}},"usage":{usage}}}"#,
            json_str(&stop_reason)
        ),
    ));
    events.push(SseEvent::named(
        "message_stop",
        r#"{"type":"message_stop"}"#,
    ));
    events
}

/// A text delta cut off in the middle of its JSON.
pub(crate) fn malformed_event() -> SseEvent {
    SseEvent::named(
        "content_block_delta",
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x""#,
    )
}

/// The error event Anthropic sends inside a stream when it is overloaded mid-way.
pub(crate) fn error_event() -> SseEvent {
    SseEvent::named("error", error_body("overloaded_error", "Overloaded"))
}

/// `{"type":"error","error":{"type":..,"message":..}}`
pub(crate) fn error_body(kind: &str, message: &str) -> String {
    format!(
        r#"{{"type":"error","error":{{"type":{},"message":{}}}}}"#,
        json_str(kind),
        json_str(message)
    )
}

/// What the real API refuses in a request's tools before it reads anything else: a root
/// `oneOf`, `allOf` or `anyOf` in an `input_schema`, which it refuses for the whole request
/// with this message (anthropics/claude-code#5319, #5973: "tools.106.custom.input_schema:
/// input_schema does not support oneOf, allOf, or anyOf at the top level").
pub(crate) fn refused_tools(request: &serde_json::Value) -> Option<String> {
    let tools = request.get("tools")?.as_array()?;
    tools.iter().enumerate().find_map(|(i, tool)| {
        let schema = tool.get("input_schema")?;
        ["oneOf", "allOf", "anyOf"]
            .iter()
            .any(|k| schema.get(k).is_some())
            .then(|| {
                format!(
                    "tools.{i}.custom.input_schema: input_schema does not support oneOf, \
                     allOf, or anyOf at the top level"
                )
            })
    })
}

/// The status and body Anthropic sends for an error kind.
pub(crate) fn error_reply(kind: &ErrorKind, model: &str) -> (u16, String) {
    match kind {
        ErrorKind::RateLimited { .. } => (
            429,
            error_body(
                "rate_limit_error",
                "This request would exceed the rate limit for your organization of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later. You may also contact sales at https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase.",
            ),
        ),
        ErrorKind::Server(status @ (503 | 529)) => {
            (*status, error_body("overloaded_error", "Overloaded"))
        }
        ErrorKind::Server(status) => (*status, error_body("api_error", "Internal server error")),
        ErrorKind::Unauthorized => (401, error_body("authentication_error", "invalid x-api-key")),
        ErrorKind::Forbidden => (
            403,
            error_body(
                "permission_error",
                "Your API key does not have permission to use the specified resource.",
            ),
        ),
        ErrorKind::ModelNotFound => (
            404,
            error_body("not_found_error", &format!("model: {model}")),
        ),
        ErrorKind::BadRequest(message) => (400, error_body("invalid_request_error", message)),
        ErrorKind::ContextOverflow => (
            400,
            error_body(
                "invalid_request_error",
                "prompt is too long: 210034 tokens > 200000 maximum",
            ),
        ),
    }
}
