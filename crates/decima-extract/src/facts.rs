//! The current statement of each subject. Statements are added in the order they were said; a
//! new one relates to the earlier ones it replaces:
//! - a correction ("sorry, it is 15, not 12", "阈值改成0.85") replaces the statement of the old
//!   value it names, else the statement of its subject, else (a strong cue with no subject:
//!   "make that 15") the latest thing the user stated. When the correction does not say what it
//!   is about, the corrected statement is restated with the new value in place of the old, so the
//!   subject stays with the value;
//! - a later user statement of the same subject, named without a pronoun ("the churn window is
//!   60 days" after "… 45 days"), replaces it as an update;
//! - a tool's label or table row replaces the same label or row of the same operation.
//!
//! What is replaced is gone, its value kept as the newer statement's `replaces` note, so an old
//! value is never presented as current. Constraint and decision sentences are kept in their own
//! sections, but their clauses are registered too (hidden): a correction of one patches the
//! sentence where it stands. Lookups go through maps keyed by subject head, value and label, so
//! adding a statement costs about the same at 100 statements as at 100,000.

use super::analysis::{Analysis, analyse_values, analysed, hidden_clauses, value_clauses};
use super::candidates::short_text;
use super::clauses::{same_subject, singular};
use super::literals::Origin;
use super::operations::{MAX_VARIANT_LINES, shape_of};
use super::text::FastMap;
use super::values::{Span, as_quoted};
use super::{Statement, StatementKind};
use relate::Relation;
use std::rc::Rc;

/// How many recent user statements a correction without a subject looks back over.
const RECENT: usize = 8;
/// How many statements of one subject head or one value a lookup examines, newest first.
const LOOKBACK: usize = 24;

/// The sentence a registered clause stands in, besides its own statement line (which is left
/// out when that sentence is shown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Home {
    /// A clause of an ordinary sentence (or of the goal message).
    Listed,
    /// A clause of a constraint sentence (the sentence as stored).
    Constraint(String),
    /// A clause of a decision sentence.
    Decision(String),
}

/// A sentence of the goal, constraints or decisions to rewrite because a statement in it was
/// corrected: `old` (the clause as it stands) becomes `new` (the same clause, marked replaced).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Patch {
    pub(super) home: Home,
    pub(super) old: String,
    pub(super) new: String,
}

/// The values a clause states as current (not the one it names as replaced).
#[derive(Debug, Default)]
pub(super) struct ValueKeys {
    /// Each as a [`value_key`].
    keys: Vec<String>,
    /// What sort of value each is (see [`value_sort`]), so a correction that gives only a value
    /// finds a statement of the same sort: "99.9%" corrects a percentage.
    sorts: Vec<&'static str>,
}

struct Entry {
    st: Statement,
    key: String,
    values: Rc<ValueKeys>,
    home: Home,
    alive: bool,
    /// Whether it is one of the digest's statements: a clause of a constraint or decision is
    /// shown by its sentence, and registered only so that a correction can mark it there.
    emit: bool,
}

/// The values a clause states as current (not the one it names as replaced), as keys and sorts.
pub(super) fn current_values(text: &str, a: &Analysis) -> Rc<ValueKeys> {
    let old_index = a.correction.and_then(|c| c.old);
    let (keys, sorts) = a
        .values
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != old_index)
        .map(|(_, &(s, e))| (value_key(&text[s..e]), value_sort(&text[s..e])))
        .unzip();
    Rc::new(ValueKeys { keys, sorts })
}

/// Currency codes that make a value an amount of money.
const CURRENCY_CODES: [&str; 7] = ["eur", "usd", "gbp", "chf", "cny", "rmb", "jpy"];

/// The sort of a value: a percentage, an amount of money, a number with a unit (the unit), a
/// date, a bare number, or text.
pub(super) fn value_sort(v: &str) -> &'static str {
    // Most values are digits and lowercase already: no copy for those.
    let lower: std::borrow::Cow<'_, str> =
        if v.is_ascii() && !v.bytes().any(|b| b.is_ascii_uppercase()) {
            std::borrow::Cow::Borrowed(v)
        } else {
            std::borrow::Cow::Owned(v.to_lowercase())
        };
    if lower.ends_with('%') || lower.ends_with("percent") {
        return "%";
    }
    // One pass over the words: a value may be a long phrase, and this runs for every value
    // of every statement each time summaries merge.
    if v.contains(['€', '$', '£', '¥', '元'])
        || lower
            .split(|ch: char| !ch.is_alphabetic())
            .any(|w| w.len() == 3 && CURRENCY_CODES.contains(&w))
    {
        return "money";
    }
    if !v.bytes().any(|b| b.is_ascii_digit()) {
        return "text";
    }
    if v.len() >= 8 && v.bytes().filter(|b| *b == b'-' || *b == b'/').count() == 2
        || v.contains('年')
    {
        return "date";
    }
    let unit = lower
        .trim_start_matches(|c: char| {
            c.is_ascii_digit() || matches!(c, '.' | ',' | ' ' | '-' | '+')
        })
        .trim();
    match unit {
        "" => "n",
        "ms" | "millisecond" | "milliseconds" => "ms",
        "s" | "sec" | "secs" | "second" | "seconds" => "s",
        "min" | "mins" | "minute" | "minutes" => "min",
        "h" | "hr" | "hrs" | "hour" | "hours" => "h",
        "d" | "day" | "days" => "day",
        "week" | "weeks" => "week",
        "month" | "months" => "month",
        "year" | "years" => "year",
        "kb" | "mb" | "gb" | "tb" | "kib" | "mib" | "gib" | "tib" | "b" | "bytes" => "bytes",
        _ => "other",
    }
}

/// The registry of statements.
#[derive(Default)]
pub(super) struct Facts {
    entries: Vec<Entry>,
    by_head: FastMap<String, Vec<usize>>,
    by_value: FastMap<String, Vec<usize>>,
    by_label: FastMap<String, usize>,
    /// Clauses by their text: one said again word for word is the same statement, newer.
    by_text: FastMap<String, usize>,
    recent_user: Vec<usize>,
    /// User statements by shape (numbers and ids as `*`): how often each was stated, in how
    /// many variants, and the live ones.
    shapes: FastMap<String, ShapeStat>,
    /// Only statements registered before this index can be replaced: a summary's statements
    /// were related among themselves when it was made, so a later digest's relate only to the
    /// earlier digest's.
    frozen_from: Option<usize>,
}

/// How a shape of user statements has been stated.
#[derive(Default)]
struct ShapeStat {
    times: u64,
    /// The variants seen here, and how many more a summary's recurring line stood for.
    variants: FastMap<String, ()>,
    carried_variants: u64,
    live: Vec<usize>,
}

/// A value as a reader would quote it: with the unit that follows a bare number ("53 天").
fn quoted(text: &str, span: Span) -> String {
    let (s, e) = as_quoted(text, span);
    text[s..e].to_string()
}

/// The key two spellings of one value share: numbers without separators or units, other values
/// lowercased without spaces.
pub(super) fn value_key(v: &str) -> String {
    let v = v.trim();
    let digits = v.find(|c: char| c.is_ascii_digit());
    if let Some(start) = digits {
        // Dates and times keep their separators: 2026-01-21 is not 2026.
        let num: String = v[start..]
            .chars()
            .take_while(|c| {
                c.is_ascii_digit() || matches!(c, '.' | ',' | ' ' | '\u{a0}' | '-' | '/' | ':')
            })
            .filter(|c| c.is_ascii_digit() || matches!(c, '.' | ',' | '-' | '/' | ':'))
            .collect();
        return num.trim_end_matches(['.', ',']).replace(',', ".");
    }
    v.to_lowercase().split_whitespace().collect()
}

/// What a subject key is looked up by: each of its words; in Chinese, its last two characters
/// (a shorter key a longer one ends with shares them).
fn heads(key: &str) -> impl Iterator<Item = &str> {
    let (words, pair) = if key.is_empty() {
        (None, None)
    } else if key.is_ascii() {
        (Some(key.split(' ')), None)
    } else {
        let from = key.char_indices().rev().nth(1).map_or(0, |(i, _)| i);
        (None, Some(&key[from..]))
    };
    words.into_iter().flatten().chain(pair)
}

/// Adds `i` under `key` in an index, copying the key only when it is new there.
fn index_under(map: &mut FastMap<String, Vec<usize>>, key: &str, i: usize) {
    match map.get_mut(key) {
        Some(list) => list.push(i),
        None => {
            map.insert(key.to_string(), vec![i]);
        }
    }
}

/// The text with the value at `span` replaced by `new`; a bare number replaces only the number
/// of a value with a unit ("12 ms" → "15 ms").
fn replace_value(text: &str, span: Span, new: &str) -> String {
    let old = &text[span.0..span.1];
    let bare = new
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b',' | b'-'));
    let num_start = old.find(|c: char| c.is_ascii_digit());
    let (s, e) = match num_start {
        Some(ns) if bare => {
            let ne = old[ns..]
                .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | ',')))
                .map_or(old.len(), |p| ns + p);
            (span.0 + ns, span.0 + ne)
        }
        _ => span,
    };
    format!("{}{}{}", &text[..s], new, &text[e..])
}

impl Facts {
    /// The statements to render, in the order they were made.
    pub(super) fn into_statements(self) -> Vec<Statement> {
        self.entries
            .into_iter()
            .filter(|e| e.alive && e.emit)
            .map(|e| e.st)
            .collect()
    }

    fn push(&mut self, st: Statement, key: String, values: Rc<ValueKeys>, home: Home) -> usize {
        let i = self.entries.len();
        for h in heads(&key) {
            index_under(&mut self.by_head, h, i);
        }
        for v in &values.keys {
            index_under(&mut self.by_value, v, i);
        }
        if st.origin != Origin::Tool {
            self.by_text.insert(st.text.clone(), i);
        }
        if st.origin == Origin::User {
            if self.recent_user.len() == RECENT {
                self.recent_user.remove(0);
            }
            self.recent_user.push(i);
        }
        self.entries.push(Entry {
            st,
            key,
            values,
            emit: home == Home::Listed,
            home,
            alive: true,
        });
        i
    }

    /// Adds a tool's or a code block's labelled value or table row: it replaces the same `key`
    /// (label or row key, prefixed by whatever scopes it, e.g. the operation) in place, and a
    /// label whose value changed notes the values it had (`status: done (replaces running)`).
    pub(super) fn add_labelled(&mut self, mut st: Statement, scoped_key: String) {
        if let Some(&i) = self.by_label.get(&scoped_key)
            && let Some(e) = self.entries.get_mut(i)
        {
            let value = |s: &Statement| s.text.split_once(": ").map(|(_, v)| v.to_string());
            if st.kind == StatementKind::Labelled
                && st.replaces.is_none()
                && let (Some(old), Some(new)) = (value(&e.st), value(&st))
            {
                if old != new {
                    let mut parts = vec![old];
                    if let Some(prev) = &e.st.replaces {
                        parts.extend(prev.split(REPLACED_SEP).map(str::to_string));
                    }
                    parts.dedup();
                    parts.retain(|p| *p != new);
                    parts.truncate(MAX_REPLACED);
                    st.replaces = Some(parts.join(REPLACED_SEP));
                } else {
                    st.replaces = e.st.replaces.clone();
                }
            }
            e.st = st;
            return;
        }
        let i = self.push(st, String::new(), Rc::default(), Home::Listed);
        self.by_label.insert(scoped_key, i);
    }

    /// From now on, statements added relate only to those registered so far, not to each
    /// other.
    pub(super) fn freeze(&mut self) {
        self.frozen_from = Some(self.entries.len());
    }

    /// Whether entry `i` may still be replaced.
    fn open(&self, i: usize) -> bool {
        self.entries[i].alive && self.frozen_from.is_none_or(|f| i < f)
    }

    /// Registers a clause already related to the others (read back from a summary, or a
    /// clause of a constraint or decision sentence), without looking for what it replaces.
    fn push_clause(
        &mut self,
        mut st: Statement,
        a: &Analysis,
        values: Rc<ValueKeys>,
        home: Home,
    ) -> usize {
        if st.short.is_none() && home == Home::Listed {
            st.short = short_text(&st.text, a);
        }
        let i = self.push(st, a.subject.key.clone(), values, home);
        if self.entries[i].st.recurring.is_some() {
            self.recur(i);
        }
        i
    }

    /// Registers a statement read back from a summary: a tool's or a report line under its
    /// label, a clause under its subject. With `relate`, it replaces what it corrects or updates
    /// among those registered before, and the sentences to rewrite are returned.
    pub(super) fn add_read_back(&mut self, st: Statement, relate: bool) -> Vec<Patch> {
        let clause = st.origin == Origin::User || st.kind == StatementKind::Restated;
        if !clause {
            // An agent's report lines are keyed by their whole text, as when first read: one
            // "Updated: …" line never replaces another.
            let key = if st.origin == Origin::Prose {
                st.text.as_str()
            } else {
                st.text.split(": ").next().unwrap_or(&st.text)
            };
            let scoped = format!("{}\u{0}{key}", st.group.as_deref().unwrap_or(""));
            self.add_labelled(st, scoped);
            return Vec::new();
        }
        let a = analysed(&st.text);
        if relate {
            self.add_clause(st, &a.analysis, Home::Listed)
        } else {
            self.push_clause(st, &a.analysis, a.values.clone(), Home::Listed);
            Vec::new()
        }
    }

    /// Registers the value-bearing clauses of a constraint or decision sentence, which a later
    /// correction may patch where they stand. With `relate`, a clause that corrects something
    /// registered before replaces it, and the sentences to rewrite are returned.
    pub(super) fn add_hidden_sentence(
        &mut self,
        sentence: &str,
        home: Home,
        relate: bool,
    ) -> Vec<Patch> {
        if !relate {
            for c in hidden_clauses(sentence).iter() {
                let st = Statement::new(
                    Origin::User,
                    StatementKind::Stated,
                    sentence[c.span.0..c.span.1].to_string(),
                );
                self.push_clause(st, &c.analysis, c.values.clone(), home.clone());
            }
            return Vec::new();
        }
        let mut patches = Vec::new();
        for ((start, end), values) in value_clauses(sentence) {
            let text = &sentence[start..end];
            let st = Statement::new(Origin::User, StatementKind::Stated, text.to_string());
            let analysis = analyse_values(text, values);
            patches.extend(self.add_clause(st, &analysis, home.clone()));
        }
        patches
    }

    /// Adds a user clause or an assistant restatement (`st.text` is the clause, `a` its
    /// analysis, `home` where it is shown) and returns the sentences to rewrite because it
    /// corrects something in them.
    pub(super) fn add_clause(&mut self, mut st: Statement, a: &Analysis, home: Home) -> Vec<Patch> {
        self.drop_repeat(&mut st);
        let values = current_values(&st.text, a);
        let rel = Relation::of(&st, a);
        let key = a.subject.key.clone();
        let user = st.origin == Origin::User;
        let sort = values.sorts.first().copied();
        let Some(t) = self.target_of(&rel, a, user, &home, sort) else {
            if home == Home::Listed {
                st.short = short_text(&st.text, a);
            }
            let i = self.push(st, key, values, home);
            self.recur(i);
            return Vec::new();
        };
        if self.states_already(t, &rel) {
            // A constraint or decision that already states the new value.
            self.push(st, key, values, home);
            return Vec::new();
        }
        self.replace(t, st, a, home, &rel)
    }

    /// A user statement repeated with only its numbers changed, each variant again and again
    /// ("Continue with batch 7", "… batch 8", round and round), is one recurring instruction
    /// of which only the newest is current: the older variants go (see `statements` for the
    /// same rule on constraints and decisions).
    fn recur(&mut self, i: usize) {
        let e = &self.entries[i];
        if e.st.origin != Origin::User || e.home != Home::Listed {
            return;
        }
        let shape = shape_of(&e.st.text);
        let text = e.st.text.clone();
        let (times, carried) =
            e.st.recurring
                .map_or((1, 0), |(t, v)| (t, v.saturating_sub(1)));
        let stat = self.shapes.entry(shape).or_default();
        stat.times += times;
        stat.carried_variants += carried;
        stat.variants.insert(text, ());
        stat.live.push(i);
        let variants = stat.variants.len() as u64 + stat.carried_variants;
        // A shape an earlier summary showed as recurring recurs from its next variant on.
        let known = stat.carried_variants > 0;
        if variants >= 2
            && (variants > MAX_VARIANT_LINES || known)
            && stat.times >= variants.saturating_mul(2)
        {
            let older: Vec<usize> = stat.live.drain(..).filter(|&j| j != i).collect();
            stat.live.push(i);
            let counts = (stat.times, variants);
            for j in older {
                self.entries[j].alive = false;
            }
            self.entries[i].st.recurring = Some(counts);
        }
    }

    /// The newest live user or restated statement stating `value` (a [`value_key`]), preferring
    /// one about `key` when given.
    fn latest_with_value(&self, value: &str, key: &str) -> Option<usize> {
        let list = self.by_value.get(value)?;
        let live = || {
            list.iter()
                .rev()
                .take(LOOKBACK)
                .copied()
                .filter(|&i| self.open(i) && self.entries[i].st.origin != Origin::Tool)
        };
        live()
            .find(|&i| !key.is_empty() && same_subject(&self.entries[i].key, key))
            .or_else(|| live().next())
    }

    /// The subject of an earlier statement that `text` names by its words ("hmm no, the refund
    /// window I gave you earlier was the draft figure" names "refund window"): the longest key
    /// among the live statements looked up by the text's words (in Chinese, by each pair of
    /// characters), newest first.
    pub(super) fn subject_named_in(&self, text: &str) -> Option<String> {
        let lower = text.to_lowercase();
        let words: Vec<String> = lower
            .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-' || c == '_'))
            .filter(|w| !w.is_empty() && w.is_ascii())
            .map(singular)
            .collect();
        let chars: Vec<char> = lower.chars().collect();
        let pairs = chars
            .windows(2)
            .filter(|w| !w[0].is_ascii() && !w[1].is_ascii())
            .map(|w| w.iter().collect::<String>());
        let mut best: Option<&str> = None;
        for head in words.iter().cloned().chain(pairs) {
            let Some(list) = self.by_head.get(&head) else {
                continue;
            };
            for &i in list.iter().rev().take(LOOKBACK) {
                let e = &self.entries[i];
                if !self.open(i) || e.st.origin == Origin::Tool || e.key.is_empty() {
                    continue;
                }
                let named = if e.key.is_ascii() {
                    e.key.split(' ').all(|k| words.iter().any(|w| w == k))
                } else {
                    lower.contains(&e.key)
                };
                if named && best.is_none_or(|b| e.key.len() > b.len()) {
                    best = Some(&e.key);
                }
            }
        }
        best.map(str::to_string)
    }

    /// The newest live statement about `key`; an update without a cue (`plain`) replaces only
    /// the user's own statements (a clause of a constraint or decision among them).
    fn latest_with_subject(&self, key: &str, plain: bool) -> Option<usize> {
        heads(key)
            .filter_map(|h| self.by_head.get(h))
            .filter_map(|list| {
                list.iter().rev().take(LOOKBACK).copied().find(|&i| {
                    let e = &self.entries[i];
                    self.open(i)
                        && e.st.origin != Origin::Tool
                        && (!plain || e.st.origin == Origin::User)
                        && same_subject(&e.key, key)
                })
            })
            .max()
    }

    /// The latest live user statement, preferring one with a value of the same sort (a
    /// percentage for a percentage; a bare number for any number).
    fn latest_user(&self, sort: Option<&'static str>) -> Option<usize> {
        let live = || {
            self.recent_user
                .iter()
                .rev()
                .copied()
                .filter(|&i| self.open(i) && !self.entries[i].values.keys.is_empty())
        };
        let numeric = |s: &&str| *s != "text";
        // A sort that names a kind ("15 ms", "20%", a date) finds the latest value of that
        // kind; text and unclassed values ("p99.5 截断") say nothing of what they correct.
        let telling = sort.filter(|s| !matches!(*s, "text" | "other"));
        live()
            .find(|&i| telling.is_some_and(|s| self.entries[i].values.sorts.contains(&s)))
            .or_else(|| {
                // A bare number corrects the latest number, whatever its unit.
                live().find(|&i| {
                    sort.is_some_and(|s| s == "n")
                        && self.entries[i].values.sorts.iter().any(numeric)
                })
            })
            .or_else(|| live().next())
    }
}

/// The note that follows a statement which replaced an earlier value: `… (replaces 12 ms)`,
/// or several, newest first: `… (replaces 12 ms; 10 ms)`.
pub(super) const REPLACES: &str = "replaces";
/// The note after a clause of a goal, constraint or decision that a later statement replaced.
pub(super) const REPLACED_BY: &str = "replaced by";
/// Separates the replaced values of a note.
pub(super) const REPLACED_SEP: &str = "; ";
/// Replaced values a note keeps.
const MAX_REPLACED: usize = 3;

/// The value a note says was replaced last.
pub(super) fn latest_replaced(note: &str) -> &str {
    note.split(REPLACED_SEP).next().unwrap_or(note)
}

/// Splits a rendered statement into its text and the value it replaced.
pub(super) fn split_note(s: &str) -> (&str, Option<&str>) {
    let open = format!(" ({REPLACES} ");
    match s
        .strip_suffix(')')
        .and_then(|h| h.rsplit_once(open.as_str()))
    {
        Some((text, old)) if !old.is_empty() && !text.is_empty() => (text, Some(old)),
        _ => (s, None),
    }
}

#[path = "facts_relate.rs"]
mod relate;

#[cfg(test)]
#[path = "facts_tests.rs"]
mod tests;
