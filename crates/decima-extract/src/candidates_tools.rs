//! Tier E of the candidates: what tools printed, shared fairly between operations, each item
//! shown under its operation's row or under a line naming its operation.

use std::collections::{HashMap, HashSet};

use super::{Cand, CandKind, CandScan, OpRows, Ranked, Sec, Src, ToolItem, statement_line};
use crate::Statement;
use crate::operations::OpRow;
use crate::text::one_line;

/// Tool statements whose operation row is not shown, and the lines naming their operations
/// they go under.
#[derive(Default)]
struct Heads<'d> {
    /// The operations named so far.
    seen: HashSet<&'d str>,
    /// The lines to add, in the order first needed.
    pending: Vec<&'d str>,
    /// Each such statement's candidate and the operation it goes under.
    under: Vec<(usize, &'d str)>,
}

impl<'d> CandScan<'d> {
    /// What tools printed, shared fairly between operations: the newest statement of every
    /// operation, then the second newest of every operation, and so on, so a noisy operation
    /// repeated thousands of times cannot crowd out a command that ran once; then the agent's
    /// bare literals; then the tools' bare literals, shared the same way. An item is shown
    /// under its operation's row, which it brings in if needed; the rows not chosen so far
    /// come after these.
    pub(super) fn push_tool_items(&mut self, ops: &mut OpRows, ranked: &Ranked) {
        let groups = self.tool_groups(ranked);
        let tool_count =
            ranked.tool_literals.len() + ranked.tool_statements.len() + ranked.prose_literals.len();
        let late_base = self.out.len() + tool_count;
        for (j, (r, _)) in ops.later.iter().enumerate() {
            ops.row_at.insert(*r, late_base + j);
        }
        let mut heads = Heads::default();
        for pass in 0..2 {
            if pass == 1 {
                for &i in &ranked.prose_literals {
                    let c = self.flat_literal(i);
                    self.out.push(c);
                }
            }
            let deepest = groups.iter().map(|g| g.1[pass].len()).max().unwrap_or(0);
            for depth in 0..deepest {
                for g in &groups {
                    let Some(&item) = g.1[pass].get(depth) else {
                        continue;
                    };
                    let cand = self.tool_item(item, ops, late_base, &mut heads);
                    self.out.push(cand);
                }
            }
        }
        self.out
            .extend(std::mem::take(&mut ops.later).into_iter().map(|(_, c)| c));
        self.push_group_heads(heads);
    }

    /// Per operation: its recency, and its statements and its literals, newest first; the
    /// most recent operation first.
    fn tool_groups(&self, ranked: &Ranked) -> Vec<(u64, [Vec<ToolItem>; 2])> {
        let d = self.d;
        let items = ranked
            .tool_statements
            .iter()
            .map(|&i| {
                let st = &d.statements[i];
                (st.group.as_deref(), st.last_seen, ToolItem::Statement(i))
            })
            .chain(ranked.tool_literals.iter().map(|&i| {
                let l = &d.literals[i];
                (l.group.as_deref(), l.last_seen, ToolItem::Literal(i))
            }));
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
        groups
    }

    /// The candidate of a tool's item: under its operation's row when that row shows a line,
    /// else a flat literal, a statement under a line naming its operation, or a plain fact.
    fn tool_item(
        &self,
        item: ToolItem,
        ops: &OpRows,
        late_base: usize,
        heads: &mut Heads<'d>,
    ) -> Cand {
        let d = self.d;
        let (group, last_seen) = match item {
            ToolItem::Literal(i) => (&d.literals[i].group, d.literals[i].last_seen),
            ToolItem::Statement(i) => (&d.statements[i].group, d.statements[i].last_seen),
        };
        let row = group
            .as_ref()
            .and_then(|s| ops.row_of_shape.get(s))
            .and_then(|r| ops.row_at.get(r).map(|&c| (*r, c)))
            .filter(|&(_, c)| ops.listed(c, &self.out, late_base));
        match (row, item) {
            (Some((r, c)), _) => self.under_row(item, &ops.rows[r], c, last_seen),
            (None, ToolItem::Literal(i)) => self.flat_literal(i),
            (None, ToolItem::Statement(i)) => match group {
                // Under a line naming its operation, so it keeps what printed it.
                Some(g) => {
                    if heads.seen.insert(g.as_str()) {
                        heads.pending.push(g.as_str());
                    }
                    heads.under.push((self.out.len(), g.as_str()));
                    under_head(&d.statements[i], i, last_seen)
                }
                None => {
                    // Before the groups, oldest first.
                    let mut cand = self.fact(i, Sec::ToolFacts);
                    cand.key = (0, last_seen);
                    cand
                }
            },
        }
    }

    /// A tool's item shown under its operation's row (candidate `parent`), which it needs.
    fn under_row(&self, item: ToolItem, row: &OpRow, parent: usize, last_seen: u64) -> Cand {
        let (text, kind, src, scan) = match item {
            ToolItem::Literal(i) => (
                format!("  - {}\n", one_line(&self.d.literals[i].text)),
                CandKind::Literal(i),
                Src::Literal(i),
                false,
            ),
            ToolItem::Statement(i) => (
                statement_line(&self.d.statements[i], "  - "),
                CandKind::Statement(i),
                Src::Statement(i),
                true,
            ),
        };
        let mut cand = Cand::new(
            Sec::Operations,
            (row.key, 2 + last_seen),
            vec![text],
            kind,
            scan,
        )
        .src(src);
        cand.parent = Some(parent);
        cand.needs_parent = true;
        cand
    }

    /// The lines naming the operations of tool statements whose row is not shown, each shown
    /// only with a statement under it.
    fn push_group_heads(&mut self, heads: Heads<'_>) {
        let heads_at = self.out.len();
        let mut head_index: HashMap<&str, usize> = HashMap::new();
        for (k, g) in heads.pending.iter().enumerate() {
            head_index.insert(g, heads_at + k);
            let mut head = Cand::new(
                Sec::ToolFacts,
                (k as u64 + 1, 0),
                vec![format!("- {}\n", one_line(g))],
                CandKind::Other,
                false,
            );
            head.only_as_parent = true;
            self.out.push(head);
        }
        for (c, g) in heads.under {
            if let Some(&h) = head_index.get(g) {
                self.out[c].key.0 = self.out[h].key.0;
                self.out[c].parent = Some(h);
            }
        }
    }
}

/// A tool's statement under the line naming its operation, which it needs.
fn under_head(st: &Statement, i: usize, last_seen: u64) -> Cand {
    let mut cand = Cand::new(
        Sec::ToolFacts,
        (0, 2 + last_seen),
        vec![statement_line(st, "  - ")],
        CandKind::Statement(i),
        true,
    )
    .src(Src::Statement(i));
    cand.needs_parent = true;
    cand
}
