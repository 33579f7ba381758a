//! Extracting a digest from history in one pass: the goal, todos, decisions, the user's
//! constraints, statements, tool operations and every exact literal.

use std::collections::BTreeMap;

use super::analysis::{analyse, analyse_values};
use super::clauses::{clause_text, clauses, subject_in};
use super::copula::copula_value;
use super::corrections::{Correction, add_text_correction, correction, marks_alternative};
use super::cues::Cues;
use super::facts::{Facts, Home, Patch};
use super::labels::{Labelled, read_output};
use super::literals::{Literal, LiteralKind, Origin, scan_literals};
use super::operations::{MAX_VARIANT_LINES, exit_code, key_argument, shape_of};
use super::restatements::{opens_list, strip_list_marker};
use super::sentence_reading::{WHOLE_SENTENCE_CHARS, literals_in, one_line_answer, patch_list};
use super::text::{FastMap, FastSet, first_lines, prefix_bytes, truncate};
use super::values::{
    Span, might_state, might_state_spaced, new_value_only, value_spans, widen_to_phrase,
};
use super::{Digest, LINE_CHARS, Operation, Source, Statement, StatementKind};
use crate::{Speaker, ToolCallText};

const FIRST_LINES: usize = 3;

/// Sentences kept as decisions or constraints are cut here.
const SENTENCE_CHARS: usize = 600;

/// Only this much of a tool result is searched for literals, exit codes and labels.
const TOOL_SCAN_BYTES: usize = 4_096;

/// A "sentence" longer than this (a pasted blob without punctuation) is kept for its literals,
/// not read for statements.
const MAX_STATEMENT_SENTENCE: usize = 4_000;

/// The label of a command's one-line answer.
const OUTPUT: &str = "output";

impl Digest {
    /// Extracts a digest from history in seq order, starting at the conversation's beginning:
    /// the first user message is the goal.
    pub fn from_sources<'a, C: ToolCallText + 'a>(
        sources: impl IntoIterator<Item = Source<'a, C>>,
    ) -> Digest {
        Builder::new(true).run(sources)
    }

    /// Extracts a digest from a later range of history: only a user message that says it is a
    /// goal ("Goal: ...", "目标：...") becomes one.
    pub fn from_continuation<'a, C: ToolCallText + 'a>(
        sources: impl IntoIterator<Item = Source<'a, C>>,
    ) -> Digest {
        Builder::new(false).run(sources)
    }
}

/// Builds a digest from sources.
struct Builder {
    d: Digest,
    starts_conversation: bool,
    goal_taken: bool,
    clock: u64,
    seen_goal: FastSet<String>,
    /// Each decision and constraint kept, with when it was last stated (see `statements`).
    seen_decisions: FastMap<String, u64>,
    seen_constraints: FastMap<String, u64>,
    /// Counts decision and constraint statements, so each has a distinct time.
    statements: u64,
    todo_at: FastMap<String, usize>,
    op_at: FastMap<String, usize>,
    calls: FastMap<String, usize>,
    lit_at: FastMap<String, usize>,
    /// The shape of each operation, computed once.
    op_shapes: Vec<String>,
    /// The statements, with what each replaced.
    facts: Facts,
    /// How many distinct commands each operation shape stands for.
    shape_variants: FastMap<String, u64>,
    /// Per sentence said (by hash, with whether the user said it): its cues, and whether it
    /// was found to say nothing else worth reading.
    memo: FastMap<u64, (Cues, bool)>,
    /// The seq of the source being read.
    seq: Option<i64>,
    /// The subject a correction named in the sentence before the one being read, which states
    /// its value ("the refund window I gave you was the draft figure. the signed-off one is 21
    /// days").
    named: Option<String>,
}

impl Builder {
    fn new(starts_conversation: bool) -> Self {
        Builder {
            d: Digest::default(),
            starts_conversation,
            goal_taken: false,
            clock: 0,
            seen_goal: FastSet::default(),
            seen_decisions: FastMap::default(),
            seen_constraints: FastMap::default(),
            statements: 0,
            todo_at: FastMap::default(),
            op_at: FastMap::default(),
            calls: FastMap::default(),
            lit_at: FastMap::default(),
            op_shapes: Vec::new(),
            facts: Facts::default(),
            shape_variants: FastMap::default(),
            memo: FastMap::default(),
            seq: None,
            named: None,
        }
    }

    fn run<'a, C: ToolCallText + 'a>(
        mut self,
        sources: impl IntoIterator<Item = Source<'a, C>>,
    ) -> Digest {
        for s in sources {
            self.clock += 1;
            self.seq = s.seq;
            match s.role {
                Speaker::Tool => self.tool_result(s),
                role => {
                    self.prose(role, s.content);
                    for call in s.tool_calls {
                        self.tool_call(call);
                    }
                }
            }
        }
        // In the order of their last statement: an instruction stated again is current again,
        // and the newest of a group of variants is the one its line shows.
        let (decided, constrained) = (&self.seen_decisions, &self.seen_constraints);
        self.d
            .decisions
            .sort_by_key(|s| decided.get(s).copied().unwrap_or(0));
        self.d
            .constraints
            .sort_by_key(|s| constrained.get(s).copied().unwrap_or(0));
        // A one-line answer is kept for commands run in a few variants; for a command polled
        // in many (`wc -l part-N.csv`), its answers are what the literals and counts say.
        let variants = &self.shape_variants;
        let output = format!("{OUTPUT}: ");
        self.d.statements = std::mem::take(&mut self.facts)
            .into_statements()
            .into_iter()
            .filter(|s| {
                !s.text.starts_with(&output)
                    || s.group
                        .as_ref()
                        .and_then(|g| variants.get(g))
                        .is_none_or(|&n| n <= MAX_VARIANT_LINES)
            })
            .collect();
        self.d
    }

    fn tool_result<C>(&mut self, s: Source<'_, C>) {
        let head = prefix_bytes(s.content, TOOL_SCAN_BYTES);
        let op = s.tool_call_id.and_then(|id| self.calls.get(id)).copied();
        if let Some(i) = op
            && let Some(o) = self.d.operations.get_mut(i)
        {
            if let Some(code) = exit_code(head) {
                *o.exits.entry(code).or_default() += 1;
            }
            o.first_lines = first_lines(head, FIRST_LINES)
                .into_iter()
                .map(|l| truncate(l, LINE_CHARS))
                .collect();
        }
        let group = op.and_then(|i| self.op_shapes.get(i).cloned());
        let mut literals = 0usize;
        scan_literals(head, false, &mut |t, k| {
            literals += 1;
            self.literal(t, k, Origin::Tool, group.as_deref());
        });
        // Labels with their values and table rows; the same label of the same operation is
        // replaced by its newest value.
        let scope = op.map_or_else(|| "tool".to_string(), |i| i.to_string());
        let facts = read_output(head);
        // Only for a command run in a few variants (see `run`), and with a literal in it.
        let few = group
            .as_ref()
            .and_then(|g| self.shape_variants.get(g))
            .is_none_or(|&n| n <= MAX_VARIANT_LINES);
        if facts.is_empty()
            && op.is_some()
            && few
            && literals > 0
            && let Some(line) = one_line_answer(head)
        {
            // A command's one-line answer ("Python 3.11.9", a commit and its date) is its
            // value: run again, the new answer replaces the old, which its note keeps.
            let l = Labelled {
                key: OUTPUT.to_string(),
                text: format!("{OUTPUT}: {line}"),
                kind: StatementKind::Labelled,
            };
            self.labelled(l, Origin::Tool, group, &scope);
            return;
        }
        for l in facts {
            self.labelled(l, Origin::Tool, group.clone(), &scope);
        }
    }

    fn labelled(&mut self, l: Labelled, origin: Origin, group: Option<String>, scope: &str) {
        let st = Statement {
            group,
            ..self.statement(origin, l.kind, l.text)
        };
        self.facts
            .add_labelled(st, format!("{scope}\u{0}{}", l.key));
    }

    fn tool_call(&mut self, call: &impl ToolCallText) {
        let line = format!("{} {}", call.name(), key_argument(call.arguments()));
        let i = match self.op_at.get(&line) {
            Some(&i) => {
                let o = &mut self.d.operations[i];
                o.count += 1;
                o.last_seen = self.clock;
                i
            }
            None => {
                let i = self.d.operations.len();
                self.op_at.insert(line.clone(), i);
                self.d.operations.push(Operation {
                    line: line.clone(),
                    count: 1,
                    variants: 1,
                    exits: BTreeMap::new(),
                    first_lines: Vec::new(),
                    last_seen: self.clock,
                });
                let shape = shape_of(&line);
                *self.shape_variants.entry(shape.clone()).or_default() += 1;
                self.op_shapes.push(shape);
                i
            }
        };
        self.calls.insert(call.id().to_owned(), i);
        let group = self.op_shapes.get(i).cloned();
        scan_literals(&line, false, &mut |t, k| {
            self.literal(t, k, Origin::Tool, group.as_deref());
        });
    }

    /// The user's clauses that state a value, each a statement (or, inside a constraint or
    /// decision, a clause a later correction can patch there).
    /// Returns whether the sentence stated a value (so a correction that names its subject in
    /// one sentence and its value in the next can be read as one); chatter around a bare number
    /// ("in meetings till 2") states none.
    fn user_statements(&mut self, sentence: &str, inner: &[Span], home: Home) -> bool {
        if sentence.len() > MAX_STATEMENT_SENTENCE
            || sentence.ends_with('?')
            || sentence.ends_with('？')
        {
            return true;
        }
        if !might_state(sentence) && !marks_alternative(sentence) {
            return false;
        }
        let mut values = value_spans(sentence, inner);
        let mut cue = None;
        let mut cue_known = false;
        let mut cue_of = |values: &[Span]| {
            if !cue_known {
                cue = correction(sentence, values);
                cue_known = true;
            }
            cue
        };
        // A correction in words ("sorry, it's the median, not the mean").
        // "X, not Y" says by itself that X replaces Y.
        add_text_correction(sentence, &mut values);
        let corrects = cue_of(&values).is_some();
        // A word for a value ("the output format should be parquet", "报告币种是欧元") in a
        // part of the sentence that states no other value, when the subject names something.
        let mut part_start = 0;
        for part in sentence.split_inclusive([',', ';', '，', '；']) {
            let part_end = part_start + part.len();
            let has_value = values.iter().any(|&(s, e)| s < part_end && e > part_start);
            if !has_value
                && let Some((s, e)) =
                    copula_value(part).or_else(|| corrects.then(|| new_value_only(part)).flatten())
                && (subject_in(part, &[(s, e)]).specific || corrects)
            {
                values.push((part_start + s, part_start + e));
            }
            part_start = part_end;
        }
        if values.is_empty() {
            return false;
        }
        values.sort_unstable();
        widen_to_phrase(sentence, &mut values, corrects);
        let mut added = false;
        for c in clauses(sentence, &values) {
            if c.values.is_empty() {
                continue;
            }
            let text = clause_text(sentence, &c);
            let mut analysis = if text.len() == c.end - c.start {
                let rel: Vec<Span> = c
                    .values
                    .iter()
                    .map(|&(s, e)| (s - c.start, e - c.start))
                    .collect();
                analyse_values(&text, rel)
            } else {
                analyse(&text)
            };
            // A bare number not joined to a subject by a linking word is chatter ("back in 10",
            // "in meetings till 2"), unless it corrects something.
            let bare = |&(s, e): &Span| {
                text[s..e]
                    .bytes()
                    .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b',' | b':' | b'/' | b'-'))
            };
            if let Some(named) = &self.named {
                // The value of a correction whose subject the sentence before named.
                analysis.subject.key.clone_from(named);
                analysis.subject.specific = true;
                analysis.subject.linked = true;
                analysis.correction.get_or_insert(Correction {
                    strong: true,
                    old: None,
                });
            }
            if analysis.correction.is_none()
                && !analysis.subject.linked
                && analysis.values.iter().all(bare)
            {
                continue;
            }
            // "in meetings till 2, hmm no, the first cohort I gave you was the draft figure":
            // the correction after a bare number is about a subject named after it.
            if self.named.is_none()
                && analysis.values.iter().all(bare)
                && let Some(&(_, last)) = c.values.last()
                && correction(&sentence[last..], &[]).is_some_and(|c| c.strong)
                && self.facts.subject_named_in(&sentence[last..]).is_some()
            {
                continue;
            }
            added = true;
            let st = self.statement(Origin::User, StatementKind::Stated, text.into_owned());
            let patches = self.facts.add_clause(st, &analysis, home.clone());
            self.apply(patches);
        }
        added
    }

    /// An assistant clause that states a literal with inner spaces or a name ("the vendor
    /// contact is Dana Whitfield, +49 30 086659 84"): the value would be cut or lose what it is
    /// without its clause.
    fn assistant_statements(&mut self, sentence: &str, at: usize, lits: &[Span]) -> bool {
        if sentence.len() > MAX_STATEMENT_SENTENCE || !might_state_spaced(sentence) {
            return false;
        }
        let inner = literals_in(lits, at, sentence.len());
        let values = value_spans(sentence, &inner);
        // Words joined by spaces, not a number and its unit ("20.3 min").
        let spaced = |&(s, e): &Span| {
            let v = &sentence[s..e];
            v.contains(' ')
                && !(v.split(' ').count() == 2
                    && v.starts_with(|c: char| c.is_ascii_digit() || "€$£¥".contains(c)))
        };
        if !values.iter().any(spaced) {
            return false;
        }
        // A short sentence is one statement: what the value is ("the vendor's account manager:
        // Dana Whitfield, phone +33 1 72 91 77 33") may sit in the clause before it.
        let texts: Vec<String> = if sentence.chars().count() <= WHOLE_SENTENCE_CHARS {
            vec![sentence.to_string()]
        } else {
            clauses(sentence, &values)
                .iter()
                .filter(|c| c.values.iter().any(spaced))
                .map(|c| clause_text(sentence, c).into_owned())
                .collect()
        };
        for text in texts {
            let analysis = analyse(&text);
            let st = self.statement(Origin::Prose, StatementKind::Stated, text);
            let patches = self.facts.add_clause(st, &analysis, Home::Listed);
            self.apply(patches);
        }
        true
    }

    /// An assistant sentence that restates what the user wants.
    fn restatement(&mut self, sentence: &str) {
        let sentence = strip_list_marker(sentence);
        let text = if sentence.len() > MAX_STATEMENT_SENTENCE {
            truncate(sentence, SENTENCE_CHARS)
        } else {
            sentence.to_string()
        };
        let analysis = analyse(&text);
        if opens_list(&text) && analysis.values.is_empty() {
            // "Here's what I'm working from:" says nothing its items do not.
            return;
        }
        let st = self.statement(Origin::Prose, StatementKind::Restated, text);
        let patches = self.facts.add_clause(st, &analysis, Home::Listed);
        self.apply(patches);
    }

    /// A statement of the message being read, said now.
    fn statement(&self, origin: Origin, kind: StatementKind, text: String) -> Statement {
        Statement {
            seq: self.seq,
            last_seen: self.clock,
            ..Statement::new(origin, kind, text)
        }
    }

    /// Rewrites the goal, constraint or decision sentences a correction changed.
    fn apply(&mut self, patches: Vec<Patch>) {
        for p in patches {
            match p.home {
                Home::Listed => {
                    for g in &mut self.d.goal {
                        if g.contains(p.old.as_str()) && !g.contains(p.new.as_str()) {
                            *g = g.replacen(p.old.as_str(), &p.new, 1);
                        }
                    }
                }
                Home::Constraint(sentence) => {
                    patch_list(
                        &mut self.d.constraints,
                        &mut self.seen_constraints,
                        &mut self.d.stated,
                        &sentence,
                        &p.old,
                        &p.new,
                    );
                }
                Home::Decision(sentence) => {
                    patch_list(
                        &mut self.d.decisions,
                        &mut self.seen_decisions,
                        &mut self.d.stated,
                        &sentence,
                        &p.old,
                        &p.new,
                    );
                }
            }
        }
    }

    fn literal(&mut self, text: &str, kind: LiteralKind, origin: Origin, group: Option<&str>) {
        match self.lit_at.get(text) {
            Some(&i) => {
                let l = &mut self.d.literals[i];
                l.last_seen = self.clock;
                if origin < l.origin {
                    l.origin = origin;
                    l.group = None;
                } else if origin == Origin::Tool && l.origin == Origin::Tool {
                    // Rendered under the operation that printed it last.
                    l.group = group.map(str::to_string);
                }
            }
            None => {
                self.lit_at.insert(text.to_string(), self.d.literals.len());
                self.d.literals.push(Literal {
                    text: text.to_string(),
                    kind,
                    origin,
                    last_seen: self.clock,
                    group: if origin == Origin::Tool {
                        group.map(str::to_string)
                    } else {
                        None
                    },
                });
            }
        }
    }
}

#[path = "builder_prose.rs"]
mod prose;

#[cfg(test)]
#[path = "builder_tests.rs"]
mod tests;
