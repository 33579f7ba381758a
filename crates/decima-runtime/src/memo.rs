//! A token counter that remembers, per conversation, the counts of the texts a step counts
//! afresh: the preset's parts after macros, and the session context. Messages are counted once
//! at insert anyway; these are the only texts left, and without the memo a short-lived process
//! (`decima context`) would spend most of its time building the tokenizer's tables.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use decima_core::{ConversationId, NewMessage, TokenCounter};
use decima_store::Store;
use sha2::{Digest as _, Sha256};

use crate::error::Result;

/// Counts through a preloaded memo, falls back to the real counter on a miss, and records what
/// it had to count so the caller can store it.
pub struct MemoCounter {
    inner: Arc<dyn TokenCounter>,
    known: HashMap<String, u32>,
    fresh: Mutex<Vec<(String, u32)>>,
}

impl MemoCounter {
    /// A memo over the conversation's remembered counts.
    pub async fn load(
        store: &Store,
        conversation: ConversationId,
        inner: Arc<dyn TokenCounter>,
    ) -> Result<Self> {
        Ok(Self {
            inner,
            known: store.token_memo().load(conversation).await?,
            fresh: Mutex::new(Vec::new()),
        })
    }

    /// Stores what was counted afresh (and marks every hit as used, so it is not pruned).
    pub async fn save(&self, store: &Store, conversation: ConversationId) -> Result<()> {
        let fresh = match self.fresh.lock() {
            Ok(mut fresh) => std::mem::take(&mut *fresh),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        };
        store.token_memo().remember(conversation, &fresh).await?;
        Ok(())
    }

    /// How many counts had to be made afresh so far.
    pub fn misses(&self) -> usize {
        self.fresh.lock().map_or(0, |f| f.len())
    }

    fn remembered(&self, digest: String, count: impl FnOnce() -> u32) -> u32 {
        if let Some(tokens) = self.known.get(&digest) {
            return *tokens;
        }
        if let Ok(fresh) = self.fresh.lock()
            && let Some((_, tokens)) = fresh.iter().find(|(d, _)| *d == digest)
        {
            return *tokens;
        }
        let tokens = count();
        if let Ok(mut fresh) = self.fresh.lock() {
            fresh.push((digest, tokens));
        }
        tokens
    }
}

/// Names the counter the memo stands in for; a different store counter must never read these.
const COUNTER_ID: &[u8] = b"o200k_base/1";

/// Length-prefixed fields, so no two different inputs hash the same bytes.
pub(crate) fn field(hasher: &mut Sha256, bytes: &[u8]) {
    hasher.update((bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

/// Lower-case hex of a digest.
pub(crate) fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

impl TokenCounter for MemoCounter {
    fn count_text(&self, text: &str) -> u32 {
        let mut hasher = Sha256::new();
        field(&mut hasher, COUNTER_ID);
        field(&mut hasher, b"text");
        field(&mut hasher, text.as_bytes());
        self.remembered(hex(&hasher.finalize()), || self.inner.count_text(text))
    }

    fn message_overhead(&self) -> u32 {
        self.inner.message_overhead()
    }

    fn count_message(&self, message: &NewMessage) -> u32 {
        let mut hasher = Sha256::new();
        field(&mut hasher, COUNTER_ID);
        field(&mut hasher, b"message");
        field(&mut hasher, message.role.as_str().as_bytes());
        for part in [
            message.name.as_deref(),
            Some(message.content.as_str()),
            message.reasoning.as_deref(),
            message.tool_call_id.as_deref(),
        ] {
            match part {
                Some(p) => {
                    field(&mut hasher, b"1");
                    field(&mut hasher, p.as_bytes());
                }
                None => field(&mut hasher, b"0"),
            }
        }
        for call in &message.tool_calls {
            field(&mut hasher, call.id.as_bytes());
            field(&mut hasher, call.name.as_bytes());
            field(&mut hasher, call.arguments.as_bytes());
        }
        for image in &message.images {
            field(&mut hasher, &image.tokens.to_le_bytes());
        }
        self.remembered(hex(&hasher.finalize()), || {
            self.inner.count_message(message)
        })
    }
}

/// Texts shorter than this are counted whole; longer ones paragraph by paragraph.
const PARAGRAPH_COUNTING_FROM: usize = 8 * 1024;
/// What separates the paragraphs of a long text.
const PARAGRAPH_BREAK: &str = "\n\n";

/// Token counts of paragraphs, remembered in memory for the life of an agent run. A step's
/// session context is mostly the same summaries as the step before, with a few paragraphs
/// changed (the step history, the plan); counting it paragraph by paragraph makes a step count
/// only what changed. The sum of the paragraphs' counts may differ from the count of the whole
/// by a token at a paragraph break; the calibration against the provider's reported usage
/// absorbs that. Keys are a fast hash; the texts are not kept.
#[derive(Default)]
pub struct ParagraphMemo {
    counts: Counts,
}

impl ParagraphMemo {
    /// A counter that counts long texts through this memo and everything else through `inner`.
    pub fn over<'a>(&'a self, inner: &'a dyn TokenCounter) -> ParagraphCounter<'a> {
        ParagraphCounter { inner, memo: self }
    }
}

/// Counts by fast hash, kept in memory; a poisoned lock only costs the memo, never the count.
#[derive(Default)]
struct Counts(Mutex<HashMap<u64, u32>>);

impl Counts {
    fn remembered(&self, key: u64, count: impl FnOnce() -> u32) -> u32 {
        if let Ok(known) = self.0.lock()
            && let Some(tokens) = known.get(&key)
        {
            return *tokens;
        }
        let tokens = count();
        if let Ok(mut known) = self.0.lock() {
            known.insert(key, tokens);
        }
        tokens
    }
}

/// See [`ParagraphMemo::over`].
pub struct ParagraphCounter<'a> {
    inner: &'a dyn TokenCounter,
    memo: &'a ParagraphMemo,
}

impl TokenCounter for ParagraphCounter<'_> {
    fn count_text(&self, text: &str) -> u32 {
        if text.len() < PARAGRAPH_COUNTING_FROM {
            return self.inner.count_text(text);
        }
        // A paragraph is known by its text without the break after it: the last paragraph
        // of one step's text is often followed by another the next step (the step history
        // after the summaries), and must not be counted again for the break it gained.
        let mut breaks = 0u32;
        let paragraphs = text
            .split(PARAGRAPH_BREAK)
            .inspect(|_| breaks += 1)
            .filter(|paragraph| !paragraph.is_empty())
            .map(|paragraph| {
                self.memo
                    .counts
                    .remembered(fast_key(&[b"paragraph", paragraph.as_bytes()]), || {
                        self.inner.count_text(paragraph)
                    })
            })
            .fold(0, u32::saturating_add);
        let break_tokens = self.memo.counts.remembered(fast_key(&[b"break"]), || {
            self.inner.count_text(PARAGRAPH_BREAK)
        });
        paragraphs.saturating_add(break_tokens.saturating_mul(breaks.saturating_sub(1)))
    }

    fn message_overhead(&self) -> u32 {
        self.inner.message_overhead()
    }

    fn count_message(&self, message: &NewMessage) -> u32 {
        if message.content.len() < PARAGRAPH_COUNTING_FROM {
            return self.inner.count_message(message);
        }
        // The message without its text, counted for its framing; the text is not copied.
        let frame = NewMessage {
            role: message.role,
            name: message.name.clone(),
            content: String::new(),
            reasoning: message.reasoning.clone(),
            reasoning_signature: message.reasoning_signature.clone(),
            tool_calls: message.tool_calls.clone(),
            tool_call_id: message.tool_call_id.clone(),
            execution_id: message.execution_id,
            pinned: message.pinned,
            images: message.images.clone(),
        };
        self.inner
            .count_message(&frame)
            .saturating_add(self.count_text(&message.content))
    }
}

/// The model's token counts of whole messages, remembered in memory for the life of an agent
/// run: a step's request repeats the last one plus a few messages, so only those are counted,
/// and a long one (the system message with the session context) paragraph by paragraph.
/// Keys are a fast hash of every field the count depends on; the texts are not kept.
///
/// A request's history messages are the same shared drafts step after step (see
/// [`crate::context::Loaded`]); those are known by identity, without hashing their text. The
/// memo holds each draft it knows, so no other message can take its address while it is known.
pub struct ModelMemo {
    inner: Arc<dyn TokenCounter>,
    whole: Counts,
    paragraphs: ParagraphMemo,
    shared: Mutex<SharedCounts>,
}

impl ModelMemo {
    /// A memo in front of the model's counter.
    pub fn new(inner: Arc<dyn TokenCounter>) -> Self {
        Self {
            inner,
            whole: Counts::default(),
            paragraphs: ParagraphMemo::default(),
            shared: Mutex::default(),
        }
    }

    /// The model's own counter, for a text that is budgeted in the model's tokens.
    pub fn counter(&self) -> &dyn TokenCounter {
        self.inner.as_ref()
    }

    /// The count of a request's messages. Drafts seen in an earlier request are found by
    /// identity; the rest are counted (through the memo) and remembered. Once the memo holds
    /// twice what a request carries, what this request did not carry is forgotten, so the memo
    /// follows the window.
    pub fn count_request<'m>(
        &self,
        messages: impl ExactSizeIterator<Item = &'m Arc<NewMessage>>,
    ) -> u32 {
        let Ok(mut shared) = self.shared.lock() else {
            return messages
                .map(|m| self.count_message(m))
                .fold(0, u32::saturating_add);
        };
        let carried = messages.len();
        shared.generation = shared.generation.wrapping_add(1);
        let generation = shared.generation;
        let mut total = 0u32;
        for message in messages {
            let key = Arc::as_ptr(message) as usize;
            let tokens = match shared.known.get_mut(&key) {
                Some(known) => {
                    known.generation = generation;
                    known.tokens
                }
                None => {
                    let tokens = self.count_message(message);
                    shared.known.insert(
                        key,
                        Known {
                            _held: Arc::clone(message),
                            tokens,
                            generation,
                        },
                    );
                    tokens
                }
            };
            total = total.saturating_add(tokens);
        }
        if shared.known.len() > 2 * carried + 64 {
            shared.known.retain(|_, k| k.generation == generation);
        }
        total
    }
}

/// The drafts a [`ModelMemo`] knows by identity.
#[derive(Default)]
struct SharedCounts {
    known: HashMap<usize, Known, foldhash::fast::FixedState>,
    /// Counts requests, to tell what the last one carried.
    generation: u64,
}

/// A draft known by its address: held, so no other message can take that address meanwhile.
struct Known {
    _held: Arc<NewMessage>,
    tokens: u32,
    generation: u64,
}

fn fast_key(parts: &[&[u8]]) -> u64 {
    use std::hash::{BuildHasher as _, Hasher as _};
    let mut hasher = foldhash::quality::FixedState::with_seed(0x6465_6369_6d61).build_hasher();
    for part in parts {
        hasher.write_usize(part.len());
        hasher.write(part);
    }
    hasher.finish()
}

impl TokenCounter for ModelMemo {
    fn count_text(&self, text: &str) -> u32 {
        self.whole
            .remembered(fast_key(&[b"text", text.as_bytes()]), || {
                self.paragraphs.over(self.inner.as_ref()).count_text(text)
            })
    }

    fn message_overhead(&self) -> u32 {
        self.inner.message_overhead()
    }

    fn count_message(&self, message: &NewMessage) -> u32 {
        if message.content.len() >= PARAGRAPH_COUNTING_FROM {
            // A long message is counted by its paragraphs, each remembered; a whole-message key
            // would only hash it once more, as the long one that comes again (the session
            // context) is a little different every step.
            return self
                .paragraphs
                .over(self.inner.as_ref())
                .count_message(message);
        }
        let image_tokens: Vec<[u8; 4]> = message
            .images
            .iter()
            .map(|i| i.tokens.to_le_bytes())
            .collect();
        let mut parts: Vec<&[u8]> = vec![b"message", message.role.as_str().as_bytes()];
        for field in [
            message.name.as_deref(),
            Some(message.content.as_str()),
            message.reasoning.as_deref(),
            message.tool_call_id.as_deref(),
        ] {
            match field {
                Some(text) => parts.extend([b"1".as_slice(), text.as_bytes()]),
                None => parts.push(b"0"),
            }
        }
        for call in &message.tool_calls {
            parts.extend([
                call.id.as_bytes(),
                call.name.as_bytes(),
                call.arguments.as_bytes(),
            ]);
        }
        parts.extend(image_tokens.iter().map(<[u8; 4]>::as_slice));
        self.whole.remembered(fast_key(&parts), || {
            self.paragraphs
                .over(self.inner.as_ref())
                .count_message(message)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// Counts a token per char, and remembers what it was asked to count.
    #[derive(Default)]
    struct Recording(Mutex<Vec<String>>);

    impl TokenCounter for Recording {
        fn count_text(&self, text: &str) -> u32 {
            self.0.lock().unwrap().push(text.to_owned());
            u32::try_from(text.chars().count()).unwrap()
        }
    }

    fn long_paragraph(tag: &str) -> String {
        format!("{tag} {}", "word ".repeat(2_000))
    }

    #[test]
    fn a_paragraph_that_gains_a_break_after_it_is_not_counted_again() {
        let inner = Recording::default();
        let memo = ParagraphMemo::default();
        let counter = memo.over(&inner);
        let summary = long_paragraph("summary");
        let first = counter.count_text(&summary);
        assert_eq!(first as usize, summary.chars().count());
        inner.0.lock().unwrap().clear();

        let history = "step history: shell true ok";
        let next = format!("{summary}{PARAGRAPH_BREAK}{history}");
        let second = counter.count_text(&next);
        // Only the new paragraph was counted; the summary and the break were remembered.
        let asked = inner.0.lock().unwrap().clone();
        assert_eq!(asked, vec![history.to_owned()]);
        assert_eq!(second as usize, next.chars().count());
    }

    #[test]
    fn paragraph_counts_add_up_to_the_whole_text() {
        let inner = Recording::default();
        let memo = ParagraphMemo::default();
        let counter = memo.over(&inner);
        let text = format!(
            "{}\n\n\n\n{}\n\nend\n\n",
            long_paragraph("a"),
            long_paragraph("b")
        );
        assert_eq!(counter.count_text(&text) as usize, text.chars().count());
    }
}
