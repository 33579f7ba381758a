//! Compression planning. [`plan`] is pure: a dry run (the preview) is just the plan, applying it
//! is the store's job, and undo reverts it.
//!
//! What the store does with a [`CompactionPlan`]:
//! - **apply**, in one transaction: insert `new_summaries` into `summaries`; set `superseded_by`
//!   of every row in `superseded` to the id of the first new summary; insert a `compactions` row
//!   (level, trigger, strategy, tokens_before, tokens_after, and the ids involved). Messages are
//!   never touched.
//! - **undo**, in one transaction, newest compaction first (a compaction whose new summaries have
//!   since been superseded needs the later one undone before it): delete (or mark undone) the
//!   `new_summaries` rows, clear `superseded_by` on the `superseded` rows, mark the compaction
//!   undone. [`CompactionPlan::revert`] is the same operation on in-memory summaries, and the
//!   property tests check that it restores the exact previous selection.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::context::extract::{Counting, Detail, Digest, Source};
use crate::context::fold::{
    fold_strategy, fold_summaries, fold_summaries_spill, render_within, summary_tokens,
};
use crate::context::summary::{
    CompressionLevel, HistoryBudget, Strategy, Summary, SummaryLevel, header_tokens,
};
use crate::context::window::{Selection, select, units_from_end};
use crate::{CoreError, Message, TokenCounter};

/// What to compress and with which settings.
#[derive(Clone, Copy)]
pub struct PlanInput<'a> {
    /// Live messages in seq order (any tail that starts at or before the first uncovered one).
    pub messages: &'a [Message],
    /// Pinned messages as whole units (see [`crate::context::pinned_units`]).
    pub pinned: &'a [Message],
    /// The live summaries.
    pub summaries: &'a [Summary],
    /// Standard, deep, phase or checkpoint.
    pub level: CompressionLevel,
    /// Only `Extract` can be planned without a model.
    pub strategy: Strategy,
    /// The history budget and its shares.
    pub budget: HistoryBudget,
    /// Counts the new summaries' text (once, here).
    pub counter: &'a dyn TokenCounter,
    /// The summary a model wrote for the messages [`compaction_range`] chose; required for the
    /// `Llm` and `Structured` strategies, ignored by `Extract`.
    pub written: Option<&'a str>,
}

/// A compaction, before or after it runs: the preview, the record, and what undo reverts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionPlan {
    /// The level asked for.
    pub level: CompressionLevel,
    /// The strategy used.
    pub strategy: Strategy,
    /// Summaries to insert.
    pub new_summaries: Vec<Summary>,
    /// Ids of live summaries the new ones replace.
    pub superseded: Vec<String>,
    /// Tokens the history must send before (summaries, pinned, every uncovered message).
    pub tokens_before: u32,
    /// The same figure after.
    pub tokens_after: u32,
    /// Seqs sent verbatim after the compaction: covered pinned messages, then uncovered ones.
    pub kept_verbatim: Vec<i64>,
    /// The message seqs newly covered, if any.
    pub covered: Option<(i64, i64)>,
}

impl CompactionPlan {
    /// True when the plan changes nothing (nothing to cover, nothing to fold).
    pub fn is_empty(&self) -> bool {
        self.new_summaries.is_empty() && self.superseded.is_empty()
    }

    /// The live summaries after applying the plan.
    pub fn apply(&self, live: &[Summary]) -> Vec<Summary> {
        live.iter()
            .filter(|s| !self.superseded.contains(&s.id))
            .cloned()
            .chain(self.new_summaries.iter().cloned())
            .collect()
    }

    /// The live summaries after undoing the plan. `stored` holds the superseded rows (the store
    /// keeps them, marked by `superseded_by`).
    pub fn revert(&self, live: &[Summary], stored: &[Summary]) -> Vec<Summary> {
        let new_ids: Vec<&str> = self.new_summaries.iter().map(|s| s.id.as_str()).collect();
        let mut out: Vec<Summary> = live
            .iter()
            .filter(|s| !new_ids.contains(&s.id.as_str()))
            .cloned()
            .collect();
        for id in &self.superseded {
            if !out.iter().any(|s| &s.id == id)
                && let Some(s) = stored.iter().find(|s| &s.id == id)
            {
                out.push(s.clone());
            }
        }
        out
    }
}

/// Chooses the uncovered messages a compaction covers, as an index range into `messages`: the
/// oldest uncovered units, leaving the newest units that fit `keep_tokens` verbatim, and always
/// the newest unit itself. Never splits a tool call from its result. `None` when everything
/// uncovered already fits.
pub fn choose_range(
    messages: &[Message],
    frontier: i64,
    keep_tokens: u32,
) -> Option<std::ops::Range<usize>> {
    let first = messages.partition_point(|m| m.seq <= frontier);
    let uncovered = &messages[first..];
    let cost = |unit: &std::ops::Range<usize>| {
        uncovered[unit.clone()]
            .iter()
            .fold(0u32, |acc, m| acc.saturating_add(m.tokens))
    };
    let mut units = units_from_end(uncovered);
    // The newest unit always stays verbatim, however large: it is what the next step answers.
    let newest = units.next()?;
    let mut kept = cost(&newest);
    let mut keep_from = newest.start;
    for unit in units {
        let unit_cost = cost(&unit);
        if kept.saturating_add(unit_cost) > keep_tokens {
            break;
        }
        kept += unit_cost;
        keep_from = unit.start;
    }
    (keep_from > 0).then(|| first..first + keep_from)
}

/// The messages the next compaction would summarise (an index range into `input.messages`), so a
/// caller can have a model write their summary and pass it back as [`PlanInput::written`].
pub fn compaction_range(
    input: &PlanInput<'_>,
) -> Result<Option<std::ops::Range<usize>>, CoreError> {
    let before = select(input.messages, input.pinned, input.summaries, &input.budget)?;
    let keep = (f64::from(input.budget.recent()) * input.level.keep_fraction()).floor() as u32;
    Ok(choose_range(input.messages, before.frontier, keep))
}

/// Appends, verbatim, every literal a model left out of its summary: ids, paths and URLs must
/// survive compression whoever writes the text.
pub fn with_missing_literals(text: &str, literals: &[String]) -> String {
    let missing: Vec<&String> = literals
        .iter()
        .filter(|l| !text.contains(l.as_str()))
        .collect();
    if missing.is_empty() {
        return text.to_string();
    }
    let mut out = text.trim_end().to_string();
    out.push_str("\n\n## Literals\n");
    for l in missing {
        out.push_str("- ");
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// What a new summary says before it is fitted to its share.
enum Body<'a> {
    /// Text a model wrote (literals it left out already appended), and the same content parsed
    /// as a digest in case the text is too long for its share.
    Written(String, &'a Digest),
    /// A digest to render.
    Digest(&'a Digest),
}

/// Makes a summary of `start..=end` within `max_tokens`, its header included.
#[allow(clippy::too_many_arguments)]
fn make_summary(
    level: SummaryLevel,
    start_seq: i64,
    end_seq: i64,
    strategy: Strategy,
    body: Body<'_>,
    detail: Detail,
    max_tokens: u32,
    counter: &dyn TokenCounter,
) -> Summary {
    let header = header_tokens(level, start_seq, end_seq, counter);
    let room = max_tokens.saturating_sub(header);
    let (text, tokens) = match body {
        Body::Written(text, parsed) => {
            let tokens = summary_tokens(&text, counter);
            if tokens <= room {
                (text, tokens)
            } else {
                render_within(parsed, detail, room, counter)
            }
        }
        Body::Digest(d) => render_within(d, detail, room, counter),
    };
    new_summary(
        level,
        start_seq,
        end_seq,
        text,
        tokens.saturating_add(header),
        strategy,
    )
}

/// A summary of `start_seq..=end_seq` made now, under a new id; `tokens` counts its header.
fn new_summary(
    level: SummaryLevel,
    start_seq: i64,
    end_seq: i64,
    text: String,
    tokens: u32,
    strategy: Strategy,
) -> Summary {
    Summary {
        id: Uuid::now_v7().to_string(),
        level,
        start_seq,
        end_seq,
        text,
        tokens,
        strategy,
    }
}

/// Tokens the whole rendering of `body` would take with its header.
fn whole_tokens(
    level: SummaryLevel,
    start_seq: i64,
    end_seq: i64,
    body: &Body<'_>,
    detail: Detail,
    counter: &dyn TokenCounter,
) -> u32 {
    let text_tokens = match body {
        Body::Written(text, _) => summary_tokens(text, counter),
        Body::Digest(d) => summary_tokens(&d.render(detail), counter),
    };
    text_tokens.saturating_add(header_tokens(level, start_seq, end_seq, counter))
}

/// Where a range with no summary before it splits in two, so that a global summary can take the
/// first part: at the middle message, moved on past tool results so no call is parted from its
/// result. `None` when the range is a single unit.
fn split_point(msgs: &[Message]) -> Option<usize> {
    let mut k = msgs.len() / 2;
    while k < msgs.len() && msgs[k].role == crate::Role::Tool {
        k += 1;
    }
    (k > 0 && k < msgs.len()).then_some(k)
}

/// Whether the new digest corrects or updates a statement an older summary holds: that summary
/// would go on presenting the old value as current, so it is folded with the new range.
fn corrects_older(old: &Digest, new: &Digest) -> bool {
    if old.statements.is_empty() && old.constraints.is_empty() && old.decisions.is_empty() {
        return false;
    }
    let mut merged = old.clone();
    merged.merge(new.clone());
    let kept = |s: &crate::context::extract::Statement| {
        merged
            .statements
            .iter()
            .any(|m| m.seq == s.seq && m.text == s.text)
    };
    !old.statements.iter().all(kept)
        || merged.goal.iter().zip(&old.goal).any(|(a, b)| a != b)
        || merged
            .constraints
            .iter()
            .any(|c| !old.constraints.contains(c) && !new.constraints.contains(c))
        || merged
            .decisions
            .iter()
            .any(|c| !old.decisions.contains(c) && !new.decisions.contains(c))
}

/// The extract strategy's way of sharing the summaries' room: when the new range does not fit
/// the segment room left, or corrects what an older summary says, the older summaries and the
/// new range are combined and fill the global share first, by priority, then the whole segment
/// share; only what neither holds is folded into counts. With no summary yet, the range splits
/// in two: the global summary covers the first part, the segment the rest. `None` when the new
/// range fits as it is (or cannot be split), so the caller makes a plain segment.
#[allow(clippy::too_many_arguments)]
fn share_out(
    msgs: &[Message],
    old: &[&Summary],
    start: i64,
    new_digest: &Digest,
    detail: Detail,
    budget: HistoryBudget,
    counter: &dyn TokenCounter,
    segment_tokens: u32,
) -> Option<Vec<Summary>> {
    let last = msgs.last()?;
    let room = budget.segments().saturating_sub(segment_tokens);
    // A digest whose text alone is far beyond the room need not be rendered to know it.
    let estimate = new_digest.text_bytes() / 4;
    let whole = if estimate > room as usize * 2 {
        u32::try_from(estimate).unwrap_or(u32::MAX)
    } else {
        summary_tokens(&new_digest.render(detail), counter).saturating_add(header_tokens(
            SummaryLevel::Segment,
            start,
            last.seq,
            counter,
        ))
    };
    let mut combined = Digest::default();
    for s in old {
        combined.merge(Digest::parse(&s.text));
    }
    if whole <= room && !corrects_older(&combined, new_digest) {
        return None;
    }
    let (global_start, global_end, segment_start) = share_spans(msgs, old, start)?;
    // With nothing older, the new digest is the whole content: no copy.
    let (combined, strategy): (&Digest, _) = if old.is_empty() {
        (new_digest, Strategy::Extract)
    } else {
        combined.merge(new_digest.clone());
        let strategy = fold_strategy(old.iter().map(|s| s.strategy), Strategy::Extract);
        (&combined, strategy)
    };
    let header = header_tokens(SummaryLevel::Global, global_start, global_end, counter);
    let global_room = budget.global().saturating_sub(header);
    // The combined digest holds at least the new range, which alone is `whole`.
    let (text, tokens, rest) = if whole > global_room {
        combined.render_spill_over(detail, global_room, &Counting(counter))
    } else {
        combined.render_budgeted_spill(detail, global_room, &Counting(counter))
    };
    let mut out = Vec::new();
    if rest == Digest::default() {
        // Everything fits the global summary: it covers the whole range alone.
        let header = header_tokens(SummaryLevel::Global, global_start, last.seq, counter);
        let (text, tokens) = combined.render_budgeted(
            detail,
            budget.global().saturating_sub(header),
            &Counting(counter),
        );
        out.push(new_summary(
            SummaryLevel::Global,
            global_start,
            last.seq,
            text,
            tokens.saturating_add(header),
            strategy,
        ));
        return Some(out);
    }
    out.push(new_summary(
        SummaryLevel::Global,
        global_start,
        global_end,
        text,
        tokens.saturating_add(header),
        strategy,
    ));
    // What the global summary left, about: everything less what it holds.
    let old_tokens: u32 = old.iter().map(|s| s.tokens).sum();
    let left = whole.saturating_add(old_tokens).saturating_sub(tokens);
    let segment_header = header_tokens(SummaryLevel::Segment, segment_start, last.seq, counter);
    let segment_room = budget.segments().saturating_sub(segment_header);
    let (text, tokens) = if left > segment_room.saturating_mul(2) {
        rest.render_over(detail, segment_room, &Counting(counter))
    } else {
        rest.render_budgeted(detail, segment_room, &Counting(counter))
    };
    out.push(new_summary(
        SummaryLevel::Segment,
        segment_start,
        last.seq,
        text,
        tokens.saturating_add(segment_header),
        Strategy::Extract,
    ));
    Some(out)
}

/// Where the two shares start and end: the global summary covers what the older summaries
/// covered (or, with none, the first part of the range), the segment the rest. As (global
/// start, global end, segment start); `None` when a range with nothing older cannot be split.
fn share_spans(msgs: &[Message], old: &[&Summary], start: i64) -> Option<(i64, i64, i64)> {
    if old.is_empty() {
        let k = split_point(msgs)?;
        return Some((msgs[0].seq, msgs[k - 1].seq, msgs[k].seq));
    }
    let first = old.iter().map(|s| s.start_seq).min().unwrap_or(start);
    let end = old.iter().map(|s| s.end_seq).max().unwrap_or(start - 1);
    Some((first, end, start))
}

/// Plans a compaction. The oldest uncovered messages become a new segment summary. When it
/// does not fit the room the segments have left, the older segments (and the global summary)
/// fold into a new global summary within the global share, and the new segment gets the whole
/// segment share, filled by priority; what the global summary has no room for is carried into
/// the new segment instead of being dropped, so both shares fill before anything is lost.
/// `Phase` folds everything, old and new, into one global summary. Summaries written by a
/// model are kept as written when they fit, parsed and fitted by priority when they do not,
/// and recorded with their strategy (a fold records the strategy its parts share). Every new
/// summary's `tokens` include its [`Summary::header`], and never exceed its share.
pub fn plan(input: PlanInput<'_>) -> Result<CompactionPlan, CoreError> {
    require_written(&input)?;
    let before = select(input.messages, input.pinned, input.summaries, &input.budget)?;
    let keep = (f64::from(input.budget.recent()) * input.level.keep_fraction()).floor() as u32;
    let changes = match choose_range(input.messages, before.frontier, keep) {
        Some(range) => cover_range(&input, &before, range)?,
        None => deepen_global(before.global, input.budget, input.counter),
    };
    finish_plan(&input, &before, changes)
}

/// Refuses a model strategy without the model's text: only `Extract` can plan on its own.
fn require_written(input: &PlanInput<'_>) -> Result<(), CoreError> {
    if input.strategy != Strategy::Extract && input.written.is_none() {
        return Err(CoreError::InvalidContext(format!(
            "strategy {} needs the summary a model wrote for the range compaction_range chose",
            input.strategy.as_str()
        )));
    }
    Ok(())
}

/// The detail a compression level renders at: only a deep compression drops more.
fn detail_for(level: CompressionLevel) -> Detail {
    match level {
        CompressionLevel::Deep => Detail::Deep,
        _ => Detail::Standard,
    }
}

/// What a compaction changes in the live summaries, before its token figures are measured.
#[derive(Default)]
struct Changes {
    /// Summaries to insert.
    new_summaries: Vec<Summary>,
    /// Ids of live summaries the new ones replace.
    superseded: Vec<String>,
    /// The message seqs newly covered, if any.
    covered: Option<(i64, i64)>,
}

/// The messages a compaction covers, with what was extracted from them and what a model wrote:
/// the state every way of summarising the range shares.
struct NewRange<'a> {
    /// The messages covered.
    msgs: &'a [Message],
    /// The first seq covered (just past the frontier once summaries exist).
    start: i64,
    /// The last seq covered.
    end: i64,
    /// The live summaries the range may fold with: the global one, then the segments.
    old: Vec<&'a Summary>,
    /// The digest extracted from the messages.
    extracted: Digest,
    /// The model's text, when the strategy uses one.
    written: Option<&'a str>,
    /// The model's text parsed, with the extracted literals and recurring lines merged in.
    parsed_written: Option<Digest>,
    /// The strategy the new segment records.
    strategy: Strategy,
}

impl<'a> NewRange<'a> {
    /// Extracts the range's digest and pairs it with the model's text, if the strategy uses one.
    fn new(
        input: &PlanInput<'a>,
        before: &Selection<'a>,
        range: std::ops::Range<usize>,
    ) -> Result<Self, CoreError> {
        let msgs = &input.messages[range];
        let (Some(first), Some(last)) = (msgs.first(), msgs.last()) else {
            return Err(CoreError::InvalidContext("empty compaction range".into()));
        };
        let start = if input.summaries.is_empty() {
            first.seq
        } else {
            before.frontier + 1
        };
        let old: Vec<&Summary> = before
            .global
            .into_iter()
            .chain(before.segments.iter().copied())
            .collect();
        let sources = msgs.iter().map(Source::from);
        let mut extracted = if input.summaries.is_empty() {
            Digest::from_sources(sources)
        } else {
            Digest::from_continuation(sources)
        };
        // An instruction the older summaries show as recurring stays one line in the new one.
        for s in &old {
            extracted.recurring_from(&s.text);
        }
        let written = input
            .written
            .filter(|_| input.strategy != Strategy::Extract);
        let strategy = if written.is_some() {
            input.strategy
        } else {
            Strategy::Extract
        };
        let parsed_written = written.map(|text| {
            // The model's text, with the literals it left out (and where each was stated).
            let mut d = Digest::parse(text);
            d.merge(Digest {
                literals: extracted.literals.clone(),
                recurring: extracted.recurring.clone(),
                ..Digest::default()
            });
            d
        });
        Ok(Self {
            msgs,
            start,
            end: last.seq,
            old,
            extracted,
            written,
            parsed_written,
            strategy,
        })
    }

    /// The range's content as a digest: the model's, parsed, or else the extracted one.
    fn digest(&self) -> &Digest {
        self.parsed_written.as_ref().unwrap_or(&self.extracted)
    }

    /// What the new segment says: the model's text (literals it left out appended), or the
    /// digest.
    fn body(&self) -> Body<'_> {
        match self.written {
            Some(text) => Body::Written(
                with_missing_literals(text, &self.extracted.literal_texts()),
                self.digest(),
            ),
            None => Body::Digest(self.digest()),
        }
    }

    /// The first seq the older summaries cover (the range's own start when there are none).
    fn old_start(&self) -> i64 {
        self.old
            .iter()
            .map(|s| s.start_seq)
            .min()
            .unwrap_or(self.start)
    }

    /// The ids of every older summary, which a fold supersedes.
    fn old_ids(&self) -> Vec<String> {
        self.old.iter().map(|s| s.id.clone()).collect()
    }
}

/// Summarises the oldest uncovered messages, folding older summaries as the level and the
/// shares require.
fn cover_range<'a>(
    input: &PlanInput<'a>,
    before: &Selection<'a>,
    range: std::ops::Range<usize>,
) -> Result<Changes, CoreError> {
    let new = NewRange::new(input, before, range)?;
    let detail = detail_for(input.level);
    let mut changes = if input.level == CompressionLevel::Phase {
        fold_phase(input, &new, detail)
    } else if new.written.is_none()
        && let Some(shares) = share_out(
            new.msgs,
            &new.old,
            new.start,
            new.digest(),
            detail,
            input.budget,
            input.counter,
            before.segment_tokens,
        )
    {
        // The extract strategy fills the global share before anything is dropped.
        Changes {
            new_summaries: shares,
            superseded: new.old_ids(),
            covered: None,
        }
    } else {
        add_segment(input, before, &new, detail)
    };
    changes.covered = Some((new.start, new.end));
    Ok(changes)
}

/// A completed phase: everything, old and new, folds into one global summary.
fn fold_phase(input: &PlanInput<'_>, new: &NewRange<'_>, detail: Detail) -> Changes {
    let mut digest = Digest::default();
    for s in &new.old {
        digest.merge(Digest::parse(&s.text));
    }
    digest.merge(new.digest().clone());
    let strategy = fold_strategy(
        new.old.iter().map(|s| s.strategy).chain([new.strategy]),
        input.strategy,
    );
    let global = make_summary(
        SummaryLevel::Global,
        new.old_start(),
        new.end,
        strategy,
        Body::Digest(&digest),
        detail,
        input.budget.global(),
        input.counter,
    );
    Changes {
        new_summaries: vec![global],
        superseded: new.old_ids(),
        covered: None,
    }
}

/// Makes the range a new segment; when it does not fit the room the segments have left, the
/// older summaries first fold into a global one and the segment gets the whole share.
fn add_segment(
    input: &PlanInput<'_>,
    before: &Selection<'_>,
    new: &NewRange<'_>,
    detail: Detail,
) -> Changes {
    let budget = input.budget;
    let room = budget.segments().saturating_sub(before.segment_tokens);
    let whole = whole_tokens(
        SummaryLevel::Segment,
        new.start,
        new.end,
        &new.body(),
        detail,
        input.counter,
    );
    let mut changes = Changes::default();
    let mut seg_room = room;
    let mut spilled = Digest::default();
    if whole > room && !before.segments.is_empty() {
        let (global, rest) = fold_outgrown_segments(input, new, detail);
        spilled = rest;
        changes.superseded = new.old_ids();
        changes.new_summaries.push(global);
        seg_room = budget.segments();
    }
    let carried;
    let seg_body = if spilled == Digest::default() {
        new.body()
    } else {
        spilled.merge(new.digest().clone());
        carried = spilled;
        Body::Digest(&carried)
    };
    changes.new_summaries.push(make_summary(
        SummaryLevel::Segment,
        new.start,
        new.end,
        new.strategy,
        seg_body,
        detail,
        seg_room,
        input.counter,
    ));
    changes
}

/// Segments outgrow their share: the older summaries fold into a global summary within the
/// global share, and what it has no room for is returned to be carried into the new segment
/// (ranked with the new content) rather than lost while the segment share has room.
fn fold_outgrown_segments(
    input: &PlanInput<'_>,
    new: &NewRange<'_>,
    detail: Detail,
) -> (Summary, Digest) {
    let counter = input.counter;
    let global_start = new.old_start();
    let global_end = new
        .old
        .iter()
        .map(|s| s.end_seq)
        .max()
        .unwrap_or(new.start - 1);
    let strategy = fold_strategy(new.old.iter().map(|s| s.strategy), input.strategy);
    let header = header_tokens(SummaryLevel::Global, global_start, global_end, counter);
    let (text, tokens, rest) = fold_summaries_spill(
        &new.old,
        detail,
        input.budget.global().saturating_sub(header),
        counter,
    );
    let global = new_summary(
        SummaryLevel::Global,
        global_start,
        global_end,
        text,
        tokens.saturating_add(header),
        strategy,
    );
    (global, rest)
}

/// Nothing new to cover, but the global summary outgrew its share: summarise it deeper, if
/// that makes it smaller.
fn deepen_global(
    global: Option<&Summary>,
    budget: HistoryBudget,
    counter: &dyn TokenCounter,
) -> Changes {
    let mut changes = Changes::default();
    let Some(g) = global.filter(|g| g.tokens > budget.global()) else {
        return changes;
    };
    let header = header_tokens(SummaryLevel::Global, g.start_seq, g.end_seq, counter);
    let (text, tokens) = fold_summaries(
        &[g],
        None,
        Detail::Deep,
        budget.global().saturating_sub(header),
        counter,
    );
    let tokens = tokens.saturating_add(header);
    if tokens < g.tokens {
        changes.superseded.push(g.id.clone());
        changes.new_summaries.push(new_summary(
            SummaryLevel::Global,
            g.start_seq,
            g.end_seq,
            text,
            tokens,
            g.strategy,
        ));
    }
    changes
}

/// The seqs a selection sends verbatim, covered pinned and uncovered alike, in seq order.
fn kept_verbatim(selection: &Selection<'_>) -> Vec<i64> {
    let mut kept: Vec<i64> = selection
        .verbatim_seqs()
        .into_iter()
        .chain(selection.pending.iter().map(|m| m.seq))
        .collect();
    kept.sort_unstable();
    kept
}

/// Measures the history before and after the changes, and drops them when they save nothing.
fn finish_plan(
    input: &PlanInput<'_>,
    before: &Selection<'_>,
    changes: Changes,
) -> Result<CompactionPlan, CoreError> {
    let mut plan = CompactionPlan {
        level: input.level,
        strategy: input.strategy,
        new_summaries: changes.new_summaries,
        superseded: changes.superseded,
        tokens_before: before.required_tokens(),
        tokens_after: before.required_tokens(),
        kept_verbatim: kept_verbatim(before),
        covered: changes.covered,
    };
    if plan.is_empty() {
        return Ok(plan);
    }
    let after_summaries = plan.apply(input.summaries);
    let after = select(
        input.messages,
        input.pinned,
        &after_summaries,
        &input.budget,
    )?;
    plan.tokens_after = after.required_tokens();
    if after.required_tokens() >= before.required_tokens() && input.level != CompressionLevel::Phase
    {
        // Summarising a few short messages can cost more than sending them: do nothing.
        plan.new_summaries.clear();
        plan.superseded.clear();
        plan.covered = None;
        plan.tokens_after = plan.tokens_before;
        return Ok(plan);
    }
    plan.kept_verbatim = kept_verbatim(&after);
    Ok(plan)
}
