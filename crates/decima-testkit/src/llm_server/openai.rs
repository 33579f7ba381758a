//! The OpenAI chat-completions stream and error bodies, byte for byte.
//!
//! JSON is written by hand (strings escaped by serde_json) so the key order is the provider's and
//! does not depend on serde_json features enabled elsewhere in the build.

use super::script::{ErrorKind, ReasoningField, Turn};
use super::sse::SseEvent;
use super::{RenderCtx, json_str};

/// The chunks of one streamed turn, `data: [DONE]` included unless omitted.
pub(crate) fn render(turn: &Turn, ctx: &RenderCtx) -> Vec<SseEvent> {
    let model = turn_model(turn);
    let chunk = |delta: &str, finish: &str| -> SseEvent {
        SseEvent::data(format!(
            concat!(
                r#"{{"id":"chatcmpl-{seq}","object":"chat.completion.chunk","created":{created},"#,
                r#""model":{model},"system_fingerprint":"fp_test","#,
                r#""choices":[{{"index":0,"delta":{delta},"logprobs":null,"finish_reason":{finish}}}]{usage}}}"#
            ),
            seq = ctx.seq,
            created = ctx.created,
            model = json_str(&model),
            delta = delta,
            finish = finish,
            usage = if ctx.include_usage {
                r#","usage":null"#
            } else {
                ""
            },
        ))
    };
    let mut events = vec![chunk(r#"{"role":"assistant","content":""}"#, "null")];
    let reasoning_key = match turn.reasoning_field {
        ReasoningField::ReasoningContent => "reasoning_content",
        ReasoningField::Reasoning => "reasoning",
    };
    for piece in &turn.reasoning {
        events.push(chunk(
            &format!(r#"{{"{reasoning_key}":{}}}"#, json_str(piece)),
            "null",
        ));
    }
    for piece in &turn.text {
        events.push(chunk(
            &format!(r#"{{"content":{}}}"#, json_str(piece)),
            "null",
        ));
    }
    for (i, call) in turn.tool_calls.iter().enumerate() {
        let id = if call.id.is_empty() {
            format!("call_test_{i}")
        } else {
            call.id.clone()
        };
        events.push(chunk(
            &format!(
                r#"{{"tool_calls":[{{"index":{i},"id":{},"type":"function","function":{{"name":{},"arguments":""}}}}]}}"#,
                json_str(&id),
                json_str(&call.name)
            ),
            "null",
        ));
        for piece in &call.argument_chunks {
            events.push(chunk(
                &format!(
                    r#"{{"tool_calls":[{{"index":{i},"function":{{"arguments":{}}}}}]}}"#,
                    json_str(piece)
                ),
                "null",
            ));
        }
    }
    let finish = match &turn.finish {
        Some(f) => f.clone(),
        None if turn.tool_calls.is_empty() => "stop".to_owned(),
        None => "tool_calls".to_owned(),
    };
    events.push(chunk("{}", &json_str(&finish)));
    if let (true, Some((prompt, completion))) = (ctx.include_usage, turn.usage) {
        events.push(SseEvent::data(format!(
            concat!(
                r#"{{"id":"chatcmpl-{seq}","object":"chat.completion.chunk","created":{created},"#,
                r#""model":{model},"system_fingerprint":"fp_test","choices":[],"#,
                r#""usage":{{"prompt_tokens":{p},"completion_tokens":{c},"total_tokens":{t}}}}}"#
            ),
            seq = ctx.seq,
            created = ctx.created,
            model = json_str(&model),
            p = prompt,
            c = completion,
            t = u64::from(prompt) + u64::from(completion),
        )));
    }
    if !turn.options.omit_done {
        events.push(SseEvent::data("[DONE]"));
    }
    events
}

/// The model echoed in chunks.
pub(crate) fn turn_model(turn: &Turn) -> String {
    if turn.model.is_empty() {
        "test-model".to_owned()
    } else {
        turn.model.clone()
    }
}

/// A chunk cut off in the middle of its JSON.
pub(crate) fn malformed_event() -> SseEvent {
    SseEvent::data(r#"{"choices":[{"delta":{"content":"x""#)
}

/// The error object OpenAI-compatible servers send inside a stream when they fail mid-way.
pub(crate) fn error_event() -> SseEvent {
    SseEvent::data(
        r#"{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}"#,
    )
}

/// `{"error":{"message":..,"type":..,"param":..,"code":..}}`; `code` is raw JSON.
pub(crate) fn error_body(message: &str, kind: &str, param: &str, code: &str) -> String {
    format!(
        r#"{{"error":{{"message":{},"type":{},"param":{param},"code":{code}}}}}"#,
        json_str(message),
        json_str(kind),
    )
}

/// The status and body OpenAI sends for an error kind.
pub(crate) fn error_reply(kind: &ErrorKind, model: &str) -> (u16, String) {
    match kind {
        ErrorKind::RateLimited { .. } => (
            429,
            error_body(
                &format!(
                    "Rate limit reached for {model} in organization org-test on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s. Visit https://platform.openai.com/account/rate-limits to learn more."
                ),
                "rate_limit_exceeded",
                "null",
                r#""rate_limit_exceeded""#,
            ),
        ),
        ErrorKind::Server(502) => (
            502,
            error_body("Bad gateway.", "cf_bad_gateway", "null", "502"),
        ),
        ErrorKind::Server(503) => (
            503,
            error_body(
                "The engine is currently overloaded, please try again later.",
                "server_error",
                "null",
                "null",
            ),
        ),
        ErrorKind::Server(status) => (
            *status,
            error_body(
                "The server had an error while processing your request. Sorry about that!",
                "server_error",
                "null",
                "null",
            ),
        ),
        ErrorKind::Unauthorized => (
            401,
            error_body(
                "Incorrect API key provided: sk-test****************1234. You can find your API key at https://platform.openai.com/account/api-keys.",
                "invalid_request_error",
                "null",
                r#""invalid_api_key""#,
            ),
        ),
        ErrorKind::Forbidden => (
            403,
            error_body(
                "Country, region, or territory not supported",
                "request_forbidden",
                "null",
                r#""unsupported_country_region_territory""#,
            ),
        ),
        ErrorKind::ModelNotFound => (
            404,
            error_body(
                &format!("The model `{model}` does not exist or you do not have access to it."),
                "invalid_request_error",
                "null",
                r#""model_not_found""#,
            ),
        ),
        ErrorKind::BadRequest(message) => (
            400,
            error_body(message, "invalid_request_error", "null", "null"),
        ),
        ErrorKind::ContextOverflow => (
            400,
            error_body(
                "This model's maximum context length is 128000 tokens. However, your messages resulted in 130214 tokens. Please reduce the length of the messages.",
                "invalid_request_error",
                r#""messages""#,
                r#""context_length_exceeded""#,
            ),
        ),
    }
}
