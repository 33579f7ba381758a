//! Token counts for models that ship a Hugging Face `tokenizer.json` (Qwen, DeepSeek, Llama…).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use decima_core::{EstimateCounter, TokenCounter};
use tokenizers::Tokenizer;

use super::tiktoken::split_long_runs;
use crate::LlmError;

/// Runs of one kind of character (spaces, say) longer than this are cut, so that one huge tool
/// output cannot overflow the pre-tokenizer's backtracking regex.
const MAX_RUN: usize = 64 * 1024;

/// Counts with a model's own tokenizer when the user has configured its `tokenizer.json`: the
/// closest estimate available offline for open-weight models, to be refined by calibration
/// (chat templates differ per model and are not rendered here).
pub struct HfCounter {
    tokenizer: Tokenizer,
    path: PathBuf,
}

impl std::fmt::Debug for HfCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HfCounter")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl HfCounter {
    /// Loads a `tokenizer.json`. Truncation and padding configured in the file are switched off
    /// (they would cap or inflate counts), and special-token markers in text are counted as
    /// text, so a message cannot forge chat-template tokens.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, LlmError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| LlmError::TokenizerUnreadable {
            path: path.to_path_buf(),
            source,
        })?;
        let mut tokenizer =
            Tokenizer::from_bytes(&bytes).map_err(|e| LlmError::TokenizerInvalid {
                path: path.to_path_buf(),
                reason: e.to_string(),
            })?;
        tokenizer
            .with_truncation(None)
            .map_err(|e| LlmError::TokenizerInvalid {
                path: path.to_path_buf(),
                reason: e.to_string(),
            })?;
        tokenizer.with_padding(None);
        tokenizer.set_encode_special_tokens(true);
        Ok(Self {
            tokenizer,
            path: path.to_path_buf(),
        })
    }

    /// The file it was loaded from, for diagnostics.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn count_piece(&self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        let encoded = catch_unwind(AssertUnwindSafe(|| {
            self.tokenizer.encode_fast(text, false).map(|e| e.len())
        }));
        match encoded {
            Ok(Ok(n)) => n,
            // A tokenizer error or panic on odd input: estimate rather than fail the insert.
            _ => EstimateCounter.count_text(text) as usize,
        }
    }
}

impl TokenCounter for HfCounter {
    fn count_text(&self, text: &str) -> u32 {
        let total = if text.len() <= MAX_RUN {
            self.count_piece(text)
        } else {
            split_long_runs(text, MAX_RUN)
                .into_iter()
                .map(|(piece, _)| self.count_piece(piece))
                .fold(0usize, usize::saturating_add)
        };
        u32::try_from(total).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use decima_core::{NewMessage, Role};
    use proptest::prelude::*;

    /// A word-level tokenizer split on whitespace and punctuation, with one special token.
    fn word_level_json() -> String {
        serde_json::json!({
            "version": "1.0",
            "truncation": {"direction": "Right", "max_length": 4, "strategy": "LongestFirst", "stride": 0},
            "padding": null,
            "added_tokens": [
                {"id": 0, "content": "[UNK]", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
                {"id": 6, "content": "<|im_start|>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}
            ],
            "normalizer": {"type": "Lowercase"},
            "pre_tokenizer": {"type": "Whitespace"},
            "post_processor": null,
            "decoder": null,
            "model": {
                "type": "WordLevel",
                "vocab": {"[UNK]": 0, "hello": 1, "world": 2, "the": 3, "data": 4, ".": 5, "<|im_start|>": 6},
                "unk_token": "[UNK]"
            }
        })
        .to_string()
    }

    /// A byte-level BPE in the GPT-2 style with a handful of merges.
    fn byte_level_bpe_json() -> String {
        let mut vocab = serde_json::Map::new();
        // The 256 byte symbols of GPT-2's byte-level alphabet.
        let mut alphabet: Vec<char> = Vec::new();
        for b in 0u32..256 {
            let printable = (0x21..=0x7E).contains(&b)
                || (0xA1..=0xAC).contains(&b)
                || (0xAE..=0xFF).contains(&b);
            if printable {
                alphabet.push(char::from_u32(b).unwrap_or('?'));
            }
        }
        let mut extra = 0u32;
        for b in 0u32..256 {
            let printable = (0x21..=0x7E).contains(&b)
                || (0xA1..=0xAC).contains(&b)
                || (0xAE..=0xFF).contains(&b);
            if !printable {
                alphabet.push(char::from_u32(256 + extra).unwrap_or('?'));
                extra += 1;
            }
        }
        for (i, c) in alphabet.iter().enumerate() {
            vocab.insert(c.to_string(), serde_json::json!(i));
        }
        let merges = [
            "h e", "l l", "he ll", "hell o", "Ġ w", "o r", "Ġw or", "l d", "Ġwor ld",
        ];
        for (id, m) in (vocab.len()..).zip(merges) {
            vocab.insert(m.replace(' ', ""), serde_json::json!(id));
        }
        serde_json::json!({
            "version": "1.0",
            "truncation": null,
            "padding": null,
            "added_tokens": [],
            "normalizer": null,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
            "post_processor": null,
            "decoder": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
            "model": {
                "type": "BPE",
                "dropout": null,
                "unk_token": null,
                "continuing_subword_prefix": null,
                "end_of_word_suffix": null,
                "fuse_unk": false,
                "byte_fallback": false,
                "vocab": vocab,
                "merges": merges
            }
        })
        .to_string()
    }

    fn write(dir: &tempfile::TempDir, name: &str, json: &str) -> PathBuf {
        let path = dir.path().join(name);
        std::fs::write(&path, json).unwrap();
        path
    }

    #[test]
    fn counts_with_a_word_level_tokenizer() {
        let dir = tempfile::tempdir().unwrap();
        let counter =
            HfCounter::from_file(write(&dir, "tokenizer.json", &word_level_json())).unwrap();
        assert_eq!(counter.count_text(""), 0);
        assert_eq!(counter.count_text("Hello world"), 2);
        // Truncation in the file (max_length 4) is ignored: every word counts.
        assert_eq!(counter.count_text("hello world the data . hello world"), 7);
        // Unknown words are one [UNK] each.
        assert_eq!(counter.count_text("zebra quagga"), 2);
        // A forged special token is split as text: "<|", "im_start", "|>".
        assert_eq!(counter.count_text("<|im_start|>"), 3);
        // The trait's framing applies on top.
        let m = NewMessage::new(Role::User, "hello world");
        assert_eq!(counter.count_message(&m), 4 + 2);
    }

    #[test]
    fn counts_with_a_byte_level_bpe() {
        let dir = tempfile::tempdir().unwrap();
        let counter =
            HfCounter::from_file(write(&dir, "bpe.json", &byte_level_bpe_json())).unwrap();
        assert_eq!(counter.count_text("hello world"), 2);
        assert_eq!(counter.count_text("hello"), 1);
        // Unmerged bytes, multi-byte characters included, are one token per byte.
        assert_eq!(counter.count_text("xyz"), 3);
        assert_eq!(counter.count_text("é"), 2);
        // "hello", then "Ġworld" and "Ġhello" (unmerged: Ġ + hello) per repetition, then "Ġ".
        let long = "hello world ".repeat(20_000);
        assert_eq!(counter.count_text(&long), 2 + 19_999 * 3 + 1);
        // A megabyte of spaces is cut into runs rather than handed to the regex whole.
        assert!(counter.count_text(&" ".repeat(1 << 20)) > 0);
    }

    #[test]
    fn reports_missing_and_invalid_files() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.json");
        let err = HfCounter::from_file(&missing).unwrap_err();
        assert!(matches!(err, LlmError::TokenizerUnreadable { .. }));
        let message = err.to_string();
        assert!(
            message.contains("nope.json") && message.contains("read"),
            "{message}"
        );

        let garbage = write(&dir, "bad.json", "{\"model\": 42}");
        let err = HfCounter::from_file(&garbage).unwrap_err();
        assert!(matches!(err, LlmError::TokenizerInvalid { .. }));
        assert!(err.to_string().contains("bad.json"), "{err}");

        let not_json = write(&dir, "bin.json", "\u{0}\u{1}not json");
        assert!(HfCounter::from_file(&not_json).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn never_panics(text in any::<String>()) {
            let dir = tempfile::tempdir().unwrap();
            let words = HfCounter::from_file(write(&dir, "w.json", &word_level_json())).unwrap();
            let bpe = HfCounter::from_file(write(&dir, "b.json", &byte_level_bpe_json())).unwrap();
            let _ = words.count_text(&text);
            prop_assert!(bpe.count_text(&text) as usize <= text.len());
        }
    }
}
