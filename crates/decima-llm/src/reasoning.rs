//! Anthropic's thinking blocks, kept whole so they can be sent back unchanged.
//!
//! The API checks every `thinking` block against its signature and decrypts `redacted_thinking`
//! blocks; during tool use it requires the assistant turn's sequence of these blocks back exactly
//! as it was produced, in order. A single reasoning string with one signature cannot carry two
//! blocks or a redacted one, so a turn's blocks travel in the one column the store already has
//! for them, `reasoning_signature`, in one of two forms:
//!
//! - a plain signature (what Decima always wrote before): one `thinking` block whose text is the
//!   whole `reasoning`; nothing else to send back;
//! - a JSON array of the blocks, each exactly as the API sends it
//!   (`{"type":"thinking","thinking":…,"signature":…}` or `{"type":"redacted_thinking","data":…}`),
//!   used whenever the plain form would lose something. A signature is base64 and never starts
//!   with `[`, so the two forms cannot be confused.
//!
//! `reasoning` stays the readable text (all thinking blocks' text, concatenated), for display,
//! token counts and providers that echo reasoning as text.

use serde::{Deserialize, Serialize};

/// One reasoning block as the provider sent it, kept so it can go back unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ReasoningBlock {
    /// A `thinking` block: readable reasoning and the signature the API checks it against.
    Thinking {
        /// The reasoning text, exactly as streamed (possibly empty when the API omits it).
        thinking: String,
        /// The signature; empty when the provider sent none (such a block is never sent back).
        signature: String,
    },
    /// A `redacted_thinking` block: reasoning the API encrypted, opaque to everyone but the API.
    RedactedThinking {
        /// The encrypted payload.
        data: String,
    },
}

impl ReasoningBlock {
    /// Whether the API accepts this block back: redacted blocks always, thinking only signed.
    fn can_go_back(&self) -> bool {
        match self {
            ReasoningBlock::Thinking { signature, .. } => !signature.is_empty(),
            ReasoningBlock::RedactedThinking { .. } => true,
        }
    }
}

/// The `reasoning_signature` value for a turn's blocks: `None` when nothing can go back, the
/// plain signature when one signed block holds all of `reasoning`, the JSON array otherwise.
pub(crate) fn encode(blocks: &[ReasoningBlock], reasoning: &str) -> Option<String> {
    let kept: Vec<&ReasoningBlock> = blocks.iter().filter(|b| b.can_go_back()).collect();
    match kept.as_slice() {
        [] => None,
        [
            ReasoningBlock::Thinking {
                thinking,
                signature,
            },
        ] if thinking == reasoning && !signature.starts_with('[') => Some(signature.clone()),
        _ => serde_json::to_string(&kept).ok(),
    }
}

/// The blocks to send back for a stored turn, in order. A JSON form that does not parse (written
/// by a newer Decima, or damaged) sends nothing rather than something the API would reject.
pub(crate) fn decode(reasoning: Option<&str>, signature: Option<&str>) -> Vec<ReasoningBlock> {
    let Some(signature) = signature.filter(|s| !s.is_empty()) else {
        return Vec::new();
    };
    if signature.trim_start().starts_with('[') {
        let blocks: Vec<ReasoningBlock> = serde_json::from_str(signature).unwrap_or_default();
        return blocks.into_iter().filter(|b| b.can_go_back()).collect();
    }
    vec![ReasoningBlock::Thinking {
        thinking: reasoning.unwrap_or_default().to_string(),
        signature: signature.to_string(),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thinking(text: &str, signature: &str) -> ReasoningBlock {
        ReasoningBlock::Thinking {
            thinking: text.into(),
            signature: signature.into(),
        }
    }

    #[test]
    fn one_signed_block_keeps_the_plain_form_older_rows_use() {
        let blocks = [thinking("Let me check.", "EqQB==")];
        assert_eq!(encode(&blocks, "Let me check.").as_deref(), Some("EqQB=="));
        assert_eq!(decode(Some("Let me check."), Some("EqQB==")), blocks);
    }

    #[test]
    fn several_or_redacted_blocks_round_trip_losslessly() {
        let blocks = vec![
            thinking("First.", "sigA"),
            ReasoningBlock::RedactedThinking {
                data: "EmwKAhgB".into(),
            },
            thinking("", "sigB"),
        ];
        let encoded = encode(&blocks, "First.").unwrap();
        assert!(encoded.starts_with('['), "{encoded}");
        assert_eq!(decode(Some("First."), Some(&encoded)), blocks);
        let only_redacted = vec![ReasoningBlock::RedactedThinking { data: "x".into() }];
        let encoded = encode(&only_redacted, "").unwrap();
        assert_eq!(decode(Some(""), Some(&encoded)), only_redacted);
    }

    #[test]
    fn unsigned_thinking_never_goes_back() {
        assert_eq!(encode(&[thinking("hmm", "")], "hmm"), None);
        let blocks = [thinking("a", ""), thinking("b", "sig")];
        let encoded = encode(&blocks, "ab").unwrap();
        assert_eq!(
            decode(Some("ab"), Some(&encoded)),
            vec![thinking("b", "sig")]
        );
        assert!(decode(Some("x"), None).is_empty());
        assert!(decode(Some("x"), Some("")).is_empty());
    }

    #[test]
    fn a_damaged_json_form_sends_nothing() {
        assert!(decode(Some("x"), Some("[{\"type\":\"mystery\"}]")).is_empty());
        assert!(decode(Some("x"), Some("[not json")).is_empty());
    }
}
