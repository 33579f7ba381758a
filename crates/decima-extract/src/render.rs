//! Rendering a digest as text: whole at a detail, or within a token budget by priority, with what
//! does not fit folded into counts or handed back as a digest.

use std::collections::{BTreeMap, HashSet};

use super::candidates::{Cand, CandKind, Sec, Src};
use super::literals::scan_literals;
use super::text::FastSet;
use super::{Detail, Digest, Note};
use crate::CountTokens;

impl Digest {
    /// Renders the whole digest at `detail`, with fixed section headings; empty sections are
    /// left out. Every literal appears: those the kept prose does not carry are listed.
    pub fn render(&self, detail: Detail) -> String {
        self.layout(&self.candidates(detail, false), None, None)
    }

    /// Renders the digest at `detail` within `max_tokens` (counted as one message by
    /// `counter`, as [``summary_tokens` in decima-core's `context::fold``] does), filling the budget by
    /// priority: the goal (whole while it takes at most half the budget), constraints and
    /// decisions (an instruction that recurs with only its numbers changed as one line, the
    /// newest with counts) and the user's literals; then todos and the most recent operations;
    /// the older variants of a decision or constraint stated once each in many variants; notes;
    /// the literals the agent stated, newest first; the literals tools printed, shared
    /// round-robin between operations (newest first within each, shown under their
    /// operation); the remaining operations and the result lines. What does not fit is folded
    /// into counts. Returns the text and its tokens; the tokens exceed `max_tokens` only when
    /// even an empty text does.
    pub fn render_budgeted(
        &self,
        detail: Detail,
        max_tokens: u32,
        counter: &dyn CountTokens,
    ) -> (String, u32) {
        let (text, tokens, _) = self.fit(detail, max_tokens, counter, false, false);
        (text, tokens)
    }

    /// Like [`Digest::render_budgeted_spill`], for a digest the caller knows does not fit
    /// `max_tokens` whole: the whole rendering is not tried first.
    pub fn render_spill_over(
        &self,
        detail: Detail,
        max_tokens: u32,
        counter: &dyn CountTokens,
    ) -> (String, u32, Digest) {
        self.fit(detail, max_tokens, counter, true, true)
    }

    /// Like [`Digest::render_budgeted`], for a digest the caller knows does not fit
    /// `max_tokens` whole.
    pub fn render_over(
        &self,
        detail: Detail,
        max_tokens: u32,
        counter: &dyn CountTokens,
    ) -> (String, u32) {
        let (text, tokens, _) = self.fit(detail, max_tokens, counter, false, true);
        (text, tokens)
    }

    /// Like [`Digest::render_budgeted`], but what does not fit is returned as a digest instead
    /// of being folded into counts, so it can go into another summary (the new segment, when
    /// older summaries fold into the global one) rather than be lost.
    pub fn render_budgeted_spill(
        &self,
        detail: Detail,
        max_tokens: u32,
        counter: &dyn CountTokens,
    ) -> (String, u32, Digest) {
        self.fit(detail, max_tokens, counter, true, false)
    }

    /// Renders within `max_tokens`: whole if it fits (unless `over` says it cannot), else by
    /// priority, shrinking the room until the counter agrees.
    fn fit(
        &self,
        detail: Detail,
        max_tokens: u32,
        counter: &dyn CountTokens,
        spill: bool,
        over: bool,
    ) -> (String, u32, Digest) {
        let cost = |text: &str| {
            counter
                .count_text(text)
                .saturating_add(counter.message_overhead())
        };
        let mut dropped = HashSet::new();
        let cands = self.candidates(detail, true);
        if !over {
            let full = self.layout(&cands, None, spill.then_some(&mut dropped));
            let full_tokens = cost(&full);
            if full_tokens <= max_tokens {
                return (full, full_tokens, self.leftover(&dropped));
            }
        }
        let overhead = counter.message_overhead();
        let mut room = max_tokens.saturating_sub(overhead);
        for attempt in 0..9 {
            if attempt == 8 {
                room = 0;
            }
            dropped.clear();
            let text = self.layout(&cands, Some((room, counter)), spill.then_some(&mut dropped));
            let tokens = cost(&text);
            if tokens <= max_tokens {
                return (text, tokens, self.leftover(&dropped));
            }
            // The counter is not additive over lines (a real tokenizer can merge across them):
            // shrink by the excess and try again.
            let excess = tokens - max_tokens;
            room = room.saturating_sub(excess.max(room / 16).max(1));
        }
        // Even the headings do not fit: send nothing rather than exceed the budget.
        let rest = if spill {
            self.clone()
        } else {
            Digest::default()
        };
        (String::new(), cost(""), rest)
    }

    /// The items a layout left out, as a digest in their original order.
    fn leftover(&self, dropped: &HashSet<Src>) -> Digest {
        if dropped.is_empty() {
            return Digest::default();
        }
        let pick = |list: &[String], f: fn(usize) -> Src| -> Vec<String> {
            list.iter()
                .enumerate()
                .filter(|(i, _)| dropped.contains(&f(*i)))
                .map(|(_, x)| x.clone())
                .collect()
        };
        // Decisions and constraints are dropped by row: every sentence a row stands for.
        let pick_rows = |list: &[String], f: fn(&Src) -> Option<&Vec<usize>>| -> Vec<String> {
            let mut at: Vec<usize> = dropped.iter().filter_map(f).flatten().copied().collect();
            at.sort_unstable();
            at.dedup();
            at.into_iter()
                .filter_map(|i| list.get(i).cloned())
                .collect()
        };
        let mut ops: Vec<usize> = dropped
            .iter()
            .filter_map(|s| match s {
                Src::Ops(v) => Some(v.iter().copied()),
                _ => None,
            })
            .flatten()
            .collect();
        ops.sort_unstable();
        ops.dedup();
        let decisions = pick_rows(&self.decisions, |s| match s {
            Src::Decisions(v) => Some(v),
            _ => None,
        });
        let constraints = pick_rows(&self.constraints, |s| match s {
            Src::Constraints(v) => Some(v),
            _ => None,
        });
        let stated = decisions
            .iter()
            .chain(&constraints)
            .filter_map(|s| self.stated.get(s).map(|&n| (s.clone(), n)))
            .collect();
        Digest {
            goal: pick(&self.goal, Src::Goal),
            todos: pick(&self.todos, Src::Todo),
            decisions,
            constraints,
            stated,
            recurring: self.recurring.clone(),
            notes: self
                .notes
                .iter()
                .enumerate()
                .map(|(ni, n)| Note {
                    heading: n.heading.clone(),
                    lines: n
                        .lines
                        .iter()
                        .enumerate()
                        .filter(|(li, _)| dropped.contains(&Src::Note(ni, *li)))
                        .map(|(_, l)| l.clone())
                        .collect(),
                })
                .filter(|n| !n.lines.is_empty())
                .collect(),
            operations: ops
                .into_iter()
                .filter_map(|i| self.operations.get(i).cloned())
                .collect(),
            folded_ops: BTreeMap::new(),
            statements: self
                .statements
                .iter()
                .enumerate()
                .filter(|(i, _)| dropped.contains(&Src::Statement(*i)))
                .map(|(_, s)| s.clone())
                .collect(),
            literals: self
                .literals
                .iter()
                .enumerate()
                .filter(|(i, _)| dropped.contains(&Src::Literal(*i)))
                .map(|(_, l)| l.clone())
                .collect(),
            folded_literals: BTreeMap::new(),
        }
    }

    /// Lays the digest out; with a limit, chooses items by priority until `room` tokens are
    /// used (estimated per line, headings included) and folds the rest into counts, or, with
    /// `spill`, records what was left out there instead.
    pub(super) fn layout(
        &self,
        cands: &[Cand],
        limit: Option<(u32, &dyn CountTokens)>,
        mut spill: Option<&mut HashSet<Src>>,
    ) -> String {
        let mut choice = Choice::new(self, cands.len());
        let mut budget = limit.map(|(room, counter)| Budget::new(self, cands, room, counter));
        for ci in 0..cands.len() {
            let cand = &cands[ci];
            if !choice.wants(self, cand, ci) {
                continue;
            }
            // Lines under an operation row need the row: its cost joins theirs.
            let parent = cand.parent.filter(|&p| choice.chosen[p].is_none());
            let pick = match budget.as_mut() {
                Some(budget) => budget.pick(self, cands, ci, parent, &choice.open),
                None => (!cand.texts.is_empty()).then(|| (0, parent.map(|_| 0))),
            };
            match pick {
                Some((vi, pv)) => {
                    if let (Some(p), Some(pv)) = (parent, pv) {
                        choice.take(&cands[p], p, pv);
                    }
                    choice.take(cand, ci, vi);
                }
                None if spill.is_some() => {
                    if let Some(dropped) = spill.as_deref_mut()
                        && cand.src != Src::None
                    {
                        dropped.insert(cand.src.clone());
                    }
                }
                None => choice.fold(self, cand),
            }
        }
        self.write_sections(cands, &choice)
    }

    /// Writes the chosen renderings under their section headings, in section order, with the
    /// "folded" count lines after the operations and after the last literal section (or in
    /// sections of their own when none was written).
    fn write_sections(&self, cands: &[Cand], choice: &Choice) -> String {
        let (folded_ops, folded_lits) = (&choice.folded_ops, &choice.folded_lits);
        let mut picked: Vec<(Sec, (u64, u64), &str)> = cands
            .iter()
            .zip(&choice.chosen)
            .filter_map(|(c, v)| v.map(|v| (c.sec, c.key, c.texts[v].as_str())))
            .collect();
        picked.sort_by_key(|a| (a.0, a.1));
        let last_literal_sec = picked
            .iter()
            .map(|c| c.0)
            .filter(|s| {
                matches!(
                    s,
                    Sec::UserLiterals | Sec::Literals | Sec::ToolFacts | Sec::ToolLiterals
                )
            })
            .max();
        let mut out = String::new();
        let mut current: Option<Sec> = None;
        let mut ops_done = false;
        let mut lits_done = false;
        let close = |sec: Sec, out: &mut String, ops_done: &mut bool, lits_done: &mut bool| {
            if sec == Sec::Operations && !folded_ops.is_empty() {
                out.push_str(&folded_ops_line(folded_ops));
                *ops_done = true;
            }
            if Some(sec) == last_literal_sec && !folded_lits.is_empty() {
                out.push_str(&folded_lits_line(folded_lits));
                *lits_done = true;
            }
        };
        for (sec, _, text) in &picked {
            if current != Some(*sec) {
                if let Some(prev) = current {
                    close(prev, &mut out, &mut ops_done, &mut lits_done);
                }
                if *sec > Sec::Operations && !ops_done && !folded_ops.is_empty() {
                    out.push_str("## Operations\n");
                    out.push_str(&folded_ops_line(folded_ops));
                    ops_done = true;
                }
                out.push_str(&self.heading_line(*sec));
                current = Some(*sec);
            }
            out.push_str(text);
        }
        if let Some(prev) = current {
            close(prev, &mut out, &mut ops_done, &mut lits_done);
        }
        if !ops_done && !folded_ops.is_empty() {
            out.push_str("## Operations\n");
            out.push_str(&folded_ops_line(folded_ops));
        }
        if !lits_done && !folded_lits.is_empty() {
            out.push_str("## Literals\n");
            out.push_str(&folded_lits_line(folded_lits));
        }
        out
    }

    /// Tokens set aside for the "folded" lines, at their largest.
    fn fold_reserve(&self, cands: &[Cand], counter: &dyn CountTokens) -> u32 {
        let mut ops = self.folded_ops.clone();
        let mut lits = self.folded_literals.clone();
        for c in cands {
            match &c.kind {
                CandKind::Op(tool, n) => *ops.entry(tool.clone()).or_default() += n,
                CandKind::Literal(i) => {
                    *lits
                        .entry(self.literals[*i].kind.as_str().to_string())
                        .or_default() += 1
                }
                CandKind::Statement(_) => *lits.entry(STATEMENT.to_string()).or_default() += 1,
                _ => {}
            }
        }
        let mut reserve = 0;
        if !ops.is_empty() {
            reserve += counter.count_text(&format!("## Operations\n{}", folded_ops_line(&ops)));
        }
        if !lits.is_empty() {
            reserve += counter.count_text(&format!("## Literals\n{}", folded_lits_line(&lits)));
        }
        reserve
    }

    fn heading_line(&self, sec: Sec) -> String {
        let name = match sec {
            Sec::Goal => "Goal",
            Sec::Todo => "Todo",
            Sec::Decisions => "Decisions",
            Sec::Constraints => "Constraints",
            Sec::Facts => "Facts",
            Sec::ToolFacts => "Tool facts",
            Sec::Note(i) => self.notes.get(i).map_or("Notes", |n| n.heading.as_str()),
            Sec::Operations => "Operations",
            Sec::UserLiterals => "User literals",
            Sec::Literals => "Literals",
            Sec::ToolLiterals => "Tool literals",
        };
        format!("## {name}\n")
    }
}

/// A layout in progress: the rendering chosen for each candidate, what the chosen ones
/// already hold, and what was folded into counts.
struct Choice {
    /// The rendering chosen for each candidate.
    chosen: Vec<Option<usize>>,
    /// Sections with a chosen line: their headings are paid for.
    open: HashSet<Sec>,
    /// Literals the chosen lines carry.
    present: FastSet<String>,
    /// The goal texts chosen.
    said: Said,
    /// Operations folded into counts, by tool.
    folded_ops: BTreeMap<String, u64>,
    /// Literals and statements folded into counts, by kind.
    folded_lits: BTreeMap<String, u64>,
}

impl Choice {
    /// Nothing chosen yet among `n` candidates; the digest's own folded counts to start from.
    fn new(d: &Digest, n: usize) -> Self {
        Choice {
            chosen: vec![None; n],
            open: HashSet::new(),
            present: FastSet::default(),
            said: Said::default(),
            folded_ops: d.folded_ops.clone(),
            folded_lits: d.folded_literals.clone(),
        }
    }

    /// Whether candidate `ci` still needs a place: not chosen yet (as a parent), not a line
    /// shown only as a parent, not a literal or sentence the chosen lines already carry.
    fn wants(&self, d: &Digest, cand: &Cand, ci: usize) -> bool {
        if self.chosen[ci].is_some() || cand.only_as_parent {
            return false;
        }
        if let CandKind::Literal(i) = cand.kind
            && self.present.contains(&d.literals[i].text)
        {
            return false;
        }
        // Said by the chosen goal (or, for a statement, by a chosen constraint or decision):
        // kept there.
        cand.plain.is_empty() || !self.said.says(&cand.kind, &cand.plain)
    }

    /// Records a chosen rendering: its section opens, its literals count as present, and a goal,
    /// constraint or decision is remembered so what it says is not repeated.
    fn take(&mut self, cand: &Cand, ci: usize, variant: usize) {
        let text = &cand.texts[variant];
        if cand.scan {
            scan_literals(text, true, &mut |lit, _| {
                self.present.insert(lit.to_string());
            });
        }
        if matches!(cand.kind, CandKind::Goal) {
            self.said.goal.push(text.clone());
        }
        self.open.insert(cand.sec);
        self.chosen[ci] = Some(variant);
    }

    /// Counts a candidate left out in the "folded" lines.
    fn fold(&mut self, d: &Digest, cand: &Cand) {
        match cand.kind {
            CandKind::Literal(i) => {
                let kind = d.literals[i].kind.as_str().to_string();
                *self.folded_lits.entry(kind).or_default() += 1;
            }
            CandKind::Statement(_) => {
                *self.folded_lits.entry(STATEMENT.to_string()).or_default() += 1;
            }
            CandKind::Op(ref tool, n) => {
                *self.folded_ops.entry(tool.clone()).or_default() += n;
            }
            _ => {}
        }
    }
}

/// The token budget of a layout and what is used of it.
struct Budget<'c> {
    /// Tokens for the chosen lines: the room less the reserve for the "folded" lines.
    budget: u32,
    /// Counts the lines.
    counter: &'c dyn CountTokens,
    /// Tokens chosen so far.
    used: u32,
    /// Tokens the goal took, capped at half the budget except for its shortest rendering.
    goal_used: u32,
    /// What the statements that shrink need after each candidate, in their shortest form.
    shrunk_after: Vec<u32>,
}

impl<'c> Budget<'c> {
    /// The budget of `room` tokens, with the "folded" lines' reserve set aside.
    fn new(d: &Digest, cands: &[Cand], room: u32, counter: &'c dyn CountTokens) -> Self {
        let reserve = d.fold_reserve(cands, counter);
        let mut shrunk_after: Vec<u32> = vec![0; cands.len() + 1];
        for ci in (0..cands.len()).rev() {
            let c = &cands[ci];
            let own = match (c.shrinks, c.texts.last()) {
                (true, Some(t)) => counter.count_text(t),
                _ => 0,
            };
            shrunk_after[ci] = shrunk_after[ci + 1].saturating_add(own);
        }
        Budget {
            budget: room.saturating_sub(reserve),
            counter,
            used: 0,
            goal_used: 0,
            shrunk_after,
        }
    }

    /// The longest rendering of candidate `ci` that fits what is left (with its heading, and
    /// its `parent`'s shortest rendering and heading when it brings the parent in), and the
    /// parent's rendering; the tokens are counted as used.
    fn pick(
        &mut self,
        d: &Digest,
        cands: &[Cand],
        ci: usize,
        parent: Option<usize>,
        open: &HashSet<Sec>,
    ) -> Option<(usize, Option<usize>)> {
        let (budget, counter) = (self.budget, self.counter);
        let cand = &cands[ci];
        let heading = |sec: Sec| {
            if open.contains(&sec) {
                0
            } else {
                counter.count_text(&d.heading_line(sec))
            }
        };
        let parent_cost = match parent {
            Some(p) => match cands[p].texts.last() {
                Some(t) => counter.count_text(t).saturating_add(heading(cands[p].sec)),
                None => u32::MAX,
            },
            None => 0,
        };
        let own_heading = if parent.is_some_and(|p| cands[p].sec == cand.sec) {
            0
        } else {
            heading(cand.sec)
        };
        for (vi, text) in cand.texts.iter().enumerate() {
            let c = counter
                .count_text(text)
                .saturating_add(own_heading)
                .saturating_add(parent_cost);
            let within_goal_cap = !matches!(cand.kind, CandKind::Goal)
                || vi + 1 == cand.texts.len()
                || self.goal_used.saturating_add(c) <= budget / 2;
            let leaves_room = !cand.shrinks
                || vi + 1 == cand.texts.len()
                || self
                    .used
                    .saturating_add(c)
                    .saturating_add(self.shrunk_after[ci + 1])
                    <= budget;
            if within_goal_cap && leaves_room && self.used.saturating_add(c) <= budget {
                self.used += c;
                if matches!(cand.kind, CandKind::Goal) {
                    self.goal_used += c;
                }
                return Some((vi, parent.map(|p| cands[p].texts.len().saturating_sub(1))));
            }
        }
        None
    }
}

/// The goal texts a layout has chosen so far.
#[derive(Default)]
struct Said {
    goal: Vec<String>,
}

impl Said {
    /// Whether a constraint, decision or statement with text `plain` is already said by the
    /// goal. (A clause of a constraint or decision is no statement of its own, so only the goal
    /// can repeat one.)
    fn says(&self, kind: &CandKind, plain: &str) -> bool {
        matches!(kind, CandKind::Contained | CandKind::Statement(_))
            && self.goal.iter().any(|g| g.contains(plain))
    }
}

/// The kind under which dropped statements are counted in the "folded literals" line.
const STATEMENT: &str = "statement";

fn folded_ops_line(counts: &BTreeMap<String, u64>) -> String {
    let parts: Vec<String> = counts.iter().map(|(t, n)| format!("{t}×{n}")).collect();
    format!("- folded operations: {}\n", parts.join(", "))
}

fn folded_lits_line(counts: &BTreeMap<String, u64>) -> String {
    let parts: Vec<String> = counts.iter().map(|(t, n)| format!("{t}×{n}")).collect();
    format!("- folded literals: {}\n", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EstimateCounter;
    use crate::{Speaker, src};

    #[test]
    fn the_goal_message_stays_whole_and_its_constraints_are_kept() {
        let goal =
            "目标：核对第三季度发票。约束：只使用欧盟区数据，报告里不要出现客户姓名。阈值 0.8375。";
        let d = Digest::from_sources([src(Speaker::User, goal), src(Speaker::User, "好的")]);
        assert_eq!(d.goal, vec![goal]);
        assert_eq!(d.constraints.len(), 1, "{:?}", d.constraints);
        let text = d.render(Detail::Deep);
        assert_eq!(text.matches("约束：只使用欧盟区数据").count(), 1, "{text}");
        // A tight budget cuts the goal, but its constraint and literal survive apart from it.
        let long_goal = format!("{goal}{}", "背景说明。".repeat(400));
        let d = Digest::from_sources([src(Speaker::User, &long_goal)]);
        let (small, tokens) = d.render_budgeted(Detail::Standard, 300, &EstimateCounter);
        assert!(tokens <= 300, "{tokens}");
        assert!(small.contains("约束：只使用欧盟区数据"), "{small}");
        assert!(small.contains("0.8375"), "{small}");
    }
}
