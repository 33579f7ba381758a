//! What a recomputation says about a figure: it agrees within the figure's precision, it
//! differs (a finding with both values and both derivations, tied to the answer and to the
//! outputs the figure rested on), or the reviewer could not compute it (an open question).

use decima_core::{RiskLevel, Severity};
use decima_figures::{Figure, agrees, scan};
use decima_store::NewFinding;

use super::chosen::Chosen;
use super::worker::Recomputed;
use crate::figures::FigureCheck;

/// The outcome for one figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// The same value within the figure's precision.
    Agrees,
    /// Another value.
    Differs,
    /// No value, or one that is no number.
    NotComputed,
}

/// Compares what the reviewer reached with the figure as the answer wrote it.
pub(super) fn judge(figure: &FigureCheck, got: &Recomputed) -> Verdict {
    let Some(value) = got.value.as_deref() else {
        return Verdict::NotComputed;
    };
    let (Some(claimed), Some(recomputed)) = (first_figure(&figure.text), first_figure(value))
    else {
        return Verdict::NotComputed;
    };
    if agrees(&claimed, &recomputed) {
        Verdict::Agrees
    } else {
        Verdict::Differs
    }
}

/// The first number of `text` that makes a claim, else its first number ("2024" reported
/// alone is a value here, not a year).
fn first_figure(text: &str) -> Option<Figure> {
    let figures = scan(text);
    figures
        .iter()
        .find(|f| f.is_claim())
        .or(figures.first())
        .cloned()
}

/// The finding of a figure that recomputes to another value.
pub(super) fn finding(answer_seq: i64, chosen: &Chosen, got: &Recomputed) -> NewFinding {
    let f = &chosen.figure;
    let value = got.value.as_deref().unwrap_or_default();
    let mut evidence_seqs = vec![answer_seq];
    evidence_seqs.extend(f.source.iter().map(|s| s.message_seq));
    if let Some(d) = &f.derivation {
        evidence_seqs.extend(d.operands.iter().map(|o| o.message_seq));
    }
    evidence_seqs.sort_unstable();
    evidence_seqs.dedup();
    NewFinding {
        title: format!(
            "{} does not recompute: the run's inputs give {value}",
            f.text
        ),
        severity: Severity::High,
        argument: format!(
            "The answer says: \"{}\". Worked out again from the run's inputs as they were when \
             it started, in a fresh sandbox, without the agent's files or code, it is {value}. \
             The reviewer's derivation: {} The answer's: {}",
            f.sentence,
            got.derivation,
            support(f)
        ),
        evidence_seqs,
        recommendation: format!(
            "Correct figure {} ({}) to {value}, or show which input gives {}; the reviewer's \
             code is kept as its receipt (decima numbers … --message {answer_seq}).",
            chosen.number, f.text, f.text
        ),
    }
}

/// The open question of a figure the reviewer could not compute.
pub(super) fn question(chosen: &Chosen, got: &Recomputed) -> String {
    let f = &chosen.figure;
    match got.value.as_deref() {
        Some(v) => format!(
            "Figure {} ({}, in \"{}\"): the reviewer reported {v:?}, which is not a number; {}",
            chosen.number, f.text, f.sentence, got.derivation
        ),
        None => format!(
            "Figure {} ({}, in \"{}\") could not be recomputed from the run's inputs: {}",
            chosen.number, f.text, f.sentence, got.derivation
        ),
    }
}

/// What the answer's figure rested on, in words.
fn support(f: &FigureCheck) -> String {
    if let Some(s) = &f.source {
        return format!(
            "the output of message {} holds {} ({}).",
            s.message_seq, s.text, s.subject
        );
    }
    if let Some(d) = &f.derivation {
        return format!("{}.", d.formula);
    }
    "no tool output holds it.".to_owned()
}

/// The review's risk: any figure that differs is high, one not computed is low.
pub(super) fn risk(verdicts: &[Verdict]) -> RiskLevel {
    if verdicts.contains(&Verdict::Differs) {
        RiskLevel::High
    } else if verdicts.contains(&Verdict::NotComputed) {
        RiskLevel::Low
    } else {
        RiskLevel::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::FigureStatus;

    fn got(value: Option<&str>) -> Recomputed {
        Recomputed {
            value: value.map(str::to_owned),
            derivation: "summed the revenue column".into(),
            code: String::new(),
            steps: 2,
        }
    }

    fn figure(text: &str) -> FigureCheck {
        FigureCheck {
            text: text.into(),
            start: 0,
            end: 0,
            sentence: format!("Revenue was {text}."),
            subject: String::new(),
            status: FigureStatus::Unlinked,
            source: None,
            derivation: None,
            recomputed: None,
        }
    }

    #[test]
    fn a_value_agrees_differs_or_was_not_computed() {
        assert_eq!(
            judge(&figure("$3.58M"), &got(Some("3580245"))),
            Verdict::Agrees
        );
        assert_eq!(
            judge(&figure("3,580,245"), &got(Some("3,580,254"))),
            Verdict::Differs
        );
        assert_eq!(
            judge(&figure("3,580,245"), &got(None)),
            Verdict::NotComputed
        );
        assert_eq!(
            judge(&figure("3,580,245"), &got(Some("unknown"))),
            Verdict::NotComputed
        );
        assert_eq!(
            risk(&[Verdict::Agrees, Verdict::NotComputed]),
            RiskLevel::Low
        );
        assert_eq!(risk(&[Verdict::Agrees, Verdict::Differs]), RiskLevel::High);
        assert_eq!(risk(&[Verdict::Agrees]), RiskLevel::None);
    }
}
