//! Merging the answers of a review's passes into one review. Nothing a pass found is dropped:
//! findings that name the same problem (the same title once normalised, or evidence in common
//! and titles alike) become one, with their evidence seqs unioned and sorted, the highest
//! severity, and every distinct argument and recommendation; the risk is the highest any pass
//! gave, and at least the worst finding's severity; summaries and open questions are combined
//! without duplicates, closed findings unioned.

use std::collections::BTreeSet;

use decima_core::RiskLevel;
use decima_store::NewFinding;

use super::answer::Answer;

/// Titles with at least this share of their words in common (Jaccard) name the same problem
/// when their findings also cite a message in common.
const SIMILAR_TITLES: f64 = 0.5;

/// Words that say nothing about which problem a title names.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "not", "of",
    "on", "or", "the", "to", "was", "with",
];

/// One pass's answer, with what names the pass in the merged summary (`pass 2, seqs 801–1,200`).
#[derive(Debug, Clone)]
pub struct PassAnswer {
    /// `pass 2 (seqs 801–1,200)`.
    pub label: String,
    /// The checked answer.
    pub answer: Answer,
}

/// Merges the passes' answers, in pass order, into one answer.
pub fn merge(mut passes: Vec<PassAnswer>) -> Answer {
    if passes.len() == 1
        && let Some(only) = passes.pop()
    {
        return only.answer;
    }
    let mut findings: Vec<NewFinding> = Vec::new();
    let mut risk = RiskLevel::None;
    let mut summaries: Vec<(RiskLevel, usize, String)> = Vec::new();
    let mut seen_summaries: BTreeSet<String> = BTreeSet::new();
    let mut questions: Vec<String> = Vec::new();
    let mut seen_questions: BTreeSet<String> = BTreeSet::new();
    let mut closes: Vec<(String, String)> = Vec::new();
    for (i, pass) in passes.into_iter().enumerate() {
        let a = pass.answer;
        let pass_risk = a.risk_level;
        risk = risk.max(pass_risk);
        if seen_summaries.insert(normalise(&a.summary)) {
            summaries.push((pass_risk, i, format!("{}: {}", pass.label, a.summary)));
        }
        for q in a.open_questions {
            if seen_questions.insert(normalise(&q)) {
                questions.push(q);
            }
        }
        for (id, reason) in a.closes {
            match closes.iter_mut().find(|(c, _)| *c == id) {
                Some((_, r)) if !r.contains(&reason) => {
                    r.push_str("; ");
                    r.push_str(&reason);
                }
                Some(_) => {}
                None => closes.push((id, reason)),
            }
        }
        for f in a.findings {
            match findings.iter_mut().find(|m| same_problem(m, &f)) {
                Some(m) => absorb(m, f),
                None => findings.push(f),
            }
        }
    }
    // The most dangerous first, as a single review lists them; ties keep their order.
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    let worst = findings
        .iter()
        .map(|f| f.severity.least_risk())
        .max()
        .unwrap_or_default();
    risk = risk.max(worst);
    // The riskiest passes' verdicts first.
    summaries.sort_by_key(|(r, i, _)| (std::cmp::Reverse(*r), *i));
    Answer {
        risk_level: risk,
        summary: summaries
            .into_iter()
            .map(|(_, _, s)| s)
            .collect::<Vec<_>>()
            .join("\n"),
        findings,
        open_questions: questions,
        closes,
    }
}

/// Whether two findings name the same problem: the same normalised title, or evidence in
/// common and titles alike.
pub fn same_problem(a: &NewFinding, b: &NewFinding) -> bool {
    let (ta, tb) = (normalise(&a.title), normalise(&b.title));
    if ta == tb {
        return true;
    }
    let shared = a.evidence_seqs.iter().any(|s| b.evidence_seqs.contains(s));
    shared && similarity(&ta, &tb) >= SIMILAR_TITLES
}

/// Folds `other` into `into`: evidence unioned and sorted, the higher severity (and its title),
/// every distinct argument and recommendation kept.
fn absorb(into: &mut NewFinding, other: NewFinding) {
    let mut seqs: BTreeSet<i64> = into.evidence_seqs.iter().copied().collect();
    seqs.extend(other.evidence_seqs.iter().copied());
    into.evidence_seqs = seqs.into_iter().collect();
    if other.severity > into.severity {
        into.severity = other.severity;
        into.title = other.title;
    }
    append_distinct(&mut into.argument, &other.argument);
    append_distinct(&mut into.recommendation, &other.recommendation);
}

fn append_distinct(text: &mut String, more: &str) {
    if !normalise(text).contains(&normalise(more)) {
        text.push_str("\n\n");
        text.push_str(more);
    }
}

/// Lower case, punctuation gone, one space between words.
fn normalise(text: &str) -> String {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The words of a normalised title that name something; each CJK character counts as one,
/// since such titles have no spaces.
fn words(title: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for w in title.split(' ') {
        if w.chars().any(is_cjk) {
            out.extend(w.chars().map(String::from));
        } else if !STOP_WORDS.contains(&w) {
            out.insert(w.to_owned());
        }
    }
    out
}

fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30ff}' | '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}' | '\u{ac00}'..='\u{d7af}')
}

/// The Jaccard similarity of two normalised titles' words.
fn similarity(a: &str, b: &str) -> f64 {
    let (wa, wb) = (words(a), words(b));
    let union = wa.union(&wb).count();
    if union == 0 {
        return 0.0;
    }
    wa.intersection(&wb).count() as f64 / union as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(title: &str, severity: &str, seqs: &[i64], argument: &str) -> NewFinding {
        NewFinding {
            title: title.into(),
            severity: severity.parse().unwrap(),
            argument: argument.into(),
            evidence_seqs: seqs.to_vec(),
            recommendation: format!("Check {title}."),
        }
    }

    fn pass(label: &str, risk: &str, findings: Vec<NewFinding>, questions: &[&str]) -> PassAnswer {
        PassAnswer {
            label: label.into(),
            answer: Answer {
                risk_level: risk.parse().unwrap(),
                summary: format!("{label} says {risk}."),
                findings,
                open_questions: questions.iter().map(|q| (*q).to_owned()).collect(),
                closes: Vec::new(),
            },
        }
    }

    #[test]
    fn the_same_title_merges_across_passes_with_evidence_unioned_and_the_worst_severity() {
        let merged = merge(vec![
            pass(
                "pass 1",
                "medium",
                vec![finding(
                    "Refunds are not subtracted",
                    "medium",
                    &[40, 12],
                    "The sum at 12 adds sales only.",
                )],
                &["Which FX rate?"],
            ),
            pass(
                "pass 2",
                "high",
                vec![finding(
                    "refunds are NOT subtracted!",
                    "high",
                    &[900, 40],
                    "Seq 900 repeats the error.",
                )],
                &["which fx rate"],
            ),
        ]);
        assert_eq!(merged.findings.len(), 1);
        let f = &merged.findings[0];
        assert_eq!(f.evidence_seqs, vec![12, 40, 900]);
        assert_eq!(f.severity.as_str(), "high");
        assert!(f.argument.contains("adds sales only") && f.argument.contains("repeats the error"));
        assert_eq!(merged.risk_level.as_str(), "high");
        assert_eq!(merged.open_questions, vec!["Which FX rate?".to_owned()]);
        // The riskier pass's verdict comes first; both are kept.
        assert!(merged.summary.starts_with("pass 2"), "{}", merged.summary);
        assert!(merged.summary.contains("pass 1"));
    }

    #[test]
    fn overlapping_evidence_with_similar_titles_merges_but_different_problems_stay_apart() {
        let merged = merge(vec![
            pass(
                "pass 1",
                "low",
                vec![
                    finding(
                        "Churn cut-off changed silently",
                        "low",
                        &[300],
                        "0.71 became 0.74.",
                    ),
                    finding("Replica host is stale", "low", &[310], "The host moved."),
                ],
                &[],
            ),
            pass(
                "pass 2",
                "medium",
                vec![
                    // Shares seq 300 and most words: the same problem.
                    finding(
                        "The churn cut-off changed",
                        "medium",
                        &[300, 1_200],
                        "Seq 1200 uses 0.74.",
                    ),
                    // Shares seq 310 but names another problem: kept apart.
                    finding(
                        "Memo leaks customer names",
                        "medium",
                        &[310],
                        "Names at 310.",
                    ),
                    // Same words, no shared evidence, different title: kept apart.
                    finding(
                        "Cut-off of churn model unexplained",
                        "low",
                        &[5],
                        "Why 0.71?",
                    ),
                ],
                &[],
            ),
        ]);
        let titles: Vec<&str> = merged.findings.iter().map(|f| f.title.as_str()).collect();
        assert_eq!(merged.findings.len(), 4, "{titles:?}");
        let churn = merged
            .findings
            .iter()
            .find(|f| f.evidence_seqs.contains(&1_200))
            .unwrap();
        assert_eq!(churn.evidence_seqs, vec![300, 1_200]);
        assert_eq!(churn.severity.as_str(), "medium");
        assert_eq!(churn.title, "The churn cut-off changed");
        // Nothing dropped: every seq any pass cited is still cited.
        let cited: BTreeSet<i64> = merged
            .findings
            .iter()
            .flat_map(|f| f.evidence_seqs.iter().copied())
            .collect();
        assert_eq!(cited, BTreeSet::from([5, 300, 310, 1_200]));
        // The most severe first.
        assert!(
            merged.findings[0].severity.as_str() == "medium"
                && merged.findings[1].severity.as_str() == "medium"
        );
    }

    #[test]
    fn the_highest_risk_wins_even_from_a_pass_without_findings_and_closes_are_unioned() {
        let mut quiet = pass("pass 1", "critical", vec![], &[]);
        quiet.answer.closes = vec![("f1".into(), "seq 30 fixes it".into())];
        let mut other = pass(
            "pass 2",
            "low",
            vec![finding("Minor", "low", &[2], "x")],
            &[],
        );
        other.answer.closes = vec![
            ("f1".into(), "seq 31 confirms".into()),
            ("f2".into(), "gone".into()),
        ];
        let merged = merge(vec![quiet, other]);
        assert_eq!(merged.risk_level.as_str(), "critical");
        assert_eq!(merged.closes.len(), 2);
        assert_eq!(merged.closes[0].1, "seq 30 fixes it; seq 31 confirms");
        // A pass's risk below its own findings cannot pull the merged risk below them.
        let merged = merge(vec![
            pass("pass 1", "none", vec![], &[]),
            pass(
                "pass 2",
                "high",
                vec![finding("Bad", "high", &[1], "y")],
                &[],
            ),
        ]);
        assert_eq!(merged.risk_level.as_str(), "high");
    }

    #[test]
    fn chinese_titles_are_compared_by_character() {
        let a = finding("退款没有扣除", "high", &[7], "甲");
        let b = finding("退款金额没有扣除", "medium", &[7, 9], "乙");
        assert!(same_problem(&a, &b));
        let c = finding("客户姓名泄露", "medium", &[7], "丙");
        assert!(!same_problem(&a, &c));
    }
}
