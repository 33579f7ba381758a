//! A full review of a history far above the reviewer's budget reads it in passes: consecutive
//! chunks that each fit one request, so the reviewer sees early evidence verbatim rather than
//! only through summaries. Every pass also carries where the history stands now (the newest
//! messages, the same in every pass), so early evidence can be argued against the current
//! conclusion. Pass 1 also carries the stored summaries and, when the history needs more
//! passes than [`MAX_PASSES`], the summary made for the review of its oldest part: every
//! message is still covered. The passes' findings are merged ([`super::merge`]).

use decima_core::context::units_from_end;
use decima_core::{ConversationId, Message, TokenCounter};
use decima_store::Store;

use super::history::{
    self, Part, Stored, estimate, newest_units_within, shown_tokens, summarised_part,
    verbatim_part, verbatim_part_noted,
};
use crate::context::load_tail_before;
use crate::error::Result;

/// A full review reads in passes when the history needs more than this many times the budget.
/// Up to twice the budget, one request keeps at least half of what the newest part needs
/// verbatim and the summary made for the review holds the rest's facts; beyond it, most of the
/// history would reach the reviewer only through a summary made by rules, which is where
/// arguments across steps get lost.
pub const FAR_ABOVE: u64 = 2;

/// At most this many passes (requests, not counting repairs) per review: each is a full
/// window of input, so 12 bound a review's cost at a dozen requests. A history that needs more
/// has its oldest part summarised for the review in pass 1.
pub const MAX_PASSES: usize = 12;

/// The share of a pass's room that the newest messages, shown in every pass, take.
const NOW_SHARE: f64 = 0.2;

/// The passes of a review: what each reads, and what every pass also reads.
#[derive(Debug, Clone)]
pub struct Passes {
    /// Where the history stands now: the newest messages, verbatim, in every pass.
    pub now: Option<Part>,
    /// Each pass's own parts, oldest first.
    pub passes: Vec<Vec<Part>>,
}

/// Whether a history needing `need` tokens is far enough above `room` to be read in passes.
pub fn far_above(need: u64, room: u32) -> bool {
    need > u64::from(room).saturating_mul(FAR_ABOVE)
}

/// Plans the passes over the stored summaries and every live message after them, each within
/// `room` tokens (the history's share of one request).
pub async fn plan(
    store: &Store,
    conversation: ConversationId,
    stored: &Stored,
    room: u32,
    counter: &dyn TokenCounter,
) -> Result<Passes> {
    let after = stored.frontier;
    let now_room = (f64::from(room) * NOW_SHARE) as u32;
    let (tail, _) = load_tail_before(store, conversation, after, i64::MAX, now_room).await?;
    let now_messages = &tail[newest_units_within(&tail, now_room)..];
    let now = verbatim_part_noted(
        now_messages,
        ": where the history stands now (the same in every pass)",
        counter,
    );
    let before = now.as_ref().map_or(i64::MAX, |p| p.from);
    let pass_room = room.saturating_sub(now.as_ref().map_or(0, |p| p.tokens));
    let stored_part = stored.part(pass_room / 2, counter);
    let first_room = pass_room.saturating_sub(stored_part.as_ref().map_or(0, |p| p.tokens));
    // Read back only as far as the passes after the first can hold, and pass 1 beyond them.
    let want = u64::from(pass_room) * (MAX_PASSES as u64 - 1) + u64::from(first_room);
    let (older, unread) = load_tail_before(
        store,
        conversation,
        after,
        before,
        u32::try_from(want).unwrap_or(u32::MAX),
    )
    .await?;
    let chunks = chunk(&older, unread.count > 0, pass_room, first_room);
    let oldest = chunks.last().map_or(older.len(), |c| c.start);
    let pass_one_before = older.get(oldest).map_or(before, |m| m.seq);
    let mut passes = Vec::with_capacity(chunks.len() + 1);
    let rest = estimate(unread)
        + older[..oldest]
            .iter()
            .map(|m| u64::from(shown_tokens(m)))
            .sum::<u64>();
    if stored_part.is_some() || rest > 0 {
        // Pass 1: the stored summaries and everything older than the chunks, verbatim when it
        // fits, else its oldest part summarised for the review.
        passes.push(
            history::one_request(
                store,
                conversation,
                stored,
                (after, pass_one_before),
                pass_room,
                counter,
            )
            .await?,
        );
    }
    for c in chunks.into_iter().rev() {
        let messages = &older[c.clone()];
        let cost: u32 = messages.iter().map(shown_tokens).sum();
        let part = if cost <= pass_room {
            verbatim_part(messages, counter)
        } else {
            // One tool call with its results, too long for any pass: summarised for it.
            match (messages.first(), messages.last()) {
                (Some(first), Some(last)) => Some(
                    summarised_part(
                        store,
                        conversation,
                        (first.seq, last.seq),
                        pass_room,
                        counter,
                    )
                    .await?,
                ),
                _ => None,
            }
        };
        passes.push(part.into_iter().collect());
    }
    Ok(Passes { now, passes })
}

/// Splits `messages` (seq order) into chunks of whole units within `pass_room` each, newest
/// first, stopping when the rest fits pass 1 (`first_room`, and nothing older left unread) or
/// when only pass 1 is left. A unit larger than `pass_room` is a chunk of its own.
fn chunk(
    messages: &[Message],
    more_unread: bool,
    pass_room: u32,
    first_room: u32,
) -> Vec<std::ops::Range<usize>> {
    let mut prefix = Vec::with_capacity(messages.len() + 1);
    prefix.push(0u64);
    for m in messages {
        let last = prefix.last().copied().unwrap_or(0);
        prefix.push(last + u64::from(shown_tokens(m)));
    }
    let mut chunks: Vec<std::ops::Range<usize>> = Vec::new();
    let (mut start, mut end) = (messages.len(), messages.len());
    for unit in units_from_end(messages) {
        if start == end {
            // A chunk would start here: pass 1 takes the rest when it can.
            let rest_fits_first = !more_unread && prefix[unit.end] <= u64::from(first_room);
            if rest_fits_first || chunks.len() + 1 >= MAX_PASSES {
                return chunks;
            }
        }
        let cost = prefix[unit.end] - prefix[unit.start];
        if prefix[end] - prefix[start] + cost <= u64::from(pass_room) {
            start = unit.start;
            continue;
        }
        if start < end {
            chunks.push(start..end);
            end = start;
            let rest_fits_first = !more_unread && prefix[unit.end] <= u64::from(first_room);
            if rest_fits_first || chunks.len() + 1 >= MAX_PASSES {
                return chunks;
            }
        }
        if cost <= u64::from(pass_room) {
            start = unit.start;
        } else {
            chunks.push(unit.clone());
            start = unit.start;
            end = unit.start;
        }
    }
    if start < end {
        chunks.push(start..end);
    }
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;
    use decima_core::{ConversationId, MessageId, Role, Timestamp};

    fn message(seq: i64, tokens: u32) -> Message {
        Message {
            id: MessageId::new(),
            conversation_id: ConversationId::new(),
            execution_id: None,
            seq,
            role: Role::User,
            name: None,
            content: String::new(),
            reasoning: None,
            reasoning_signature: None,
            tool_calls: vec![],
            tool_call_id: None,
            tokens,
            pinned: false,
            created_at: Timestamp(0),
            deleted_at: None,
        }
    }

    fn covered(chunks: &[std::ops::Range<usize>]) -> Vec<usize> {
        let mut all: Vec<usize> = chunks.iter().flat_map(|c| c.clone()).collect();
        all.sort_unstable();
        all
    }

    #[test]
    fn chunks_fill_passes_from_the_newest_and_leave_pass_one_the_rest() {
        // 100 messages of 80 shown tokens (56 + the header); 1,000 tokens a pass hold 12.
        let messages: Vec<Message> = (1..=100).map(|s| message(s, 56)).collect();
        let chunks = chunk(&messages, false, 1_000, 500);
        assert!(chunks.iter().all(|c| c.len() == 12), "{chunks:?}");
        // The newest first, consecutive, and the rest (4 messages) fits pass 1.
        assert_eq!(chunks[0], 88..100);
        for pair in chunks.windows(2) {
            assert_eq!(pair[1].end, pair[0].start);
        }
        assert_eq!(chunks.last().map(|c| c.start), Some(4));
    }

    #[test]
    fn the_cap_leaves_the_oldest_part_to_pass_one_and_an_oversized_unit_is_its_own_chunk() {
        let messages: Vec<Message> = (1..=1_000).map(|s| message(s, 56)).collect();
        let chunks = chunk(&messages, false, 1_000, 500);
        assert_eq!(chunks.len(), MAX_PASSES - 1);
        assert_eq!(
            covered(&chunks),
            (1_000 - 11 * 12..1_000).collect::<Vec<_>>()
        );
        let mut messages: Vec<Message> = (1..=30).map(|s| message(s, 56)).collect();
        messages[20].tokens = 5_000;
        let chunks = chunk(&messages, false, 1_000, 0);
        assert!(chunks.contains(&(20..21)), "{chunks:?}");
        assert_eq!(covered(&chunks), (0..30).collect::<Vec<_>>());
    }
}
