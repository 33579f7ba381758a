//! Every figure of an answer matched against a ledger: linked to the source that holds its
//! value, derived from figures that are, or unlinked.

use serde::{Deserialize, Serialize};

use crate::derive::{Derivation, derive};
use crate::figure::{Figure, units_compatible};
use crate::ledger::{Ledger, Origin};
use crate::reading::read_figures;
use crate::sentences::{sentence_bounds, words};

/// What the matcher found for a figure.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Status {
    /// A source holds the same value.
    Linked,
    /// Linked figures give it by a sum, difference, ratio, percentage change or mean.
    Derived,
    /// Neither: nothing the run saw supports it.
    Unlinked,
}

/// One figure of an answer and what supports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// The figure, its span in the answer.
    pub figure: Figure,
    /// The figure as written.
    pub text: String,
    /// What it is about, as the answer says.
    pub subject: String,
    /// Byte span of its sentence in the answer.
    pub sentence: (usize, usize),
    /// What was found.
    pub status: Status,
    /// The ledger entry that holds its value, when linked.
    pub entry: Option<u32>,
    /// How linked figures give it, when derived.
    pub derivation: Option<Derivation>,
}

/// Candidates read per figure: a value that hundreds of sources hold ("1", "100") is matched
/// against the nearest few hundred, ranked by subject.
const MAX_CANDIDATES: usize = 256;

/// Matches every claim of `answer` against `ledger`. A figure that only the analyst's own
/// messages hold is theirs, not a claim, and is left out.
#[must_use]
pub fn check_answer(answer: &str, ledger: &Ledger) -> Vec<Check> {
    check_answer_before(answer, ledger, i64::MAX)
}

/// [`check_answer`] against the sources stored before message `seq` only: an answer rests on
/// what came before it, so a conversation's one ledger serves each of its answers.
#[must_use]
pub fn check_answer_before(answer: &str, ledger: &Ledger, seq: i64) -> Vec<Check> {
    let mut checks = Vec::new();
    for located in read_figures(answer) {
        let figure = located.figure;
        let sentence = sentence_bounds(answer, figure.start);
        let context = words(&answer[sentence.0..sentence.1]);
        let (status, entry) = match best_link(&figure, &context, ledger, seq) {
            Link::Analyst => continue,
            Link::Entry(entry) => (Status::Linked, Some(entry)),
            Link::None => (Status::Unlinked, None),
        };
        checks.push(Check {
            text: answer[figure.start..figure.end].to_owned(),
            figure,
            subject: located.subject.to_string(),
            sentence,
            status,
            entry,
            derivation: None,
        });
    }
    derive_unlinked(&mut checks, ledger);
    checks
}

enum Link {
    Entry(u32),
    Analyst,
    None,
}

/// How far a source's value may sit from the figure and still be the one it rounds.
pub(crate) fn tolerance(figure: &Figure) -> f64 {
    figure.half_unit() * (1.0 + 1e-9) + figure.magnitude().abs() * 1e-12
}

/// How many values a window as wide as a figure's tolerance holds by chance, at most, for the
/// value alone to link it: above this, a large ledger holds some value that close whatever the
/// figure, and the link must agree on what the figure is about too.
const CHANCE_LIMIT: f64 = 0.05;
/// The ledger's density near a value is read over a window this many times the tolerance.
const DENSITY_SPAN: f64 = 40.0;

/// The entry an answer's figure most plausibly came from: the same value within the rounding
/// the figure's digits imply, with a compatible unit, among sources stored before `before_seq`.
/// Where the ledger is so dense near the value that some entry would match by chance, only an
/// entry whose row the figure's sentence names in full (its column may stay implied) counts. Of the rest, the one sharing
/// the most subject words with the sentence wins, then the closest value, then the newest.
fn best_link(figure: &Figure, context: &[String], ledger: &Ledger, before_seq: i64) -> Link {
    let tol = tolerance(figure);
    let target = figure.magnitude().abs();
    #[allow(clippy::cast_precision_loss)]
    let chance = ledger.near(target, tol * DENSITY_SPAN).len() as f64 / DENSITY_SPAN;
    let value_alone = chance <= CHANCE_LIMIT;
    let mut best: Option<(usize, f64, u32)> = None;
    let mut analyst = false;
    for &index in ledger.near(target, tol).iter().take(MAX_CANDIDATES) {
        let Some(entry) = ledger.entry(index) else {
            continue;
        };
        if !units_compatible(figure.unit, entry.unit) {
            continue;
        }
        let Some(source) = ledger.source_of(entry) else {
            continue;
        };
        if source.message_seq >= before_seq {
            continue;
        }
        let (row, column) = entry.subject.word_parts();
        let shared_row = row.iter().filter(|w| context.contains(w)).count();
        let shared = shared_row + column.iter().filter(|w| context.contains(w)).count();
        // The whole row, and the column if there is no row: "North brought in 1.2 million" is
        // about "revenue · North" without naming the column.
        let named = if row.is_empty() {
            !column.is_empty() && shared == column.len()
        } else {
            shared_row == row.len()
        };
        if !value_alone && !named {
            continue;
        }
        if source.origin == Origin::Analyst {
            analyst = true;
            continue;
        }
        let distance = (entry.magnitude().abs() - target).abs();
        let better = best.is_none_or(|(s, d, i)| {
            shared > s || (shared == s && (distance < d || (distance == d && index > i)))
        });
        if better {
            best = Some((shared, distance, index));
        }
    }
    match (best, analyst) {
        (Some((_, _, index)), _) => Link::Entry(index),
        (None, true) => Link::Analyst,
        (None, false) => Link::None,
    }
}

/// Tries each unlinked figure as a result of the figures linked in its sentence and the other
/// figures of those entries' table rows. Only the sentence's own figures are operands: every
/// operand more is another chance for a made-up figure to match some combination by accident.
fn derive_unlinked(checks: &mut [Check], ledger: &Ledger) {
    let linked: Vec<((usize, usize), u32)> = checks
        .iter()
        .filter_map(|c| c.entry.map(|e| (c.sentence, e)))
        .collect();
    for check in checks.iter_mut().filter(|c| c.status == Status::Unlinked) {
        let pool = operand_pool(&linked, check.sentence, ledger);
        if let Some(derivation) = derive(&check.figure, &pool, ledger) {
            check.status = Status::Derived;
            check.derivation = Some(derivation);
        }
    }
}

/// Operands a figure may be derived from: the entries linked by its sentence's figures, then
/// the other figures of those entries' rows.
pub(crate) struct Pool {
    /// Linked by the sentence's own figures.
    pub direct: Vec<u32>,
    /// The rest of those entries' rows.
    pub neighbours: Vec<u32>,
}

/// At most this many row neighbours are operands.
const MAX_NEIGHBOURS: usize = 8;

fn operand_pool(
    linked: &[((usize, usize), u32)],
    sentence: (usize, usize),
    ledger: &Ledger,
) -> Pool {
    let mut direct: Vec<u32> = Vec::new();
    for (_, entry) in linked.iter().filter(|l| l.0 == sentence) {
        if !direct.contains(entry) {
            direct.push(*entry);
        }
    }
    let mut neighbours: Vec<u32> = Vec::new();
    for entry in &direct {
        for neighbour in ledger.row_of(*entry) {
            if neighbours.len() < MAX_NEIGHBOURS
                && !direct.contains(&neighbour)
                && !neighbours.contains(&neighbour)
            {
                neighbours.push(neighbour);
            }
        }
    }
    Pool { direct, neighbours }
}
