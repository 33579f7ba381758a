//! The `extract` strategy: a summary written by rules, without an LLM, in English and Chinese.
//! A crate of its own so that `decima-core` stays the domain: this one reads text and knows
//! nothing of conversations, stores or models beyond the few fields of a message it reads
//! ([`Source`]) and a way to count tokens ([`CountTokens`]), both given by its caller.
//!
//! It keeps what an agent cannot afford to lose: the goal (the whole message), the todo state,
//! the decisions, the user's constraints (an instruction that recurs with only its numbers
//! changed is kept once, the newest, with counts), statements (a fact with what it is about:
//! the user's clause that states a value, an assistant's restatement of what the user wants, a
//! tool's `label: value`, a table row with its headers, each with the seq it was said at; a
//! correction replaces the value it corrects), tool digests (distinct commands grouped with
//! counts and exit codes) and the exact literals people paste (numbers with decimals or units,
//! hosts and ports, URLs, e-mail addresses, hashes, versions, dates and times, ticket ids, quoted
//! and backticked tokens, paths, IBANs, phone numbers and amounts written with spaces). The
//! output has fixed section headings and parses back into a [`Digest`], which is how summaries
//! of summaries keep what they fold; model-written summaries parse too, their unknown sections
//! kept as notes.
//!
//! Rendering fills a token budget by priority (see [`Digest::render_budgeted`]): the goal,
//! constraints, decisions, the user's statements and the assistant's restatements, and the
//! user's literals no statement carries first, then todos and recent operations, the older
//! variants of decisions and constraints stated in many variants, notes, the other statements
//! and literals newest first, and the remaining detail. What does not fit is folded into counts
//! ("shell×12", "path×30", "statement×4"), never silently dropped.

// History → digest (`builder`, with `cues` for sentences and `literals`/`classify`/`spaced` for
// exact tokens, `operations` for tool calls); facts → statements (`values` finds the values of a
// sentence, `clauses` cuts it into clauses and names their subjects, `corrections` and
// `restatements` read the cues, `labels`, `tables` and `blocks` read tool output and code,
// `facts` keeps the current statement of each subject); digest → text (`candidates` in priority
// order, laid out by `render`, with `statements` grouping decisions and constraints that recur
// with small differences); text → digest (`parse`); digest + digest (`merge`); `text` has string
// helpers.
mod analysis;
mod blocks;
mod builder;
mod candidates;
mod classify;
mod clauses;
mod copula;
mod corrections;
mod cues;
mod facts;
mod fitting;
mod labels;
mod literals;
mod merge;
mod operations;
mod parse;
mod render;
mod restatements;
mod sentence_reading;
mod spaced;
#[cfg(test)]
mod statement_tests;
mod statements;
mod subject_words;
mod tables;
mod text;
mod values;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

pub use literals::{Literal, LiteralKind, MONTHS, Origin};

/// Who said a piece of history, as far as extraction cares: constraints are only taken from
/// the user, whose literals are kept first; a tool's text is output, read for its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Speaker {
    /// Instructions from the operator or preset.
    System,
    /// The analyst.
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

/// The fields of a tool call extraction reads, so that a caller's own call type serves as is.
pub trait ToolCallText {
    /// The call's id, which its result names.
    fn id(&self) -> &str;
    /// The tool's name.
    fn name(&self) -> &str;
    /// The arguments, as the model wrote them.
    fn arguments(&self) -> &str;
}

/// A tool call of extraction's own, for callers that have no call type of theirs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolCall {
    /// The call's id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as JSON text.
    pub arguments: String,
}

impl ToolCallText for ToolCall {
    fn id(&self) -> &str {
        &self.id
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn arguments(&self) -> &str {
        &self.arguments
    }
}

/// Counts a text's tokens the way the model will: the budgets a digest is rendered to are in
/// the caller's tokens.
pub trait CountTokens {
    /// Tokens in `text`.
    fn count_text(&self, text: &str) -> u32;

    /// The fixed framing cost of one chat message, which a summary's message also pays.
    fn message_overhead(&self) -> u32 {
        4
    }
}

/// One piece of history to summarise: a message, or a step record dressed as one. `C` is the
/// caller's tool call type.
#[derive(Debug)]
pub struct Source<'a, C = ToolCall> {
    /// Who said it; constraints are only taken from the user, and the user's literals are kept
    /// before any other.
    pub role: Speaker,
    /// The text.
    pub content: &'a str,
    /// Tool calls, which become operation digests.
    pub tool_calls: &'a [C],
    /// For tool results: the call they answer, so exit code and first lines join its digest.
    pub tool_call_id: Option<&'a str>,
    /// The message's seq, which the statements taken from it cite; step records have none.
    pub seq: Option<i64>,
}

impl<C> Clone for Source<'_, C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C> Copy for Source<'_, C> {}

impl<'a> Source<'a> {
    /// Text without calls: a step record, or a message read for its words alone.
    pub fn text(role: Speaker, content: &'a str) -> Self {
        Source {
            role,
            content,
            tool_calls: &[],
            tool_call_id: None,
            seq: None,
        }
    }
}

/// What a statement is, which decides where it ranks when the budget is short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StatementKind {
    /// A clause of the user's that states a value ("the churn window is 45 days").
    Stated,
    /// An assistant sentence that restates what the user wants ("to confirm, you want …").
    Restated,
    /// A `label: value` pair from a tool's output, a code block or a report line.
    Labelled,
    /// A table row with its column headers.
    Row,
}

/// A fact with what it is about: the subject and the value stay together on one line, with the
/// seq of the message that said it, so a reader can tell what a number measures and which of
/// two values is current.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// The seq of the message that stated it (for a correction, the correction's); none for
    /// step records.
    pub seq: Option<i64>,
    /// Who stated it: the user, the assistant (`Prose`) or a tool.
    pub origin: Origin,
    /// What kind of statement it is.
    pub kind: StatementKind,
    /// The statement: the clause as said, `label: value`, or `key: header cell; header cell`
    /// for a table row. A correction that does not name its subject ("sorry, make that 15") is
    /// the corrected statement with the new value in place of the old.
    pub text: String,
    /// The value this statement replaced, when it corrects or updates an earlier statement of
    /// the same subject: rendered as a note, so the old value is never presented as current.
    pub replaces: Option<String>,
    /// For an instruction the user repeats with only its numbers changed, each variant again
    /// and again ("Continue with batch 7"): how many times its shape was stated and in how many
    /// variants; this statement is the newest, the only current one.
    pub recurring: Option<(u64, u64)>,
    /// The statement shortened to its subject as written and its current values (`churn
    /// window: 45 days`), for a tight budget; none when it names no subject or lists more than
    /// two values. Made with the statement; a statement read back gets it when rendered.
    pub short: Option<String>,
    /// For a statement a tool printed: the shape of its operation (see
    /// [`Operation::line`]), under which it is rendered.
    pub group: Option<String>,
    /// When it was last stated (larger is more recent).
    pub last_seen: u64,
}

impl Statement {
    /// A statement as first read: no seq or time yet, nothing replaced, no note, no group.
    pub(crate) fn new(origin: Origin, kind: StatementKind, text: String) -> Statement {
        Statement {
            seq: None,
            origin,
            kind,
            text,
            replaces: None,
            recurring: None,
            short: None,
            group: None,
            last_seen: 0,
        }
    }
}

/// How much detail a rendered digest keeps at most. A budget can always cut it further (by
/// priority); a deeper detail is shorter even without one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Detail {
    /// Standard compression: everything, and the first lines of the last 3 operations.
    Standard,
    /// Deep compression: one line per distinct operation, no result lines.
    Deep,
    /// Folded again: the most recent operations only (the rest as counts per tool), notes cut
    /// to their first 200 characters.
    Folded,
}

/// Model-written content under a heading the extract strategy does not use itself (e.g. the
/// "Completed work" and "Next step" sections of an `llm` summary), kept when folding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// The heading as written.
    pub heading: String,
    /// Its lines, bullets removed, in order.
    pub lines: Vec<String>,
}

/// One distinct tool operation, or a group of near-identical ones, with how often it ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    /// Tool name and key argument, e.g. `shell cmd=wc -l /data/a.csv`; for a group of
    /// near-identical commands, the shared shape with `*` where they differ.
    pub line: String,
    /// How many times it ran.
    pub count: u64,
    /// How many distinct commands the line stands for (1 for an exact command).
    pub variants: u64,
    /// Exit codes seen, with how many runs reported each.
    pub exits: BTreeMap<String, u64>,
    /// The first lines of the latest result.
    pub first_lines: Vec<String>,
    /// When it last ran (larger is more recent).
    pub last_seen: u64,
}

/// What the extract strategy keeps from a range of history, before it is rendered as text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Digest {
    /// Goal statements: the whole opening user message, and any later "Goal: ..." message.
    pub goal: Vec<String>,
    /// Todo items, latest state of each.
    pub todos: Vec<String>,
    /// Decision sentences, in the order they were last stated (a sentence stated again moves
    /// to the end), so the newest of a recurring instruction is the last. An item may be a
    /// recurring instruction's line, `<newest> (×S, newest of V variants)`, parsed back from a
    /// summary.
    pub decisions: Vec<String>,
    /// The user's constraint sentences, ordered and grouped like `decisions`.
    pub constraints: Vec<String>,
    /// How many times a decision or constraint sentence was stated, for those stated more than
    /// once: a shape whose variants are stated again and again is a recurring instruction, of
    /// which only the newest is current, rather than a list of facts.
    pub stated: BTreeMap<String, u64>,
    /// Shapes of decisions and constraints that earlier summaries show as recurring
    /// instructions (see [`Digest::recurring_from`]): new variants of one are more of the same
    /// instruction, even in a range too short to see it recur.
    pub recurring: BTreeSet<String>,
    /// Model-written sections the extract strategy has no heading for.
    pub notes: Vec<Note>,
    /// Distinct tool operations, in order of first run.
    pub operations: Vec<Operation>,
    /// Operations already folded into counts, per tool.
    pub folded_ops: BTreeMap<String, u64>,
    /// The current statements, in the order they were made; a statement another corrected or
    /// updated is gone, its value kept as the newer one's [`Statement::replaces`].
    pub statements: Vec<Statement>,
    /// Every exact literal seen, in first-seen order.
    pub literals: Vec<Literal>,
    /// Literals already folded into counts, per kind.
    pub folded_literals: BTreeMap<String, u64>,
}

pub(crate) const LINE_CHARS: usize = 160;
/// The goal message is kept whole up to this many characters (its literals are kept anyway).
pub(crate) const GOAL_CHARS: usize = 6_000;

impl Digest {
    /// Takes note of the recurring instructions an earlier summary of the same conversation
    /// shows, so that a new range going through a few more variants of one (a user saying
    /// "Continue with batch N" again) renders them as one line with the newest, not one line
    /// per variant.
    pub fn recurring_from(&mut self, earlier_summary: &str) {
        self.recurring
            .extend(statements::recurring_shapes(earlier_summary));
    }

    /// The bytes of text the digest holds (goal, decisions, constraints, statements, literals,
    /// notes, operation lines): a cheap lower bound of its rendering's size, so a caller can
    /// tell a digest far beyond a budget without rendering it.
    pub fn text_bytes(&self) -> usize {
        let lists = [&self.goal, &self.todos, &self.decisions, &self.constraints];
        lists
            .iter()
            .flat_map(|l| l.iter())
            .map(String::len)
            .chain(self.statements.iter().map(|s| s.text.len()))
            .chain(self.literals.iter().map(|l| l.text.len()))
            .chain(
                self.notes
                    .iter()
                    .flat_map(|n| n.lines.iter().map(String::len)),
            )
            .chain(self.operations.iter().map(|o| o.line.len()))
            .sum()
    }

    /// The literals a model-written summary must carry, in first-seen order: all those the
    /// user or the agent stated, and the newest few each tool operation printed.
    pub fn literal_texts(&self) -> Vec<String> {
        let mut per_group: HashMap<Option<&str>, Vec<(u64, usize)>> = HashMap::new();
        for (i, l) in self.literals.iter().enumerate() {
            if l.origin == Origin::Tool {
                per_group
                    .entry(l.group.as_deref())
                    .or_default()
                    .push((l.last_seen, i));
            }
        }
        let mut keep: HashSet<usize> = HashSet::new();
        for mut v in per_group.into_values() {
            v.sort_unstable_by(|a, b| b.cmp(a));
            keep.extend(v.into_iter().take(3).map(|(_, i)| i));
        }
        self.literals
            .iter()
            .enumerate()
            .filter(|(i, l)| l.origin != Origin::Tool || keep.contains(i))
            .map(|(_, l)| l.text.clone())
            .collect()
    }
}

/// Stored as its rendered text, which parses back without losing a literal.
impl serde::Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.render(Detail::Standard))
    }
}

/// Parses the rendered text back.
impl<'de> serde::Deserialize<'de> for Digest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Ok(Digest::parse(&text))
    }
}

/// A source with text only, for the tests of the submodules.
#[cfg(test)]
fn src(role: Speaker, content: &str) -> Source<'_> {
    Source::text(role, content)
}

/// The estimate decima-core counts with when no model tokenizer is known, for the tests'
/// budgets.
#[cfg(test)]
pub(crate) struct EstimateCounter;

#[cfg(test)]
impl CountTokens for EstimateCounter {
    fn count_text(&self, text: &str) -> u32 {
        decima_core::TokenCounter::count_text(&decima_core::EstimateCounter, text)
    }

    fn message_overhead(&self) -> u32 {
        decima_core::TokenCounter::message_overhead(&decima_core::EstimateCounter)
    }
}

/// A source with text and a seq, for the tests of the submodules.
#[cfg(test)]
fn at(seq: i64, role: Speaker, content: &str) -> Source<'_> {
    Source {
        seq: Some(seq),
        ..src(role, content)
    }
}
