//! Reading the reviewer's answer: JSON only, checked field by field. Nothing is guessed: an
//! answer that is not the object asked for is refused with the reason, which goes back to the
//! reviewer once as a repair request.

use std::collections::BTreeSet;

use decima_core::{RiskLevel, Severity};
use decima_store::NewFinding;
use serde::Deserialize;

/// A validated answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// How much it thinks is wrong.
    pub risk_level: RiskLevel,
    /// The reviewer's summary.
    pub summary: String,
    /// Its findings.
    pub findings: Vec<NewFinding>,
    /// Questions the history does not answer.
    pub open_questions: Vec<String>,
    /// Earlier open findings it closes, with the reason.
    pub closes: Vec<(String, String)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAnswer {
    risk_level: String,
    summary: String,
    findings: Vec<RawFinding>,
    open_questions: Vec<String>,
    #[serde(default)]
    closed_findings: Vec<RawClosed>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFinding {
    title: String,
    severity: String,
    argument: String,
    evidence_seqs: Vec<i64>,
    recommendation: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClosed {
    id: String,
    reason: String,
}

/// What the checks need to know about the conversation.
pub struct Checks<'a> {
    /// Whether every finding must cite at least one message (not for a review of given content).
    pub evidence_required: bool,
    /// The ids of the open findings the reviewer was shown: the only ones it may close.
    pub open_ids: &'a BTreeSet<String>,
}

/// The JSON object of an answer: the whole text, or the one fenced block it holds. Anything
/// else around the object is refused rather than cut away, so prose never slips into a field.
fn json_text(text: &str) -> &str {
    let trimmed = text.trim();
    if let Some(rest) = trimmed.strip_prefix("```") {
        let rest = rest.strip_prefix("json").unwrap_or(rest);
        if let Some(body) = rest.trim_end().strip_suffix("```") {
            return body.trim();
        }
    }
    trimmed
}

/// Parses and checks an answer. The seqs are checked against the store by the caller, which
/// passes the ones that are not live messages in `missing_seqs` on a second call.
pub fn parse(text: &str, checks: &Checks<'_>) -> Result<Answer, String> {
    let raw: RawAnswer = serde_json::from_str(json_text(text)).map_err(|e| {
        format!("the answer is not the JSON object asked for ({e}); answer with the object only")
    })?;
    let stated: RiskLevel = raw
        .risk_level
        .trim()
        .to_ascii_lowercase()
        .parse()
        .map_err(|_| {
            format!(
                "risk_level {:?} is not one of {}",
                raw.risk_level,
                RiskLevel::names()
            )
        })?;
    if raw.summary.trim().is_empty() {
        return Err("summary is empty".into());
    }
    let mut findings = Vec::with_capacity(raw.findings.len());
    for (i, f) in raw.findings.into_iter().enumerate() {
        let n = i + 1;
        let Ok(severity) = f.severity.trim().to_ascii_lowercase().parse::<Severity>() else {
            return Err(format!(
                "finding {n}: severity {:?} is not one of {}",
                f.severity,
                Severity::names()
            ));
        };
        for (field, value) in [
            ("title", &f.title),
            ("argument", &f.argument),
            ("recommendation", &f.recommendation),
        ] {
            if value.trim().is_empty() {
                return Err(format!("finding {n}: {field} is empty"));
            }
        }
        if checks.evidence_required && f.evidence_seqs.is_empty() {
            return Err(format!(
                "finding {n} cites no evidence: evidence_seqs must name the seq of at least one \
                 message shown"
            ));
        }
        let mut seqs = f.evidence_seqs;
        seqs.sort_unstable();
        seqs.dedup();
        findings.push(NewFinding {
            title: f.title.trim().to_owned(),
            severity,
            argument: f.argument.trim().to_owned(),
            evidence_seqs: seqs,
            recommendation: f.recommendation.trim().to_owned(),
        });
    }
    let mut closes = Vec::new();
    for c in raw.closed_findings {
        if !checks.open_ids.contains(&c.id) {
            return Err(format!(
                "closed_findings names {:?}, which is not one of the open findings shown",
                c.id
            ));
        }
        closes.push((c.id, c.reason.trim().to_owned()));
    }
    // The risk is at least what the worst finding says: a reviewer that rates its own finding
    // above its verdict (small models do, under a schema that holds the shape but not this rule)
    // has told us the risk is at least that, so the level is raised rather than the review lost.
    let worst = findings
        .iter()
        .map(|f: &NewFinding| f.severity.least_risk())
        .max();
    let risk_level = worst.map_or(stated, |worst| worst.max(stated));
    Ok(Answer {
        risk_level,
        summary: raw.summary.trim().to_owned(),
        findings,
        open_questions: raw
            .open_questions
            .into_iter()
            .map(|q| q.trim().to_owned())
            .filter(|q| !q.is_empty())
            .collect(),
        closes,
    })
}

/// Every seq the answer cites, once.
pub fn cited(answer: &Answer) -> Vec<i64> {
    let set: BTreeSet<i64> = answer
        .findings
        .iter()
        .flat_map(|f| f.evidence_seqs.iter().copied())
        .collect();
    set.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checks(open: &BTreeSet<String>) -> Checks<'_> {
        Checks {
            evidence_required: true,
            open_ids: open,
        }
    }

    const GOOD: &str = r#"{"risk_level":"high","summary":"The total ignores refunds.",
        "findings":[{"title":"Refunds missing","severity":"high","argument":"seq 4 sums sales only",
        "evidence_seqs":[4,2,4],"recommendation":"Subtract refunds"}],"open_questions":["Which FX rate?"]}"#;

    #[test]
    fn a_valid_answer_is_read_and_its_seqs_deduplicated() {
        let open = BTreeSet::new();
        let a = parse(GOOD, &checks(&open)).unwrap();
        assert_eq!(a.risk_level, RiskLevel::High);
        assert_eq!(a.findings[0].evidence_seqs, vec![2, 4]);
        assert_eq!(cited(&a), vec![2, 4]);
        assert!(a.risk_level.contests());
    }

    #[test]
    fn a_fenced_block_is_accepted_but_prose_around_json_is_not() {
        let open = BTreeSet::new();
        assert!(parse(&format!("```json\n{GOOD}\n```"), &checks(&open)).is_ok());
        let err = parse(&format!("Here is my review: {GOOD}"), &checks(&open)).unwrap_err();
        assert!(err.contains("not the JSON object"), "{err}");
    }

    #[test]
    fn a_risk_level_below_the_worst_finding_is_raised_to_it_never_left_below() {
        let open = BTreeSet::new();
        for stated in ["none", "low", "medium"] {
            let a = parse(
                &GOOD.replace(
                    "\"risk_level\":\"high\"",
                    &format!("\"risk_level\":\"{stated}\""),
                ),
                &checks(&open),
            )
            .unwrap();
            assert_eq!(a.risk_level, RiskLevel::High, "stated {stated}");
            assert!(a.risk_level.contests());
        }
        // A verdict above the findings stands.
        let a = parse(
            &GOOD.replace("\"risk_level\":\"high\"", "\"risk_level\":\"critical\""),
            &checks(&open),
        )
        .unwrap();
        assert_eq!(a.risk_level, RiskLevel::Critical);
    }

    #[test]
    fn unknown_levels_missing_evidence_and_unknown_closures_are_refused() {
        let open = BTreeSet::from(["f1".to_owned()]);
        assert!(
            parse(
                &GOOD.replace("\"high\",\"summary\"", "\"severe\",\"summary\""),
                &checks(&open)
            )
            .is_err()
        );
        assert!(
            parse(&GOOD.replace("[4,2,4]", "[]"), &checks(&open))
                .unwrap_err()
                .contains("no evidence")
        );
        let closing = GOOD.replace(
            "\"open_questions\"",
            "\"closed_findings\":[{\"id\":\"f9\",\"reason\":\"fixed\"}],\"open_questions\"",
        );
        assert!(parse(&closing, &checks(&open)).unwrap_err().contains("f9"));
        let closing = closing.replace("f9", "f1");
        assert_eq!(
            parse(&closing, &checks(&open)).unwrap().closes,
            vec![("f1".into(), "fixed".into())]
        );
    }
}
