//! Select: the sliding window. The global summary, the segment summaries, pinned messages that a
//! summary covers, and every message no summary covers yet, verbatim.
//!
//! Summaries cover a contiguous prefix of the history (up to the *frontier* seq). Messages after
//! the frontier are found by binary search and walked from the end, unit by unit, using cached
//! token counts only, so the cost depends on how much is left uncovered (the window), never on the
//! length of the history. Nothing is dropped silently: uncovered messages that do not fit stay
//! listed as `pending`, and the selection says compression is required.

use std::collections::HashSet;
use std::ops::Range;

use crate::context::summary::{HistoryBudget, Summary, SummaryLevel};
use crate::{CoreError, Message, Role};

/// What Select chose to send, borrowing from its inputs so it copies nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection<'a> {
    /// The live global summary, if any.
    pub global: Option<&'a Summary>,
    /// The live segment summaries, in seq order.
    pub segments: Vec<&'a Summary>,
    /// Pinned messages covered by a summary, kept verbatim anyway (whole tool units).
    pub pinned: Vec<&'a Message>,
    /// Covered pinned messages that cannot be sent: a tool call whose result never arrived
    /// (or a result whose call is gone). A provider refuses either alone, and the summary
    /// covering them keeps their digest, so they are left out instead of failing the request.
    pub unpaired: Vec<&'a Message>,
    /// The newest uncovered messages that fit, in seq order: a suffix of whole units.
    pub recent: &'a [Message],
    /// Uncovered messages that did not fit: they must be compressed before the request is sent.
    pub pending: &'a [Message],
    /// The last seq covered by summaries (0 when there are none).
    pub frontier: i64,
    /// Tokens of the global summary.
    pub global_tokens: u32,
    /// Tokens of all segment summaries.
    pub segment_tokens: u32,
    /// Tokens of the covered pinned messages.
    pub pinned_tokens: u32,
    /// Tokens of `recent`.
    pub recent_tokens: u32,
    /// Tokens of `pending`.
    pub pending_tokens: u32,
    /// The history budget this selection was made for.
    pub budget: HistoryBudget,
    /// Messages whose cached count was read: the cost of the walk, for tests and benchmarks.
    pub visited: usize,
}

impl Selection<'_> {
    /// Tokens of what is actually selected (summaries, pinned, recent).
    pub fn selected_tokens(&self) -> u32 {
        self.global_tokens
            .saturating_add(self.segment_tokens)
            .saturating_add(self.pinned_tokens)
            .saturating_add(self.recent_tokens)
    }

    /// Tokens of everything that must be sent: summaries, pinned, and every uncovered message.
    /// This is the numerator of the "usage" figure and can exceed the budget.
    pub fn required_tokens(&self) -> u32 {
        self.selected_tokens().saturating_add(self.pending_tokens)
    }

    /// True when some uncovered message could not be sent: compression must run first.
    pub fn compression_required(&self) -> bool {
        !self.pending.is_empty() || self.selected_tokens() > self.budget.tokens
    }

    /// The seqs of every message sent verbatim, in the order they are sent (pinned, then recent).
    pub fn verbatim_seqs(&self) -> Vec<i64> {
        self.pinned
            .iter()
            .map(|m| m.seq)
            .chain(self.recent.iter().map(|m| m.seq))
            .collect()
    }

    /// The ids of the summaries sent, global first.
    pub fn summary_ids(&self) -> Vec<&str> {
        self.global
            .iter()
            .chain(self.segments.iter())
            .map(|s| s.id.as_str())
            .collect()
    }
}

/// Iterates the units of `messages` from the end, as index ranges. A unit is one message, or an
/// assistant message with tool calls together with the tool results that follow it: a tool call
/// is never separated from its result.
pub fn units_from_end(messages: &[Message]) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut end = messages.len();
    std::iter::from_fn(move || {
        if end == 0 {
            return None;
        }
        let last = end - 1;
        let mut start = last;
        while start > 0 && messages[start].role == Role::Tool {
            start -= 1;
        }
        let head = &messages[start];
        if start < last && head.role != Role::Tool && head.tool_calls.is_empty() {
            // Tool results with no call before them: keep them together on their own.
            start += 1;
        }
        let unit = start..end;
        end = start;
        Some(unit)
    })
}

/// Expands the pinned messages of `messages` to whole tool units, which is what [`select`] and
/// [`crate::context::plan`] expect as `pinned`. This walks the whole slice; the store can get the
/// same rows with one indexed query (pinned, plus the calls and results they pair with).
pub fn pinned_units(messages: &[Message]) -> Vec<Message> {
    let mut ranges: Vec<Range<usize>> = units_from_end(messages)
        .filter(|r| messages[r.clone()].iter().any(|m| m.pinned))
        .collect();
    ranges.reverse();
    ranges
        .into_iter()
        .flat_map(|r| messages[r].iter().cloned())
        .collect()
}

/// The live summaries split by level, with the covered prefix they describe.
type Coverage<'a> = (Option<&'a Summary>, Vec<&'a Summary>, i64, i64);

/// Checks the summaries form one contiguous covered prefix and returns (global, segments sorted,
/// first covered seq, frontier).
pub(crate) fn coverage(summaries: &[Summary]) -> Result<Coverage<'_>, CoreError> {
    let mut global = None;
    let mut segments = Vec::new();
    for s in summaries {
        if s.end_seq < s.start_seq {
            return Err(CoreError::InvalidContext(format!(
                "summary {} covers an empty range {}..={}",
                s.id, s.start_seq, s.end_seq
            )));
        }
        match s.level {
            SummaryLevel::Global if global.is_some() => {
                return Err(CoreError::InvalidContext(
                    "more than one live global summary".into(),
                ));
            }
            SummaryLevel::Global => global = Some(s),
            SummaryLevel::Segment => segments.push(s),
        }
    }
    segments.sort_by_key(|s| (s.start_seq, s.end_seq));
    let mut all: Vec<&Summary> = global
        .iter()
        .copied()
        .chain(segments.iter().copied())
        .collect();
    all.sort_by_key(|s| (s.start_seq, s.end_seq));
    let first = all.first().map_or(0, |s| s.start_seq);
    let mut frontier = first - 1;
    for s in &all {
        if s.start_seq > frontier + 1 {
            return Err(CoreError::InvalidContext(format!(
                "summaries leave seqs {}..{} uncovered between them",
                frontier + 1,
                s.start_seq
            )));
        }
        frontier = frontier.max(s.end_seq);
    }
    Ok((global, segments, first, frontier.max(0)))
}

/// Selects what to send. `messages` are the live messages in seq order with cached token
/// counts: the whole history, or any tail that starts at or before the first uncovered message.
/// `pinned` are pinned messages as whole units ([`pinned_units`]); those after the frontier are
/// ignored since every uncovered message is sent anyway. `summaries` are the live summaries.
/// Covered pinned messages that would send a tool call without its result (or the reverse)
/// are listed in [`Selection::unpaired`] instead of being sent; that is never an error, so a
/// result that never arrived cannot block the conversation.
pub fn select<'a>(
    messages: &'a [Message],
    pinned: &'a [Message],
    summaries: &'a [Summary],
    budget: &HistoryBudget,
) -> Result<Selection<'a>, CoreError> {
    let (global, segments, first_covered, frontier) = coverage(summaries)?;
    if !summaries.is_empty()
        && let Some(m) = messages.first()
        && m.seq < first_covered
    {
        return Err(CoreError::InvalidContext(format!(
            "message {} precedes the first summary (seq {first_covered}); summaries must cover a prefix",
            m.seq
        )));
    }
    let (covered_pinned, unpaired) =
        paired_only(pinned.iter().filter(|m| m.seq <= frontier).collect());
    let global_tokens = global.map_or(0, |g| g.tokens);
    let segment_tokens = segments
        .iter()
        .fold(0u32, |acc, s| acc.saturating_add(s.tokens));
    let pinned_tokens = covered_pinned
        .iter()
        .fold(0u32, |acc, m| acc.saturating_add(m.tokens));
    let fixed = global_tokens
        .saturating_add(segment_tokens)
        .saturating_add(pinned_tokens);
    let room = budget.tokens.saturating_sub(fixed);

    let first_uncovered = messages.partition_point(|m| m.seq <= frontier);
    let uncovered = &messages[first_uncovered..];
    let mut recent_start = uncovered.len();
    let mut recent_tokens = 0u32;
    let mut pending_tokens = 0u32;
    let mut fits = fixed <= budget.tokens;
    let mut visited = 0usize;
    for unit in units_from_end(uncovered) {
        visited += unit.len();
        let cost = uncovered[unit.clone()]
            .iter()
            .fold(0u32, |acc, m| acc.saturating_add(m.tokens));
        if fits && recent_tokens.saturating_add(cost) <= room {
            recent_tokens += cost;
            recent_start = unit.start;
        } else {
            // The window is a contiguous suffix; everything older must be compressed, but it is
            // still counted so the usage figure tells the truth.
            fits = false;
            pending_tokens = pending_tokens.saturating_add(cost);
        }
    }
    Ok(Selection {
        global,
        segments,
        pinned: covered_pinned,
        unpaired,
        recent: &uncovered[recent_start..],
        pending: &uncovered[..recent_start],
        frontier,
        global_tokens,
        segment_tokens,
        pinned_tokens,
        recent_tokens,
        pending_tokens,
        budget: *budget,
        visited,
    })
}

/// Splits covered pinned messages into those that can be sent and those that cannot: an
/// assistant message is sent only when every call it makes has its result among them, and a
/// result only with its call. A call whose result never arrived would otherwise make every
/// later request fail; it stays summarised instead.
fn paired_only(pinned: Vec<&Message>) -> (Vec<&Message>, Vec<&Message>) {
    let results: HashSet<&str> = pinned
        .iter()
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    let answered = |m: &Message| m.tool_calls.iter().all(|c| results.contains(c.id.as_str()));
    let calls: HashSet<&str> = pinned
        .iter()
        .filter(|m| answered(m))
        .flat_map(|m| m.tool_calls.iter().map(|c| c.id.as_str()))
        .collect();
    pinned.into_iter().partition(|m| {
        answered(m)
            && m.tool_call_id
                .as_deref()
                .is_none_or(|id| calls.contains(id))
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::context::summary::Strategy;
    use crate::{ConversationId, MessageId, Timestamp, ToolCall};

    pub(crate) fn msg(seq: i64, role: Role, tokens: u32) -> Message {
        Message {
            id: MessageId::new(),
            conversation_id: ConversationId::new(),
            execution_id: None,
            seq,
            role,
            name: None,
            content: format!("message {seq}"),
            reasoning: None,
            reasoning_signature: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            tokens,
            pinned: false,
            created_at: Timestamp(0),
            deleted_at: None,
        }
    }

    pub(crate) fn call_pair(seq: i64, tokens: u32) -> [Message; 2] {
        let id = format!("call_{seq}");
        let mut a = msg(seq, Role::Assistant, tokens);
        a.tool_calls.push(ToolCall {
            id: id.clone(),
            name: "shell".into(),
            arguments: "{\"cmd\":\"ls\"}".into(),
            signature: None,
        });
        let mut t = msg(seq + 1, Role::Tool, tokens);
        t.tool_call_id = Some(id);
        [a, t]
    }

    fn seg(start: i64, end: i64, tokens: u32) -> Summary {
        Summary {
            id: format!("s{start}"),
            level: SummaryLevel::Segment,
            start_seq: start,
            end_seq: end,
            text: String::new(),
            tokens,
            strategy: Strategy::Extract,
        }
    }

    #[test]
    fn sends_every_uncovered_message_and_flags_overflow() {
        let msgs: Vec<Message> = (1..=10).map(|s| msg(s, Role::User, 10)).collect();
        let sel = select(&msgs, &[], &[], &HistoryBudget::new(1000)).unwrap();
        assert_eq!(sel.recent.len(), 10);
        assert!(!sel.compression_required());
        let sel = select(&msgs, &[], &[], &HistoryBudget::new(55)).unwrap();
        assert_eq!(sel.recent.len(), 5);
        assert_eq!(sel.pending.len(), 5);
        assert_eq!(sel.required_tokens(), 100);
        assert!(sel.compression_required());
    }

    #[test]
    fn a_large_message_does_not_hide_older_ones() {
        let mut msgs: Vec<Message> = (1..=4).map(|s| msg(s, Role::User, 10)).collect();
        msgs[2].tokens = 500;
        let sel = select(&msgs, &[], &[], &HistoryBudget::new(100)).unwrap();
        assert_eq!(sel.recent.len(), 1);
        assert_eq!(
            sel.pending.len(),
            3,
            "older messages are pending, not dropped"
        );
        assert_eq!(sel.required_tokens(), 530);
    }

    #[test]
    fn covered_messages_are_skipped_but_pinned_stay() {
        let mut msgs: Vec<Message> = (1..=10).map(|s| msg(s, Role::User, 10)).collect();
        msgs[1].pinned = true;
        let pinned = pinned_units(&msgs);
        let sums = vec![seg(1, 4, 7), seg(5, 6, 3)];
        let sel = select(&msgs, &pinned, &sums, &HistoryBudget::new(1000)).unwrap();
        assert_eq!(sel.frontier, 6);
        assert_eq!(sel.verbatim_seqs(), vec![2, 7, 8, 9, 10]);
        assert_eq!(sel.selected_tokens(), 10 + 10 + 40);
        assert_eq!(sel.visited, 4);
    }

    #[test]
    fn rejects_gaps_and_never_sends_half_a_pinned_pair() {
        let msgs: Vec<Message> = (1..=10).map(|s| msg(s, Role::User, 10)).collect();
        let sums = vec![seg(1, 3, 1), seg(5, 6, 1)];
        assert!(select(&msgs, &[], &sums, &HistoryBudget::new(100)).is_err());
        let pair = call_pair(1, 5);
        let sums = vec![seg(1, 2, 1)];
        for half in [vec![pair[0].clone()], vec![pair[1].clone()]] {
            let sel = select(&pair, &half, &sums, &HistoryBudget::new(100)).unwrap();
            assert!(sel.pinned.is_empty());
            assert_eq!(sel.unpaired.len(), 1);
        }
        let sel = select(&pair, &pair, &sums, &HistoryBudget::new(100)).unwrap();
        assert_eq!(sel.verbatim_seqs(), vec![1, 2]);
        assert!(sel.unpaired.is_empty());
    }

    #[test]
    fn units_keep_calls_with_results() {
        let mut msgs = vec![msg(1, Role::User, 1)];
        msgs.extend(call_pair(2, 1));
        msgs.push(msg(4, Role::Assistant, 1));
        let units: Vec<_> = units_from_end(&msgs).collect();
        assert_eq!(units, vec![3..4, 1..3, 0..1]);
    }
}
