//! The history a review reads, in parts that each say how they reach the reviewer: through the
//! summaries stored with the conversation, through a summary made for this review (see
//! [`super::digest_cache`]), or verbatim. Every live message of the range asked for is in
//! exactly one part; none is left out.
//!
//! What is read from the store follows the budget: the stored summaries and the pinned messages
//! they cover, the newest messages read backwards only as far as the verbatim share reaches,
//! and one SQL aggregate over the cached token counts for the rest. Messages are shown in the
//! greppable text format (`### seq=N …`, `@tool_call`, `@reasoning`) so findings can cite seqs.

use std::fmt::Write as _;

use decima_core::context::{Detail, Summary, fold_summaries, units_from_end};
use decima_core::export::{ExportFormat, render_message};
use decima_core::{ConversationId, Message, TokenCounter};
use decima_store::{SeqTotals, Store};

use super::digest_cache::{self, ReviewSummary};
use crate::context::{frontier_of, load_tail_before};
use crate::error::Result;

/// Tokens a message's text header (`### seq=N role=R time=T`, about 25 with a six-digit seq)
/// adds beyond the per-message overhead its cached count holds.
pub const HEADER_TOKENS: u32 = 24;
/// Tokens a `tool_call_id=` on the header, or an `@tool_call` line's framing, adds beyond what
/// the cached count holds for them.
const TOOL_TOKENS: u32 = 16;
/// The header cost per message assumed when only SQL totals are known (tool traffic included).
pub const HEADER_ESTIMATE: u32 = HEADER_TOKENS + TOOL_TOKENS;
/// The share of the room the stored summaries (with the pinned messages they cover) may take
/// before they are rendered again, more briefly: the rest of the history needs room too.
const STORED_SHARE: f64 = 0.5;
/// When the rest of a range does not fit verbatim, the share of what is left that its newest
/// messages take verbatim (the current conclusion is among them); the older ones are
/// summarised for the review in the other half, which holds their facts by priority.
const VERBATIM_SHARE: f64 = 0.5;
/// The most a summary made for one request may take. Beyond it a summary made by rules holds
/// little but the literals tools printed, while the reviewer reads the recent work better
/// verbatim; it also bounds the cost of rendering it, which the tokenizer checks.
const SUMMARY_MAX: u32 = 24_000;
/// What is left for the messages when they must be split is rounded down to a multiple of this.
const SPLIT_QUANTUM: u32 = 512;
/// Tokens kept for the headings and the statement of what reaches the reviewer.
pub const SECTION_TOKENS: u32 = 240;

/// What a message costs in the input: its cached count, its text header, and the framing of
/// its tool-call lines.
pub fn shown_tokens(m: &Message) -> u32 {
    let tool = u32::try_from(m.tool_calls.len())
        .unwrap_or(u32::MAX)
        .saturating_add(u32::from(m.tool_call_id.is_some()));
    m.tokens
        .saturating_add(HEADER_TOKENS)
        .saturating_add(tool.saturating_mul(TOOL_TOKENS))
}

/// The input cost of messages known only by their SQL totals.
pub fn estimate(totals: SeqTotals) -> u64 {
    totals
        .tokens
        .saturating_add(totals.count.saturating_mul(u64::from(HEADER_ESTIMATE)))
}

/// `1,640`: seqs and counts as the reviewer reads them.
pub fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `seqs 801–1,640`, or `seq 5`.
pub fn seqs(from: i64, through: i64) -> String {
    if from == through {
        format!("seq {}", thousands(from))
    } else {
        format!("seqs {}–{}", thousands(from), thousands(through))
    }
}

/// How a part of the history reaches the reviewer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Through the summaries stored with the conversation (pinned messages among them verbatim).
    Stored,
    /// Through a summary made for this review.
    Summarised,
    /// Verbatim.
    Verbatim,
}

/// One part of the history as the reviewer gets it.
#[derive(Debug, Clone)]
pub struct Part {
    /// How it reaches the reviewer.
    pub reach: Reach,
    /// The first seq it covers.
    pub from: i64,
    /// The last seq it covers.
    pub through: i64,
    /// Its text, heading included.
    pub text: String,
    /// Its tokens (store counts).
    pub tokens: u32,
    /// Messages shown verbatim in it.
    pub shown: usize,
    /// Live messages summarised for the review in it.
    pub summarised: u64,
    /// Messages read from the store to summarise it (0 when the summary was cached).
    pub read: u64,
}

impl Part {
    /// `seqs 801–1,640 summarised for this review`.
    pub fn describe(&self) -> String {
        let how = match self.reach {
            Reach::Stored => "through the summaries stored with the conversation",
            Reach::Summarised => "summarised for this review",
            Reach::Verbatim => "verbatim",
        };
        format!("{} {how}", seqs(self.from, self.through))
    }
}

/// The summaries stored with the conversation, and the pinned messages they cover.
#[derive(Debug, Clone, Default)]
pub struct Stored {
    summaries: Vec<Summary>,
    pinned: Vec<Message>,
    /// The last seq they cover (0: none).
    pub frontier: i64,
}

impl Stored {
    /// Reads them: the live summaries, and the pinned units they cover (one indexed query).
    pub async fn load(store: &Store, conversation: ConversationId) -> Result<Self> {
        let summaries = store.compactions().live_summaries(conversation).await?;
        let frontier = frontier_of(&summaries);
        let pinned = if frontier > 0 {
            store
                .messages()
                .pinned_units_through(conversation, frontier)
                .await?
                .into_iter()
                .filter(|m| m.seq <= frontier)
                .collect()
        } else {
            Vec::new()
        };
        Ok(Self {
            summaries,
            pinned,
            frontier,
        })
    }

    /// Nothing stored.
    pub fn none() -> Self {
        Self::default()
    }

    fn first(&self) -> i64 {
        self.summaries
            .iter()
            .map(|s| s.start_seq)
            .min()
            .unwrap_or(1)
            .max(1)
    }

    /// What they cost shown whole.
    pub fn tokens(&self) -> u64 {
        let summaries: u64 = self
            .summaries
            .iter()
            .map(|s| u64::from(s.tokens) + u64::from(HEADER_TOKENS))
            .sum();
        summaries
            + self
                .pinned
                .iter()
                .map(|m| u64::from(shown_tokens(m)))
                .sum::<u64>()
    }

    /// The part they make within `max` tokens: whole when they fit; otherwise the newest pinned
    /// messages that fit a quarter, and the summaries rendered again together, by priority,
    /// in the rest. `None` without summaries.
    pub fn part(&self, max: u32, counter: &dyn TokenCounter) -> Option<Part> {
        if self.summaries.is_empty() {
            return None;
        }
        let (from, through) = (self.first(), self.frontier);
        let mut text = format!(
            "## {}, through the summaries stored with the conversation\n",
            seqs(from, through)
        );
        let heading = counter.count_text(&text);
        let mut ordered: Vec<&Summary> = self.summaries.iter().collect();
        ordered.sort_by_key(|s| s.start_seq);
        let whole = u32::try_from(self.tokens())
            .unwrap_or(u32::MAX)
            .saturating_add(heading);
        let (pinned, used) = if whole <= max {
            for s in &ordered {
                let _ = writeln!(text, "{}\n{}\n", s.header(), s.text.trim_end());
            }
            (&self.pinned[..], whole)
        } else {
            let start = newest_units_within(&self.pinned, max / 4);
            let pinned = &self.pinned[start..];
            let pinned_tokens: u32 = pinned.iter().map(shown_tokens).sum();
            let line = format!(
                "[the stored summaries of {}, rendered again to fit this review]\n",
                seqs(from, through)
            );
            let line_tokens = counter.count_text(&line);
            let room = max
                .saturating_sub(heading)
                .saturating_sub(pinned_tokens)
                .saturating_sub(line_tokens);
            let (folded, folded_tokens) =
                fold_summaries(&ordered, None, Detail::Standard, room, counter);
            text.push_str(&line);
            text.push_str(folded.trim_end());
            text.push_str("\n\n");
            (
                pinned,
                heading
                    .saturating_add(line_tokens)
                    .saturating_add(folded_tokens)
                    .saturating_add(pinned_tokens),
            )
        };
        if !pinned.is_empty() {
            text.push_str("### The pinned messages among them, verbatim\n");
            for m in pinned {
                render_message(ExportFormat::Text, m, &mut text);
            }
        }
        Some(Part {
            reach: Reach::Stored,
            from,
            through,
            text,
            tokens: used,
            shown: pinned.len(),
            summarised: 0,
            read: 0,
        })
    }
}

/// The index from which the newest whole units of `messages` (in seq order) fit `room`.
pub fn newest_units_within(messages: &[Message], room: u32) -> usize {
    let mut used = 0u32;
    let mut start = messages.len();
    for unit in units_from_end(messages) {
        let cost: u32 = messages[unit.clone()].iter().map(shown_tokens).sum();
        if used.saturating_add(cost) > room {
            break;
        }
        used += cost;
        start = unit.start;
    }
    start
}

/// The verbatim part of `messages` (in seq order, not empty).
pub fn verbatim_part(messages: &[Message], counter: &dyn TokenCounter) -> Option<Part> {
    verbatim_part_noted(messages, "", counter)
}

/// [`verbatim_part`] with a note after its heading's "verbatim" (`: where the history stands
/// now`).
pub fn verbatim_part_noted(
    messages: &[Message],
    note: &str,
    counter: &dyn TokenCounter,
) -> Option<Part> {
    let (first, last) = (messages.first()?, messages.last()?);
    let mut text = format!("## {}, verbatim{note}\n", seqs(first.seq, last.seq));
    let heading = counter.count_text(&text);
    for m in messages {
        render_message(ExportFormat::Text, m, &mut text);
    }
    Some(Part {
        reach: Reach::Verbatim,
        from: first.seq,
        through: last.seq,
        text,
        tokens: heading.saturating_add(messages.iter().map(shown_tokens).sum()),
        shown: messages.len(),
        summarised: 0,
        read: 0,
    })
}

/// The part that summarises `from..=through` for the review within `max` tokens, heading
/// included.
pub async fn summarised_part(
    store: &Store,
    conversation: ConversationId,
    (from, through): (i64, i64),
    max: u32,
    counter: &dyn TokenCounter,
) -> Result<Part> {
    let mut text = format!(
        "## {}, summarised for this review (by rules, without a model: the goal, the \
         constraints, the decisions and the exact literals are kept first; repeated operations \
         are counted)\n",
        seqs(from, through)
    );
    let heading = counter.count_text(&text);
    let ReviewSummary {
        text: body,
        tokens,
        messages,
        read,
        ..
    } = digest_cache::summarise(
        store,
        conversation,
        from,
        through,
        max.saturating_sub(heading),
        counter,
    )
    .await?;
    text.push_str(body.trim_end());
    text.push_str("\n\n");
    Ok(Part {
        reach: Reach::Summarised,
        from,
        through,
        text,
        tokens: heading.saturating_add(tokens),
        shown: 0,
        summarised: messages,
        read,
    })
}

/// The live messages `after < seq < before` (and the stored summaries before them, if given)
/// as parts of one request within `room` tokens: all verbatim when they fit; otherwise the
/// stored summaries (within half the room), the newest messages verbatim within half of what is
/// left, and the older ones summarised for the review in the rest. Empty when there is nothing.
pub async fn one_request(
    store: &Store,
    conversation: ConversationId,
    stored: &Stored,
    (after, before): (i64, i64),
    room: u32,
    counter: &dyn TokenCounter,
) -> Result<Vec<Part>> {
    let totals = store
        .messages()
        .totals_between(conversation, after, before)
        .await?;
    let stored_whole = stored.tokens();
    if stored_whole + estimate(totals) <= u64::from(room) {
        let (messages, unread) = load_tail_before(store, conversation, after, before, room).await?;
        let shown: u64 = messages.iter().map(|m| u64::from(shown_tokens(m))).sum();
        if unread.count == 0 && stored_whole + shown <= u64::from(room) {
            let mut parts: Vec<Part> = stored.part(room, counter).into_iter().collect();
            parts.extend(verbatim_part(&messages, counter));
            return Ok(parts);
        }
    }
    let mut parts: Vec<Part> = stored
        .part((f64::from(room) * STORED_SHARE) as u32, counter)
        .into_iter()
        .collect();
    // Rounded down, so that reviews whose fixed parts differ a little (another focus, one more
    // open finding) cut the history at the same seq and reuse the same cached summary.
    let rest =
        room.saturating_sub(parts.iter().map(|p| p.tokens).sum()) / SPLIT_QUANTUM * SPLIT_QUANTUM;
    if totals.count == 0 {
        return Ok(parts);
    }
    let summary_share = ((f64::from(rest) * (1.0 - VERBATIM_SHARE)) as u32).min(SUMMARY_MAX);
    let verbatim_room = rest.saturating_sub(summary_share);
    let tail = newest_for(store, conversation, (after, before), verbatim_room, totals).await?;
    let keep = newest_units_within(&tail, verbatim_room);
    let kept = &tail[keep..];
    let kept_tokens: u32 = kept.iter().map(shown_tokens).sum();
    let through = match (kept.first(), tail.last()) {
        (Some(first), _) => first.seq - 1,
        (None, Some(last)) => last.seq,
        (None, None) => return Ok(parts),
    };
    if through > after {
        parts.push(
            summarised_part(
                store,
                conversation,
                (after + 1, through),
                rest.saturating_sub(kept_tokens),
                counter,
            )
            .await?,
        );
    }
    parts.extend(verbatim_part(kept, counter));
    Ok(parts)
}

/// The newest live messages `after < seq < before` that fill `room` shown tokens and a little
/// more, in seq order: one page sized from the range's average cost (`totals`), and another
/// only when it falls short. Doubling pages would read up to twice what is shown.
async fn newest_for(
    store: &Store,
    conversation: ConversationId,
    (after, before): (i64, i64),
    room: u32,
    totals: SeqTotals,
) -> Result<Vec<Message>> {
    let average = (estimate(totals) / totals.count.max(1)).max(1);
    let mut want = u32::try_from((u64::from(room) / average) * 9 / 8 + 16).unwrap_or(u32::MAX);
    let mut out: Vec<Message> = Vec::new();
    let mut cursor = before;
    let mut shown = 0u64;
    loop {
        let mut page = store
            .messages()
            .page_before(conversation, after, cursor, want)
            .await?;
        let exhausted = page.len() < want as usize;
        shown += page.iter().map(|m| u64::from(shown_tokens(m))).sum::<u64>();
        if let Some(first) = page.first() {
            cursor = first.seq;
        }
        page.append(&mut out);
        out = page;
        if exhausted || shown > u64::from(room) {
            return Ok(out);
        }
        want = (want / 4).max(64);
    }
}

/// "seqs 1–800 through the summaries stored with the conversation, seqs 801–1,640 summarised
/// for this review and seqs 1,641–2,000 verbatim".
pub fn describe_all(parts: &[Part]) -> String {
    let described: Vec<String> = parts.iter().map(Part::describe).collect();
    match described.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seqs_read_with_thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_640), "1,640");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(seqs(801, 1_640), "seqs 801–1,640");
        assert_eq!(seqs(5, 5), "seq 5");
    }

    #[test]
    fn the_estimate_of_a_shown_message_covers_its_rendered_header() {
        // The generated analyst session has tool calls, results and long prose: the estimate
        // must never be below what the rendered text costs, or a request could exceed the
        // reviewer's window.
        let counter = decima_llm::tokens::store_counter();
        let session = decima_testkit::analyst_conversation::AnalystConversationBuilder::new(
            3,
            400,
            decima_testkit::analyst_conversation::Language::English,
        )
        .build();
        let mut shown = 0u64;
        let mut text = String::new();
        for (i, draft) in session.messages.iter().enumerate() {
            let m = decima_core::Message {
                id: decima_core::MessageId::new(),
                conversation_id: ConversationId::new(),
                execution_id: None,
                seq: i as i64 + 10_000,
                role: draft.role,
                name: draft.name.clone(),
                content: draft.content.clone(),
                reasoning: draft.reasoning.clone(),
                reasoning_signature: None,
                tool_calls: draft.tool_calls.clone(),
                tool_call_id: draft.tool_call_id.clone(),
                tokens: counter.count_message(draft),
                pinned: i % 50 == 0,
                created_at: decima_core::Timestamp(1_795_000_000_123 + i as i64 * 61_000),
                deleted_at: None,
            };
            shown += u64::from(shown_tokens(&m));
            render_message(ExportFormat::Text, &m, &mut text);
        }
        let counted = u64::from(counter.count_text(&text));
        assert!(counted <= shown, "rendered {counted} > estimated {shown}");
        assert!(
            shown < counted * 13 / 10,
            "the estimate wastes the budget: {shown} for {counted}"
        );
    }
}
