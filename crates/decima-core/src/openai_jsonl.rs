//! One OpenAI-style chat message per line: the interchange format of `conversation import` and
//! `export --format jsonl`. Exporting and importing again reproduces the file byte for byte.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{CoreError, Message, NewMessage, Role, ToolCall};

#[derive(Deserialize)]
struct WireIn {
    role: String,
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCallIn>>,
    #[serde(default)]
    tool_call_id: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
}

#[derive(Deserialize)]
struct WireToolCallIn {
    id: String,
    #[serde(rename = "type", default)]
    kind: Option<String>,
    function: WireFunctionIn,
    /// Gemini's OpenAI-compatible shape: `{"google": {"thought_signature": "..."}}`, kept so a
    /// run continued on Gemini can send it back. Exports leave provider tokens out, as they do
    /// Anthropic's thinking signatures.
    #[serde(default)]
    extra_content: Option<Value>,
}

#[derive(Deserialize)]
struct WireFunctionIn {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Serialize)]
struct WireOut<'a> {
    role: &'a str,
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireToolCallOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<&'a str>,
}

#[derive(Serialize)]
struct WireToolCallOut<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionOut<'a>,
}

#[derive(Serialize)]
struct WireFunctionOut<'a> {
    name: &'a str,
    arguments: &'a str,
}

/// Parses a whole JSONL history: one chat message per line, blank lines skipped, CRLF
/// accepted. The first bad line fails it all ([`CoreError::BadLine`]), so an import stores
/// either every message or none.
pub fn parse_document(bytes: &[u8]) -> Result<Vec<NewMessage>, CoreError> {
    let mut messages = Vec::new();
    for (index, raw) in bytes.split(|b| *b == b'\n').enumerate() {
        let line = index + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let text = std::str::from_utf8(raw).map_err(|e| CoreError::BadLine {
            line,
            problem: format!(
                "not valid UTF-8 (first bad byte at column {})",
                e.valid_up_to() + 1
            ),
        })?;
        if text.trim().is_empty() {
            continue;
        }
        let message = parse_line(text).map_err(|e| CoreError::BadLine {
            line,
            problem: e.to_string(),
        })?;
        messages.push(message);
    }
    Ok(messages)
}

/// Parses one line into a validated draft. The error says what is wrong with the line; the caller
/// adds the line number.
pub fn parse_line(line: &str) -> Result<NewMessage, CoreError> {
    let wire: WireIn = serde_json::from_str(line)
        .map_err(|e| CoreError::InvalidMessage(format!("not a valid chat message: {e}")))?;
    let role: Role = wire.role.parse()?;
    let content = match wire.content {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s,
        Some(Value::Array(parts)) => join_text_parts(&parts)?,
        Some(_) => {
            return Err(CoreError::InvalidMessage(
                "content must be a string, null, or an array of text parts".into(),
            ));
        }
    };
    let tool_calls = wire
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .map(tool_call_from_wire)
        .collect::<Result<Vec<_>, _>>()?;
    let message = NewMessage {
        images: Vec::new(),
        role,
        name: wire.name,
        content,
        reasoning: wire.reasoning_content.or(wire.reasoning),
        reasoning_signature: None,
        tool_calls,
        tool_call_id: wire.tool_call_id,
        execution_id: None,
        pinned: false,
    };
    message.validate()?;
    Ok(message)
}

fn join_text_parts(parts: &[Value]) -> Result<String, CoreError> {
    let mut text = String::new();
    for (i, part) in parts.iter().enumerate() {
        let kind = part.get("type").and_then(Value::as_str).unwrap_or("");
        match (kind, part.get("text").and_then(Value::as_str)) {
            ("text", Some(t)) => text.push_str(t),
            _ => {
                return Err(CoreError::InvalidMessage(format!(
                    "content part {} has type '{}': only text parts can be imported",
                    i + 1,
                    kind.chars().take(40).collect::<String>()
                )));
            }
        }
    }
    Ok(text)
}

fn tool_call_from_wire(call: WireToolCallIn) -> Result<ToolCall, CoreError> {
    if let Some(kind) = call.kind.as_deref()
        && kind != "function"
    {
        return Err(CoreError::InvalidMessage(format!(
            "tool call '{}' has type '{}': only function calls are supported",
            call.id, kind
        )));
    }
    let arguments = match call.function.arguments {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s,
        // Some exporters write the arguments as an object rather than JSON text.
        Some(other) => other.to_string(),
    };
    let signature = call
        .extra_content
        .as_ref()
        .and_then(|extra| extra.pointer("/google/thought_signature"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned);
    Ok(ToolCall {
        id: call.id,
        name: call.function.name,
        arguments,
        signature,
    })
}

/// Serialises a stored message as one line, without the trailing newline. An assistant turn that
/// only calls tools gets `"content": null`, as the OpenAI API writes it.
pub fn to_line(message: &Message) -> String {
    wire_line(
        message.role,
        message.name.as_deref(),
        &message.content,
        &message.tool_calls,
        message.tool_call_id.as_deref(),
        message.reasoning.as_deref(),
    )
}

/// The same line for a draft, so fixtures and exports share one canonical writer.
pub fn draft_to_line(message: &NewMessage) -> String {
    wire_line(
        message.role,
        message.name.as_deref(),
        &message.content,
        &message.tool_calls,
        message.tool_call_id.as_deref(),
        message.reasoning.as_deref(),
    )
}

fn wire_line(
    role: Role,
    name: Option<&str>,
    content: &str,
    tool_calls: &[ToolCall],
    tool_call_id: Option<&str>,
    reasoning: Option<&str>,
) -> String {
    let wire = WireOut {
        role: role.as_str(),
        content: if content.is_empty() && !tool_calls.is_empty() {
            None
        } else {
            Some(content)
        },
        name,
        tool_calls: tool_calls
            .iter()
            .map(|c| WireToolCallOut {
                id: &c.id,
                kind: "function",
                function: WireFunctionOut {
                    name: &c.name,
                    arguments: &c.arguments,
                },
            })
            .collect(),
        tool_call_id,
        reasoning_content: reasoning,
    };
    // Serialising plain strings and vectors of them cannot fail.
    serde_json::to_string(&wire).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ConversationId, MessageId, Timestamp};

    fn stored(draft: NewMessage) -> Message {
        Message {
            id: MessageId::new(),
            conversation_id: ConversationId::new(),
            execution_id: None,
            seq: 1,
            role: draft.role,
            name: draft.name,
            content: draft.content,
            reasoning: draft.reasoning,
            reasoning_signature: None,
            tool_calls: draft.tool_calls,
            tool_call_id: draft.tool_call_id,
            tokens: 0,
            pinned: false,
            created_at: Timestamp(0),
            deleted_at: None,
        }
    }

    #[test]
    fn round_trips_every_field() {
        let lines = [
            r#"{"role":"system","content":"You are careful."}"#,
            r#"{"role":"user","content":"列出 /data 下的文件","name":"analyst"}"#,
            r#"{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"shell","arguments":"{\"cmd\":\"ls /data\"}"}}],"reasoning_content":"Need a listing."}"#,
            r#"{"role":"tool","content":"a.csv\nb.csv","tool_call_id":"call_1"}"#,
        ];
        for line in lines {
            let parsed = parse_line(line).unwrap();
            assert_eq!(to_line(&stored(parsed)), line);
        }
    }

    #[test]
    fn keeps_geminis_thought_signature_on_import() {
        let line = r#"{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"shell","arguments":"{}"},"extra_content":{"google":{"thought_signature":"c2ln"}}}]}"#;
        let parsed = parse_line(line).unwrap();
        assert_eq!(parsed.tool_calls[0].signature.as_deref(), Some("c2ln"));
    }

    #[test]
    fn accepts_text_parts_and_reasoning_alias() {
        let m = parse_line(r#"{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"reasoning":"r"}"#).unwrap();
        assert_eq!(m.content, "ab");
        assert_eq!(m.reasoning.as_deref(), Some("r"));
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let cases = [
            ("{", "not a valid chat message"),
            (r#"{"content":"x"}"#, "missing field `role`"),
            (
                r#"{"role":"wizard","content":"x"}"#,
                "unknown role 'wizard'",
            ),
            (r#"{"role":"tool","content":"x"}"#, "tool_call_id"),
            (
                r#"{"role":"user","content":[{"type":"image_url"}]}"#,
                "only text parts",
            ),
            (r#"{"role":"user","content":42}"#, "content must be"),
        ];
        for (line, needle) in cases {
            let err = parse_line(line).unwrap_err().to_string();
            assert!(err.contains(needle), "{line}: {err}");
        }
    }
}
