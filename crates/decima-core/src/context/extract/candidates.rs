//! Every renderable item of a digest, in priority order: the candidates a layout chooses from,
//! with the section each goes in and the digest item it renders.

use std::collections::{HashMap, HashSet};

use super::analysis::{Analysis, analyse};
use super::facts::{REPLACED_SEP, REPLACES};
use super::operations::OpRow;
use super::statements::{RowKind, grouped_line, statement_rows};
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
        let mut out = Vec::new();
        // Tier A: goal, constraints, decisions, the user's literals.
        for (i, g) in self.goal.iter().enumerate() {
            let whole = truncate(g, GOAL_CHARS);
            let mut texts = vec![item_line(&whole)];
            for n in GOAL_SHORT {
                if g.chars().count() > n {
                    texts.push(item_line(&truncate(g, n)));
                }
            }
            out.push(
                Cand::new(Sec::Goal, (i as u64, 0), texts, CandKind::Goal, true).src(Src::Goal(i)),
            );
        }
        // Newest first; a recurring instruction is one line, and the older one-off variants of
        // a shape with many rank after the todos and recent operations.
        let mut older: Vec<Cand> = Vec::new();
        for (sec, list) in [
            (Sec::Constraints, &self.constraints),
            (Sec::Decisions, &self.decisions),
        ] {
            for row in statement_rows(list, &self.stated, &self.recurring)
                .into_iter()
                .rev()
            {
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
                let is_older = row.kind == RowKind::Older;
                let src = if sec == Sec::Constraints {
                    Src::Constraints(row.members)
                } else {
                    Src::Decisions(row.members)
                };
                let mut c = Cand::new(sec, (row.key, 0), texts, CandKind::Contained, true).src(src);
                c.plain = plain;
                if is_older {
                    older.push(c);
                } else {
                    out.push(c);
                }
            }
        }
        let newest_first = |a: &usize, b: &usize| {
            self.literals[*b]
                .last_seen
                .cmp(&self.literals[*a].last_seen)
        };
        // Values a correction replaced are not listed as if current; the statement that
        // replaced them notes them.
        let stale: HashSet<&str> = self
            .statements
            .iter()
            .filter_map(|s| s.replaces.as_deref())
            .flat_map(|r| r.split(REPLACED_SEP))
            .collect();
        let mut user: Vec<usize> = Vec::new();
        let mut prose: Vec<usize> = Vec::new();
        let mut tool: Vec<usize> = Vec::new();
        for (i, l) in self.literals.iter().enumerate() {
            if l.origin != Origin::Tool && stale.contains(l.text.as_str()) {
                continue;
            }
            match l.origin {
                Origin::User => user.push(i),
                Origin::Prose => prose.push(i),
                Origin::Tool => tool.push(i),
            }
        }
        // Statements, newest first: the user's, then the assistant's restatements, then the
        // agent's own report lines; tools' statements go with their operations below.
        let mut by_rank: [Vec<usize>; 3] = Default::default();
        let mut tool_statements: Vec<usize> = Vec::new();
        for (i, st) in self.statements.iter().enumerate() {
            match (st.origin, st.kind) {
                (Origin::User, _) => by_rank[0].push(i),
                (Origin::Prose, StatementKind::Restated) => by_rank[1].push(i),
                (Origin::Prose, _) => by_rank[2].push(i),
                (Origin::Tool, _) => tool_statements.push(i),
            }
        }
        let statement_newest_first = |a: &usize, b: &usize| {
            self.statements[*b]
                .last_seen
                .cmp(&self.statements[*a].last_seen)
        };
        for list in &mut by_rank {
            list.sort_by(statement_newest_first);
        }
        let fact = |i: usize, sec: Sec| {
            let st = &self.statements[i];
            let mut texts = vec![statement_line(st, "- ")];
            if budgeted
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
            c.shrinks = sec == Sec::Facts
                && (st.origin == Origin::User || st.kind == StatementKind::Restated);
            c
        };
        for &i in by_rank[0].iter().chain(&by_rank[1]) {
            out.push(fact(i, Sec::Facts));
        }
        user.sort_by(newest_first);
        prose.sort_by(newest_first);
        let flat_lit = |i: usize| {
            let l = &self.literals[i];
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
        };
        for &i in &user {
            out.push(flat_lit(i));
        }
        // Tier B: todos and the most recent operations.
        for (i, t) in self.todos.iter().enumerate().rev() {
            out.push(
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
        let rows = self.op_rows();
        let mut by_recency: Vec<usize> = (0..rows.len()).collect();
        by_recency.sort_by(|&a, &b| rows[b].op.last_seen.cmp(&rows[a].op.last_seen));
        let shown = match detail {
            Detail::Folded => FOLDED_OPS,
            _ => usize::MAX,
        };
        // Where each row's candidate will be, and which row each operation shape lands on.
        let mut row_at: HashMap<usize, usize> = HashMap::new();
        let mut row_of_shape: HashMap<String, usize> = HashMap::new();
        for &r in &by_recency {
            row_of_shape.entry(rows[r].shape.clone()).or_insert(r);
        }
        let row_cand = |r: &OpRow, listed: bool| {
            let texts = if listed {
                vec![r.op.render_line()]
            } else {
                // Folded detail: counted, not listed, whatever the budget.
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
        };
        let mut later_rows: Vec<(usize, Cand)> = Vec::new();
        for (rank, &r) in by_recency.iter().enumerate() {
            if rank < shown.min(RECENT_OPS) {
                row_at.insert(r, out.len());
                out.push(row_cand(&rows[r], true));
            } else {
                later_rows.push((r, row_cand(&rows[r], rank < shown)));
            }
        }
        // Tier B': the older one-off variants of decisions and constraints.
        out.append(&mut older);
        // Tier C: model-written notes, newest first.
        for (ni, note) in self.notes.iter().enumerate() {
            for (li, line) in note.lines.iter().enumerate().rev() {
                let texts = match detail {
                    Detail::Folded => vec![item_line(&truncate(line, ITEM_SHORT))],
                    _ => short_variants(line),
                };
                out.push(
                    Cand::new(Sec::Note(ni), (li as u64, 0), texts, CandKind::Other, true)
                        .src(Src::Note(ni, li)),
                );
            }
        }
        // Tier D: what the agent stated, newest first: its statements here, its bare literals
        // after the tools' statements.
        for &i in &by_rank[2] {
            out.push(fact(i, Sec::Facts));
        }
        // Tier E: what tools printed, shared fairly between operations: the newest statement
        // of every operation, then the second newest of every operation, and so on, so a noisy
        // operation repeated thousands of times cannot crowd out a command that ran once; then
        // the agent's bare literals; then the tools' bare literals, shared the same way. An
        // item is shown under its operation's row, which it brings in if needed; the rows not
        // chosen so far come after these.
        let mut sorted_statements = tool_statements.clone();
        sorted_statements.sort_by(statement_newest_first);
        let mut sorted_tool = tool.clone();
        sorted_tool.sort_by(newest_first);
        let items = sorted_statements
            .iter()
            .map(|&i| {
                let st = &self.statements[i];
                (st.group.as_deref(), st.last_seen, ToolItem::Statement(i))
            })
            .chain(sorted_tool.iter().map(|&i| {
                let l = &self.literals[i];
                (l.group.as_deref(), l.last_seen, ToolItem::Literal(i))
            }));
        // Per operation: its recency, its statements and its literals, newest first.
        let mut groups: Vec<(u64, [Vec<ToolItem>; 2])> = Vec::new();
        let mut group_at: HashMap<Option<&str>, usize> = HashMap::new();
        for (key, last_seen, item) in items {
            let g = *group_at.entry(key).or_insert_with(|| {
                groups.push((0, [Vec::new(), Vec::new()]));
                groups.len() - 1
            });
            groups[g].0 = groups[g].0.max(last_seen);
            let pass = usize::from(matches!(item, ToolItem::Literal(_)));
            groups[g].1[pass].push(item);
        }
        groups.sort_by_key(|g| std::cmp::Reverse(g.0));
        let tool_count = tool.len() + tool_statements.len() + prose.len();
        let late_base = out.len() + tool_count;
        for (j, (r, _)) in later_rows.iter().enumerate() {
            row_at.insert(*r, late_base + j);
        }
        let listed = |c: usize, out: &[Cand]| match c.checked_sub(late_base) {
            Some(j) => !later_rows[j].1.texts.is_empty(),
            None => !out[c].texts.is_empty(),
        };
        // Tool statements whose operation row is not shown go under a line naming it.
        let mut heads_seen: HashSet<&str> = HashSet::new();
        let mut pending_heads: Vec<&str> = Vec::new();
        let mut under_head: Vec<(usize, &str)> = Vec::new();
        for pass in 0..2 {
            if pass == 1 {
                for &i in &prose {
                    out.push(flat_lit(i));
                }
            }
            let deepest = groups.iter().map(|g| g.1[pass].len()).max().unwrap_or(0);
            for depth in 0..deepest {
                for g in &groups {
                    let Some(&item) = g.1[pass].get(depth) else {
                        continue;
                    };
                    let (group, last_seen) = match item {
                        ToolItem::Literal(i) => {
                            (&self.literals[i].group, self.literals[i].last_seen)
                        }
                        ToolItem::Statement(i) => {
                            (&self.statements[i].group, self.statements[i].last_seen)
                        }
                    };
                    let row = group
                        .as_ref()
                        .and_then(|s| row_of_shape.get(s))
                        .and_then(|r| row_at.get(r).map(|&c| (*r, c)))
                        .filter(|&(_, c)| listed(c, &out));
                    let cand = match (row, item) {
                        (Some((r, c)), _) => {
                            let (text, kind, src, scan) = match item {
                                ToolItem::Literal(i) => (
                                    format!("  - {}\n", one_line(&self.literals[i].text)),
                                    CandKind::Literal(i),
                                    Src::Literal(i),
                                    false,
                                ),
                                ToolItem::Statement(i) => (
                                    statement_line(&self.statements[i], "  - "),
                                    CandKind::Statement(i),
                                    Src::Statement(i),
                                    true,
                                ),
                            };
                            let mut cand = Cand::new(
                                Sec::Operations,
                                (rows[r].key, 2 + last_seen),
                                vec![text],
                                kind,
                                scan,
                            )
                            .src(src);
                            cand.parent = Some(c);
                            cand.needs_parent = true;
                            cand
                        }
                        (None, ToolItem::Literal(i)) => flat_lit(i),
                        (None, ToolItem::Statement(i)) => match group {
                            // Under a line naming its operation, so it keeps what printed it.
                            Some(g) => {
                                if heads_seen.insert(g.as_str()) {
                                    pending_heads.push(g.as_str());
                                }
                                let mut cand = Cand::new(
                                    Sec::ToolFacts,
                                    (0, 2 + last_seen),
                                    vec![statement_line(&self.statements[i], "  - ")],
                                    CandKind::Statement(i),
                                    true,
                                )
                                .src(Src::Statement(i));
                                cand.needs_parent = true;
                                under_head.push((out.len(), g.as_str()));
                                cand
                            }
                            None => {
                                // Before the groups, oldest first.
                                let mut cand = fact(i, Sec::ToolFacts);
                                cand.key = (0, last_seen);
                                cand
                            }
                        },
                    };
                    out.push(cand);
                }
            }
        }
        out.extend(later_rows.into_iter().map(|(_, c)| c));
        // The group lines, each shown only with a statement under it.
        let heads_at = out.len();
        let mut head_index: HashMap<&str, usize> = HashMap::new();
        for (k, g) in pending_heads.iter().enumerate() {
            head_index.insert(g, heads_at + k);
            let mut head = Cand::new(
                Sec::ToolFacts,
                (k as u64 + 1, 0),
                vec![format!("- {}\n", one_line(g))],
                CandKind::Other,
                false,
            );
            head.only_as_parent = true;
            out.push(head);
        }
        for (c, g) in under_head {
            if let Some(&h) = head_index.get(g) {
                out[c].key.0 = out[h].key.0;
                out[c].parent = Some(h);
            }
        }
        // Tier F: the result lines of the last operations.
        if detail == Detail::Standard {
            for &r in by_recency
                .iter()
                .filter(|&&r| rows[r].op.variants == 1 && !rows[r].op.first_lines.is_empty())
                .take(DETAILED_OPS)
            {
                let Some(&parent) = row_at.get(&r) else {
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
                out.push(cand);
            }
        }
        out
    }
}

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
