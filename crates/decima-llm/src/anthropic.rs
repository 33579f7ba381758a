//! The Anthropic Messages protocol: request bodies (system parameter, content blocks, thinking
//! with its signature, tool_use and tool_result) and stream decoding.

use decima_core::Role;
use eventsource_stream::Event;
use serde_json::{Map, Value, json};

use crate::error::stream_error;
use crate::provider::ProviderConfig;
use crate::reasoning;
use crate::tool_calls::{PartialToolCall, finish_call};
use crate::transport::Decoded;
use crate::{
    CacheTtl, ChatMessage, ChatRequest, CutOffToolCall, FinishReason, LlmError, MAX_BREAKPOINTS,
    StreamEvent, ToolChoice, Usage,
};

/// The API version this module speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// Anthropic requires `max_tokens`; this applies when the request leaves it open.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// The key and version headers.
pub(crate) fn headers(config: &ProviderConfig) -> Vec<(&'static str, String)> {
    let mut headers = vec![("anthropic-version", ANTHROPIC_VERSION.to_string())];
    if let Some(key) = &config.api_key {
        headers.push(("x-api-key", key.expose().to_string()));
    }
    headers
}

/// The JSON body of a streamed Messages request. System messages become the `system` parameter;
/// consecutive turns of one role are merged, as the API requires alternation. The request's
/// [`PromptCache`](crate::PromptCache) places `cache_control` breakpoints (at most four) and
/// sends its volatile tail after the history, where it costs the cache nothing.
pub fn request_body(config: &ProviderConfig, request: &ChatRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    let mut max_tokens = request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    if let Some(budget) = request.thinking_budget {
        body.insert(
            "thinking".into(),
            json!({ "type": "enabled", "budget_tokens": budget }),
        );
        max_tokens = max_tokens.max(budget.saturating_add(1024));
    }
    body.insert("max_tokens".into(), json!(max_tokens));
    let plan = CachePlan::of(request);
    if let Some(system) = system(request, &plan, config.cache_ttl) {
        body.insert("system".into(), system);
    }
    body.insert(
        "messages".into(),
        Value::Array(messages(&request.messages, &plan, config.cache_ttl)),
    );
    body.insert("stream".into(), json!(true));
    if let Some(format) = &request.response_format
        && request.thinking_budget.is_none()
    {
        // Anthropic has no schema mode: a tool whose input is the answer, which the model must
        // call, holds the answer to the schema. The decoder turns the call back into text
        // ([`answer_from_tool`]). Extended thinking refuses a forced tool, so not with it.
        body.insert(
            "tools".into(),
            json!([{
                "name": format.name,
                "description": "Give your answer as this tool's input.",
                "input_schema": format.schema,
            }]),
        );
        body.insert(
            "tool_choice".into(),
            json!({ "type": "tool", "name": format.name }),
        );
    } else if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({ "name": t.name, "description": t.description, "input_schema": t.parameters }))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if body.contains_key("tool_choice") {
        // The forced answer tool's choice stands.
    } else if let Some(choice) = &request.tool_choice {
        let mut value = match choice {
            ToolChoice::Auto => json!({ "type": "auto" }),
            ToolChoice::None => json!({ "type": "none" }),
            ToolChoice::Required => json!({ "type": "any" }),
            ToolChoice::Tool(name) => json!({ "type": "tool", "name": name }),
        };
        if request.parallel_tool_calls == Some(false)
            && let Some(obj) = value.as_object_mut()
        {
            obj.insert("disable_parallel_tool_use".into(), json!(true));
        }
        body.insert("tool_choice".into(), value);
    }
    if let Some(t) = request.temperature
        && request.thinking_budget.is_none()
    {
        body.insert("temperature".into(), json!(t));
    }
    Value::Object(body)
}

/// Whether a request asks for its answer through the forced answer tool (see
/// [`request_body`]): then that tool's call is the answer's text.
pub fn answers_through_tool(request: &ChatRequest) -> Option<&str> {
    request
        .response_format
        .as_ref()
        .filter(|_| request.thinking_budget.is_none())
        .map(|f| f.name.as_str())
}

/// The forced answer tool's call as the answer's text: its input is the JSON answer.
pub fn answer_from_tool(event: StreamEvent, tool: &str) -> StreamEvent {
    match event {
        StreamEvent::ToolCall(call) if call.name == tool => StreamEvent::TextDelta(call.arguments),
        StreamEvent::ToolCallCutOff(call) if call.name == tool => {
            StreamEvent::TextDelta(call.arguments)
        }
        StreamEvent::Finish(crate::FinishReason::ToolCalls) => {
            StreamEvent::Finish(crate::FinishReason::Stop)
        }
        other => other,
    }
}

/// The request's cache plan in the form the body needs: the breakpoints that fit the API's
/// limit, and where the volatile tail starts.
struct CachePlan {
    breakpoints: Vec<usize>,
    tail_from: usize,
}

impl CachePlan {
    fn of(request: &ChatRequest) -> Self {
        let n = request.messages.len();
        let tail_from = n - request.cache.volatile_tail.min(n);
        let mut breakpoints: Vec<usize> = Vec::with_capacity(MAX_BREAKPOINTS);
        for &i in &request.cache.breakpoints {
            if i < tail_from && !breakpoints.contains(&i) && breakpoints.len() < MAX_BREAKPOINTS {
                breakpoints.push(i);
            }
        }
        Self {
            breakpoints,
            tail_from,
        }
    }

    fn breaks_at(&self, i: usize) -> bool {
        self.breakpoints.contains(&i)
    }
}

/// `cache_control` as the API takes it; the five-minute TTL is its default and is not named.
fn cache_control(ttl: CacheTtl) -> Value {
    match ttl {
        CacheTtl::FiveMinutes => json!({ "type": "ephemeral" }),
        CacheTtl::OneHour => json!({ "type": "ephemeral", "ttl": "1h" }),
    }
}

/// Marks a block as the end of a cached prefix. Thinking blocks cannot carry a breakpoint.
fn mark(block: &mut Value, ttl: CacheTtl) -> bool {
    let Some(obj) = block.as_object_mut() else {
        return false;
    };
    if matches!(
        obj.get("type").and_then(Value::as_str),
        Some("thinking" | "redacted_thinking")
    ) {
        return false;
    }
    obj.insert("cache_control".into(), cache_control(ttl));
    true
}

/// The `system` parameter: the stable system messages, in order. A plain string, as before,
/// unless a breakpoint falls on one of them; then one text block per message, so the
/// breakpoints can end the preset's text and the summaries.
fn system(request: &ChatRequest, plan: &CachePlan, ttl: CacheTtl) -> Option<Value> {
    let stable = request.messages[..plan.tail_from]
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::System);
    if !stable.clone().any(|(i, _)| plan.breaks_at(i)) {
        let texts: Vec<&str> = stable.map(|(_, m)| m.content.as_str()).collect();
        return (!texts.is_empty()).then(|| json!(texts.join("\n\n")));
    }
    let mut blocks: Vec<Value> = Vec::new();
    for (i, m) in stable {
        if !m.content.trim().is_empty() {
            blocks.push(json!({ "type": "text", "text": m.content }));
        }
        if plan.breaks_at(i)
            && let Some(last) = blocks.last_mut()
        {
            mark(last, ttl);
        }
    }
    (!blocks.is_empty()).then_some(Value::Array(blocks))
}

/// A volatile system message as the last user turn says it: Anthropic has no system role in
/// `messages`, and in `system` it would change the first thing sent at every request.
fn reminder(text: &str) -> Value {
    json!({ "type": "text", "text": format!("<system-reminder>\n{text}\n</system-reminder>") })
}

fn messages(
    messages: &[std::sync::Arc<ChatMessage>],
    plan: &CachePlan,
    ttl: CacheTtl,
) -> Vec<Value> {
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let (role, blocks) = match m.role {
            Role::System if i >= plan.tail_from && !m.content.trim().is_empty() => {
                ("user", vec![reminder(&m.content)])
            }
            Role::System => continue,
            // The API refuses empty and whitespace-only text blocks: such a message has nothing
            // to say, and keeping it would poison every later request of the conversation.
            Role::User if m.content.trim().is_empty() => continue,
            Role::User => ("user", vec![json!({ "type": "text", "text": m.content })]),
            Role::Tool => (
                "user",
                vec![json!({
                    "type": "tool_result",
                    "tool_use_id": m.tool_call_id.as_deref().unwrap_or_default(),
                    "content": tool_result_content(m),
                })],
            ),
            Role::Assistant => match assistant_blocks(m) {
                blocks if blocks.is_empty() => continue,
                blocks => ("assistant", blocks),
            },
        };
        match out.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => out.push((role, blocks)),
        }
        if plan.breaks_at(i)
            && let Some(block) = out.last_mut().and_then(|(_, blocks)| blocks.last_mut())
        {
            mark(block, ttl);
        }
    }
    out.into_iter()
        .map(|(role, content)| json!({ "role": role, "content": content }))
        .collect()
}

/// A tool result's content: its text, and after it the images the tool returned (a
/// `tool_result` takes text and image blocks).
fn tool_result_content(m: &ChatMessage) -> Value {
    if m.images.is_empty() {
        return Value::String(m.content.clone());
    }
    let mut blocks = vec![json!({ "type": "text", "text": m.content })];
    blocks.extend(m.images.iter().map(|image| {
        json!({
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": image.media_type,
                "data": &*image.data,
            },
        })
    }));
    Value::Array(blocks)
}

fn assistant_blocks(m: &ChatMessage) -> Vec<Value> {
    // Thinking and redacted thinking go back first, each block unchanged and in its order, as
    // the API requires; unsigned thinking is never sent (the API rejects it).
    let mut blocks: Vec<Value> =
        reasoning::decode(m.reasoning.as_deref(), m.reasoning_signature.as_deref())
            .iter()
            .filter_map(|block| serde_json::to_value(block).ok())
            .collect();
    if !m.content.trim().is_empty() {
        blocks.push(json!({ "type": "text", "text": m.content }));
    }
    for call in &m.tool_calls {
        let input: Value = serde_json::from_str(&call.arguments).unwrap_or_else(|_| json!({}));
        blocks
            .push(json!({ "type": "tool_use", "id": call.id, "name": call.name, "input": input }));
    }
    blocks
}

/// A content block between its `content_block_start` and its `content_block_stop`.
#[derive(Debug)]
enum Block {
    Text,
    /// Its signature is emitted when the block closes, so that it ends exactly this block's text.
    Thinking {
        /// A signature the start already carried (proxies that send whole blocks).
        from_start: String,
        /// The `signature_delta` pieces, which win over the start's.
        from_deltas: Option<String>,
        /// Whether any thinking text arrived for it.
        had_text: bool,
    },
    ToolUse(OpenCall),
    Other,
}

/// A `tool_use` block being streamed.
#[derive(Debug)]
struct OpenCall {
    /// Id, name, and the `input_json_delta` text so far.
    call: PartialToolCall,
    /// The start's `input` when it was a non-empty object: proxies that synthesise streams put
    /// the whole input there and send no (or only empty) deltas.
    start_input: Option<String>,
}

impl OpenCall {
    /// The deltas when they said anything, else the start's input.
    fn into_call(self) -> PartialToolCall {
        let OpenCall {
            mut call,
            start_input,
        } = self;
        if call.arguments.trim().is_empty()
            && let Some(input) = start_input
        {
            call.arguments = input;
        }
        call
    }
}

/// Decodes Messages stream events.
#[derive(Default)]
pub struct Decoder {
    blocks: Vec<(u64, Block)>,
    /// `tool_use` blocks already closed, emitted at the end, once the stop reason says whether
    /// the output limit cut them off.
    closed_calls: Vec<(u64, PartialToolCall)>,
    input_tokens: u32,
    /// The cache reads and writes `message_start` reported.
    cache: (u32, u32),
    stop: Option<FinishReason>,
    stopped: bool,
}

/// The index a block event names; the API numbers blocks from 0.
fn block_index(value: &Value) -> u64 {
    value.get("index").and_then(Value::as_u64).unwrap_or(0)
}

/// A block starts: text and thinking it already carries go out at once, a tool call opens with
/// any input it started with, and a redacted thinking block goes out whole.
fn open_block(block: Option<&Value>, events: &mut Vec<StreamEvent>) -> Block {
    match block.and_then(|b| b.get("type")).and_then(Value::as_str) {
        Some("text") => {
            let text = str_at(block, "text");
            if !text.is_empty() {
                events.push(StreamEvent::TextDelta(text));
            }
            Block::Text
        }
        Some("thinking") => {
            let thinking = str_at(block, "thinking");
            let had_text = !thinking.is_empty();
            if had_text {
                events.push(StreamEvent::ReasoningDelta(thinking));
            }
            Block::Thinking {
                from_start: str_at(block, "signature"),
                from_deltas: None,
                had_text,
            }
        }
        // Arrives whole, with no deltas; goes back unchanged in its place.
        Some("redacted_thinking") => {
            let data = str_at(block, "data");
            if !data.is_empty() {
                events.push(StreamEvent::RedactedReasoning(data));
            }
            Block::Other
        }
        Some("tool_use") => {
            let start_input = match block.and_then(|b| b.get("input")) {
                Some(Value::Object(o)) if !o.is_empty() => {
                    Some(Value::Object(o.clone()).to_string())
                }
                _ => None,
            };
            Block::ToolUse(OpenCall {
                call: PartialToolCall {
                    id: str_at(block, "id"),
                    name: str_at(block, "name"),
                    ..PartialToolCall::default()
                },
                start_input,
            })
        }
        _ => Block::Other,
    }
}

impl Decoder {
    pub(crate) fn decode(&mut self, provider: &str, event: &Event) -> Result<Decoded, LlmError> {
        let data = event.data.trim();
        let value: Value = serde_json::from_str(data).map_err(|e| LlmError::Protocol {
            provider: provider.to_string(),
            detail: format!("a stream event is not valid JSON ({e})"),
        })?;
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(event.event.as_str())
            .to_string();
        let mut events = Vec::new();
        match kind.as_str() {
            "message_start" => {
                let usage = value.pointer("/message/usage");
                self.input_tokens = usage.map(input_tokens).unwrap_or(0);
                self.cache = usage.map(cache_tokens).unwrap_or_default();
            }
            "content_block_start" => {
                let block = open_block(value.get("content_block"), &mut events);
                self.blocks.push((block_index(&value), block));
            }
            "content_block_delta" => self.extend_block(&value, &mut events),
            "content_block_stop" => {
                let index = block_index(&value);
                if let Some(position) = self.blocks.iter().position(|(i, _)| *i == index) {
                    let (index, block) = self.blocks.remove(position);
                    self.close(index, block, &mut events);
                }
            }
            "message_delta" => {
                if let Some(reason) = value.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop = Some(stop_reason(reason));
                }
                events.push(StreamEvent::Usage(self.final_usage(&value)));
            }
            "message_stop" => {
                events.extend(self.finish(provider)?);
                return Ok(Decoded { events, done: true });
            }
            "error" => return Err(stream_error(provider, value.get("error"), "api_error")),
            // ping and any event type added later are ignored, as the API documents.
            _ => {}
        }
        Ok(Decoded {
            events,
            done: false,
        })
    }

    /// A delta goes to the block its index names: text and thinking stream out as they come, a
    /// signature and a tool call's JSON are kept until the block ends.
    fn extend_block(&mut self, value: &Value, events: &mut Vec<StreamEvent>) {
        let index = block_index(value);
        let delta = value.get("delta");
        let block = self
            .blocks
            .iter_mut()
            .find(|(i, _)| *i == index)
            .map(|(_, b)| b);
        match (
            delta.and_then(|d| d.get("type")).and_then(Value::as_str),
            block,
        ) {
            (Some("text_delta"), _) => events.push(StreamEvent::TextDelta(str_at(delta, "text"))),
            (Some("thinking_delta"), block) => {
                let thinking = str_at(delta, "thinking");
                if let Some(Block::Thinking { had_text, .. }) = block {
                    *had_text |= !thinking.is_empty();
                }
                events.push(StreamEvent::ReasoningDelta(thinking))
            }
            (Some("signature_delta"), Some(Block::Thinking { from_deltas, .. })) => {
                from_deltas
                    .get_or_insert_with(String::new)
                    .push_str(&str_at(delta, "signature"));
            }
            // A signature for no known thinking block still ends the reasoning so far.
            (Some("signature_delta"), _) => {
                events.push(StreamEvent::ReasoningSignature(str_at(delta, "signature")))
            }
            // Every piece is appended as it is: the text so far is any prefix of the
            // JSON, and may well look like a complete object (`{"code": "x = {}`).
            (Some("input_json_delta"), Some(Block::ToolUse(open))) => {
                open.call.arguments.push_str(&str_at(delta, "partial_json"));
            }
            _ => {}
        }
    }

    /// The usage `message_delta` reports: its output tokens, and its input and cache figures
    /// where it repeats them, else those of `message_start`.
    fn final_usage(&self, value: &Value) -> Usage {
        let output = value
            .pointer("/usage/output_tokens")
            .and_then(Value::as_u64)
            .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
            .unwrap_or(0);
        let input = value
            .get("usage")
            .map(input_tokens)
            .filter(|n| *n > 0)
            .unwrap_or(self.input_tokens);
        let (cache_read_tokens, cache_write_tokens) = value
            .get("usage")
            .map(cache_tokens)
            .filter(|&cache| cache != (0, 0))
            .unwrap_or(self.cache);
        Usage {
            prompt_tokens: input,
            completion_tokens: output,
            cache_read_tokens,
            cache_write_tokens,
        }
    }

    /// A block ends: a thinking block emits its signature, a tool call waits for the stop reason.
    fn close(&mut self, index: u64, block: Block, events: &mut Vec<StreamEvent>) {
        match block {
            Block::Thinking {
                from_start,
                from_deltas,
                had_text,
            } => {
                let signature = from_deltas.unwrap_or(from_start);
                // Even an empty signature ends a block that had text, so the next block's text
                // stays apart; such a block is kept but never sent back.
                if had_text || !signature.is_empty() {
                    events.push(StreamEvent::ReasoningSignature(signature));
                }
            }
            Block::ToolUse(open) => self.closed_calls.push((index, open.into_call())),
            Block::Text | Block::Other => {}
        }
    }

    /// At `message_stop` or end of stream: a stream without a stop reason was cut. Blocks still
    /// open are closed (the API leaves a tool call open when `max_tokens` cuts it), then the tool
    /// calls go out in block order: whole when the model finished them, as cut-off calls with
    /// their raw text when the output limit ended the answer.
    pub(crate) fn finish(&mut self, provider: &str) -> Result<Vec<StreamEvent>, LlmError> {
        if self.stopped {
            return Ok(Vec::new());
        }
        let Some(stop) = self.stop.clone() else {
            return Err(LlmError::Stream {
                provider: provider.to_string(),
                detail: "the stream ended before the model finished its answer".into(),
            });
        };
        self.stopped = true;
        let mut events = Vec::new();
        let mut open = std::mem::take(&mut self.blocks);
        open.sort_by_key(|(index, _)| *index);
        for (index, block) in open {
            self.close(index, block, &mut events);
        }
        let mut calls = std::mem::take(&mut self.closed_calls);
        calls.sort_by_key(|(index, _)| *index);
        for (_, call) in calls {
            events.push(if stop == FinishReason::Length {
                StreamEvent::ToolCallCutOff(CutOffToolCall {
                    id: call.id,
                    name: call.name,
                    arguments: call.arguments,
                })
            } else {
                StreamEvent::ToolCall(finish_call(call)?)
            });
        }
        events.push(StreamEvent::Finish(stop));
        Ok(events)
    }
}

/// A token count of a usage block, 0 where it is absent.
fn tokens_at(usage: &Value, key: &str) -> u32 {
    usage
        .get(key)
        .and_then(Value::as_u64)
        .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX))
}

/// The cache reads and writes of a usage block: `(cache_read_input_tokens,
/// cache_creation_input_tokens)`.
fn cache_tokens(usage: &Value) -> (u32, u32) {
    (
        tokens_at(usage, "cache_read_input_tokens"),
        tokens_at(usage, "cache_creation_input_tokens"),
    )
}

/// Input tokens including prompt-cache reads and writes, which all count against the window.
fn input_tokens(usage: &Value) -> u32 {
    [
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ]
    .iter()
    .map(|k| tokens_at(usage, k))
    .fold(0u32, u32::saturating_add)
}

fn str_at(value: Option<&Value>, key: &str) -> String {
    value
        .and_then(|v| v.get(key))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn stop_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        // The window filled up before max_tokens did: the answer was cut off all the same.
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "tool_use" => FinishReason::ToolCalls,
        "refusal" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_string()),
    }
}

#[cfg(test)]
#[path = "anthropic_tests.rs"]
mod tests;
