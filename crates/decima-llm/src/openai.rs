//! The OpenAI-compatible chat-completions protocol: request bodies and stream decoding. DeepSeek,
//! Qwen, Moonshot, GLM, OpenRouter, Ollama, LM Studio, llama.cpp and vLLM speak it too.

use decima_core::Role;
use eventsource_stream::Event;
use serde_json::{Map, Value, json};

use crate::error::stream_error;
use crate::provider::ProviderConfig;
use crate::tool_calls::ToolCallAssembler;
use crate::transport::Decoded;
use crate::{ChatMessage, ChatRequest, FinishReason, LlmError, StreamEvent, ToolChoice, Usage};

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
    body.insert(
        "messages".into(),
        Value::Array(
            request
                .messages
                .iter()
                .map(|m| message(config, m))
                .collect(),
        ),
    );
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({ "include_usage": true }));
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
        body.insert("max_tokens".into(), json!(max));
    }
    if let Some(t) = request.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(format) = &request.response_format
        && config.supports_json_schema
    {
        body.insert(
            "response_format".into(),
            json!({
                "type": "json_schema",
                "json_schema": { "name": format.name, "schema": format.schema, "strict": format.strict }
            }),
        );
    }
    Value::Object(body)
}

fn message(config: &ProviderConfig, m: &ChatMessage) -> Value {
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
                let calls: Vec<Value> = m
                    .tool_calls
                    .iter()
                    .map(|c| json!({ "id": c.id, "type": "function", "function": { "name": c.name, "arguments": c.arguments } }))
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

/// Decodes `chat.completion.chunk` events.
#[derive(Default)]
pub struct Decoder {
    tools: ToolCallAssembler,
    finish: Option<FinishReason>,
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
        if let Some(error) = chunk.get("error") {
            return Err(stream_error(provider, Some(error), "server_error"));
        }
        let mut events = Vec::new();
        if let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        {
            if let Some(delta) = choice.get("delta") {
                for key in ["reasoning_content", "reasoning"] {
                    if let Some(text) = delta.get(key).and_then(Value::as_str)
                        && !text.is_empty()
                    {
                        events.push(StreamEvent::ReasoningDelta(text.to_string()));
                    }
                }
                if let Some(text) = delta.get("content").and_then(Value::as_str)
                    && !text.is_empty()
                {
                    events.push(StreamEvent::TextDelta(text.to_string()));
                }
                if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                    for (position, call) in calls.iter().enumerate() {
                        let index = call
                            .get("index")
                            .and_then(Value::as_u64)
                            .unwrap_or(position as u64);
                        let function = call.get("function");
                        self.tools.apply(
                            index,
                            call.get("id").and_then(Value::as_str),
                            function.and_then(|f| f.get("name")).and_then(Value::as_str),
                            function
                                .and_then(|f| f.get("arguments"))
                                .and_then(Value::as_str),
                        );
                    }
                }
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish = Some(finish_reason(reason));
                events.extend(self.flush()?);
            }
        }
        if let Some(usage) = chunk.get("usage").filter(|u| !u.is_null()) {
            events.push(StreamEvent::Usage(Usage {
                prompt_tokens: count(usage, "prompt_tokens"),
                completion_tokens: count(usage, "completion_tokens"),
            }));
        }
        Ok(Decoded {
            events,
            done: false,
        })
    }

    /// Emits the tool calls and the finish reason once.
    fn flush(&mut self) -> Result<Vec<StreamEvent>, LlmError> {
        if self.finished {
            return Ok(Vec::new());
        }
        self.finished = true;
        let mut events: Vec<StreamEvent> = self
            .tools
            .finish()?
            .into_iter()
            .map(StreamEvent::ToolCall)
            .collect();
        if let Some(finish) = self.finish.clone() {
            events.push(StreamEvent::Finish(finish));
        }
        Ok(events)
    }

    /// At `[DONE]` or end of stream: a stream that never said why it finished was cut.
    pub(crate) fn finish(&mut self, provider: &str) -> Result<Vec<StreamEvent>, LlmError> {
        if self.finish.is_none() {
            return Err(LlmError::Stream {
                provider: provider.to_string(),
                detail: "the stream ended before the model finished its answer".into(),
            });
        }
        self.flush()
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
        "content_filter" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_string()),
    }
}
