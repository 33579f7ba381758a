//! A clause's analysis: its values, its subject and its correction cue, remembered per thread
//! by text, since every merge of summaries reads the same sentences again.

use super::clauses::clauses;
use super::clauses::{Subject, subject_in};
use super::copula::copula_value;
use super::corrections::{Correction, add_text_correction, correction};
use super::facts::{ValueKeys, current_values};
use super::literals::scan_literals;
use super::text::FastMap;
use super::values::{Span, new_value_only, value_spans, widen_to_phrase};
use std::cell::RefCell;
use std::rc::Rc;

/// A clause's values, subject and correction cue.
#[derive(Debug, Clone, Default)]
pub(super) struct Analysis {
    pub(super) values: Vec<Span>,
    pub(super) subject: Subject,
    pub(super) correction: Option<Correction>,
}

/// How many analyses a thread remembers before it starts afresh.
const ANALYSES_KEPT: usize = 8_192;

/// A clause's analysis with the values it states as current, as a thread remembers them.
pub(super) struct Analysed {
    pub(super) analysis: Analysis,
    pub(super) values: Rc<ValueKeys>,
}

thread_local! {
    /// The analyses of texts read before: every merge of summaries reads the earlier summary's
    /// decisions, constraints and statements again, and the same sentences recur across the
    /// blocks a long history is summarised in. An analysis depends on the text alone.
    static ANALYSED: RefCell<FastMap<String, Rc<Analysed>>> = RefCell::new(FastMap::default());
}

/// Analyses a clause on its own (for statements read back from a summary).
pub(super) fn analyse(text: &str) -> Analysis {
    analysed(text).analysis.clone()
}

/// [`analyse`], shared with the thread's cache, with the values the clause states as current.
pub(super) fn analysed(text: &str) -> Rc<Analysed> {
    if let Some(a) = ANALYSED.with(|m| m.borrow().get(text).cloned()) {
        return a;
    }
    let analysis = analyse_fresh(text);
    let values = current_values(text, &analysis);
    let a = Rc::new(Analysed { analysis, values });
    ANALYSED.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= ANALYSES_KEPT {
            m.clear();
        }
        m.insert(text.to_string(), a.clone());
    });
    a
}

/// A value-bearing clause of a constraint or decision sentence: its span in the sentence, its
/// analysis (values relative to the clause, no correction) and its current values.
pub(super) struct HiddenClause {
    pub(super) span: Span,
    pub(super) analysis: Analysis,
    pub(super) values: Rc<ValueKeys>,
}

thread_local! {
    /// The value-bearing clauses of constraint and decision sentences, as every merge of
    /// summaries registers the earlier summary's sentences again.
    static HIDDEN: RefCell<FastMap<String, Rc<[HiddenClause]>>> =
        RefCell::new(FastMap::default());
}

/// The clauses of `sentence` that state a value, with their spans and analyses (values
/// relative to the clause, no correction: they are registered as said).
pub(super) fn hidden_clauses(sentence: &str) -> Rc<[HiddenClause]> {
    if let Some(found) = HIDDEN.with(|m| m.borrow().get(sentence).cloned()) {
        return found;
    }
    let out: Rc<[HiddenClause]> = value_clauses(sentence)
        .into_iter()
        .map(|(span, values)| {
            let text = &sentence[span.0..span.1];
            let analysis = Analysis {
                subject: subject_in(text, &values),
                values,
                correction: None,
            };
            HiddenClause {
                span,
                values: current_values(text, &analysis),
                analysis,
            }
        })
        .collect();
    HIDDEN.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= ANALYSES_KEPT {
            m.clear();
        }
        m.insert(sentence.to_string(), out.clone());
    });
    out
}

/// The clauses of `sentence` that state a value: each clause's span, and its values relative
/// to the clause.
pub(super) fn value_clauses(sentence: &str) -> Vec<(Span, Vec<Span>)> {
    let a = analyse(sentence);
    if a.values.is_empty() {
        return Vec::new();
    }
    clauses(sentence, &a.values)
        .into_iter()
        .filter(|c| !c.values.is_empty())
        .map(|c| {
            let rel = c
                .values
                .iter()
                .map(|&(s, e)| (s - c.start, e - c.start))
                .collect();
            ((c.start, c.end), rel)
        })
        .collect()
}

fn analyse_fresh(text: &str) -> Analysis {
    let mut lits: Vec<Span> = Vec::new();
    scan_literals(text, true, &mut |t, _| {
        let s = t.as_ptr() as usize - text.as_ptr() as usize;
        lits.push((s, s + t.len()));
    });
    analyse_with(text, &lits)
}

/// Analyses a clause whose values are known.
pub(super) fn analyse_values(text: &str, values: Vec<Span>) -> Analysis {
    let correction = correction(text, &values);
    let subject = subject_in(text, &values);
    Analysis {
        values,
        subject,
        correction,
    }
}

/// Analyses a clause whose literal spans are known.
pub(super) fn analyse_with(text: &str, literals: &[Span]) -> Analysis {
    let mut values = value_spans(text, literals);
    let mut correction = correction(text, &values);
    if correction.is_none_or(|c| c.old.is_none())
        && let Some(old) = add_text_correction(text, &mut values)
    {
        // A correction in words: its new and its old value are phrases.
        correction = Some(Correction {
            strong: true,
            old: Some(old),
        });
    }
    widen_to_phrase(text, &mut values, correction.is_some_and(|c| c.strong));
    if values.is_empty()
        && let Some(v) = copula_value(text).or_else(|| {
            correction
                .filter(|c| c.strong)
                .and_then(|_| new_value_only(text))
        })
    {
        values.push(v);
    }
    let subject = subject_in(text, &values);
    Analysis {
        values,
        subject,
        correction,
    }
}
