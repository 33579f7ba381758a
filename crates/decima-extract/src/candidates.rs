//! Every renderable item of a digest, in priority order: the candidates a layout chooses from,
//! with the section each goes in and the digest item it renders.

use std::collections::{HashMap, HashSet};

use super::analysis::{Analysis, analyse};
use super::facts::{REPLACED_SEP, REPLACES};
use super::operations::OpRow;
use super::statements::{RowKind, StatementRow, grouped_line, statement_rows};
use super::text::{item_line, one_line, truncate};
use super::values::as_quoted;
use super::{Detail, Digest, GOAL_CHARS, Origin, Statement, StatementKind};

/// Result lines kept for the most recent operations (standard detail).
const DETAILED_OPS: usize = 3;

/// The shorter renderings of a goal when its whole text would take more than half the budget.
const GOAL_SHORT: [usize; 3] = [1_200, 300, 100];
/// Shorter renderings of decisions, constraints and notes under a tight budget.
const ITEM_SHORT: usize = 200;

/// Operation lines ranked with the todos, before notes and literals.
const RECENT_OPS: usize = 12;
/// Operation lines shown individually at folded detail.
const FOLDED_OPS: usize = 5;

impl Digest {
    /// Every renderable item, in priority order.
    /// `budgeted`: whether a layout may pick shorter renderings (an unlimited one never does,
    /// so they are not made).
    pub(super) fn candidates(&self, detail: Detail, budgeted: bool) -> Vec<Cand> {
        let mut scan = CandScan {
            d: self,
            detail,
            budgeted,
            out: Vec::new(),
        };
        let ranked = Ranked::of(self);
        // Tier A: goal, constraints, decisions, the user's statements and literals.
        scan.push_goals();
        let older = scan.push_instructions();
        scan.push_facts(ranked.statements[0].iter().chain(&ranked.statements[1]));
        for &i in &ranked.user_literals {
            let c = scan.flat_literal(i);
            scan.out.push(c);
        }
        // Tier B: todos and the most recent operations.
        scan.push_todos();
        let mut ops = scan.push_recent_ops();
        // Tier B': the older one-off variants of decisions and constraints.
        scan.out.extend(older);
        // Tier C: model-written notes, newest first.
        scan.push_notes();
        // Tier D: what the agent stated, newest first: its statements here, its bare literals
        // after the tools' statements.
        scan.push_facts(&ranked.statements[2]);
        // Tier E: what tools printed, then the operation rows not chosen so far.
        scan.push_tool_items(&mut ops, &ranked);
        // Tier F: the result lines of the last operations.
        if detail == Detail::Standard {
            scan.push_result_lines(&ops);
        }
        scan.out
    }
}

/// The candidate scan of one digest: candidates are pushed tier by tier, and one shown under
/// another refers to it by its index in `out`.
struct CandScan<'d> {
    /// The digest scanned.
    d: &'d Digest,
    /// The detail asked for.
    detail: Detail,
    /// Whether a layout may pick shorter renderings.
    budgeted: bool,
    /// The candidates so far, in priority order.
    out: Vec<Cand>,
}

/// The digest's literals and statements sorted into the tiers they rank in, each list newest
/// first.
struct Ranked {
    /// The user's literals.
    user_literals: Vec<usize>,
    /// The assistant's literals.
    prose_literals: Vec<usize>,
    /// The tools' literals.
    tool_literals: Vec<usize>,
    /// Statements: the user's, then the assistant's restatements, then the agent's own report
    /// lines.
    statements: [Vec<usize>; 3],
    /// The tools' statements, which go with their operations.
    tool_statements: Vec<usize>,
}

impl Ranked {
    /// Sorts the digest's literals by who said them (leaving out values a correction
    /// replaced) and its statements by rank, newest first.
    fn of(d: &Digest) -> Self {
        // Values a correction replaced are not listed as if current; the statement that
        // replaced them notes them.
        let stale: HashSet<&str> = d
            .statements
            .iter()
            .filter_map(|s| s.replaces.as_deref())
            .flat_map(|r| r.split(REPLACED_SEP))
            .collect();
        let mut lists: [Vec<usize>; 3] = Default::default();
        for (i, l) in d.literals.iter().enumerate() {
            if l.origin != Origin::Tool && stale.contains(l.text.as_str()) {
                continue;
            }
            match l.origin {
                Origin::User => lists[0].push(i),
                Origin::Prose => lists[1].push(i),
                Origin::Tool => lists[2].push(i),
            }
        }
        for list in &mut lists {
            list.sort_by(|a, b| d.literals[*b].last_seen.cmp(&d.literals[*a].last_seen));
        }
        let mut statements: [Vec<usize>; 3] = Default::default();
        let mut tool_statements: Vec<usize> = Vec::new();
        for (i, st) in d.statements.iter().enumerate() {
            match (st.origin, st.kind) {
                (Origin::User, _) => statements[0].push(i),
                (Origin::Prose, StatementKind::Restated) => statements[1].push(i),
                (Origin::Prose, _) => statements[2].push(i),
                (Origin::Tool, _) => tool_statements.push(i),
            }
        }
        for list in statements.iter_mut().chain([&mut tool_statements]) {
            list.sort_by(|a, b| d.statements[*b].last_seen.cmp(&d.statements[*a].last_seen));
        }
        let [user_literals, prose_literals, tool_literals] = lists;
        Ranked {
            user_literals,
            prose_literals,
            tool_literals,
            statements,
            tool_statements,
        }
    }
}

/// The operation rows and where their candidates are, for the tiers that show items under
/// them.
struct OpRows {
    /// The rows, one per operation shape.
    rows: Vec<OpRow>,
    /// Row indices, most recent first.
    by_recency: Vec<usize>,
    /// Where each row's candidate is, or will be.
    row_at: HashMap<usize, usize>,
    /// The row each operation shape lands on.
    row_of_shape: HashMap<String, usize>,
    /// The rows ranked after the tools' items, with their candidates.
    later: Vec<(usize, Cand)>,
}

impl OpRows {
    /// Whether the row candidate at `c` shows a line (a later row's index is `late_base` on).
    fn listed(&self, c: usize, out: &[Cand], late_base: usize) -> bool {
        match c.checked_sub(late_base) {
            Some(j) => !self.later[j].1.texts.is_empty(),
            None => !out[c].texts.is_empty(),
        }
    }
}

impl<'d> CandScan<'d> {
    /// The goal lines, each with shorter renderings for when it would take most of the budget.
    fn push_goals(&mut self) {
        for (i, g) in self.d.goal.iter().enumerate() {
            let whole = truncate(g, GOAL_CHARS);
            let mut texts = vec![item_line(&whole)];
            for n in GOAL_SHORT {
                if g.chars().count() > n {
                    texts.push(item_line(&truncate(g, n)));
                }
            }
            self.out.push(
                Cand::new(Sec::Goal, (i as u64, 0), texts, CandKind::Goal, true).src(Src::Goal(i)),
            );
        }
    }

    /// Constraints and decisions, newest first, a recurring instruction as one line. Returns
    /// the older one-off variants of a shape with many, which rank after the todos and recent
    /// operations.
    fn push_instructions(&mut self) -> Vec<Cand> {
        let d = self.d;
        let mut older: Vec<Cand> = Vec::new();
        for (sec, list) in [
            (Sec::Constraints, &d.constraints),
            (Sec::Decisions, &d.decisions),
        ] {
            for row in statement_rows(list, &d.stated, &d.recurring)
                .into_iter()
                .rev()
            {
                let is_older = row.kind == RowKind::Older;
                let c = instruction_cand(sec, list, row);
                if is_older {
                    older.push(c);
                } else {
                    self.out.push(c);
                }
            }
        }
        older
    }

    /// Adds the statements `ids` as facts, in that order.
    fn push_facts<'i>(&mut self, ids: impl IntoIterator<Item = &'i usize>) {
        for &i in ids {
            let c = self.fact(i, Sec::Facts);
            self.out.push(c);
        }
    }

    /// The candidate of statement `i` in section `sec`, with its compact line when a budget
    /// may need it.
    fn fact(&self, i: usize, sec: Sec) -> Cand {
        let st = &self.d.statements[i];
        let mut texts = vec![statement_line(st, "- ")];
        if self.budgeted
            && let Some(short) = compact_line(st, "- ")
            && short.len() < texts[0].len()
        {
            texts.push(short);
        }
        let mut c = Cand::new(
            sec,
            (st.last_seen, i as u64),
            texts,
            CandKind::Statement(i),
            true,
        )
        .src(Src::Statement(i));
        if st.origin == Origin::User {
            // Kept with the goal when the goal message says it.
            c.plain = st.text.clone();
        }
        c.shrinks =
            sec == Sec::Facts && (st.origin == Origin::User || st.kind == StatementKind::Restated);
        c
    }

    /// The candidate of literal `i` in the section of who said it.
    fn flat_literal(&self, i: usize) -> Cand {
        let l = &self.d.literals[i];
        let sec = match l.origin {
            Origin::User => Sec::UserLiterals,
            Origin::Prose => Sec::Literals,
            Origin::Tool => Sec::ToolLiterals,
        };
        Cand::new(
            sec,
            (l.last_seen, 0),
            vec![item_line(&l.text)],
            CandKind::Literal(i),
            false,
        )
        .src(Src::Literal(i))
    }

    /// The todos, newest first.
    fn push_todos(&mut self) {
        for (i, t) in self.d.todos.iter().enumerate().rev() {
            self.out.push(
                Cand::new(
                    Sec::Todo,
                    (i as u64, 0),
                    vec![item_line(t)],
                    CandKind::Other,
                    true,
                )
                .src(Src::Todo(i)),
            );
        }
    }

    /// The most recent operation rows; the others are kept aside to rank after the tools'
    /// items.
    fn push_recent_ops(&mut self) -> OpRows {
        let rows = self.d.op_rows();
        let mut by_recency: Vec<usize> = (0..rows.len()).collect();
        by_recency.sort_by(|&a, &b| rows[b].op.last_seen.cmp(&rows[a].op.last_seen));
        let shown = match self.detail {
            Detail::Folded => FOLDED_OPS,
            _ => usize::MAX,
        };
        let mut row_at: HashMap<usize, usize> = HashMap::new();
        let mut row_of_shape: HashMap<String, usize> = HashMap::new();
        for &r in &by_recency {
            row_of_shape.entry(rows[r].shape.clone()).or_insert(r);
        }
        let mut later: Vec<(usize, Cand)> = Vec::new();
        for (rank, &r) in by_recency.iter().enumerate() {
            if rank < shown.min(RECENT_OPS) {
                row_at.insert(r, self.out.len());
                self.out.push(op_row_cand(&rows[r], true));
            } else {
                later.push((r, op_row_cand(&rows[r], rank < shown)));
            }
        }
        OpRows {
            rows,
            by_recency,
            row_at,
            row_of_shape,
            later,
        }
    }

    /// The lines of model-written notes, newest first.
    fn push_notes(&mut self) {
        for (ni, note) in self.d.notes.iter().enumerate() {
            for (li, line) in note.lines.iter().enumerate().rev() {
                let texts = match self.detail {
                    Detail::Folded => vec![item_line(&truncate(line, ITEM_SHORT))],
                    _ => short_variants(line),
                };
                self.out.push(
                    Cand::new(Sec::Note(ni), (li as u64, 0), texts, CandKind::Other, true)
                        .src(Src::Note(ni, li)),
                );
            }
        }
    }

    /// The result lines of the last few operations run in a single variant, under their rows.
    fn push_result_lines(&mut self, ops: &OpRows) {
        let rows = &ops.rows;
        for &r in ops
            .by_recency
            .iter()
            .filter(|&&r| rows[r].op.variants == 1 && !rows[r].op.first_lines.is_empty())
            .take(DETAILED_OPS)
        {
            let Some(&parent) = ops.row_at.get(&r) else {
                continue;
            };
            let lines: String = rows[r]
                .op
                .first_lines
                .iter()
                .map(|l| format!("  | {}\n", one_line(l)))
                .collect();
            let mut cand = Cand::new(
                Sec::Operations,
                (rows[r].key, 1),
                vec![lines],
                CandKind::Other,
                false,
            );
            cand.parent = Some(parent);
            cand.needs_parent = true;
            self.out.push(cand);
        }
    }
}

/// The candidate of a row of constraints or decisions: one sentence, or a recurring
/// instruction with its counts, with a shorter rendering when it is long.
fn instruction_cand(sec: Sec, list: &[String], row: StatementRow) -> Cand {
    let (texts, plain) = match &row.kind {
        RowKind::Recurring {
            newest,
            stated,
            variants,
        } => {
            let line = grouped_line(newest, *stated, *variants);
            let mut texts = vec![item_line(&line)];
            if newest.chars().count() > ITEM_SHORT {
                let short = truncate(newest, ITEM_SHORT);
                texts.push(item_line(&grouped_line(&short, *stated, *variants)));
            }
            (texts, one_line(&line))
        }
        RowKind::Single | RowKind::Older => {
            let s = row.members.first().map_or("", |&i| list[i].as_str());
            (short_variants(s), one_line(s))
        }
    };
    let src = if sec == Sec::Constraints {
        Src::Constraints(row.members)
    } else {
        Src::Decisions(row.members)
    };
    let mut c = Cand::new(sec, (row.key, 0), texts, CandKind::Contained, true).src(src);
    c.plain = plain;
    c
}

/// The candidate of an operation row; at folded detail a row not `listed` is counted, not
/// shown, whatever the budget.
fn op_row_cand(r: &OpRow, listed: bool) -> Cand {
    let texts = if listed {
        vec![r.op.render_line()]
    } else {
        Vec::new()
    };
    Cand::new(
        Sec::Operations,
        (r.key, 0),
        texts,
        CandKind::Op(r.op.tool().to_string(), r.op.count),
        r.op.variants == 1,
    )
    .src(Src::Ops(r.members.clone()))
}

#[path = "candidates_tools.rs"]
mod tools;

/// Sections in the order they are rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Sec {
    Goal,
    Todo,
    Decisions,
    Constraints,
    Facts,
    Note(usize),
    Operations,
    UserLiterals,
    Literals,
    ToolFacts,
    ToolLiterals,
}

/// A tool's statement or literal, shared round-robin between operations.
#[derive(Debug, Clone, Copy)]
enum ToolItem {
    Statement(usize),
    Literal(usize),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum CandKind {
    Goal,
    /// A decision or constraint: skipped when the chosen goal text already contains it.
    Contained,
    Literal(usize),
    /// A statement: folded into a count when it is not chosen, skipped when the chosen goal
    /// text already says it.
    Statement(usize),
    /// An operation row: tool and runs, folded into counts when it is not chosen.
    Op(String, u64),
    Other,
}

/// The digest item a candidate renders, so what a layout leaves out can be handed on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Src {
    None,
    Goal(usize),
    Todo(usize),
    /// The decision sentences a row stands for (one, or a group of one shape).
    Decisions(Vec<usize>),
    /// The constraint sentences a row stands for.
    Constraints(Vec<usize>),
    Note(usize, usize),
    Literal(usize),
    Statement(usize),
    Ops(Vec<usize>),
}

/// One renderable item: where it goes, and its renderings, longest first.
pub(super) struct Cand {
    pub(super) sec: Sec,
    /// Order within the section.
    pub(super) key: (u64, u64),
    pub(super) texts: Vec<String>,
    pub(super) kind: CandKind,
    /// Whether its literals count as present once it is chosen.
    pub(super) scan: bool,
    /// For `Contained`: the text to look for in the goal.
    pub(super) plain: String,
    /// The candidate this one is rendered under (an operation row).
    pub(super) parent: Option<usize>,
    /// Whether it can only appear with its parent (which it then brings in).
    pub(super) needs_parent: bool,
    /// The digest item it renders.
    pub(super) src: Src,
    /// A line shown only as the parent of another candidate (a group line of tool facts).
    pub(super) only_as_parent: bool,
    /// A statement ranked with the goal: its full line is taken only while the statements
    /// after it still fit in their shortest form, so under a tight budget the older ones
    /// shrink to subject and value instead of being dropped.
    pub(super) shrinks: bool,
}

impl Cand {
    fn new(sec: Sec, key: (u64, u64), texts: Vec<String>, kind: CandKind, scan: bool) -> Self {
        Cand {
            sec,
            key,
            texts,
            kind,
            scan,
            plain: String::new(),
            parent: None,
            needs_parent: false,
            src: Src::None,
            only_as_parent: false,
            shrinks: false,
        }
    }

    fn src(mut self, src: Src) -> Self {
        self.src = src;
        self
    }
}

/// The line of a statement: `- (seq 12, user) the churn window is 45 days`, with the value it
/// replaced as a note; `prefix` is the bullet (indented under an operation).
pub(super) fn statement_line(st: &Statement, prefix: &str) -> String {
    let who = match st.origin {
        Origin::User => "user",
        Origin::Prose => "assistant",
        Origin::Tool => "tool",
    };
    let mut out = String::with_capacity(st.text.len() + 32);
    out.push_str(prefix);
    match st.seq {
        Some(seq) => out.push_str(&format!("(seq {seq}, {who}) ")),
        None => out.push_str(&format!("({who}) ")),
    }
    out.push_str(&one_line(&st.text));
    if let Some((stated, variants)) = st.recurring {
        // `grouped_line` appends the counts to the text.
        out.push_str(&grouped_line("", stated, variants));
    }
    if let Some(old) = &st.replaces {
        out.push_str(&format!(" ({REPLACES} {})", one_line(old)));
    }
    out.push('\n');
    out
}

/// A shorter line for a user's statement or a restatement under a tight budget: its subject
/// as written and its current values as quoted, `- (seq 12, user) churn window: 45 days` (see
/// [`Statement::short`]).
fn compact_line(st: &Statement, prefix: &str) -> Option<String> {
    if st.origin == Origin::Tool
        || st.kind == StatementKind::Labelled
        || st.kind == StatementKind::Row
    {
        return None;
    }
    let text = match &st.short {
        Some(t) => t.clone(),
        None => short_text(&st.text, &analyse(&st.text))?,
    };
    let short = Statement { text, ..st.clone() };
    Some(statement_line(&short, prefix))
}

/// The short form of a clause (see [`Statement::short`]) from its analysis.
pub(super) fn short_text(text: &str, a: &Analysis) -> Option<String> {
    let old = a.correction.and_then(|c| c.old);
    let values: Vec<&str> = a
        .values
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != old)
        .map(|(_, &span)| {
            let (s, e) = as_quoted(text, span);
            &text[s..e]
        })
        .collect();
    if a.subject.key.is_empty() || values.is_empty() || values.len() > 2 {
        return None;
    }
    let subject = subject_as_written(text, &a.subject.key).unwrap_or(&a.subject.key);
    Some(format!("{subject}: {}", values.join(", ")))
}

/// The words of `text` that a subject key was made of, as written: from its first key word to
/// its last ("Globex contract renews" for `globex contract renew`).
fn subject_as_written<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let lower = text.to_lowercase();
    if lower.len() != text.len() {
        // Case folding changed byte offsets; the key stands in.
        return None;
    }
    if !key.is_ascii() {
        return lower.find(key).map(|p| &text[p..p + key.len()]);
    }
    let words: Vec<&str> = key.split(' ').collect();
    let (first, last) = (words.first()?, words.last()?);
    let start = lower.find(first)?;
    let last_at = lower[start..].find(last).map(|p| start + p)?;
    let mut end = last_at + last.len();
    // The word goes on to its end ("renew" → "renews").
    end += lower[end..]
        .find(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
        .unwrap_or(lower.len() - end);
    (end - start <= 60).then(|| &text[start..end])
}

fn short_variants(s: &str) -> Vec<String> {
    let mut v = vec![item_line(s)];
    if s.chars().count() > ITEM_SHORT {
        v.push(item_line(&truncate(s, ITEM_SHORT)));
    }
    v
}
