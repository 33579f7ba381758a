//! The `extract` strategy: a summary written by rules, without an LLM.
//!
//! It keeps what an agent cannot afford to lose: the goal (the whole message), the todo state,
//! the decisions, the user's constraints (an instruction that recurs with only its numbers
//! changed is kept once, the newest, with counts), tool digests (distinct commands grouped with
//! counts and exit codes) and the exact literals people paste (numbers with decimals or units,
//! hosts and ports, URLs, e-mail addresses, hashes, versions, dates and times, ticket ids, quoted
//! and backticked tokens, paths, and IBANs, phone numbers and amounts written with spaces). The
//! output has fixed section headings and parses back into a [`Digest`], which is how summaries
//! of summaries keep what they fold; model-written summaries parse too, their unknown sections
//! kept as notes.
//!
//! Rendering fills a token budget by priority (see [`Digest::render_budgeted`]): the goal,
//! constraints, decisions and the user's literals first, then todos and recent operations, the
//! older variants of decisions and constraints stated in many variants, notes, the other
//! literals newest first, and the remaining detail. What does not fit is folded into counts
//! ("shell×12", "path×30"), never silently dropped.

// History → digest (`builder`, with `cues` for sentences and `literals`/`classify` for exact
// tokens, `operations` for tool calls); digest → text (`candidates` in priority order, laid out
// by `render`, with `statements` grouping decisions and constraints that recur with small
// differences); text → digest (`parse`); digest + digest (`merge`); `text` has string helpers.
mod builder;
mod candidates;
mod classify;
mod cues;
mod literals;
mod merge;
mod operations;
mod parse;
mod render;
mod spaced;
mod statements;
mod text;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::{Message, Role, ToolCall};

pub use literals::{Literal, LiteralKind, Origin};

/// One piece of history to summarise: a message, or a step record dressed as one.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// Who said it; constraints are only taken from the user, and the user's literals are kept
    /// before any other.
    pub role: Role,
    /// The text.
    pub content: &'a str,
    /// Tool calls, which become operation digests.
    pub tool_calls: &'a [ToolCall],
    /// For tool results: the call they answer, so exit code and first lines join its digest.
    pub tool_call_id: Option<&'a str>,
}

impl<'a> From<&'a Message> for Source<'a> {
    fn from(m: &'a Message) -> Self {
        Source {
            role: m.role,
            content: &m.content,
            tool_calls: &m.tool_calls,
            tool_call_id: m.tool_call_id.as_deref(),
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
    /// Every exact literal seen, in first-seen order.
    pub literals: Vec<Literal>,
    /// Literals already folded into counts, per kind.
    pub folded_literals: BTreeMap<String, u64>,
}

pub(super) const LINE_CHARS: usize = 160;
/// The goal message is kept whole up to this many characters (its literals are kept anyway).
pub(super) const GOAL_CHARS: usize = 6_000;

/// Renders the extract summary of messages at the given detail.
pub fn extract_messages(messages: &[Message], detail: Detail) -> String {
    Digest::from_sources(messages.iter().map(Source::from)).render(detail)
}

impl Digest {
    /// Takes note of the recurring instructions an earlier summary of the same conversation
    /// shows, so that a new range going through a few more variants of one (a user saying
    /// "Continue with batch N" again) renders them as one line with the newest, not one line
    /// per variant.
    pub fn recurring_from(&mut self, earlier_summary: &str) {
        self.recurring
            .extend(statements::recurring_shapes(earlier_summary));
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
fn src(role: Role, content: &str) -> Source<'_> {
    Source {
        role,
        content,
        tool_calls: &[],
        tool_call_id: None,
    }
}
