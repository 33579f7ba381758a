//! Tool calls a local server left in the answer's text.
//!
//! Local OpenAI-compatible servers (llama.cpp, Ollama, vLLM, LM Studio) turn the model's written
//! tool call into `tool_calls` with a parser chosen from the chat template. When that parser misses
//! (a template it does not know, a model that strays from its own format, a server started without
//! tool parsing), the call arrives as plain assistant text and the turn would end with markup
//! instead of an action. [`recover`] reads the written forms those models use, as their templates
//! and llama.cpp's parsers define them:
//!
//! - Hermes / Qwen2.5 / Qwen3: `<tool_call>\n{"name": …, "arguments": {…}}\n</tool_call>`, one
//!   block per call; the closing tag of the last block may be missing (the model stopped at EOS).
//! - A bare JSON call: the whole text (or a fenced block that is the whole text) is one call
//!   object, with `arguments` or `parameters`, or an array of them.
//! - Llama 3.1 / 3.2 / 3.3: `<|python_tag|>{"name": …, "parameters": {…}}`, several joined by
//!   `;`, ending with `<|eom_id|>` or `<|eot_id|>`; `{"type": "function", "name": …, …}`; and
//!   `<function=NAME>{…}</function>`.
//! - Mistral: `[TOOL_CALLS] [{"name": …, "arguments": {…}, "id": …}]` (v0.3, Nemo) and
//!   `[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{…}` or `[TOOL_CALLS]NAME[ARGS]{…}` (Mistral Small 3.2,
//!   Devstral, Magistral, Ministral 3), one marker per call.
//!
//! Only calls that name a tool the request offered, with arguments that are a JSON object (or a
//! JSON string holding one, as some models double-encode), are recovered: anything else is the
//! model's answer and stays text. Markers inside reasoning (`<think>…</think>`,
//! `[THINK]…[/THINK]`) are ignored, as llama.cpp ignores them. Every step is a bounded scan or one
//! JSON parse of a disjoint slice, so the work is linear in the text's length.

use std::ops::Range;

use decima_core::ToolCall;
use serde_json::Value;

use crate::tool_calls::generated_call_id;

/// Which written form a recovered call was in (for the step record: "recovered from text
/// (hermes)").
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum TextCallForm {
    /// `<tool_call>{…}</tool_call>` blocks (Hermes 2 Pro / 3, Qwen2.5, Qwen3).
    Hermes,
    /// The whole text is a call object or an array of them, perhaps in a fenced block.
    BareJson,
    /// Llama 3.x: `<|python_tag|>`, `{"type": "function", …}`, or `<function=NAME>{…}</function>`.
    Llama3,
    /// Mistral's `[TOOL_CALLS]` marker, with a JSON array or `NAME[ARGS]{…}` after it.
    Mistral,
}

impl TextCallForm {
    /// The form's stable name, for step records and logs.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Calls recovered from an answer's text, and what is left of the text once they are taken out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// The calls, in the order written. Ids are generated (`text_call_<n>_<hash>`), never the
    /// model's: a model's ids are not unique enough to pair results with.
    pub calls: Vec<ToolCall>,
    /// The form the calls were written in.
    pub form: TextCallForm,
    /// The text without the call markup, trimmed: the model's prose around the calls.
    pub remaining_text: String,
}

/// Recovers the tool calls written in `text`. `offered` = names of the tools the request offered.
/// Returns None unless the text holds one or more calls, in one of the forms, that name an offered
/// tool and whose arguments are a JSON object. A block in a marked form that is not such a call
/// stays in `remaining_text` as written.
pub fn recover(text: &str, offered: &[&str]) -> Option<Recovered> {
    if offered.is_empty() || text.trim().is_empty() {
        return None;
    }
    let found = find(text, offered, &reasoning_spans(text))?;
    // One hash of the text, so ids differ between answers without hashing it once per call.
    let seed = generated_call_id(text, 0, "", "");
    let calls = found
        .calls
        .into_iter()
        .enumerate()
        .map(|(n, (name, arguments))| ToolCall {
            id: format!("text_{}", generated_call_id(&seed, n, &name, &arguments)),
            name,
            arguments,
            signature: None,
        })
        .collect();
    Some(Recovered {
        calls,
        form: found.form,
        remaining_text: found.prose.trim().to_string(),
    })
}

/// The calls of the first form whose markers `text` holds and that yields calls; the whole text
/// as JSON when none does.
fn find(text: &str, offered: &[&str], reasoning: &[Range<usize>]) -> Option<Found> {
    if text.contains(HERMES_OPEN)
        && let Some(found) = hermes(text, offered, reasoning)
    {
        return Some(found);
    }
    if text.contains(MISTRAL_MARK)
        && let Some(found) = mistral(text, offered, reasoning)
    {
        return Some(found);
    }
    if text.contains(PYTHON_TAG)
        && let Some(found) = python_tag(text, offered, reasoning)
    {
        return Some(found);
    }
    if text.contains(FUNCTION_OPEN)
        && let Some(found) = function_tags(text, offered, reasoning)
    {
        return Some(found);
    }
    whole_text(text, offered, reasoning)
}

const HERMES_OPEN: &str = "<tool_call>";
const HERMES_CLOSE: &str = "</tool_call>";
const MISTRAL_MARK: &str = "[TOOL_CALLS]";
const MISTRAL_CALL_ID: &str = "[CALL_ID]";
const MISTRAL_ARGS: &str = "[ARGS]";
const PYTHON_TAG: &str = "<|python_tag|>";
const FUNCTION_OPEN: &str = "<function=";
const FUNCTION_CLOSE: &str = "</function>";
/// Llama 3's end-of-message (after a tool call) and end-of-turn tokens.
const LLAMA_ENDS: [&str; 2] = ["<|eom_id|>", "<|eot_id|>"];
/// Reasoning delimiters: Qwen3 / DeepSeek R1 style, then Magistral / Ministral style.
const REASONING_TAGS: [(&str, &str); 2] = [("<think>", "</think>"), ("[THINK]", "[/THINK]")];

/// A name and compact JSON arguments.
type Call = (String, String);

/// Calls found in one form, with the prose left around them (untrimmed).
struct Found {
    calls: Vec<Call>,
    form: TextCallForm,
    prose: String,
}

/// Builds the prose of a marked form: text between taken blocks is kept, taken blocks are
/// replaced by whatever followed their JSON inside them.
struct Assembly<'a> {
    text: &'a str,
    cursor: usize,
    prose: String,
    calls: Vec<Call>,
}

impl<'a> Assembly<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            cursor: 0,
            prose: String::new(),
            calls: Vec::new(),
        }
    }

    /// Takes `start..end` of the text as call markup holding `calls`; `rest` is kept as prose.
    fn take(&mut self, start: usize, end: usize, calls: Vec<Call>, rest: &str) {
        self.prose.push_str(&self.text[self.cursor..start]);
        self.prose.push_str(rest);
        self.calls.extend(calls);
        self.cursor = end;
    }

    fn finish(mut self, form: TextCallForm) -> Option<Found> {
        if self.calls.is_empty() {
            return None;
        }
        self.prose.push_str(&self.text[self.cursor..]);
        Some(Found {
            calls: self.calls,
            form,
            prose: self.prose,
        })
    }
}

/// `<tool_call>` blocks (Hermes 2 Pro, Qwen2.5, Qwen3 templates).
fn hermes(text: &str, offered: &[&str], reasoning: &[Range<usize>]) -> Option<Found> {
    let opens = markers(text, HERMES_OPEN, reasoning);
    let closes = positions(text, HERMES_CLOSE);
    let mut next_close = 0;
    let mut out = Assembly::new(text);
    for (k, &open) in opens.iter().enumerate() {
        let body_start = open + HERMES_OPEN.len();
        let next_open = opens.get(k + 1).copied().unwrap_or(text.len());
        let (body_end, end) = block_bounds(
            body_start,
            next_open,
            &closes,
            &mut next_close,
            HERMES_CLOSE.len(),
        );
        let Some((value, rest)) = first_json(&text[body_start..body_end]) else {
            continue;
        };
        if let Some(call) = call_object(&value, offered, Strictness::Lenient) {
            out.take(open, end, vec![call], rest);
        }
    }
    out.finish(TextCallForm::Hermes)
}

/// `<function=NAME>{…}</function>` (Llama 3.1's custom tool format, Functionary v3.1).
fn function_tags(text: &str, offered: &[&str], reasoning: &[Range<usize>]) -> Option<Found> {
    let opens = markers(text, FUNCTION_OPEN, reasoning);
    let closes = positions(text, FUNCTION_CLOSE);
    let mut next_close = 0;
    let mut out = Assembly::new(text);
    for (k, &open) in opens.iter().enumerate() {
        let name_start = open + FUNCTION_OPEN.len();
        let name_len = text[name_start..]
            .find(|c: char| c == '>' || c == '<' || c.is_whitespace())
            .unwrap_or(text.len() - name_start);
        let name = &text[name_start..name_start + name_len];
        if !text[name_start + name_len..].starts_with('>') || !offered.contains(&name) {
            continue;
        }
        let body_start = name_start + name_len + 1;
        let next_open = opens.get(k + 1).copied().unwrap_or(text.len());
        let (body_end, end) = block_bounds(
            body_start,
            next_open,
            &closes,
            &mut next_close,
            FUNCTION_CLOSE.len(),
        );
        let Some((value, rest)) = first_json(&text[body_start..body_end]) else {
            continue;
        };
        if let Some(arguments) = arguments_object(&value) {
            out.take(open, end, vec![(name.to_string(), arguments)], rest);
        }
    }
    out.finish(TextCallForm::Llama3)
}

/// `[TOOL_CALLS]` followed by a JSON array of calls (Mistral 7B v0.3, Nemo) or by
/// `NAME[CALL_ID]ID[ARGS]{…}` (Mistral Small 3.2), `NAME[ARGS]{…}` (Devstral, Magistral,
/// Ministral 3) or `NAME{…}` (the same with `[ARGS]` dropped as a special token).
fn mistral(text: &str, offered: &[&str], reasoning: &[Range<usize>]) -> Option<Found> {
    let marks = markers(text, MISTRAL_MARK, reasoning);
    let mut out = Assembly::new(text);
    for (k, &mark) in marks.iter().enumerate() {
        let end = marks.get(k + 1).copied().unwrap_or(text.len());
        let segment = text[mark + MISTRAL_MARK.len()..end].trim_start();
        if segment.starts_with('[') {
            let Some((Value::Array(items), rest)) = first_json(segment) else {
                continue;
            };
            let calls: Option<Vec<Call>> = items
                .iter()
                .map(|item| call_object(item, offered, Strictness::Lenient))
                .collect();
            if let Some(calls) = calls.filter(|calls| !calls.is_empty()) {
                out.take(mark, end, calls, rest);
            }
            continue;
        }
        let name_len = segment
            .find(|c: char| c == '[' || c == '{' || c.is_whitespace())
            .unwrap_or(segment.len());
        let name = &segment[..name_len];
        if !offered.contains(&name) {
            continue;
        }
        let mut after = &segment[name_len..];
        if let Some(id) = after.strip_prefix(MISTRAL_CALL_ID) {
            after = id.trim_start_matches(|c: char| c.is_ascii_alphanumeric());
        }
        after = after.strip_prefix(MISTRAL_ARGS).unwrap_or(after);
        let Some((value, rest)) = first_json(after) else {
            continue;
        };
        if let Some(arguments) = arguments_object(&value) {
            out.take(mark, end, vec![(name.to_string(), arguments)], rest);
        }
    }
    out.finish(TextCallForm::Mistral)
}

/// `<|python_tag|>` then one or more call objects joined by `;` (Llama 3.1 / 3.2 / 3.3), and an
/// optional `<|eom_id|>` or `<|eot_id|>`.
fn python_tag(text: &str, offered: &[&str], reasoning: &[Range<usize>]) -> Option<Found> {
    let tag = *markers(text, PYTHON_TAG, reasoning).first()?;
    let (values, rest) = json_sequence(&text[tag + PYTHON_TAG.len()..]);
    let calls = values
        .iter()
        .map(|value| call_object(value, offered, Strictness::Lenient))
        .collect::<Option<Vec<Call>>>()?;
    let rest = rest.trim_start();
    let rest = LLAMA_ENDS
        .iter()
        .find_map(|end| rest.strip_prefix(end))
        .unwrap_or(rest);
    let mut out = Assembly::new(text);
    out.take(tag, text.len(), calls, rest);
    out.finish(TextCallForm::Llama3)
}

/// The whole text, after any leading reasoning, is calls: one object, an array of them, objects
/// joined by `;` (Llama 3), perhaps in a fenced block or followed by a Llama end token.
fn whole_text(text: &str, offered: &[&str], reasoning: &[Range<usize>]) -> Option<Found> {
    let (before, body) = match reasoning.first() {
        Some(span) if text[..span.start].trim().is_empty() => text.split_at(span.end),
        _ => ("", text),
    };
    let mut body = body.trim();
    let mut llama = false;
    for end in LLAMA_ENDS {
        if let Some(stripped) = body.strip_suffix(end) {
            body = stripped.trim_end();
            llama = true;
        }
    }
    let body = fenced(body).unwrap_or(body);
    if !body.starts_with(['{', '[']) {
        return None;
    }
    let (values, rest) = json_sequence(body);
    if !rest.trim().is_empty() {
        return None;
    }
    let calls = match values.as_slice() {
        [Value::Array(items)] => items.as_slice(),
        values => {
            llama |= values.len() > 1;
            values
        }
    };
    llama |= calls.iter().any(|call| call.get("type").is_some());
    let calls = calls
        .iter()
        .map(|value| call_object(value, offered, Strictness::Strict))
        .collect::<Option<Vec<Call>>>()
        .filter(|calls| !calls.is_empty())?;
    let form = if llama {
        TextCallForm::Llama3
    } else {
        TextCallForm::BareJson
    };
    Some(Found {
        calls,
        form,
        prose: before.to_string(),
    })
}

/// The inside of a Markdown code fence that is the whole of `text` (```` ```json ```` or bare).
fn fenced(text: &str) -> Option<&str> {
    let inner = text.strip_prefix("```")?.strip_suffix("```")?;
    let inner = inner.strip_prefix("json").unwrap_or(inner);
    inner.starts_with(['\n', '\r', ' ']).then(|| inner.trim())
}

/// How much a call object may hold besides its name and arguments.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Strictness {
    /// Inside a form's markers: other keys are ignored.
    Lenient,
    /// Unmarked JSON: only `name`, `arguments` or `parameters`, `id`, and `"type": "function"`,
    /// so that a structured answer that happens to have a `name` is not taken for a call.
    Strict,
}

/// The name and compact arguments of a call object `{"name": …, "arguments"|"parameters": {…}}`
/// naming an offered tool.
fn call_object(value: &Value, offered: &[&str], strictness: Strictness) -> Option<Call> {
    let object = value.as_object()?;
    let name = object.get("name")?.as_str()?;
    if !offered.contains(&name) {
        return None;
    }
    if strictness == Strictness::Strict {
        let known = |key: &str| matches!(key, "name" | "arguments" | "parameters" | "id" | "type");
        let typed = object
            .get("type")
            .is_none_or(|kind| kind.as_str() == Some("function"));
        let id_ok = object.get("id").is_none_or(Value::is_string);
        if !typed || !id_ok || !object.keys().all(|key| known(key)) {
            return None;
        }
    }
    let arguments = match (object.get("arguments"), object.get("parameters")) {
        (Some(arguments), None) | (None, Some(arguments)) => arguments,
        _ => return None,
    };
    Some((name.to_string(), arguments_object(arguments)?))
}

/// Compact JSON of arguments that are an object, or a JSON string holding one (double-encoded).
fn arguments_object(value: &Value) -> Option<String> {
    match value {
        Value::Object(_) => serde_json::to_string(value).ok(),
        Value::String(encoded) => match serde_json::from_str::<Value>(encoded) {
            Ok(inner @ Value::Object(_)) => serde_json::to_string(&inner).ok(),
            _ => None,
        },
        _ => None,
    }
}

/// The JSON object or array at the start of `text` (after whitespace), and the text after it.
fn first_json(text: &str) -> Option<(Value, &str)> {
    let text = text.trim_start();
    if !text.starts_with(['{', '[']) {
        return None;
    }
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let value = stream.next()?.ok()?;
    Some((value, &text[stream.byte_offset()..]))
}

/// JSON objects or arrays at the start of `text`, joined by `;` (vLLM's llama3_json reads
/// parallel Llama calls so), and the text after the last one.
fn json_sequence(text: &str) -> (Vec<Value>, &str) {
    let mut values = Vec::new();
    let mut rest = text;
    while let Some((value, after)) = first_json(rest) {
        values.push(value);
        rest = after;
        match after.trim_start().strip_prefix(';') {
            Some(next) => rest = next,
            None => break,
        }
    }
    (values, rest)
}

/// Where the body of a block whose body starts at `body_start` ends, and where the block ends:
/// at the first closing tag after it, unless the next block opens first or there is none; then
/// (the closing tag missing) at the next block's opening, or at the end of the text.
/// `next_close` indexes `closes` and only moves forward, so a text's blocks take one pass.
fn block_bounds(
    body_start: usize,
    next_open: usize,
    closes: &[usize],
    next_close: &mut usize,
    close_len: usize,
) -> (usize, usize) {
    while closes.get(*next_close).is_some_and(|&c| c < body_start) {
        *next_close += 1;
    }
    match closes.get(*next_close) {
        Some(&close) if close < next_open => (close, close + close_len),
        _ => (next_open, next_open),
    }
}

/// Every position of `needle` in `text`.
fn positions(text: &str, needle: &str) -> Vec<usize> {
    text.match_indices(needle).map(|(at, _)| at).collect()
}

/// Positions of `marker` in `text` outside reasoning.
fn markers(text: &str, marker: &str, reasoning: &[Range<usize>]) -> Vec<usize> {
    let mut span = 0;
    positions(text, marker)
        .into_iter()
        .filter(|&at| {
            while reasoning.get(span).is_some_and(|s| s.end <= at) {
                span += 1;
            }
            !reasoning.get(span).is_some_and(|s| s.contains(&at))
        })
        .collect()
}

/// The reasoning in `text`, sorted: `<think>…</think>` and `[THINK]…[/THINK]` spans (an
/// unclosed one runs to the end), and the start of the text up to a closing tag that no opening
/// tag precedes (templates that open the reasoning in the prompt).
fn reasoning_spans(text: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    for (open, close) in REASONING_TAGS {
        let mut at = 0;
        if let Some(first_close) = text.find(close)
            && text
                .find(open)
                .is_none_or(|first_open| first_close < first_open)
        {
            at = first_close + close.len();
            spans.push(0..at);
        }
        while let Some(found) = text[at..].find(open) {
            let start = at + found;
            let inner = start + open.len();
            match text[inner..].find(close) {
                Some(end) => {
                    at = inner + end + close.len();
                    spans.push(start..at);
                }
                None => {
                    spans.push(start..text.len());
                    break;
                }
            }
        }
    }
    spans.sort_by_key(|span| span.start);
    // Spans of the two tag kinds may nest or overlap; merge them so the scan above stays simple.
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(last) if span.start <= last.end => last.end = last.end.max(span.end),
            _ => merged.push(span),
        }
    }
    merged
}

#[cfg(test)]
#[path = "text_tool_calls_tests.rs"]
mod tests;
