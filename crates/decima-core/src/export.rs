//! History export: the formats a person or a subagent reads with grep, less or a Markdown viewer.
//!
//! Each renderer writes one message at a time, so an incremental export can append only what is
//! new since the last one.

use std::fmt::Write as _;

use crate::Message;

/// The formats `decima export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// Greppable text: a `### seq=N role=R time=T` header line per message, then its body.
    Text,
    /// One OpenAI-style message per line; imports back byte for byte.
    Jsonl,
    /// Markdown for reading.
    Markdown,
}

/// Appends one message in the given format, always ending with a newline.
pub fn render_message(format: ExportFormat, message: &Message, out: &mut String) {
    match format {
        ExportFormat::Text => render_text(message, out),
        ExportFormat::Jsonl => {
            out.push_str(&crate::openai_jsonl::to_line(message));
            out.push('\n');
        }
        ExportFormat::Markdown => render_markdown(message, out),
    }
}

/// The text format. The header carries everything needed to locate a message
/// (`grep -n '^### seq=42 '`); the body follows verbatim, then tool calls and reasoning on lines of
/// their own that start with `@tool_call` and `@reasoning`.
fn render_text(m: &Message, out: &mut String) {
    let _ = write!(
        out,
        "### seq={} role={} time={}",
        m.seq,
        m.role,
        m.created_at.to_rfc3339()
    );
    if let Some(name) = &m.name {
        let _ = write!(out, " name={name}");
    }
    if let Some(id) = &m.tool_call_id {
        let _ = write!(out, " tool_call_id={id}");
    }
    if m.pinned {
        out.push_str(" pinned");
    }
    out.push('\n');
    push_block(out, &m.content);
    for call in &m.tool_calls {
        let _ = writeln!(
            out,
            "@tool_call id={} name={} arguments={}",
            call.id,
            call.name,
            single_line(&call.arguments)
        );
    }
    if let Some(reasoning) = &m.reasoning {
        out.push_str("@reasoning\n");
        push_block(out, reasoning);
    }
    out.push('\n');
}

fn render_markdown(m: &Message, out: &mut String) {
    let _ = writeln!(
        out,
        "## #{} · {} · {}{}\n",
        m.seq,
        m.role,
        m.created_at.to_rfc3339(),
        if m.pinned { " · 📌 pinned" } else { "" }
    );
    if let Some(id) = &m.tool_call_id {
        let _ = writeln!(out, "*Result of tool call `{id}`*\n");
    }
    if !m.content.is_empty() {
        push_block(out, &m.content);
        out.push('\n');
    }
    for call in &m.tool_calls {
        let fence = fence_for(&call.arguments);
        let _ = writeln!(
            out,
            "**Tool call** `{}` (`{}`)\n\n{fence}json\n{}\n{fence}\n",
            call.name, call.id, call.arguments
        );
    }
    if let Some(reasoning) = &m.reasoning {
        out.push_str("<details><summary>Reasoning</summary>\n\n");
        push_block(out, reasoning);
        out.push_str("\n</details>\n\n");
    }
}

fn push_block(out: &mut String, text: &str) {
    out.push_str(text);
    if !text.is_empty() && !text.ends_with('\n') {
        out.push('\n');
    }
}

/// Tool arguments on one line, so that one grep hit shows a whole call.
fn single_line(text: &str) -> String {
    text.replace('\r', "\\r").replace('\n', "\\n")
}

/// A code fence longer than any run of backticks in the text, so the text cannot close it.
fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat(longest.max(2) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ConversationId, MessageId, Role, Timestamp, ToolCall};

    fn message(seq: i64, role: Role, content: &str) -> Message {
        Message {
            id: MessageId::new(),
            conversation_id: ConversationId::new(),
            execution_id: None,
            seq,
            role,
            name: None,
            content: content.into(),
            reasoning: None,
            reasoning_signature: None,
            tool_calls: vec![],
            tool_call_id: None,
            tokens: 1,
            pinned: false,
            created_at: Timestamp(1_795_000_000_123),
            deleted_at: None,
        }
    }

    #[test]
    fn text_headers_are_greppable() {
        let mut m = message(42, Role::Assistant, "Checking.");
        m.tool_calls.push(ToolCall {
            id: "call_9".into(),
            name: "shell".into(),
            arguments: "{\"cmd\":\"ls\"}".into(),
            signature: None,
        });
        m.reasoning = Some("Think\nmore".into());
        m.pinned = true;
        let mut out = String::new();
        render_message(ExportFormat::Text, &m, &mut out);
        assert_eq!(
            out,
            "### seq=42 role=assistant time=2026-11-18T11:06:40.123Z pinned\nChecking.\n\
             @tool_call id=call_9 name=shell arguments={\"cmd\":\"ls\"}\n@reasoning\nThink\nmore\n\n"
        );
    }

    #[test]
    fn markdown_fences_cannot_be_closed_by_content() {
        let mut m = message(1, Role::Assistant, "");
        m.tool_calls.push(ToolCall {
            id: "c".into(),
            name: "write_file".into(),
            arguments: "{\"text\":\"```rust\\n```\"}".into(),
            signature: None,
        });
        let mut out = String::new();
        render_message(ExportFormat::Markdown, &m, &mut out);
        assert!(out.contains("````json"), "{out}");
    }
}
