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

use crate::context::extract::{Detail, Digest, Source};
use crate::context::fold::{fold_summaries, render_within};
use crate::context::summary::{CompressionLevel, HistoryBudget, Strategy, Summary, SummaryLevel};
use crate::context::window::{select, units_from_end};
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

fn new_summary(
    level: SummaryLevel,
    start_seq: i64,
    end_seq: i64,
    (text, tokens): (String, u32),
) -> Summary {
    Summary {
        id: Uuid::now_v7().to_string(),
        level,
        start_seq,
        end_seq,
        text,
        tokens,
        strategy: Strategy::Extract,
    }
}

/// Plans a compaction. The oldest uncovered messages become a new segment summary (all of them
/// for `Phase`); when segments then outgrow their share, they and the global summary fold into a
/// new global summary, rendered more deeply until it fits its share.
pub fn plan(input: PlanInput<'_>) -> Result<CompactionPlan, CoreError> {
    if input.strategy != Strategy::Extract && input.written.is_none() {
        return Err(CoreError::InvalidContext(format!(
            "strategy {} needs the summary a model wrote for the range compaction_range chose",
            input.strategy.as_str()
        )));
    }
    let budget = input.budget;
    let before = select(input.messages, input.pinned, input.summaries, &budget)?;
    let detail = match input.level {
        CompressionLevel::Deep => Detail::Deep,
        _ => Detail::Standard,
    };
    let keep = (f64::from(budget.recent()) * input.level.keep_fraction()).floor() as u32;
    let range = choose_range(input.messages, before.frontier, keep);

    let mut new_summaries = Vec::new();
    let mut superseded = Vec::new();
    let mut covered = None;
    if let Some(range) = range.clone() {
        let msgs = &input.messages[range];
        let (Some(first), Some(last)) = (msgs.first(), msgs.last()) else {
            return Err(CoreError::InvalidContext("empty compaction range".into()));
        };
        let start = if input.summaries.is_empty() {
            first.seq
        } else {
            before.frontier + 1
        };
        covered = Some((start, last.seq));
        let digest = Digest::from_sources(msgs.iter().map(Source::from));
        let seg = match input
            .written
            .filter(|_| input.strategy != Strategy::Extract)
        {
            Some(text) => {
                let text = with_missing_literals(text, &digest.literals);
                let tokens = input.counter.count_text(&text);
                (text, tokens)
            }
            None => render_within(&digest, detail, budget.segments(), input.counter),
        };
        let segment_total = before.segment_tokens.saturating_add(seg.1);
        if segment_total <= budget.segments() && input.level != CompressionLevel::Phase {
            new_summaries.push(new_summary(SummaryLevel::Segment, start, last.seq, seg));
        } else {
            // Segments outgrow their share: fold everything into one new global summary.
            let old: Vec<&Summary> = before
                .global
                .into_iter()
                .chain(before.segments.iter().copied())
                .collect();
            let global_start = old.iter().map(|s| s.start_seq).min().unwrap_or(start);
            let folded = fold_summaries(&old, Some(digest), detail, budget.global(), input.counter);
            superseded = old.iter().map(|s| s.id.clone()).collect();
            new_summaries.push(new_summary(
                SummaryLevel::Global,
                global_start,
                last.seq,
                folded,
            ));
        }
    } else if let Some(g) = before.global
        && g.tokens > budget.global()
    {
        // Nothing new to cover, but the global summary outgrew its share: summarise it deeper.
        let folded = fold_summaries(&[g], None, Detail::Deep, budget.global(), input.counter);
        if folded.1 < g.tokens {
            superseded.push(g.id.clone());
            new_summaries.push(new_summary(
                SummaryLevel::Global,
                g.start_seq,
                g.end_seq,
                folded,
            ));
        }
    }

    let mut plan = CompactionPlan {
        level: input.level,
        strategy: input.strategy,
        new_summaries,
        superseded,
        tokens_before: before.required_tokens(),
        tokens_after: before.required_tokens(),
        kept_verbatim: before
            .verbatim_seqs()
            .into_iter()
            .chain(before.pending.iter().map(|m| m.seq))
            .collect(),
        covered,
    };
    plan.kept_verbatim.sort_unstable();
    if !plan.is_empty() {
        let after_summaries = plan.apply(input.summaries);
        let after = select(input.messages, input.pinned, &after_summaries, &budget)?;
        plan.tokens_after = after.required_tokens();
        let mut kept: Vec<i64> = after
            .verbatim_seqs()
            .into_iter()
            .chain(after.pending.iter().map(|m| m.seq))
            .collect();
        kept.sort_unstable();
        if after.required_tokens() >= before.required_tokens()
            && input.level != CompressionLevel::Phase
        {
            // Summarising a few short messages can cost more than sending them: do nothing.
            plan.new_summaries.clear();
            plan.superseded.clear();
            plan.covered = None;
            plan.tokens_after = plan.tokens_before;
            return Ok(plan);
        }
        plan.kept_verbatim = kept;
    }
    Ok(plan)
}
