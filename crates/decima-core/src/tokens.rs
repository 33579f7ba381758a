//! Token counting. Counts are taken once per message, at insert, and cached in the store.

use crate::NewMessage;

/// Counts tokens the way a model's tokenizer would. The store calls it once per message at insert;
/// the context engine only ever adds cached counts, so its cost never depends on history length.
pub trait TokenCounter: Send + Sync {
    /// Tokens in a piece of text.
    fn count_text(&self, text: &str) -> u32;

    /// Fixed framing cost of one chat message (role markers, separators).
    fn message_overhead(&self) -> u32 {
        4
    }

    /// Tokens a message costs in a request: framing, name, content, reasoning and tool calls.
    fn count_message(&self, message: &NewMessage) -> u32 {
        let mut total = self.message_overhead();
        total = total.saturating_add(self.count_text(&message.content));
        if let Some(name) = &message.name {
            total = total.saturating_add(self.count_text(name).saturating_add(1));
        }
        if let Some(reasoning) = &message.reasoning {
            total = total.saturating_add(self.count_text(reasoning));
        }
        for call in &message.tool_calls {
            total = total
                .saturating_add(self.count_text(&call.name))
                .saturating_add(self.count_text(&call.arguments))
                .saturating_add(self.count_text(&call.id))
                .saturating_add(3);
        }
        if let Some(id) = &message.tool_call_id {
            total = total.saturating_add(self.count_text(id));
        }
        message
            .images
            .iter()
            .fold(total, |total, image| total.saturating_add(image.tokens))
    }
}

/// A tokenizer-free estimate: about four ASCII characters per token, one token per CJK character,
/// and two other non-ASCII characters per token. Good to within tens of percent on prose and code;
/// it stands in until a model's real tokenizer is configured.
#[derive(Debug, Clone, Copy, Default)]
pub struct EstimateCounter;

impl TokenCounter for EstimateCounter {
    fn count_text(&self, text: &str) -> u32 {
        let mut ascii: u64 = 0;
        let mut cjk: u64 = 0;
        let mut other: u64 = 0;
        for c in text.chars() {
            if c.is_ascii() {
                ascii += 1;
            } else if is_cjk(c) {
                cjk += 1;
            } else {
                other += 1;
            }
        }
        let total = ascii.div_ceil(4) + cjk + other.div_ceil(2);
        u32::try_from(total).unwrap_or(u32::MAX)
    }
}

/// CJK ideographs, kana, hangul and CJK punctuation: scripts where one character is about one token.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3000..=0x303F | 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF |
        0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF | 0x20000..=0x2FFFF)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Role, ToolCall};

    #[test]
    fn estimates_scripts_differently() {
        let c = EstimateCounter;
        assert_eq!(c.count_text(""), 0);
        assert_eq!(c.count_text("abcd"), 1);
        assert_eq!(c.count_text("abcde"), 2);
        assert_eq!(c.count_text("你好世界"), 4);
        assert_eq!(c.count_text("éé"), 1);
    }

    #[test]
    fn message_cost_includes_tool_calls() {
        let c = EstimateCounter;
        let plain = NewMessage::new(Role::Assistant, "");
        let mut with_call = plain.clone();
        with_call.tool_calls.push(ToolCall {
            id: "call_1".into(),
            name: "shell".into(),
            arguments: r#"{"cmd":"ls -la /workspace"}"#.into(),
            signature: None,
        });
        assert!(c.count_message(&with_call) > c.count_message(&plain) + 5);
    }
}
