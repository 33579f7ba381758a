//! Appending a later digest to an earlier one.

use std::hash::BuildHasher;

use super::cues::todo_key;
use super::facts::{Facts, Home, Patch};
use super::text::{FastMap, FastSet};
use super::{Digest, Origin};

impl Digest {
    fn clock(&self) -> u64 {
        let lits = self.literals.iter().map(|l| l.last_seen).max().unwrap_or(0);
        let ops = self
            .operations
            .iter()
            .map(|o| o.last_seen)
            .max()
            .unwrap_or(0);
        let statements = self
            .statements
            .iter()
            .map(|s| s.last_seen)
            .max()
            .unwrap_or(0);
        lits.max(ops).max(statements)
    }

    /// Appends a later digest to this one: items are deduplicated, todos keep their latest
    /// state, operations and literals seen in both are combined, and the later digest's
    /// literals and operations count as more recent, as do its decisions and constraints (one
    /// stated in both moves to its later place, and counts both statements).
    pub fn merge(&mut self, later: Digest) {
        let mut merger = Merger::new(std::mem::take(self));
        merger.push(later);
        *self = merger.finish();
    }
}

/// Merges a run of digests in order, as [`Digest::merge`] one after the other would, but
/// keeps what it knows of the digest so far between them (its statements registered for
/// later ones to correct, its literals and operations by hash) instead of reading it all
/// again for each: merging the blocks of a 10k-message history is then linear in it.
pub struct Merger {
    d: Digest,
    /// The statements so far, and the clauses of the constraints and decisions, registered.
    facts: Facts,
    goals: FastSet<String>,
    todo_at: FastMap<String, usize>,
    hashes: foldhash::fast::RandomState,
    /// Operations and literals by a hash of their line or text (checked on a hit), so their
    /// texts are not copied.
    op_at: FastMap<u64, usize>,
    lit_at: FastMap<u64, usize>,
    /// The latest `last_seen` so far: the next digest's count from after it.
    clock: u64,
}

impl Merger {
    /// Starts from `first`, whose statements later digests relate to.
    pub fn new(mut first: Digest) -> Self {
        let hashes = foldhash::fast::RandomState::default();
        let mut facts = Facts::default();
        for c in &first.constraints {
            facts.add_hidden_sentence(c, Home::Constraint(c.clone()), false);
        }
        for c in &first.decisions {
            facts.add_hidden_sentence(c, Home::Decision(c.clone()), false);
        }
        let clock = first.clock();
        for st in std::mem::take(&mut first.statements) {
            facts.add_read_back(st, false);
        }
        Merger {
            goals: first.goal.iter().cloned().collect(),
            todo_at: first
                .todos
                .iter()
                .enumerate()
                .map(|(i, t)| (todo_key(t), i))
                .collect(),
            op_at: first
                .operations
                .iter()
                .enumerate()
                .map(|(i, o)| (hashes.hash_one(&o.line), i))
                .collect(),
            lit_at: first
                .literals
                .iter()
                .enumerate()
                .map(|(i, l)| (hashes.hash_one(&l.text), i))
                .collect(),
            hashes,
            facts,
            clock,
            d: first,
        }
    }

    /// Appends the next digest (see [`Digest::merge`]).
    pub fn push(&mut self, later: Digest) {
        let offset = self.clock + 1;
        let later_clock = later.clock();
        if later_clock > 0 {
            self.clock = self.clock.max(later_clock + offset);
        }
        let d = &mut self.d;
        for g in later.goal {
            if self.goals.insert(g.clone()) {
                d.goal.push(g);
            }
        }
        for t in later.todos {
            let key = todo_key(&t);
            match self.todo_at.get(&key) {
                Some(&i) => d.todos[i] = t,
                None => {
                    self.todo_at.insert(key, d.todos.len());
                    d.todos.push(t);
                }
            }
        }
        // A sentence stated in both ranges was stated as often as both say.
        let counts: Vec<(String, u64)> = {
            let mine = |s: &String| d.stated.get(s).copied().unwrap_or(1);
            let theirs = |s: &String| later.stated.get(s).copied().unwrap_or(1);
            let earlier: FastSet<&String> = d.decisions.iter().chain(&d.constraints).collect();
            later
                .decisions
                .iter()
                .chain(&later.constraints)
                .map(|s| {
                    let n = if earlier.contains(s) {
                        mine(s) + theirs(s)
                    } else {
                        theirs(s)
                    };
                    (s.clone(), n)
                })
                .filter(|&(_, n)| n > 1)
                .collect()
        };
        d.stated.extend(counts);
        d.recurring.extend(later.recurring);
        // Statements: the later ones relate to the earlier ones (and to the clauses of the
        // earlier constraints and decisions) as when they were first said, not to each other,
        // and so do the clauses of the later constraints and decisions ("不对，流失窗口应该是
        // 81天").
        self.facts.freeze();
        let mut patches: Vec<Patch> = Vec::new();
        {
            let earlier: FastSet<&String> = d.constraints.iter().chain(&d.decisions).collect();
            for c in later.constraints.iter().filter(|c| !earlier.contains(*c)) {
                patches.extend(self.facts.add_hidden_sentence(
                    c,
                    Home::Constraint(c.clone()),
                    true,
                ));
            }
            for c in later.decisions.iter().filter(|c| !earlier.contains(*c)) {
                patches.extend(
                    self.facts
                        .add_hidden_sentence(c, Home::Decision(c.clone()), true),
                );
            }
        }
        merge_restated(&mut d.decisions, later.decisions);
        merge_restated(&mut d.constraints, later.constraints);
        for mut st in later.statements {
            st.last_seen += offset;
            patches.extend(self.facts.add_read_back(st, true));
        }
        for p in patches {
            if let Some(rewritten) = d.patch(&p) {
                // The clauses of that sentence now stand in its rewritten text.
                self.facts.rehome(&p.home, &rewritten);
            }
        }
        for note in later.notes {
            match d.notes.iter_mut().find(|n| n.heading == note.heading) {
                Some(n) => merge_unique(&mut n.lines, note.lines),
                None => d.notes.push(note),
            }
        }
        for mut op in later.operations {
            op.last_seen += offset;
            let h = self.hashes.hash_one(&op.line);
            match self
                .op_at
                .get(&h)
                .copied()
                .filter(|&i| d.operations[i].line == op.line)
            {
                Some(i) => {
                    let mine = &mut d.operations[i];
                    mine.count += op.count;
                    if op.variants > 1 || mine.variants > 1 {
                        mine.variants += op.variants;
                    }
                    for (code, n) in op.exits {
                        *mine.exits.entry(code).or_default() += n;
                    }
                    if !op.first_lines.is_empty() {
                        mine.first_lines = op.first_lines;
                    }
                    mine.last_seen = op.last_seen;
                }
                None => {
                    self.op_at.insert(h, d.operations.len());
                    d.operations.push(op);
                }
            }
        }
        for (tool, n) in later.folded_ops {
            *d.folded_ops.entry(tool).or_default() += n;
        }
        for mut lit in later.literals {
            lit.last_seen += offset;
            let h = self.hashes.hash_one(&lit.text);
            match self
                .lit_at
                .get(&h)
                .copied()
                .filter(|&i| d.literals[i].text == lit.text)
            {
                Some(i) => {
                    let mine = &mut d.literals[i];
                    if lit.origin < mine.origin {
                        mine.group = lit.group;
                    } else if lit.origin == mine.origin && lit.group.is_some() {
                        mine.group = lit.group.or(mine.group.take());
                    }
                    mine.origin = mine.origin.min(lit.origin);
                    if mine.origin != Origin::Tool {
                        mine.group = None;
                    }
                    mine.last_seen = lit.last_seen;
                }
                None => {
                    self.lit_at.insert(h, d.literals.len());
                    d.literals.push(lit);
                }
            }
        }
        for (kind, n) in later.folded_literals {
            *d.folded_literals.entry(kind).or_default() += n;
        }
    }

    /// The merged digest.
    pub fn finish(mut self) -> Digest {
        self.d.statements = self.facts.into_statements();
        self.d
    }
}

impl Digest {
    /// Rewrites the sentence a correction changed: a goal that says the corrected clause, or
    /// the constraint or decision it stands in.
    pub(super) fn patch(&mut self, p: &Patch) -> Option<String> {
        let list = match &p.home {
            Home::Listed => {
                for g in &mut self.goal {
                    if g.contains(p.old.as_str()) && !g.contains(p.new.as_str()) {
                        *g = g.replacen(p.old.as_str(), &p.new, 1);
                    }
                }
                return None;
            }
            Home::Constraint(_) => &mut self.constraints,
            Home::Decision(_) => &mut self.decisions,
        };
        let (Home::Constraint(sentence) | Home::Decision(sentence)) = &p.home else {
            return None;
        };
        let item = list.iter_mut().find(|s| *s == sentence)?;
        if !item.contains(p.old.as_str()) || item.contains(p.new.as_str()) {
            return None;
        }
        let patched = item.replacen(p.old.as_str(), &p.new, 1);
        if let Some(n) = self.stated.remove(sentence) {
            self.stated.insert(patched.clone(), n);
        }
        *item = patched.clone();
        Some(patched)
    }
}

/// Appends the later items; one stated in both moves to its later place, so the list stays in
/// the order of last statement (the newest of a group of variants is the one its line shows).
fn merge_restated(list: &mut Vec<String>, later: Vec<String>) {
    let restated: FastSet<&String> = later.iter().collect();
    list.retain(|x| !restated.contains(x));
    merge_unique(list, later);
}

fn merge_unique(list: &mut Vec<String>, later: Vec<String>) {
    let mut seen: FastSet<String> = list.iter().cloned().collect();
    for x in later {
        if seen.insert(x.clone()) {
            list.push(x);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Role;
    use crate::context::extract::{Detail, at};

    /// Three blocks: facts stated in the first, corrected in the third, across a second that
    /// says something else.
    fn blocks() -> Vec<Digest> {
        let first = Digest::from_sources([
            at(1, Role::User, "Reconcile the Q3 invoices of ACME-7."),
            at(
                2,
                Role::User,
                "Never flag differences below 100 EUR. The churn window is 90 days.",
            ),
            at(
                3,
                Role::User,
                "Use the ledger export ledger-q3.csv as the reference.",
            ),
        ]);
        let second = Digest::from_continuation([
            at(4, Role::User, "The refund cap is 2,500 EUR per customer."),
            at(5, Role::Assistant, "Noted: refund cap 2,500 EUR."),
        ]);
        let third = Digest::from_continuation([
            at(6, Role::User, "Sorry, the churn window is 81 days, not 90."),
            at(
                7,
                Role::User,
                "Actually, never flag differences below 150 EUR, not 100.",
            ),
            at(8, Role::User, "The refund cap is 3,000 EUR now."),
        ]);
        vec![first, second, third]
    }

    #[test]
    fn a_run_of_merges_gives_what_merging_one_after_the_other_gives() {
        let mut one_by_one = Digest::default();
        for d in blocks() {
            one_by_one.merge(d);
        }
        let mut merger = Merger::new(Digest::default());
        for d in blocks() {
            merger.push(d);
        }
        let merged = merger.finish();
        let text = merged.render(Detail::Standard);
        assert_eq!(text, one_by_one.render(Detail::Standard));
        // And what it says is current: the corrected values, the old ones only as replaced.
        assert!(text.contains("81 days"), "{text}");
        assert!(text.contains("3,000 EUR"), "{text}");
        // (The agent's "Noted: refund cap 2,500 EUR." is a report of what it was told then,
        // and stays one.)
        let current: Vec<&str> = merged
            .statements
            .iter()
            .filter(|s| s.origin == Origin::User)
            .map(|s| s.text.as_str())
            .collect();
        assert!(
            !current
                .iter()
                .any(|s| s.contains("90 days") && !s.contains("81")),
            "{current:?}"
        );
        assert!(
            !current
                .iter()
                .any(|s| s.contains("2,500") && !s.contains("3,000")),
            "{current:?}"
        );
    }
}
