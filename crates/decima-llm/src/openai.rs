//! The OpenAI-compatible chat-completions protocol: request bodies and stream decoding. DeepSeek,
//! Qwen, Moonshot, GLM, OpenRouter, Ollama, LM Studio, llama.cpp and vLLM speak it too.

use std::borrow::Cow;

use decima_core::{FailureClass, Role};
use eventsource_stream::Event;
use serde_json::{Map, Value, json};

use crate::provider::ProviderConfig;
use crate::tool_calls::{ToolCallAssembler, ToolCallDelta, closing_events};
use crate::transport::Decoded;
use crate::{
    ChatMessage, ChatRequest, FinishReason, LlmError, StreamEvent, ToolChoice, Usage,
    classify_error_kind, classify_status,
};

/// Authorization header, when there is a key.
pub(crate) fn headers(config: &ProviderConfig) -> Vec<(&'static str, String)> {
    match &config.api_key {
        Some(key) => vec![("authorization", format!("Bearer {}", key.expose()))],
        None => Vec::new(),
    }
}

/// The JSON body of a streamed chat completion.
pub fn request_body(config: &ProviderConfig, request: &ChatRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    let signatures = speaks_gemini(config, request).then(|| {
        // Gemini checks the signatures of the current turn: the calls after the last user message.
        request
            .messages
            .iter()
            .rposition(|m| m.role == Role::User)
            .map_or(0, |last| last + 1)
    });
    body.insert(
        "messages".into(),
        Value::Array(
            request
                .messages
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    let signing = signatures.map(|turn_start| Signing {
                        current_turn: i >= turn_start,
                    });
                    message(config, m, signing)
                })
                .collect(),
        ),
    );
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({ "include_usage": true }));
    // OpenAI caches repeated prefixes on its own; the key routes a conversation's requests to
    // where its prefix is. Strict servers refuse fields they do not know, so only where taken.
    if config.prompt_cache_key
        && let Some(key) = &request.cache.key
    {
        body.insert("prompt_cache_key".into(), json!(key));
    }
    if !request.tools.is_empty() {
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
        if let Some(parallel) = request.parallel_tool_calls {
            body.insert("parallel_tool_calls".into(), json!(parallel));
        }
    }
    if let Some(choice) = &request.tool_choice {
        let value = match choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::None => json!("none"),
            ToolChoice::Required => json!("required"),
            ToolChoice::Tool(name) => json!({ "type": "function", "function": { "name": name } }),
        };
        body.insert("tool_choice".into(), value);
    }
    if let Some(max) = request.max_tokens {
        let field = if config.max_completion_tokens {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body.insert(field.into(), json!(max));
    }
    if let Some(t) = request.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(format) = &request.response_format
        && config.supports_json_schema
    {
        let schema = if config.grammar_decoding {
            format.schema.clone()
        } else {
            without_length_bounds(&format.schema)
        };
        body.insert(
            "response_format".into(),
            json!({
                "type": "json_schema",
                "json_schema": { "name": format.name, "schema": schema, "strict": format.strict }
            }),
        );
    }
    Value::Object(body)
}

/// A schema without `minLength` and `maxLength`, which strict hosted APIs refuse (Azure's and
/// OpenAI's strict mode list them as unsupported); a grammar-decoding local server keeps them,
/// and they are what stops a small model from writing one string until the output cap.
pub fn without_length_bounds(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "minLength" | "maxLength"))
                .map(|(k, v)| (k.clone(), without_length_bounds(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_length_bounds).collect()),
        other => other.clone(),
    }
}

/// What Gemini's OpenAI endpoint accepts in place of a thought signature, for a call Gemini did
/// not write itself (a history from another model, an imported conversation): the value Google's
/// thought-signatures guide gives for that case.
pub const UNSIGNED_CALL: &str = "skip_thought_signature_validator";

/// Whether the server is Gemini, which wants each call's `thought_signature` back: Google's
/// endpoints, or a Gemini model behind a proxy. Other servers never see the field.
fn speaks_gemini(config: &ProviderConfig, request: &ChatRequest) -> bool {
    [&config.model, &request.model]
        .iter()
        .any(|model| model.to_ascii_lowercase().contains("gemini"))
        || config.base_url.contains(".googleapis.com")
}

/// How a message's calls carry thought signatures, for Gemini.
#[derive(Clone, Copy)]
struct Signing {
    /// In the current turn, Gemini 3 refuses a step whose calls carry no signature at all.
    current_turn: bool,
}

/// One call as sent back; `first` marks the first call of its message, where Gemini wants the
/// signature of parallel calls.
fn tool_call(
    c: &decima_core::ToolCall,
    first: bool,
    unsigned: bool,
    signing: Option<Signing>,
) -> Value {
    let mut call = json!({ "id": c.id, "type": "function", "function": { "name": c.name, "arguments": c.arguments } });
    if let Some(signing) = signing {
        let signature = c
            .signature
            .as_deref()
            .or((signing.current_turn && first && unsigned).then_some(UNSIGNED_CALL));
        if let Some(signature) = signature {
            call["extra_content"] = json!({ "google": { "thought_signature": signature } });
        }
    }
    call
}

fn message(config: &ProviderConfig, m: &ChatMessage, signing: Option<Signing>) -> Value {
    let mut out = Map::new();
    out.insert("role".into(), json!(m.role.as_str()));
    match m.role {
        Role::Assistant => {
            if m.content.is_empty() && !m.tool_calls.is_empty() {
                out.insert("content".into(), Value::Null);
            } else {
                out.insert("content".into(), json!(m.content));
            }
            if !m.tool_calls.is_empty() {
                let unsigned = m.tool_calls.iter().all(|c| c.signature.is_none());
                let calls: Vec<Value> = m
                    .tool_calls
                    .iter()
                    .enumerate()
                    .map(|(i, c)| tool_call(c, i == 0, unsigned, signing))
                    .collect();
                out.insert("tool_calls".into(), Value::Array(calls));
            }
            if config.reasoning_echo
                && let Some(reasoning) = &m.reasoning
            {
                out.insert(config.reasoning_field.as_str().into(), json!(reasoning));
            }
        }
        Role::Tool => {
            out.insert("content".into(), json!(m.content));
            out.insert(
                "tool_call_id".into(),
                json!(m.tool_call_id.as_deref().unwrap_or_default()),
            );
        }
        Role::System | Role::User => {
            out.insert("content".into(), json!(m.content));
        }
    }
    if let Some(name) = &m.name
        && m.role != Role::Tool
    {
        out.insert("name".into(), json!(name));
    }
    Value::Object(out)
}

/// Decodes `chat.completion.chunk` events, and the whole `chat.completion` of a server that
/// ignores `"stream": true`. Text and reasoning go out as they arrive. Tool calls, the finish
/// reason and usage go out once the answer is complete (`[DONE]` or the end of the body): servers
/// send empty finish reasons on every chunk, finish reasons on every chunk, and argument deltas
/// in the same chunk as the finish or after it, so only the whole answer says what was called.
#[derive(Default)]
pub struct Decoder {
    tools: ToolCallAssembler,
    finish: Option<FinishReason>,
    usage: Option<Usage>,
    /// The first chunk's `id`, which seeds the ids generated for calls sent without one.
    response_id: Option<String>,
    finished: bool,
}

impl Decoder {
    pub(crate) fn decode(&mut self, provider: &str, event: &Event) -> Result<Decoded, LlmError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            return Ok(Decoded {
                events: self.finish(provider)?,
                done: true,
            });
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| LlmError::Protocol {
            provider: provider.to_string(),
            detail: format!("a stream chunk is not valid JSON ({e})"),
        })?;
        Ok(Decoded {
            events: self.chunk(provider, &chunk, false)?,
            done: false,
        })
    }

    /// A whole JSON body answering a streaming request: a non-streamed chat completion, decoded
    /// into the same events a stream gives, or the error object it carries, classified.
    pub(crate) fn decode_body(
        &mut self,
        provider: &str,
        body: &[u8],
    ) -> Result<Vec<StreamEvent>, LlmError> {
        let value: Value = serde_json::from_slice(body).map_err(|e| LlmError::Protocol {
            provider: provider.to_string(),
            detail: format!("a JSON answer to a streaming request does not parse ({e})"),
        })?;
        let mut events = self.chunk(provider, &value, true)?;
        events.extend(self.finish(provider)?);
        Ok(events)
    }

    /// One chunk (or a whole completion, whose choice has a `message` instead of a `delta`).
    fn chunk(
        &mut self,
        provider: &str,
        chunk: &Value,
        whole: bool,
    ) -> Result<Vec<StreamEvent>, LlmError> {
        if let Some(error) = error_in(provider, chunk) {
            return Err(error);
        }
        if self.response_id.is_none() {
            self.response_id = chunk.get("id").and_then(Value::as_str).map(str::to_owned);
        }
        let mut events = Vec::new();
        if let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        {
            let delta = choice.get(if whole { "message" } else { "delta" });
            if let Some(delta) = delta.filter(|d| d.is_object()) {
                if let Some(text) = reasoning(delta) {
                    events.push(StreamEvent::ReasoningDelta(text.to_string()));
                }
                if let Some(text) = delta.get("content").and_then(Value::as_str)
                    && !text.is_empty()
                {
                    events.push(StreamEvent::TextDelta(text.to_string()));
                }
                if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                    for (position, call) in calls.iter().enumerate() {
                        self.tool_call_delta(call, whole.then_some(position as u64));
                    }
                }
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason(provider, reason)?;
            }
            // Moonshot puts usage in the finish chunk's choice (higress-group/higress#1568).
            if let Some(usage) = usage(choice) {
                self.usage = Some(usage);
            }
        }
        if let Some(usage) = usage(chunk) {
            self.usage = Some(usage);
        }
        Ok(events)
    }

    /// One entry of `tool_calls`. `position` is its place in a whole completion's list, used as
    /// its index there; streamed deltas without an index have none.
    fn tool_call_delta(&mut self, call: &Value, position: Option<u64>) {
        let function = call.get("function");
        // LiteLLM's ollama_chat sends arguments as a JSON object (BerriAI/litellm#37792).
        let arguments: Option<Cow<'_, str>> = match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(text)) => Some(Cow::Borrowed(text)),
            None | Some(Value::Null) => None,
            Some(other) => Some(Cow::Owned(other.to_string())),
        };
        self.tools.apply_delta(ToolCallDelta {
            index: call.get("index").and_then(Value::as_u64).or(position),
            id: call.get("id").and_then(Value::as_str),
            name: function.and_then(|f| f.get("name")).and_then(Value::as_str),
            arguments: arguments.as_deref(),
            signature: call
                .pointer("/extra_content/google/thought_signature")
                .and_then(Value::as_str),
        });
    }

    /// Notes a finish reason. Only a non-empty one ends the answer: Ollama and SGLang send `""`
    /// on every chunk. Reasons that mean the server failed are errors, so the answer is retried
    /// rather than kept half-written.
    fn finish_reason(&mut self, provider: &str, reason: &str) -> Result<(), LlmError> {
        match reason.trim() {
            // DashScope's native API spells "not yet" as the string "null".
            "" | "null" => Ok(()),
            // OpenRouter ends a stream that failed mid-way on "error" (with an error object,
            // handled before; this is for one without).
            "error" => Err(LlmError::StreamError {
                provider: provider.to_string(),
                kind: "error".into(),
                message: "the server ended the answer with finish_reason \"error\"".into(),
                class: FailureClass::Transient,
            }),
            // DeepSeek: "the request is interrupted due to insufficient resource".
            "insufficient_system_resource" => Err(LlmError::StreamError {
                provider: provider.to_string(),
                kind: "insufficient_system_resource".into(),
                message: "the server ran out of resources and interrupted the answer".into(),
                class: FailureClass::Transient,
            }),
            other => {
                self.finish = Some(finish_reason(other));
                Ok(())
            }
        }
    }

    /// At `[DONE]` or the end of the body: the tool calls, the finish reason and the usage, once.
    /// A stream that never said why it finished was cut. Calls of an answer that ended on the
    /// output limit are reported cut off, their arguments as received, never repaired; calls
    /// without an id get a generated one; a tool-calling answer whose server said `stop` (Gemini,
    /// googleapis/python-genai#2868) finishes on `ToolCalls`.
    pub(crate) fn finish(&mut self, provider: &str) -> Result<Vec<StreamEvent>, LlmError> {
        if self.finished {
            return Ok(Vec::new());
        }
        let Some(mut finish) = self.finish.clone() else {
            return Err(LlmError::Stream {
                provider: provider.to_string(),
                detail: "the stream ended before the model finished its answer".into(),
            });
        };
        self.finished = true;
        let calls = self.tools.take();
        if finish == FinishReason::Stop && !calls.is_empty() {
            finish = FinishReason::ToolCalls;
        }
        let seed = self.response_id.as_deref().unwrap_or_default();
        closing_events(calls, finish, seed, self.usage)
    }
}

/// The reasoning of a delta, once: vLLM sends `reasoning_content` and `reasoning` together with
/// the same text (vllm-project/vllm#34030), so the second is read only when the first is empty.
/// OpenRouter's `reasoning_details` repeat `reasoning` and are not read.
fn reasoning(delta: &Value) -> Option<&str> {
    ["reasoning_content", "reasoning"]
        .into_iter()
        .filter_map(|key| delta.get(key).and_then(Value::as_str))
        .find(|text| !text.is_empty())
}

/// Usage, where an object has it.
fn usage(object: &Value) -> Option<Usage> {
    let usage = object.get("usage").filter(|u| u.is_object())?;
    // Cache hits: OpenAI's (and vLLM's, SGLang's, OpenRouter's) `prompt_tokens_details`, or
    // DeepSeek's own field. Neither charges for writing the cache.
    let cached = usage
        .pointer("/prompt_tokens_details/cached_tokens")
        .and_then(Value::as_u64)
        .or_else(|| usage.get("prompt_cache_hit_tokens").and_then(Value::as_u64))
        .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX));
    Some(Usage {
        prompt_tokens: count(usage, "prompt_tokens"),
        completion_tokens: count(usage, "completion_tokens"),
        cache_read_tokens: cached,
        cache_write_tokens: 0,
    })
}

/// The error a chunk or body carries: OpenAI's `{"error": {...}}` (OpenRouter's with a numeric
/// HTTP-like `code`), a bare `{"error": "text"}` (text-generation-inference), or vLLM's
/// `{"object": "error", "message", "type", "code"}`.
fn error_in(provider: &str, chunk: &Value) -> Option<LlmError> {
    let error = match chunk.get("error") {
        Some(error) if !error.is_null() => error,
        _ if chunk.get("object").and_then(Value::as_str) == Some("error") => chunk,
        _ => return None,
    };
    let text = |key: &str| error.get(key).and_then(Value::as_str);
    let message = error
        .as_str()
        .or_else(|| text("message"))
        .unwrap_or("unknown error")
        .to_string();
    let status = error
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| (400..600).contains(c));
    let kind = text("type")
        .or_else(|| text("code"))
        .or_else(|| chunk.get("error_type").and_then(Value::as_str))
        .map(str::to_owned)
        .or_else(|| status.map(|s| s.to_string()))
        .unwrap_or_else(|| "error".into());
    let class = match status {
        Some(status) => classify_status(status, &message),
        None => classify_kind(&kind, &message),
    };
    Some(LlmError::StreamError {
        provider: provider.to_string(),
        kind,
        message,
        class,
    })
}

/// [`classify_error_kind`], which knows OpenAI's and Anthropic's types, plus the server-failure
/// types of other servers (vLLM's `InternalServerError`, `ServiceUnavailableError`, ...).
fn classify_kind(kind: &str, message: &str) -> FailureClass {
    let class = classify_error_kind(kind, message);
    let lower = kind.to_ascii_lowercase();
    let transient = ["server", "overload", "unavailable", "timeout", "rate_limit"]
        .iter()
        .any(|needle| lower.contains(needle));
    if class == FailureClass::Data && transient {
        FailureClass::Transient
    } else {
        class
    }
}

fn count(usage: &Value, key: &str) -> u32 {
    usage
        .get(key)
        .and_then(Value::as_u64)
        .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
        .unwrap_or(0)
}

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::Stop,
        "length" => FinishReason::Length,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        // Zhipu stops a stream its moderation flags with "sensitive"
        // (docs.bigmodel.cn/cn/guide/platform/securityaudit).
        "content_filter" | "sensitive" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{JsonSchemaFormat, Protocol};

    #[test]
    fn length_bounds_reach_a_grammar_decoding_server_and_never_a_strict_hosted_one() {
        let schema = json!({
            "type": "object",
            "properties": {
                "summary": { "type": "string", "minLength": 1, "maxLength": 600 },
                "findings": { "type": "array", "maxItems": 3,
                              "items": { "type": "string", "maxLength": 200 } }
            },
            "required": ["summary", "findings"],
            "additionalProperties": false
        });
        let request = ChatRequest {
            model: "m".into(),
            response_format: Some(JsonSchemaFormat {
                name: "review".into(),
                schema: schema.clone(),
                strict: true,
            }),
            ..ChatRequest::default()
        };
        let mut config = ProviderConfig::new("p", Protocol::OpenAi, "http://x/v1", "m");
        config.supports_json_schema = true;
        let hosted = request_body(&config, &request);
        let sent = &hosted["response_format"]["json_schema"]["schema"];
        assert!(!sent.to_string().contains("Length"), "{sent}");
        assert_eq!(sent["properties"]["findings"]["maxItems"], 3);
        config.grammar_decoding = true;
        let local = request_body(&config, &request);
        assert_eq!(local["response_format"]["json_schema"]["schema"], schema);
    }

    #[test]
    fn the_output_cap_goes_by_the_name_the_server_wants() {
        let request = ChatRequest {
            model: "o3".into(),
            max_tokens: Some(2_048),
            ..ChatRequest::default()
        };
        let mut config = ProviderConfig::new("p", Protocol::OpenAi, "http://x/v1", "o3");
        let body = request_body(&config, &request);
        assert_eq!(
            (
                body["max_tokens"].as_u64(),
                body.get("max_completion_tokens")
            ),
            (Some(2_048), None)
        );
        config.max_completion_tokens = true;
        let body = request_body(&config, &request);
        assert_eq!(
            (
                body["max_completion_tokens"].as_u64(),
                body.get("max_tokens")
            ),
            (Some(2_048), None)
        );
        let openai = crate::presets::find("openai").unwrap();
        assert!(openai.max_completion_tokens);
        assert!(
            !crate::presets::find("llamacpp")
                .unwrap()
                .max_completion_tokens
        );
    }
}
