//! The OpenAI chat-completions stream and error bodies, byte for byte.
//!
//! JSON is written by hand (strings escaped by serde_json) so the key order is the provider's and
//! does not depend on serde_json features enabled elsewhere in the build.

use super::script::{ErrorKind, ReasoningField, ScriptedToolCall, Turn};
use super::sse::SseEvent;
use super::{OpenAiQuirks, RenderCtx, json_str};

/// The chunks of one streamed turn, `data: [DONE]` included unless omitted, with the turn's
/// [`super::OpenAiQuirks`] applied (none: exactly OpenAI's shape).
pub(crate) fn render(turn: &Turn, ctx: &RenderCtx) -> Vec<SseEvent> {
    let quirks = &turn.openai;
    let model = turn_model(turn);
    let open = if quirks.empty_finish_reason {
        r#""""#
    } else {
        "null"
    };
    let chunk = |delta: &str, finish: &str, choice_extra: &str| -> SseEvent {
        SseEvent::data(format!(
            concat!(
                r#"{{"id":"chatcmpl-{seq}","object":"chat.completion.chunk","created":{created},"#,
                r#""model":{model},"system_fingerprint":"fp_test","#,
                r#""choices":[{{"index":0,"delta":{delta},"logprobs":null,"finish_reason":{finish}{extra}}}]{usage}}}"#
            ),
            seq = ctx.seq,
            created = ctx.created,
            model = json_str(&model),
            delta = delta,
            finish = finish,
            extra = choice_extra,
            usage = if ctx.include_usage {
                r#","usage":null"#
            } else {
                ""
            },
        ))
    };
    let role = if quirks.role_in_every_delta {
        r#""role":"assistant","#
    } else {
        ""
    };
    // The deltas after the first, as their fields without braces.
    let mut deltas: Vec<String> = Vec::new();
    for piece in &turn.reasoning {
        let text = json_str(piece);
        deltas.push(match turn.reasoning_field {
            ReasoningField::ReasoningContent => format!(r#""reasoning_content":{text}"#),
            ReasoningField::Reasoning if quirks.reasoning_details => format!(
                r#""reasoning":{text},"reasoning_details":[{{"type":"reasoning.text","text":{text},"format":"unknown","index":0}}]"#
            ),
            ReasoningField::Reasoning => format!(r#""reasoning":{text}"#),
            ReasoningField::Both => format!(r#""reasoning_content":{text},"reasoning":{text}"#),
        });
    }
    for piece in &turn.text {
        deltas.push(format!(r#""content":{}"#, json_str(piece)));
    }
    for (i, call) in turn.tool_calls.iter().enumerate() {
        tool_call_deltas(turn, i, call, &mut deltas);
    }
    let finish = match &turn.finish {
        Some(f) => f.clone(),
        None if turn.tool_calls.is_empty() => "stop".to_owned(),
        None => "tool_calls".to_owned(),
    };
    let usage = turn
        .usage
        .map(|usage| usage_json(usage, turn.cached, quirks));
    let choice_usage = match (&usage, quirks.usage_in_choice) {
        (Some(usage), true) => format!(r#","usage":{usage}"#),
        _ => String::new(),
    };
    let mut events = vec![chunk(r#"{"role":"assistant","content":""}"#, open, "")];
    let last = deltas.len();
    for (n, fields) in deltas.iter().enumerate() {
        let delta = format!("{{{role}{fields}}}");
        if quirks.finish_on_last_delta && n + 1 == last {
            events.push(chunk(&delta, &json_str(&finish), &choice_usage));
        } else {
            events.push(chunk(&delta, open, ""));
        }
    }
    if !(quirks.finish_on_last_delta && last > 0) {
        let delta = if quirks.role_in_every_delta {
            r#"{"role":"assistant","content":""}"#
        } else {
            "{}"
        };
        events.push(chunk(delta, &json_str(&finish), &choice_usage));
    }
    if let (true, false, Some(usage)) = (ctx.include_usage, quirks.usage_in_choice, &usage) {
        events.push(SseEvent::data(format!(
            concat!(
                r#"{{"id":"chatcmpl-{seq}","object":"chat.completion.chunk","created":{created},"#,
                r#""model":{model},"system_fingerprint":"fp_test","choices":[],"usage":{usage}}}"#
            ),
            seq = ctx.seq,
            created = ctx.created,
            model = json_str(&model),
            usage = usage,
        )));
    }
    if !turn.options.omit_done {
        events.push(SseEvent::data("[DONE]"));
    }
    events
}

/// The id a scripted call is sent with.
fn call_id(i: usize, call: &ScriptedToolCall) -> String {
    if call.id.is_empty() {
        format!("call_test_{i}")
    } else {
        call.id.clone()
    }
}

/// The deltas (fields without braces) that stream call `i`, per the turn's quirks.
fn tool_call_deltas(turn: &Turn, i: usize, call: &ScriptedToolCall, out: &mut Vec<String>) {
    let quirks = &turn.openai;
    let index = match (quirks.omit_tool_index, quirks.shared_tool_index) {
        (true, _) => String::new(),
        (false, true) => r#""index":0,"#.to_owned(),
        (false, false) => format!(r#""index":{i},"#),
    };
    let id = call_id(i, call);
    let opening_id = if quirks.omit_tool_ids {
        String::new()
    } else {
        format!(r#""id":{},"#, json_str(&id))
    };
    // Of parallel calls, Gemini signs the first only (ai.google.dev/gemini-api/docs/thought-signatures).
    let signed = quirks.gemini_extra_content && i == 0;
    let signature = if signed {
        format!(r#","extra_content":{{"google":{{"thought_signature":"c2lnbmF0dXJl{i}"}}}}"#)
    } else {
        String::new()
    };
    let whole: String = call.argument_chunks.concat();
    let name = json_str(&call.name);
    if quirks.whole_tool_calls {
        let arguments = if quirks.arguments_as_object {
            whole.clone()
        } else {
            json_str(&whole)
        };
        out.push(format!(
            r#""tool_calls":[{{{index}{opening_id}"type":"function","function":{{"name":{name},"arguments":{arguments}}}{signature}}}]"#
        ));
    } else {
        out.push(format!(
            r#""tool_calls":[{{{index}{opening_id}"type":"function","function":{{"name":{name},"arguments":""}}{signature}}}]"#
        ));
        let continuation_id = match (quirks.repeat_tool_id, quirks.empty_id_continuations) {
            (true, _) if !quirks.omit_tool_ids => {
                format!(r#""id":{},"type":"function","#, json_str(&id))
            }
            (_, true) => r#""id":"","type":"","#.to_owned(),
            _ => String::new(),
        };
        let continuation_name = if quirks.empty_name_continuations {
            r#""name":"","#
        } else {
            ""
        };
        for piece in &call.argument_chunks {
            out.push(format!(
                r#""tool_calls":[{{{index}{continuation_id}"function":{{{continuation_name}"arguments":{}}}}}]"#,
                json_str(piece)
            ));
        }
    }
    if signed {
        out.push(format!(
            r#""tool_calls":[{{{index}"extra_content":{{"google":{{"thought_signature":"c2lnbmF0dXJl{i}"}}}}}}]"#
        ));
    }
    if quirks.duplicate_tool_summary && !quirks.omit_tool_ids {
        out.push(format!(
            r#""tool_calls":[{{{index}"id":{},"type":"function","function":{{"name":{name},"arguments":{}}}}}]"#,
            json_str(&id),
            json_str(&json_str(&whole))
        ));
    }
}

/// A whole, non-streamed `chat.completion` for the turn, as a server that ignores `"stream":
/// true` sends it.
pub(crate) fn completion_body(turn: &Turn, ctx: &RenderCtx) -> String {
    let text: String = turn.text.concat();
    let content = if text.is_empty() && !turn.tool_calls.is_empty() {
        "null".to_owned()
    } else {
        json_str(&text)
    };
    let reasoning: String = turn.reasoning.concat();
    let reasoning = if reasoning.is_empty() {
        String::new()
    } else {
        let text = json_str(&reasoning);
        match turn.reasoning_field {
            ReasoningField::ReasoningContent => format!(r#","reasoning_content":{text}"#),
            ReasoningField::Reasoning => format!(r#","reasoning":{text}"#),
            ReasoningField::Both => format!(r#","reasoning_content":{text},"reasoning":{text}"#),
        }
    };
    let calls: Vec<String> = turn
        .tool_calls
        .iter()
        .enumerate()
        .map(|(i, call)| {
            format!(
                r#"{{"id":{},"type":"function","function":{{"name":{},"arguments":{}}}}}"#,
                json_str(&call_id(i, call)),
                json_str(&call.name),
                json_str(&call.argument_chunks.concat())
            )
        })
        .collect();
    let calls = if calls.is_empty() {
        String::new()
    } else {
        format!(r#","tool_calls":[{}]"#, calls.join(","))
    };
    let finish = match &turn.finish {
        Some(f) => f.clone(),
        None if turn.tool_calls.is_empty() => "stop".to_owned(),
        None => "tool_calls".to_owned(),
    };
    let usage = usage_json(turn.usage.unwrap_or((0, 0)), turn.cached, &turn.openai);
    format!(
        concat!(
            r#"{{"id":"chatcmpl-{seq}","object":"chat.completion","created":{created},"model":{model},"#,
            r#""system_fingerprint":"fp_test","choices":[{{"index":0,"message":{{"role":"assistant","#,
            r#""content":{content}{reasoning}{calls}}},"logprobs":null,"finish_reason":{finish}}}],"#,
            r#""usage":{usage}}}"#
        ),
        seq = ctx.seq,
        created = ctx.created,
        model = json_str(&turn_model(turn)),
        content = content,
        reasoning = reasoning,
        calls = calls,
        finish = json_str(&finish),
        usage = usage,
    )
}

/// A usage object: the prompt and completion tokens, and the cache hits among the prompt's in
/// the server's own fields (see [`Turn::cached`]).
fn usage_json(
    (prompt, completion): (u32, u32),
    cached: Option<(u32, u32)>,
    quirks: &OpenAiQuirks,
) -> String {
    let cache = match cached {
        None => String::new(),
        Some((read, _)) if quirks.deepseek_cache_fields => format!(
            r#","prompt_cache_hit_tokens":{read},"prompt_cache_miss_tokens":{}"#,
            prompt.saturating_sub(read)
        ),
        Some((read, _)) => {
            format!(r#","prompt_tokens_details":{{"cached_tokens":{read},"audio_tokens":0}}"#)
        }
    };
    format!(
        r#"{{"prompt_tokens":{prompt},"completion_tokens":{completion},"total_tokens":{}{cache}}}"#,
        u64::from(prompt) + u64::from(completion)
    )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_hits_go_where_each_server_reports_them() {
        let openai = usage_json((2_000, 12), Some((1_536, 0)), &OpenAiQuirks::default());
        assert_eq!(
            openai,
            r#"{"prompt_tokens":2000,"completion_tokens":12,"total_tokens":2012,"prompt_tokens_details":{"cached_tokens":1536,"audio_tokens":0}}"#
        );
        let deepseek = usage_json(
            (2_000, 12),
            Some((1_536, 0)),
            &super::super::Profile::DeepSeek.quirks(),
        );
        assert_eq!(
            deepseek,
            r#"{"prompt_tokens":2000,"completion_tokens":12,"total_tokens":2012,"prompt_cache_hit_tokens":1536,"prompt_cache_miss_tokens":464}"#
        );
        assert_eq!(
            usage_json((10, 2), None, &OpenAiQuirks::default()),
            r#"{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}"#
        );
    }
}
