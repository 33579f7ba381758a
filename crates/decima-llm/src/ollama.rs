//! Ollama's native chat protocol: `POST {root}/api/chat`, answered with NDJSON (one JSON object
//! per line). Decima speaks it to Ollama servers because their OpenAI-compatible endpoint drops
//! an `options` object, so only here can a request set the window the model is loaded with
//! (`options.num_ctx`); without it Ollama's small default window cuts long prompts from the front.
//!
//! Shapes follow ollama/ollama `api/types.go` (`ChatRequest`, `Message`, `ToolCall`,
//! `ChatResponse`, `Metrics`, `Options`) and `server/routes.go` (`ChatHandler`,
//! `streamResponse`): tool calls arrive whole in `message.tool_calls` with their arguments as a
//! JSON object, reasoning in `message.thinking`, and the last line has `done: true`, the
//! `done_reason` and the token counts. An error before the first line is an HTTP status with
//! `{"error": "..."}`; one after it is an `{"error": "..."}` line.

use std::collections::HashMap;

use decima_core::Role;
use serde_json::{Map, Value, json};

use crate::provider::ProviderConfig;
use crate::tool_calls::{PartialToolCall, closing_events};
use crate::transport::Decoded;
use crate::{
    ChatMessage, ChatRequest, FinishReason, LlmError, StreamEvent, ToolChoice, Usage,
    classify_status, openai,
};

/// Authorization header, when there is a key: a local Ollama takes none, but one behind an
/// authenticating proxy (or ollama.com) wants a bearer token, as on its OpenAI endpoint.
pub(crate) fn headers(config: &ProviderConfig) -> Vec<(&'static str, String)> {
    openai::headers(config)
}

/// The server's root: the base URL without a trailing `/` or `/v1`, so the preset's
/// OpenAI-style `http://localhost:11434/v1` and a bare `http://localhost:11434` both work.
pub fn root(base_url: &str) -> &str {
    let base = base_url.trim_end_matches('/');
    base.strip_suffix("/v1")
        .unwrap_or(base)
        .trim_end_matches('/')
}

/// Where the native chat endpoint is: `{root}/api/chat`.
pub fn chat_url(base_url: &str) -> String {
    format!("{}/api/chat", root(base_url))
}

/// The JSON body of a streamed native chat request. `options` carries the window
/// ([`ProviderConfig::num_ctx`]), the output cap (`num_predict`, from `max_tokens`) and the
/// temperature; a JSON schema goes in `format` (Ollama's structured outputs); `think` is left
/// unset, so each model keeps its default. Ollama has no tool choice: `ToolChoice::None` sends no
/// tools, and a required or named tool is left to the model.
pub fn request_body(config: &ProviderConfig, request: &ChatRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    // A tool result names its tool (`tool_name`), which Decima's messages know only by call id.
    let mut names: HashMap<&str, &str> = HashMap::new();
    let mut messages = Vec::with_capacity(request.messages.len());
    for m in &request.messages {
        for call in &m.tool_calls {
            names.insert(call.id.as_str(), call.name.as_str());
        }
        messages.push(message(m, &names));
    }
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() && request.tool_choice != Some(ToolChoice::None) {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": { "name": t.name, "description": t.description, "parameters": t.parameters }
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), json!(true));
    if let Some(format) = &request.response_format {
        body.insert("format".into(), format.schema.clone());
    }
    let mut options = Map::new();
    if let Some(num_ctx) = config.num_ctx {
        options.insert("num_ctx".into(), json!(num_ctx));
    }
    if let Some(max) = request.max_tokens {
        options.insert("num_predict".into(), json!(max));
    }
    if let Some(t) = request.temperature {
        options.insert("temperature".into(), json!(t));
    }
    if !options.is_empty() {
        body.insert("options".into(), Value::Object(options));
    }
    Value::Object(body)
}

/// One message. `names` maps the call ids seen so far to their tools' names.
fn message(m: &ChatMessage, names: &HashMap<&str, &str>) -> Value {
    let mut out = Map::new();
    out.insert("role".into(), json!(m.role.as_str()));
    out.insert("content".into(), json!(m.content));
    if m.role == Role::Assistant {
        // Ollama's templates put a turn's thinking back where the model expects it.
        if let Some(reasoning) = m.reasoning.as_deref().filter(|r| !r.is_empty()) {
            out.insert("thinking".into(), json!(reasoning));
        }
        if !m.tool_calls.is_empty() {
            let calls: Vec<Value> = m
                .tool_calls
                .iter()
                .map(|c| {
                    json!({
                        "id": c.id,
                        "function": { "name": c.name, "arguments": arguments_object(&c.arguments) }
                    })
                })
                .collect();
            out.insert("tool_calls".into(), Value::Array(calls));
        }
    }
    if !m.images.is_empty() {
        let images: Vec<Value> = m.images.iter().map(|i| json!(&*i.data)).collect();
        out.insert("images".into(), Value::Array(images));
    }
    if m.role == Role::Tool {
        let id = m.tool_call_id.as_deref().unwrap_or_default();
        if let Some(name) = names.get(id) {
            out.insert("tool_name".into(), json!(name));
        }
        if !id.is_empty() {
            out.insert("tool_call_id".into(), json!(id));
        }
    }
    Value::Object(out)
}

/// Decima keeps arguments as JSON text; Ollama takes an object and refuses the whole request
/// when it gets anything else, so text that is not an object goes as `{}`.
fn arguments_object(text: &str) -> Value {
    match serde_json::from_str::<Value>(text) {
        Ok(object @ Value::Object(_)) => object,
        _ => {
            tracing::warn!("tool call arguments are not a JSON object; sending {{}} to Ollama");
            json!({})
        }
    }
}

/// Decodes the NDJSON lines of a native chat answer. Text and thinking go out as they arrive;
/// tool calls (which Ollama sends whole), the finish reason and usage go out at the `done` line,
/// so that an answer cut by the output cap never yields a call to run.
#[derive(Default)]
pub struct Decoder {
    calls: Vec<PartialToolCall>,
    /// The first line's `created_at`, which seeds the ids generated for calls sent without one.
    seed: Option<String>,
    finished: bool,
}

impl Decoder {
    /// One line of the stream (blank lines never reach here).
    pub(crate) fn decode(&mut self, provider: &str, line: &str) -> Result<Decoded, LlmError> {
        let value: Value = serde_json::from_str(line.trim()).map_err(|e| LlmError::Protocol {
            provider: provider.to_string(),
            detail: format!("a line of the Ollama stream is not valid JSON ({e})"),
        })?;
        if !value.is_object() {
            return Err(LlmError::Protocol {
                provider: provider.to_string(),
                detail: "a line of the Ollama stream is not a JSON object".into(),
            });
        }
        if let Some(error) = error_in(provider, &value) {
            return Err(error);
        }
        if self.seed.is_none() {
            self.seed = value
                .get("created_at")
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        let mut events = Vec::new();
        if let Some(message) = value.get("message").filter(|m| m.is_object()) {
            let text = |key: &str| {
                message
                    .get(key)
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
                    .map(str::to_owned)
            };
            if let Some(thinking) = text("thinking") {
                events.push(StreamEvent::ReasoningDelta(thinking));
            }
            if let Some(content) = text("content") {
                events.push(StreamEvent::TextDelta(content));
            }
            if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
                self.calls.extend(calls.iter().map(tool_call));
            }
        }
        let done = value.get("done").and_then(Value::as_bool) == Some(true);
        if done {
            events.extend(self.done(&value)?);
        }
        Ok(Decoded { events, done })
    }

    /// A whole body answering the streaming request (a proxy that buffered it): its lines,
    /// decoded in order, up to the `done` line.
    pub(crate) fn decode_body(
        &mut self,
        provider: &str,
        body: &[u8],
    ) -> Result<Vec<StreamEvent>, LlmError> {
        let text = std::str::from_utf8(body).map_err(|e| LlmError::Protocol {
            provider: provider.to_string(),
            detail: format!("the Ollama answer is not UTF-8 ({e})"),
        })?;
        let mut events = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let decoded = self.decode(provider, line)?;
            events.extend(decoded.events);
            if decoded.done {
                return Ok(events);
            }
        }
        events.extend(self.finish(provider)?);
        Ok(events)
    }

    /// At the end of the body: nothing after the `done` line; without one the answer was cut.
    pub(crate) fn finish(&mut self, provider: &str) -> Result<Vec<StreamEvent>, LlmError> {
        if self.finished {
            return Ok(Vec::new());
        }
        Err(LlmError::Stream {
            provider: provider.to_string(),
            detail: "the stream ended before the model finished its answer (no line with \
                     \"done\": true)"
                .into(),
        })
    }

    /// The `done` line: the calls (cut off when the output cap ended the answer), the finish
    /// reason, the usage.
    fn done(&mut self, line: &Value) -> Result<Vec<StreamEvent>, LlmError> {
        self.finished = true;
        let calls = std::mem::take(&mut self.calls);
        let finish = match line.get("done_reason").and_then(Value::as_str) {
            Some("length") => FinishReason::Length,
            _ if !calls.is_empty() => FinishReason::ToolCalls,
            None | Some("" | "stop") => FinishReason::Stop,
            Some(other) => FinishReason::Other(other.to_owned()),
        };
        let seed = self.seed.as_deref().unwrap_or_default();
        closing_events(calls, finish, seed, usage(line))
    }
}

/// One entry of `message.tool_calls`: `{"id"?, "function": {"index"?, "name", "arguments"}}`,
/// the arguments an object (kept as JSON text, as Decima stores them).
fn tool_call(call: &Value) -> PartialToolCall {
    let function = call.get("function");
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_owned();
    let arguments = match function.and_then(|f| f.get("arguments")) {
        None | Some(Value::Null) => "{}".to_owned(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    };
    PartialToolCall {
        id: text(call.get("id")),
        name: text(function.and_then(|f| f.get("name"))),
        arguments,
        signature: None,
    }
}

/// The token counts of the `done` line, where it has any (Go leaves out a count of 0). Ollama
/// reports no cache hits.
fn usage(line: &Value) -> Option<Usage> {
    let count = |key: &str| line.get(key).and_then(Value::as_u64);
    let (prompt, completion) = (count("prompt_eval_count"), count("eval_count"));
    if prompt.is_none() && completion.is_none() {
        return None;
    }
    let tokens = |n: Option<u64>| n.map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX));
    Some(Usage {
        prompt_tokens: tokens(prompt),
        completion_tokens: tokens(completion),
        cache_read_tokens: 0,
        cache_write_tokens: 0,
    })
}

/// The error a line carries: `{"error": "text"}` (with a `status` where Ollama kept one),
/// classified as an HTTP error with that status would be (500 when none): a context-length
/// message is an overflow, anything else a server failure.
fn error_in(provider: &str, line: &Value) -> Option<LlmError> {
    let error = line.get("error").filter(|e| !e.is_null())?;
    let message = match error {
        Value::String(text) => text.clone(),
        other => other
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| other.to_string(), str::to_owned),
    };
    let status = line
        .get("status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok())
        .filter(|s| (400..600).contains(s));
    Some(LlmError::StreamError {
        provider: provider.to_string(),
        kind: status.map_or_else(|| "error".to_owned(), |s| s.to_string()),
        class: classify_status(status.unwrap_or(500), &message),
        message,
    })
}

#[cfg(test)]
#[path = "ollama_tests.rs"]
mod tests;
