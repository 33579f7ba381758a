//! Relating a new clause to the statement it replaces: what the clause says it corrects, which
//! statement that is, the note of the values replaced, the statement current afterwards, and
//! the goal, constraint and decision sentences to patch.

use super::{
    Entry, Facts, Home, LOOKBACK, MAX_REPLACED, Patch, REPLACED_BY, REPLACED_SEP, current_values,
    latest_replaced, quoted, replace_value, value_key,
};
use crate::Statement;
use crate::analysis::{Analysis, analyse};
use crate::candidates::short_text;
use crate::clauses::same_subject;
use crate::corrections::Correction;
use crate::literals::Origin;
use crate::values::Span;

/// What a clause says it replaces: its correction cue, the value it replaces and its new
/// value.
pub(super) struct Relation {
    /// The correction cue; a statement carried over from a summary with a note counts as a
    /// weak one.
    corr: Option<Correction>,
    /// The value replaced, as a [`value_key`]: the one its note or the correction names.
    old_key: Option<String>,
    /// The new value, as quoted.
    new_value: Option<String>,
}

impl Relation {
    /// Reads what the clause `st` (analysed as `a`) says it replaces. A statement carried over
    /// from a summary already says what it replaced: it relates to that value or its subject,
    /// never to whatever was said last.
    pub(super) fn of(st: &Statement, a: &Analysis) -> Self {
        let text = st.text.as_str();
        let noted_old = st
            .replaces
            .as_deref()
            .map(|r| value_key(latest_replaced(r)));
        let corr = match (a.correction, &noted_old) {
            (_, Some(_)) => Some(Correction {
                strong: false,
                old: None,
            }),
            (c, None) => c.filter(|_| st.origin == Origin::User),
        };
        let old_key = noted_old.or_else(|| {
            corr.and_then(|c| c.old)
                .and_then(|i| a.values.get(i))
                .map(|&(s, e)| value_key(&text[s..e]))
        });
        let new_value = corr
            .and_then(|c| {
                a.values
                    .iter()
                    .enumerate()
                    .find(|(i, _)| Some(*i) != c.old)
                    .map(|(_, &span)| quoted(text, span))
            })
            .or_else(|| a.values.first().map(|&span| quoted(text, span)));
        Relation {
            corr,
            old_key,
            new_value,
        }
    }
}

/// The statement a clause replaces, as it stands, and where its old value is in it.
struct Target {
    /// Its entry.
    i: usize,
    /// Its subject key.
    key: String,
    /// Its text.
    text: String,
    /// Its value the clause replaces: the one named as replaced, else its first.
    old_span: Option<Span>,
    /// That value, as quoted.
    old_text: Option<String>,
}

impl Target {
    /// Reads entry `i` and finds the value `old_key` names in it (or its first value).
    fn of(i: usize, e: &Entry, old_key: Option<&str>) -> Self {
        let text = e.st.text.clone();
        let analysis = analyse(&text);
        let values: Vec<String> = analysis
            .values
            .iter()
            .map(|&(s, e)| value_key(&text[s..e]))
            .collect();
        let old_span = old_key
            .and_then(|o| values.iter().position(|v| v == o))
            .or(if analysis.values.is_empty() {
                None
            } else {
                Some(0)
            })
            .and_then(|p| analysis.values.get(p).copied());
        let old_text = old_span.map(|span| quoted(&text, span));
        Target {
            i,
            key: e.key.clone(),
            text,
            old_span,
            old_text,
        }
    }

    /// The statement that is current after the clause `text` (of subject `key`, shown at
    /// `home`): the clause itself when it names the subject (or is no correction), else the
    /// target with the new value in place of the old, a statement of its own wherever the
    /// correction was said. Returns its text, key and home, and whether it was substituted.
    fn current_form(
        &self,
        rel: &Relation,
        text: String,
        key: String,
        home: Home,
    ) -> (String, String, Home, bool) {
        let names_subject = !key.is_empty() && same_subject(&key, &self.key);
        if names_subject || rel.corr.is_none() {
            return (text, key, home, false);
        }
        match (self.old_span, &rel.new_value) {
            (Some(span), Some(new)) => (
                replace_value(&self.text, span, new),
                self.key.clone(),
                Home::Listed,
                true,
            ),
            _ => (text, key, home, false),
        }
    }
}

impl Facts {
    /// A clause said again word for word is the same statement, newer: the older one goes,
    /// and its note comes with the new one.
    pub(super) fn drop_repeat(&mut self, st: &mut Statement) {
        if let Some(&j) = self.by_text.get(&st.text)
            && self.open(j)
            && self.entries[j].st.origin == st.origin
        {
            self.entries[j].alive = false;
            if st.replaces.is_none() {
                st.replaces = self.entries[j].st.replaces.clone();
            }
        }
    }

    /// The statement a clause replaces, if it corrects or updates one: the statement holding
    /// the value it names as replaced, else the latest of its subject, else (a strong cue with
    /// no subject) the user's latest statement with a value of the same `sort`.
    pub(super) fn target_of(
        &self,
        rel: &Relation,
        a: &Analysis,
        user: bool,
        home: &Home,
        sort: Option<&'static str>,
    ) -> Option<usize> {
        let key = &a.subject.key;
        if rel.corr.is_none()
            && !(user && a.subject.specific && a.subject.linked && *home == Home::Listed)
        {
            return None;
        }
        if let Some(old) = &rel.old_key {
            // A correction that names the value it replaces corrects the statement that
            // holds that value now (of its subject, when it names one), else the latest
            // statement of the subject it names, or nothing.
            return self
                .latest_with_value(old, key)
                .filter(|&t| key.is_empty() || same_subject(&self.entries[t].key, key))
                .or_else(|| {
                    (a.subject.specific && rel.corr.is_some_and(|c| c.strong))
                        .then(|| self.latest_with_subject(key, false))
                        .flatten()
                });
        }
        let mut target = None;
        if !key.is_empty() {
            target = self.latest_with_subject(key, rel.corr.is_none());
        }
        // Only a correction that says nothing of its subject ("make that 15") falls back to
        // the user's latest statement: one that names a subject nobody stated corrects nothing
        // known.
        if target.is_none() && rel.corr.is_some_and(|c| c.strong) && key.is_empty() {
            target = self.latest_user(sort);
        }
        target
    }

    /// Whether target `t` is a clause of a constraint or decision that already states the new
    /// value, so it needs no correcting.
    pub(super) fn states_already(&self, t: usize, rel: &Relation) -> bool {
        self.entries[t].home != Home::Listed
            && rel
                .new_value
                .as_deref()
                .map(value_key)
                .is_some_and(|k| self.entries[t].values.keys.contains(&k))
    }

    /// Adds the clause in place of target `t` (and of whatever else states the old value of
    /// its subject), returning the sentences to rewrite.
    pub(super) fn replace(
        &mut self,
        t: usize,
        mut st: Statement,
        a: &Analysis,
        home: Home,
        rel: &Relation,
    ) -> Vec<Patch> {
        let target = Target::of(t, &self.entries[t], rel.old_key.as_deref());
        self.note_replaced(&mut st, &target, rel);
        let (current_text, current_key, home, substituted) =
            target.current_form(rel, st.text.clone(), a.subject.key.clone(), home);
        st.text = current_text.clone();
        let current_analysis = if substituted {
            analyse(&current_text)
        } else {
            a.clone()
        };
        let current = current_values(&current_text, &current_analysis);
        if home == Home::Listed {
            st.short = short_text(&current_text, &current_analysis);
        }
        let gone = self.stating_old_value(&target);
        let by = rel
            .new_value
            .clone()
            .unwrap_or_else(|| current_text.clone());
        let patches = self.retire(gone, &by, st.seq);
        let i = self.push(st, current_key, current, home);
        self.recur(i);
        patches
    }

    /// Sets the clause's note of the values it replaced: newest first, with the few the target
    /// had replaced; the same value again stands alone, with the target's note.
    fn note_replaced(&self, st: &mut Statement, target: &Target, rel: &Relation) {
        let prev = &self.entries[target.i].st.replaces;
        if rel.new_value.as_deref().map(value_key) == target.old_text.as_deref().map(value_key)
            && rel.corr.is_none()
        {
            st.replaces = prev.clone();
        } else if st.replaces.is_none() {
            st.replaces = target.old_text.clone().map(|old| {
                let mut parts = vec![old];
                if let Some(prev) = prev {
                    parts.extend(prev.split(REPLACED_SEP).map(str::to_string));
                }
                parts.truncate(MAX_REPLACED);
                parts.join(REPLACED_SEP)
            });
        }
    }

    /// The target and everything else open that states its old value of the same subject:
    /// they all go.
    fn stating_old_value(&self, target: &Target) -> Vec<usize> {
        let t = target.i;
        let mut gone = vec![t];
        if let Some(old) = target.old_text.as_deref().map(value_key)
            && let Some(list) = self.by_value.get(&old)
        {
            gone.extend(list.iter().rev().take(LOOKBACK).copied().filter(|&i| {
                i != t
                    && self.open(i)
                    && self.entries[i].st.origin != Origin::Tool
                    && (self.entries[i].key.is_empty()
                        || same_subject(&self.entries[i].key, &target.key))
            }));
        }
        gone
    }

    /// Retires the replaced entries. Where a replaced clause stands in a goal, constraint or
    /// decision, it stays as said, marked as replaced: "… above 0.75 (replaced by 0.8 at seq
    /// 812)"; the patches saying so are returned.
    fn retire(&mut self, gone: Vec<usize>, by: &str, seq: Option<i64>) -> Vec<Patch> {
        let at = seq.map(|n| format!(" at seq {n}")).unwrap_or_default();
        let mut patches = Vec::with_capacity(gone.len());
        for g in gone {
            let e = &mut self.entries[g];
            e.alive = false;
            let old = e.st.text.clone();
            patches.push(Patch {
                home: e.home.clone(),
                new: format!("{old} ({REPLACED_BY} {by}{at})"),
                old,
            });
        }
        patches
    }
}
