//! Ollama's native chat, `POST /api/chat`, byte for byte as ollama/ollama writes it, so a client
//! of that endpoint meets the real framing: NDJSON (`application/x-ndjson`), one JSON object and
//! a `\n` per line, as `streamResponse` in `server/routes.go` writes them.
//!
//! Each line is a `ChatResponse` (`api/types.go`) as Go's encoding/json writes it: fields in
//! declaration order (`model`, `created_at`, `message` {`role`, `content`, `thinking`,
//! `tool_calls`}, `done`, `done_reason`, then the `Metrics`), empty `omitempty` fields left
//! out, `<`, `>` and `&` escaped. A scripted [`Turn`] renders as: one line per reasoning piece
//! (`thinking`), one per text piece, one with every tool call whole (its arguments an object,
//! with `function.index`; an `id` only where the script gives one, as Ollama sends since 0.12.10;
//! a call whose arguments are not a JSON object is left out, since Ollama only sends parsed
//! calls), then the `done` line with `done_reason` (the script's finish, `stop` by default) and
//! the usage as `prompt_eval_count` and `eval_count` (left out when 0, as Go does).
//!
//! Errors take Ollama's shapes: an HTTP status with `{"error": "..."}` before the stream, and a
//! `{"error": "..."}` line after it has begun ([`super::StreamFault::ErrorEventAfter`]). A
//! [`Reply::RawSse`] on this path is written verbatim as NDJSON.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::LlmServer;
use super::http::Conn;
use super::script::{ErrorKind, ErrorReply, Reply, ScriptedToolCall, StreamFault, Turn};
use super::sse::{Ending, Op, Plan};
use super::writer::{self, Outcome};

/// The mid-stream error Ollama writes when its runner dies after the answer began
/// (llm/llama_server.go, `Completion`).
const RUNNER_DIED: &str = "an error was encountered while running the model: unexpected EOF";

/// Ollama's own refusal of a prompt over the loaded window (llm/llama_server.go).
pub(crate) const PROMPT_TOO_LONG: &str = "the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length";

impl LlmServer {
    /// "http://127.0.0.1:PORT" — native Ollama clients POST {this}/api/chat (the preset's
    /// `/v1` form, [`LlmServer::openai_base_url`], reaches the same server).
    pub fn ollama_base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.addr.port())
    }
}

/// Whether a request target is Ollama's native chat.
pub(super) fn serves(path: &str) -> bool {
    path.split('?').next() == Some("/api/chat")
}

/// Answers a request to `/api/chat` with `reply` (or the message of the 500 sent when no reply
/// was scripted).
pub(super) async fn answer(
    conn: &mut Conn,
    reply: Result<Reply, String>,
    model: &str,
    close: bool,
    request_id: &(String, String),
) -> Outcome {
    let reply = match reply {
        Err(message) => return error(conn, 500, GIN_JSON, &message, &[], close).await,
        Ok(reply) => reply,
    };
    match reply {
        Reply::Status {
            status,
            headers,
            body,
        } => {
            let bytes = writer::status_response(status, &headers, &body, close, request_id);
            writer::write_plain(conn, bytes).await
        }
        Reply::Error(ErrorReply { kind }) => {
            let (status, content_type, message) = error_reply(&kind, model);
            let extra = match &kind {
                ErrorKind::RateLimited { retry_after } => {
                    vec![("Retry-After".to_owned(), retry_after.clone())]
                }
                _ => Vec::new(),
            };
            error(conn, status, content_type, &message, &extra, close).await
        }
        Reply::RawSse { chunks } => stream(conn, Plan::raw(chunks), close).await,
        Reply::Stream(turn) => {
            let lines = render(&turn, model, SystemTime::now());
            stream(conn, plan(&turn, model, lines), close).await
        }
    }
}

/// Gin's `c.JSON` content type; `streamResponse` sets plain `application/json` for an error
/// that comes before the first line.
const GIN_JSON: &str = "application/json; charset=utf-8";
const STREAM_JSON: &str = "application/json";

/// Writes `{"error": message}` with `status`.
async fn error(
    conn: &mut Conn,
    status: u16,
    content_type: &str,
    message: &str,
    extra: &[(String, String)],
    close: bool,
) -> Outcome {
    let body = error_line(message);
    let mut headers = vec![
        ("Content-Type".to_owned(), content_type.to_owned()),
        ("Content-Length".to_owned(), body.len().to_string()),
    ];
    headers.extend(extra.iter().cloned());
    if close {
        headers.push(("Connection".to_owned(), "close".to_owned()));
    }
    let mut bytes = super::http::head(status, &headers);
    bytes.extend_from_slice(body.as_bytes());
    writer::write_plain(conn, bytes).await
}

/// A 200 NDJSON stream following `plan`, with the headers Go's server sends for gin's
/// `c.Stream`.
async fn stream(conn: &mut Conn, plan: Plan, close: bool) -> Outcome {
    let mut headers = vec![
        ("Content-Type".to_owned(), "application/x-ndjson".to_owned()),
        ("Transfer-Encoding".to_owned(), "chunked".to_owned()),
    ];
    if close {
        headers.push(("Connection".to_owned(), "close".to_owned()));
    }
    writer::write_stream_with(conn, &headers, plan).await
}

/// The status, content type and message Ollama answers with for an error kind.
fn error_reply(kind: &ErrorKind, model: &str) -> (u16, &'static str, String) {
    match kind {
        // ollama.com's models, passed on by the local server (continuedev/continue#9233).
        ErrorKind::RateLimited { .. } => (
            429,
            GIN_JSON,
            "you've reached your hourly usage limit, please wait or upgrade to continue".into(),
        ),
        // server/sched.go, ErrMaxQueue, through handleScheduleError.
        ErrorKind::Server(503) => (
            503,
            GIN_JSON,
            "server busy, please try again.  maximum pending requests exceeded".into(),
        ),
        // llm/llama_server.go: the runner died before answering.
        ErrorKind::Server(status) => (
            *status,
            STREAM_JSON,
            "llama-server process has terminated: exit status 2".into(),
        ),
        // server/cloud_proxy.go.
        ErrorKind::Unauthorized => (401, GIN_JSON, "unauthorized".into()),
        // server/routes.go with cloud disabled (internal/cloud/policy.go).
        ErrorKind::Forbidden => (
            403,
            GIN_JSON,
            "ollama cloud is disabled: remote model is unavailable".into(),
        ),
        // server/routes.go, ChatHandler, when the model is not pulled.
        ErrorKind::ModelNotFound => (404, GIN_JSON, format!("model '{model}' not found")),
        ErrorKind::BadRequest(message) => (400, GIN_JSON, message.clone()),
        // llm/llama_server.go, a StatusError(400) before the first line.
        ErrorKind::ContextOverflow => (400, STREAM_JSON, PROMPT_TOO_LONG.into()),
    }
}

/// `{"error":"..."}` as Go encodes it (no newline: gin's `c.JSON`).
pub(crate) fn error_line(message: &str) -> String {
    format!(r#"{{"error":{}}}"#, go_str(message))
}

/// The lines of a turn, without their newlines; `now` is the first line's `created_at`.
pub(crate) fn render(turn: &Turn, request_model: &str, now: SystemTime) -> Vec<String> {
    let model = go_str(if turn.model.is_empty() {
        request_model
    } else {
        &turn.model
    });
    let mut lines = Vec::new();
    let mut line = |message: String, done: &str| {
        // The lines of a real stream are a few milliseconds apart.
        let at = now + Duration::from_micros(11_237 * lines.len() as u64);
        lines.push(format!(
            r#"{{"model":{model},"created_at":{},"message":{{"role":"assistant",{message}}},"done":{done}}}"#,
            go_str(&rfc3339_nano(at))
        ));
    };
    for piece in &turn.reasoning {
        line(
            format!(r#""content":"","thinking":{}"#, go_str(piece)),
            "false",
        );
    }
    for piece in &turn.text {
        line(format!(r#""content":{}"#, go_str(piece)), "false");
    }
    let calls: Vec<String> = turn
        .tool_calls
        .iter()
        .enumerate()
        .filter_map(|(i, call)| tool_call(i, call))
        .collect();
    if !calls.is_empty() {
        line(
            format!(r#""content":"","tool_calls":[{}]"#, calls.join(",")),
            "false",
        );
    }
    let reason = turn.finish.as_deref().unwrap_or("stop");
    let mut done = "true".to_owned();
    if !reason.is_empty() {
        done.push_str(&format!(r#","done_reason":{}"#, go_str(reason)));
    }
    let (prompt, output) = turn.usage.unwrap_or((0, 0));
    done.push_str(r#","total_duration":182242375,"load_duration":41295167"#);
    if prompt > 0 {
        done.push_str(&format!(r#","prompt_eval_count":{prompt}"#));
    }
    done.push_str(r#","prompt_eval_duration":24573166"#);
    if output > 0 {
        done.push_str(&format!(r#","eval_count":{output}"#));
    }
    done.push_str(r#","eval_duration":115959084"#);
    line(r#""content":"""#.to_owned(), &done);
    lines
}

/// One whole call, or None when its arguments are not a JSON object.
fn tool_call(index: usize, call: &ScriptedToolCall) -> Option<String> {
    let arguments = go_compact_object(&call.argument_chunks.concat())?;
    let id = if call.id.is_empty() {
        String::new()
    } else {
        format!(r#""id":{},"#, go_str(&call.id))
    };
    Some(format!(
        r#"{{{id}"function":{{"index":{index},"name":{},"arguments":{arguments}}}}}"#,
        go_str(&call.name)
    ))
}

/// The writes of a rendered turn, with its fault and framing options applied: a pause of
/// `event_delay` before every line but the first, `split_every`, and no newline after the last
/// line with `no_trailing_newline` (the SSE-only options have no NDJSON meaning).
fn plan(turn: &Turn, model: &str, mut lines: Vec<String>) -> Plan {
    let ending = match &turn.fault {
        None => Ending::Complete,
        Some(StreamFault::CutAfter(n)) => {
            lines.truncate(*n);
            Ending::Cut
        }
        Some(StreamFault::StallAfter(n)) => {
            lines.truncate(*n);
            Ending::Stall
        }
        Some(StreamFault::MalformedAfter(n)) => {
            let at = (*n).min(lines.len());
            lines.insert(at, malformed_line(model));
            Ending::Complete
        }
        Some(StreamFault::ErrorEventAfter(n)) => {
            lines.truncate(*n);
            lines.push(error_line(RUNNER_DIED));
            Ending::Complete
        }
    };
    let options = &turn.options;
    let count = lines.len();
    let mut ops = Vec::new();
    for (i, line) in lines.into_iter().enumerate() {
        if let Some(delay) = options.event_delay.filter(|d| i > 0 && !d.is_zero()) {
            ops.push(Op::Pause(delay));
        }
        let mut bytes = line.into_bytes();
        if !(i + 1 == count && options.no_trailing_newline) {
            bytes.push(b'\n');
        }
        ops.push(Op::Data(bytes));
    }
    Plan {
        ops,
        ending,
        split_every: options.split_every.map(|n| n.max(1)),
    }
}

/// A line cut off in the middle of its JSON.
fn malformed_line(model: &str) -> String {
    format!(
        r#"{{"model":{},"created_at":"2025-07-07T20:22:19.184789Z","message":{{"role":"assistant","content":"x""#,
        go_str(model)
    )
}

/// A JSON string literal as Go's encoding/json writes it: serde_json's escapes, plus `<`, `>`,
/// `&`, U+2028 and U+2029 as `\u` escapes.
pub(crate) fn go_str(text: &str) -> String {
    let plain = serde_json::Value::String(text.to_owned()).to_string();
    let mut out = String::with_capacity(plain.len());
    for c in plain.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// A JSON object's text as Go writes it back: compact, keys in their order (Ollama keeps the
/// arguments' order), strings re-encoded by [`go_str`], numbers as written. None when the text
/// is not a JSON object.
fn go_compact_object(text: &str) -> Option<String> {
    if !serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| v.is_object()) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '"' {
            let end = string_end(rest)?;
            let value: String = serde_json::from_str(&rest[..end]).ok()?;
            out.push_str(&go_str(&value));
            rest = &rest[end..];
        } else {
            if !c.is_whitespace() {
                out.push(c);
            }
            rest = &rest[c.len_utf8()..];
        }
    }
    Some(out)
}

/// The length of the string literal `text` starts with, quotes included.
fn string_end(text: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in text.char_indices().skip(1) {
        match (escaped, c) {
            (true, _) => escaped = false,
            (false, '\\') => escaped = true,
            (false, '"') => return Some(i + 1),
            _ => {}
        }
    }
    None
}

/// A time as Go's `time.Time` marshals in UTC (RFC 3339 with nanoseconds, trailing zeros and an
/// empty fraction left out).
pub(crate) fn rfc3339_nano(at: SystemTime) -> String {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (year, month, day) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    let nanos = since.subsec_nanos();
    let fraction = if nanos == 0 {
        String::new()
    } else {
        format!(".{nanos:09}").trim_end_matches('0').to_owned()
    };
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}{fraction}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The proleptic Gregorian date of a day count from 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_as_go_writes_them() {
        assert_eq!(rfc3339_nano(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let at = UNIX_EPOCH + Duration::new(1_751_919_739, 184_789_000);
        assert_eq!(rfc3339_nano(at), "2025-07-07T20:22:19.184789Z");
        let leap = UNIX_EPOCH + Duration::new(951_782_400, 1);
        assert_eq!(rfc3339_nano(leap), "2000-02-29T00:00:00.000000001Z");
    }

    #[test]
    fn strings_and_arguments_are_encoded_as_go_encodes_them() {
        assert_eq!(
            go_str("a<b>&\u{2028}\"é\n"),
            r#""a\u003cb\u003e\u0026\u2028\"é\n""#
        );
        assert_eq!(
            go_compact_object("{ \"z\" : 1, \"a\": [ \"x y\", \"\\u00e9<\" ] }").as_deref(),
            Some(r#"{"z":1,"a":["x y","é\u003c"]}"#)
        );
        assert_eq!(go_compact_object(r#"{"cmd":"ls"#), None);
        assert_eq!(go_compact_object("[1]"), None);
    }

    #[test]
    fn a_turn_renders_as_ollamas_lines() {
        let turn = Turn {
            reasoning: vec!["Hm.".into()],
            text: vec!["Hi".into()],
            tool_calls: vec![ScriptedToolCall {
                id: String::new(),
                name: "get_weather".into(),
                argument_chunks: vec![r#"{"city":"#.into(), r#""Tokyo"}"#.into()],
            }],
            usage: Some((169, 15)),
            ..Turn::default()
        };
        let at = UNIX_EPOCH + Duration::new(1_751_919_739, 184_789_000);
        let lines = render(&turn, "llama3.2", at);
        assert_eq!(
            lines,
            [
                r#"{"model":"llama3.2","created_at":"2025-07-07T20:22:19.184789Z","message":{"role":"assistant","content":"","thinking":"Hm."},"done":false}"#,
                r#"{"model":"llama3.2","created_at":"2025-07-07T20:22:19.196026Z","message":{"role":"assistant","content":"Hi"},"done":false}"#,
                r#"{"model":"llama3.2","created_at":"2025-07-07T20:22:19.207263Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"index":0,"name":"get_weather","arguments":{"city":"Tokyo"}}}]},"done":false}"#,
                r#"{"model":"llama3.2","created_at":"2025-07-07T20:22:19.2185Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":182242375,"load_duration":41295167,"prompt_eval_count":169,"prompt_eval_duration":24573166,"eval_count":15,"eval_duration":115959084}"#,
            ]
        );
    }

    #[test]
    fn errors_are_ollamas() {
        assert_eq!(
            error_line("model 'x' not found"),
            r#"{"error":"model 'x' not found"}"#
        );
        let (status, _, message) = error_reply(&ErrorKind::ModelNotFound, "qwen3:8b");
        assert_eq!(
            (status, message.as_str()),
            (404, "model 'qwen3:8b' not found")
        );
        let (status, kind, message) = error_reply(&ErrorKind::ContextOverflow, "m");
        assert_eq!((status, kind), (400, STREAM_JSON));
        assert!(message.contains("longer than the context length"));
    }
}
