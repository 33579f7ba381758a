//! Summaries made for a review: the extract strategy (no model) over a seq range that no stored
//! summary covers and that does not fit the reviewer's budget verbatim. They are cached in the
//! store (`review_digests`), never stored as a compaction, so no agent step sees them.
//!
//! The range is cut into blocks of [`BLOCK_SEQS`] seqs aligned on the seq numbers, so the same
//! messages fall into the same blocks from one review to the next however the range's ends
//! move. Each block's whole digest is cached as text that parses back; a block that grew since
//! (the newest one, as the conversation goes on) is extended with its new messages only. The
//! blocks' digests are merged and rendered within the budget by priority, and that rendering is
//! cached too, keyed by (conversation, from, through, budget). Every cached row is checked
//! against the live count, tokens and seq sum of its range (one SQL aggregate over the cached
//! per-message counts, in one query for all rows), so a rollback or any other change of which
//! messages are live makes it miss. A reused rendering reads no message at all; a grown
//! conversation reads only its new messages.

use std::collections::VecDeque;

use decima_core::context::extract::Counting;
use decima_core::context::{Detail, Digest, Source};
use decima_core::{ConversationId, TokenCounter};
use decima_store::{MessageText, ReviewDigest, SeqFingerprint, Store};
use tracing::{debug, warn};

use crate::context::frontier_of;
use crate::error::{Result, RuntimeError};

/// Seqs per cached block. Small enough that a rollback or a grown block costs little to redo,
/// large enough that a 10k-message history is a handful of rows to merge.
pub const BLOCK_SEQS: i64 = 1_024;

/// Blocks being extracted at once, per core. More than one: while this thread waits for a
/// block's read or merges the oldest digest, the blocks read ahead keep every core extracting
/// (measured on two cores: the cold input of 10,000 messages took about 3 ms less with four to
/// nine blocks in flight than with two).
const BLOCKS_PER_CORE: usize = 3;
/// The most blocks in flight, so a long history's messages are never all held at once.
const MAX_IN_FLIGHT: usize = 8;

/// The format of the cached texts: a change to how they are made bumps it, and older rows are
/// ignored and replaced.
pub const DIGEST_VERSION: u32 = 2;

/// A summary of the live messages `from..=through`, made for a review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewSummary {
    /// The first seq it covers.
    pub from: i64,
    /// The last seq it covers.
    pub through: i64,
    /// The summary, within the budget asked for.
    pub text: String,
    /// Its tokens (store counts).
    pub tokens: u32,
    /// Live messages it covers.
    pub messages: u64,
    /// Messages read from the store to make it: 0 when the cached rendering was reused.
    pub read: u64,
    /// Whether the rendering came from the cache as it was.
    pub cached: bool,
}

/// The blocks of `from..=through`: aligned on multiples of [`BLOCK_SEQS`], the first starting
/// at `from` and the last ending at `through`.
pub fn blocks(from: i64, through: i64) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let mut start = from.max(1);
    while start <= through {
        let block_end = ((start - 1) / BLOCK_SEQS + 1) * BLOCK_SEQS;
        let end = block_end.min(through);
        out.push((start, end));
        start = end + 1;
    }
    out
}

/// What to do for one block.
enum Plan {
    /// A cached whole digest of the block, valid.
    Cached(ReviewDigest),
    /// A cached digest of the block's beginning, valid, to extend with `from..=through`.
    Extend(ReviewDigest, i64),
    /// Nothing usable: extract the whole block.
    Fresh,
}

/// The summary of the live messages `from..=through`, rendered within `max_tokens` (store
/// tokens, with the counter's per-message overhead, as [`Digest::render_budgeted`] counts).
pub async fn summarise(
    store: &Store,
    conversation: ConversationId,
    from: i64,
    through: i64,
    max_tokens: u32,
    counter: &dyn TokenCounter,
) -> Result<ReviewSummary> {
    let digests = store.review_digests();
    let rendered = digests
        .within(conversation, DIGEST_VERSION, from, through, max_tokens)
        .await?
        .into_iter()
        .find(|d| d.from_seq == from && d.through_seq == through);
    if let Some(r) = rendered {
        // A hit costs one aggregate over the cached counts and reads no message.
        let now = digests
            .fingerprints(conversation, &[(from, through)])
            .await?
            .first()
            .copied()
            .unwrap_or_default();
        if now == r.fingerprint {
            debug!(from, through, "review summary reused from the cache");
            return Ok(ReviewSummary {
                from,
                through,
                text: r.text,
                tokens: r.tokens,
                messages: now.messages,
                read: 0,
                cached: true,
            });
        }
        // Out of date: made again below, which replaces the row.
    }
    make(store, conversation, (from, through), max_tokens, counter).await
}

/// The cached block rows that may serve `ranges`: for each block, the longest row that starts
/// where the block starts and ends within it.
async fn block_candidates(
    store: &Store,
    conversation: ConversationId,
    ranges: &[(i64, i64)],
) -> Result<Vec<Option<ReviewDigest>>> {
    let (Some(first), Some(last)) = (ranges.first(), ranges.last()) else {
        return Ok(Vec::new());
    };
    let rows = store
        .review_digests()
        .within(conversation, DIGEST_VERSION, first.0, last.1, 0)
        .await?;
    Ok(ranges
        .iter()
        .map(|(a, b)| {
            rows.iter()
                .filter(|r| r.from_seq == *a && r.through_seq <= *b)
                .max_by_key(|r| r.through_seq)
                .cloned()
        })
        .collect())
}

/// What to do for each block of a range, measured against the live messages now.
struct BlockPlans {
    /// Each block and what to do for it.
    blocks: Vec<((i64, i64), Plan)>,
    /// Cached rows that no longer hold (replaced by what is made).
    stale: Vec<(i64, i64, u32)>,
}

/// Plans the blocks of `from..=through` from the cached rows that may serve them, checked
/// against the live counts in one aggregate over the candidates' ranges. A block without a
/// candidate is measured as it is read, so a cold history costs no aggregate at all.
async fn plan_blocks(
    store: &Store,
    conversation: ConversationId,
    (from, through): (i64, i64),
) -> Result<BlockPlans> {
    let ranges = blocks(from, through);
    let candidates = block_candidates(store, conversation, &ranges).await?;
    let asked: Vec<(i64, i64)> = candidates
        .iter()
        .flatten()
        .map(|c| (c.from_seq, c.through_seq))
        .collect();
    let measured = store
        .review_digests()
        .fingerprints(conversation, &asked)
        .await?;
    let mut measured = measured.into_iter();
    let mut stale: Vec<(i64, i64, u32)> = Vec::new();
    let mut planned = Vec::with_capacity(ranges.len());
    for (range, candidate) in ranges.into_iter().zip(candidates) {
        let plan = match candidate {
            Some(c) => {
                let now = measured.next().unwrap_or_default();
                if now != c.fingerprint {
                    stale.push((c.from_seq, c.through_seq, 0));
                    Plan::Fresh
                } else if c.through_seq == range.1 {
                    Plan::Cached(c)
                } else {
                    stale.push((c.from_seq, c.through_seq, 0));
                    let next = c.through_seq + 1;
                    Plan::Extend(c, next)
                }
            }
            None => Plan::Fresh,
        };
        planned.push((range, plan));
    }
    Ok(BlockPlans {
        blocks: planned,
        stale,
    })
}

/// Makes the summary from block digests (cached, extended or extracted), renders it within
/// `max_tokens`, and caches what it made.
async fn make(
    store: &Store,
    conversation: ConversationId,
    (from, through): (i64, i64),
    max_tokens: u32,
    counter: &dyn TokenCounter,
) -> Result<ReviewSummary> {
    let plans = plan_blocks(store, conversation, (from, through)).await?;
    let count = plans.blocks.len();
    let made = digest_blocks(store, conversation, plans.blocks, true).await?;
    let whole = made.fingerprint;
    let (text, tokens) =
        made.merged
            .render_fitted(Detail::Standard, max_tokens, &Counting(counter));
    let mut rows = made.rows;
    rows.push(ReviewDigest {
        from_seq: from,
        through_seq: through,
        budget: max_tokens,
        fingerprint: whole,
        text: text.clone(),
        tokens,
    });
    store
        .review_digests()
        .put(conversation, DIGEST_VERSION, &rows, &plans.stale)
        .await?;
    debug!(
        from,
        through,
        read = made.read,
        blocks = count,
        "review summary made"
    );
    Ok(ReviewSummary {
        from,
        through,
        text,
        tokens,
        messages: whole.messages,
        read: made.read,
        cached: false,
    })
}

/// Digests, ahead of any review, the full blocks of `after + 1..=last` that no valid cached
/// row covers (`after`: where the stored summaries end). A full block does not change short
/// of a rollback or an edit, which its fingerprint catches, so a later review merges these
/// digests instead of extracting the whole history while the analyst waits; the newest block,
/// still filling, is left to the review. Returns the messages read.
pub async fn warm(
    store: &Store,
    conversation: ConversationId,
    after: i64,
    last: i64,
) -> Result<u64> {
    let through = last / BLOCK_SEQS * BLOCK_SEQS;
    if through <= after {
        return Ok(0);
    }
    let plans = plan_blocks(store, conversation, (after + 1, through)).await?;
    let made = digest_blocks(store, conversation, plans.blocks, false).await?;
    if !made.rows.is_empty() {
        store
            .review_digests()
            .put(conversation, DIGEST_VERSION, &made.rows, &plans.stale)
            .await?;
    }
    debug!(
        after,
        through,
        read = made.read,
        digested = made.rows.len(),
        "review digests made ahead"
    );
    Ok(made.read)
}

/// Digests ahead, on a background task, the full blocks behind the stored summaries when the
/// message at `seq` has just filled a block: as messages are written (a run's steps, chat
/// turns), so that a review of a long history Decima wrote merges digests made while it grew
/// instead of extracting the whole history while the analyst waits. A block that no trigger
/// saw fill (a message stored by another path landed on its boundary) is made by the next one,
/// which plans every full block. It is a cache: failing to fill it fails nothing.
pub fn warm_when_full(store: &Store, conversation: ConversationId, seq: i64) {
    if seq <= 0 || seq % BLOCK_SEQS != 0 {
        return;
    }
    spawn_warm(store, conversation, Some(seq));
}

/// Digests, on a background task, every full block of the conversation that no valid row
/// covers: what the history holds, not what just changed, so blocks that filled through a path
/// no trigger watches (an import through the store, a review's message on a boundary) are made
/// too. Called when a run ends; a block already cached costs one aggregate.
pub fn warm_behind(store: &Store, conversation: ConversationId) {
    spawn_warm(store, conversation, None);
}

/// Spawns [`warm`] from the stored summaries' frontier through `last` (the newest live seq when
/// `None`), logging a failure: the cache is an optimisation.
fn spawn_warm(store: &Store, conversation: ConversationId, last: Option<i64>) {
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let store = store.clone();
    handle.spawn(async move {
        let made = async {
            let last = match last {
                Some(seq) => seq,
                None => match store.messages().nth_newest_seq(conversation, 1).await? {
                    Some(seq) => seq,
                    None => return Ok(0),
                },
            };
            let summaries = store.compactions().live_summaries(conversation).await?;
            warm(&store, conversation, frontier_of(&summaries), last).await
        }
        .await;
        if let Err(e) = made {
            warn!(error = %e, "full blocks were not digested ahead for reviews");
        }
    });
}

/// What [`digest_blocks`] made.
struct Made {
    /// The blocks' digests merged in seq order (empty unless asked for).
    merged: Digest,
    /// The rows of the blocks digested anew, to cache.
    rows: Vec<ReviewDigest>,
    /// Messages read from the store.
    read: u64,
    /// The live messages of every block (cached, extended or read), summed.
    fingerprint: SeqFingerprint,
}

/// Carries out the plans: blocks are read, parsed and extracted on blocking threads, a few at
/// a time, while the next ones are read. With `merge`, their digests are merged in seq order;
/// without, cached blocks are left alone and only the new rows are returned.
async fn digest_blocks(
    store: &Store,
    conversation: ConversationId,
    plans: Vec<((i64, i64), Plan)>,
    merge: bool,
) -> Result<Made> {
    let parallel = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .saturating_mul(BLOCKS_PER_CORE)
        .clamp(2, MAX_IN_FLIGHT);
    let mut made = Made {
        merged: Digest::default(),
        rows: Vec::new(),
        read: 0,
        fingerprint: SeqFingerprint::default(),
    };
    let mut queue: VecDeque<Pending> = VecDeque::new();
    for ((a, b), plan) in plans {
        let extracts = !matches!(plan, Plan::Cached(_));
        let (job, fingerprint): (Extraction, SeqFingerprint) = match plan {
            Plan::Cached(c) if !merge => {
                made.fingerprint = made.fingerprint + c.fingerprint;
                continue;
            }
            Plan::Cached(c) => {
                let fingerprint = c.fingerprint;
                let job = tokio::task::spawn_blocking(move || Ok((Digest::parse(&c.text), None)));
                (job, fingerprint)
            }
            Plan::Extend(c, next) => {
                let texts = store
                    .messages()
                    .texts_between(conversation, next, b)
                    .await?;
                made.read += texts.len();
                let fingerprint = c.fingerprint + texts.fingerprint();
                let job = tokio::task::spawn_blocking(move || {
                    let messages = texts.parse()?;
                    Ok(block_digest(&messages, Some(&c.text), false))
                });
                (job, fingerprint)
            }
            Plan::Fresh => {
                let texts = store.messages().texts_between(conversation, a, b).await?;
                made.read += texts.len();
                let fingerprint = texts.fingerprint();
                let opens = a == 1;
                let job = tokio::task::spawn_blocking(move || {
                    let messages = texts.parse()?;
                    Ok(block_digest(&messages, None, opens))
                });
                (job, fingerprint)
            }
        };
        made.fingerprint = made.fingerprint + fingerprint;
        queue.push_back(Pending {
            job,
            block: (a, b),
            fingerprint,
            extracts,
        });
        // Only extractions are bounded: a cached block's parse is cheap, so the blocks after a
        // run of cached ones (the newest, still filling) start extracting while those merge.
        while queue.iter().filter(|p| p.extracts).count() > parallel {
            merge_next(&mut queue, &mut made, merge).await?;
        }
    }
    while !queue.is_empty() {
        merge_next(&mut queue, &mut made, merge).await?;
    }
    Ok(made)
}

/// A block's digest being made on a blocking thread, with its whole text when it is new (to
/// cache).
type Extraction = tokio::task::JoinHandle<decima_store::Result<(Digest, Option<String>)>>;

/// A block's extraction and what its cached row records.
struct Pending {
    job: Extraction,
    block: (i64, i64),
    fingerprint: SeqFingerprint,
    /// Whether it extracts messages (rather than parsing a cached digest).
    extracts: bool,
}

/// Waits for the oldest block in the queue, merges its digest (when asked to), and keeps its
/// row to cache when it is new.
async fn merge_next(queue: &mut VecDeque<Pending>, made: &mut Made, merge: bool) -> Result<()> {
    let Some(Pending {
        job,
        block: (a, b),
        fingerprint,
        ..
    }) = queue.pop_front()
    else {
        return Ok(());
    };
    let (digest, text) = job
        .await
        .map_err(|e| RuntimeError::Review(format!("summarising for the review failed: {e}")))??;
    if merge {
        made.merged.merge(digest);
    }
    if let Some(text) = text {
        made.rows.push(ReviewDigest {
            from_seq: a,
            through_seq: b,
            budget: 0,
            fingerprint,
            tokens: 0,
            text,
        });
    }
    Ok(())
}

/// The digest of one block: its messages, after the cached digest of its beginning when there
/// is one. `opens` says the block opens the conversation (its first user message is the goal).
/// Returns the digest as its whole text parses back, and that text.
fn block_digest(
    messages: &[MessageText],
    earlier: Option<&str>,
    opens: bool,
) -> (Digest, Option<String>) {
    let sources = messages.iter().map(|m| Source {
        role: m.role.into(),
        content: &m.content,
        tool_calls: &m.tool_calls,
        tool_call_id: m.tool_call_id.as_deref(),
        seq: Some(m.seq),
    });
    let digest = match earlier {
        Some(text) => {
            let mut d = Digest::parse(text);
            d.merge(Digest::from_continuation(sources));
            d
        }
        None if opens => Digest::from_sources(sources),
        None => Digest::from_continuation(sources),
    };
    let text = digest.render(Detail::Standard);
    // Merged as a later review reads it back from the cache (the text keeps no recency beyond
    // its order), so a summary is the same whether its blocks were cached or made now.
    (Digest::parse(&text), Some(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_on_the_seqs_whatever_the_ends() {
        assert_eq!(blocks(1, 10), vec![(1, 10)]);
        assert_eq!(
            blocks(1, 2_500),
            vec![(1, 1_024), (1_025, 2_048), (2_049, 2_500)]
        );
        assert_eq!(
            blocks(700, 2_100),
            vec![(700, 1_024), (1_025, 2_048), (2_049, 2_100)]
        );
        assert_eq!(blocks(1_025, 1_025), vec![(1_025, 1_025)]);
        assert!(blocks(5, 4).is_empty());
    }
}
