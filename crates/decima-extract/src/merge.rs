//! Appending a later digest to an earlier one.

use std::hash::BuildHasher;

use super::cues::todo_key;
use super::facts::{Facts, Home, Patch};
use super::text::{FastMap, FastSet};
use super::{Digest, Literal, Operation, Origin, Statement};

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
        let offset = self.clock() + 1;
        // A sentence stated in both ranges was stated as often as both say.
        let counts = self.stated_in_both(&later);
        merge_unique(&mut self.goal, later.goal);
        self.merge_todos(later.todos);
        self.stated.extend(counts);
        self.recurring.extend(later.recurring);
        self.merge_statements(later.constraints, later.decisions, later.statements, offset);
        for note in later.notes {
            match self.notes.iter_mut().find(|n| n.heading == note.heading) {
                Some(n) => merge_unique(&mut n.lines, note.lines),
                None => self.notes.push(note),
            }
        }
        // Operations and literals are found by a hash of their line or text (checked on a hit),
        // so the earlier digest's thousands of texts are not copied at every merge.
        let hashes = foldhash::fast::RandomState::default();
        self.merge_operations(later.operations, offset, &hashes);
        for (tool, n) in later.folded_ops {
            *self.folded_ops.entry(tool).or_default() += n;
        }
        self.merge_literals(later.literals, offset, &hashes);
        for (kind, n) in later.folded_literals {
            *self.folded_literals.entry(kind).or_default() += n;
        }
    }

    /// Appends the later todos; one with the same key as an earlier todo replaces it in place.
    fn merge_todos(&mut self, later: Vec<String>) {
        let mut todo_at: FastMap<String, usize> = self
            .todos
            .iter()
            .enumerate()
            .map(|(i, t)| (todo_key(t), i))
            .collect();
        for t in later {
            let key = todo_key(&t);
            match todo_at.get(&key) {
                Some(&i) => self.todos[i] = t,
                None => {
                    todo_at.insert(key, self.todos.len());
                    self.todos.push(t);
                }
            }
        }
    }

    /// How often each later decision and constraint sentence was stated, counting both ranges
    /// for one stated in both; only those stated more than once.
    fn stated_in_both(&self, later: &Digest) -> Vec<(String, u64)> {
        let mine = |s: &String| self.stated.get(s).copied().unwrap_or(1);
        let theirs = |s: &String| later.stated.get(s).copied().unwrap_or(1);
        let earlier: FastSet<&String> = self.decisions.iter().chain(&self.constraints).collect();
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
    }

    /// Merges the statements, constraints and decisions: the later statements relate to the
    /// earlier ones (and to the clauses of the earlier constraints and decisions) as when they
    /// were first said, and so do the clauses of the later constraints and decisions ("不对，
    /// 流失窗口应该是 81天"); the sentences they correct are patched.
    fn merge_statements(
        &mut self,
        constraints: Vec<String>,
        decisions: Vec<String>,
        statements: Vec<Statement>,
        offset: u64,
    ) {
        let mut facts = self.earlier_facts();
        let mut patches = self.relate_new_sentences(&mut facts, &constraints, &decisions);
        merge_restated(&mut self.decisions, decisions);
        merge_restated(&mut self.constraints, constraints);
        for mut st in statements {
            st.last_seen += offset;
            patches.extend(facts.add_read_back(st, true));
        }
        self.statements = facts.into_statements();
        for p in patches {
            self.patch(p);
        }
    }

    /// A registry of this digest's statements and the clauses of its constraints and
    /// decisions (taking its statements out), frozen so they do not relate to each other again.
    fn earlier_facts(&mut self) -> Facts {
        let mut facts = Facts::default();
        for c in &self.constraints {
            facts.add_hidden_sentence(c, Home::Constraint(c.clone()), false);
        }
        for c in &self.decisions {
            facts.add_hidden_sentence(c, Home::Decision(c.clone()), false);
        }
        for st in std::mem::take(&mut self.statements) {
            facts.add_read_back(st, false);
        }
        facts.freeze();
        facts
    }

    /// Registers the clauses of the later constraints and decisions not stated here before,
    /// relating them to the earlier statements; returns the sentences they correct.
    fn relate_new_sentences(
        &self,
        facts: &mut Facts,
        constraints: &[String],
        decisions: &[String],
    ) -> Vec<Patch> {
        let earlier: FastSet<&String> = self.constraints.iter().chain(&self.decisions).collect();
        let mut patches: Vec<Patch> = Vec::new();
        for c in constraints.iter().filter(|c| !earlier.contains(*c)) {
            patches.extend(facts.add_hidden_sentence(c, Home::Constraint(c.clone()), true));
        }
        for c in decisions.iter().filter(|c| !earlier.contains(*c)) {
            patches.extend(facts.add_hidden_sentence(c, Home::Decision(c.clone()), true));
        }
        patches
    }

    /// Appends the later operations, as more recent by `offset`; one run in both is combined.
    fn merge_operations(
        &mut self,
        later: Vec<Operation>,
        offset: u64,
        hashes: &foldhash::fast::RandomState,
    ) {
        let mut op_at: FastMap<u64, usize> = self
            .operations
            .iter()
            .enumerate()
            .map(|(i, o)| (hashes.hash_one(&o.line), i))
            .collect();
        for mut op in later {
            op.last_seen += offset;
            let h = hashes.hash_one(&op.line);
            match op_at
                .get(&h)
                .copied()
                .filter(|&i| self.operations[i].line == op.line)
            {
                Some(i) => combine_operation(&mut self.operations[i], op),
                None => {
                    op_at.insert(h, self.operations.len());
                    self.operations.push(op);
                }
            }
        }
    }

    /// Appends the later literals, as more recent by `offset`; one seen in both is combined.
    fn merge_literals(
        &mut self,
        later: Vec<Literal>,
        offset: u64,
        hashes: &foldhash::fast::RandomState,
    ) {
        let mut lit_at: FastMap<u64, usize> = self
            .literals
            .iter()
            .enumerate()
            .map(|(i, l)| (hashes.hash_one(&l.text), i))
            .collect();
        for mut lit in later {
            lit.last_seen += offset;
            let h = hashes.hash_one(&lit.text);
            match lit_at
                .get(&h)
                .copied()
                .filter(|&i| self.literals[i].text == lit.text)
            {
                Some(i) => combine_literal(&mut self.literals[i], lit),
                None => {
                    lit_at.insert(h, self.literals.len());
                    self.literals.push(lit);
                }
            }
        }
    }
}

/// Adds a later run of an operation to the earlier one: counts, variants and exit codes add
/// up, and the later result lines and time win.
fn combine_operation(mine: &mut Operation, op: Operation) {
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

/// Adds a later sighting of a literal to the earlier one: the most trusted origin wins (a
/// tool's literal keeps the operation that printed it), and the later time.
fn combine_literal(mine: &mut Literal, lit: Literal) {
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

impl Digest {
    /// Rewrites the sentence a correction changed: a goal that says the corrected clause, or
    /// the constraint or decision it stands in.
    pub(super) fn patch(&mut self, p: Patch) {
        let list = match &p.home {
            Home::Listed => {
                for g in &mut self.goal {
                    if g.contains(p.old.as_str()) && !g.contains(p.new.as_str()) {
                        *g = g.replacen(p.old.as_str(), &p.new, 1);
                    }
                }
                return;
            }
            Home::Constraint(_) => &mut self.constraints,
            Home::Decision(_) => &mut self.decisions,
        };
        let (Home::Constraint(sentence) | Home::Decision(sentence)) = &p.home else {
            return;
        };
        if let Some(item) = list.iter_mut().find(|s| *s == sentence)
            && item.contains(p.old.as_str())
            && !item.contains(p.new.as_str())
        {
            let patched = item.replacen(p.old.as_str(), &p.new, 1);
            if let Some(n) = self.stated.remove(sentence) {
                self.stated.insert(patched.clone(), n);
            }
            *item = patched;
        }
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
