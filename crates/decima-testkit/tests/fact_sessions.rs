//! The statement fixtures plant what they say, where they say, in both languages; and the
//! checker counts a statement only where its subject and whole value survive together.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use decima_core::Role;
use decima_testkit::fact_sessions::{
    Fact, FactKind, FactSession, Language, Verdict, generate, score, statement_kept,
};

const LANGUAGES: [Language; 2] = [Language::English, Language::Chinese];

fn fact(kind: FactKind, subject: &[&str], value: &str) -> Fact {
    Fact {
        id: "t".into(),
        kind,
        subject: subject.iter().map(|s| s.to_string()).collect(),
        row: None,
        value: value.into(),
        replaced: None,
        by: Role::User,
        position: 1,
        stated_at: None,
    }
}

fn correction(subject: &[&str], value: &str, old: &str) -> Fact {
    Fact {
        replaced: Some(old.into()),
        stated_at: Some(1),
        ..fact(FactKind::Correction, subject, value)
    }
}

fn cell(column: &[&str], row: Option<&str>, value: &str) -> Fact {
    Fact {
        row: row.map(str::to_string),
        ..fact(FactKind::TableCell, column, value)
    }
}

fn has_cjk(s: &str) -> bool {
    s.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

// ---- the sessions ----

#[test]
fn same_seed_same_session_at_exact_lengths() {
    for language in LANGUAGES {
        for len in [0, 1, 2, 3, 7, 39, 40, 41, 97, 2_000, 10_000] {
            let a = generate(11, len, language);
            assert_eq!(a.messages.len(), len, "{language:?} {len}");
            if len >= 2_000 {
                assert_eq!(a, generate(11, len, language), "{language:?} {len}");
                assert_ne!(a.messages, generate(12, len, language).messages);
            }
        }
    }
}

#[test]
fn every_tool_call_is_answered_right_after() {
    for language in LANGUAGES {
        for seed in 0..4 {
            let s = generate(seed, 2_000 + seed as usize, language);
            let mut ids = HashSet::new();
            for (i, m) in s.messages.iter().enumerate() {
                m.validate().unwrap();
                assert!(m.tool_calls.len() <= 1);
                for call in &m.tool_calls {
                    assert!(ids.insert(call.id.clone()), "call id {} reused", call.id);
                    serde_json::from_str::<serde_json::Value>(&call.arguments).unwrap();
                    let next = &s.messages[i + 1];
                    assert_eq!(next.role, Role::Tool);
                    assert_eq!(next.tool_call_id.as_deref(), Some(call.id.as_str()));
                }
                if m.role == Role::Tool {
                    let prev = &s.messages[i - 1];
                    assert_eq!(
                        prev.role,
                        Role::Assistant,
                        "tool result #{} follows no call",
                        i + 1
                    );
                    assert_eq!(prev.tool_calls[0].id, *m.tool_call_id.as_ref().unwrap());
                }
            }
            assert_eq!(s.messages[0].role, Role::System);
            let calls = s
                .messages
                .iter()
                .filter(|m| !m.tool_calls.is_empty())
                .count();
            assert!(calls > 400, "{calls} tool calls");
        }
    }
}

#[test]
fn facts_are_spread_over_early_middle_and_late_thirds() {
    for language in LANGUAGES {
        for len in [2_000, 10_000] {
            let s = generate(3, len, language);
            let mut thirds = [0usize; 3];
            for f in &s.facts {
                thirds[(f.position - 1) * 3 / len] += 1;
            }
            let n = s.facts.len();
            for t in thirds {
                assert!(t * 5 >= n, "{language:?} {len}: thirds {thirds:?} of {n}");
            }
            // Corrections at a distance exist, as well as immediate ones.
            let gaps: Vec<usize> = s
                .facts
                .iter()
                .filter_map(|f| f.stated_at.map(|at| f.position - at))
                .collect();
            assert!(
                gaps.iter().any(|&g| g > 100),
                "{language:?} {len}: {gaps:?}"
            );
            assert!(gaps.iter().any(|&g| g < 5), "{language:?} {len}: {gaps:?}");
        }
    }
}

#[test]
fn every_fact_is_verbatim_in_its_message() {
    for language in LANGUAGES {
        for seed in 0..4 {
            let s = generate(seed, 2_000, language);
            let ids: HashSet<&str> = s.facts.iter().map(|f| f.id.as_str()).collect();
            assert_eq!(ids.len(), s.facts.len(), "ids are unique");
            assert!(s.facts.windows(2).all(|w| w[0].position <= w[1].position));
            for f in &s.facts {
                let m = &s.messages[f.position - 1];
                assert!(m.content.contains(&f.value), "{f:?} not in {:?}", m.content);
                assert_eq!(m.role, f.by, "{f:?}");
                assert!(!f.subject.is_empty() && !f.value.trim().is_empty(), "{f:?}");
                if let Some(row) = &f.row {
                    assert!(m.content.contains(row.as_str()), "{f:?}");
                }
                match (f.kind, &f.replaced, f.stated_at) {
                    (FactKind::Correction, Some(old), Some(at)) => {
                        assert!(at <= f.position && old != &f.value, "{f:?}");
                        let said = &s.messages[at - 1];
                        assert_eq!(said.role, Role::User);
                        assert!(
                            said.content.contains(old.as_str()),
                            "{f:?} in {:?}",
                            said.content
                        );
                    }
                    (FactKind::Correction, _, _) => {
                        panic!("a correction without its old value: {f:?}")
                    }
                    (_, None, None) => {}
                    _ => panic!("only corrections replace values: {f:?}"),
                }
                match f.kind {
                    FactKind::ToolLabel => assert_eq!(f.by, Role::Tool),
                    FactKind::UserClause | FactKind::Correction | FactKind::Constraint => {
                        assert_eq!(f.by, Role::User)
                    }
                    FactKind::Restatement => {
                        assert_eq!(f.by, Role::Assistant);
                        // No user message says the value before the assistant does.
                        let said_first = s.messages[..f.position - 1]
                            .iter()
                            .any(|m| m.role == Role::User && m.content.contains(&f.value));
                        assert!(!said_first || f.value.len() < 4, "{f:?}");
                    }
                    FactKind::SpacedLiteral => {
                        assert!(f.value.contains([' ', '\u{a0}', '\u{202f}']), "{f:?}")
                    }
                    _ => {}
                }
            }
        }
    }
}

#[test]
fn every_kind_in_both_languages_at_2k() {
    for language in LANGUAGES {
        for seed in 0..6 {
            let s = generate(seed, 2_000, language);
            let mut per_kind: HashMap<FactKind, usize> = HashMap::new();
            for f in &s.facts {
                *per_kind.entry(f.kind).or_default() += 1;
            }
            for kind in FactKind::ALL {
                let n = per_kind.get(&kind).copied().unwrap_or(0);
                assert!(
                    n >= 2,
                    "{language:?} seed {seed}: {n} {kind:?} in {per_kind:?}"
                );
            }
            assert!(
                s.facts.len() >= 55,
                "{language:?} seed {seed}: {}",
                s.facts.len()
            );
            let by: HashSet<Role> = s.facts.iter().map(|f| f.by).collect();
            assert_eq!(by.len(), 3, "facts by the user, the assistant and tools");
            let prose: String = s
                .messages
                .iter()
                .filter(|m| m.role != Role::Tool)
                .map(|m| m.content.as_str())
                .collect();
            match language {
                Language::Chinese => {
                    assert!(has_cjk(&prose));
                    for f in s.facts.iter().filter(|f| f.by == Role::User) {
                        assert!(f.subject.iter().any(|p| has_cjk(p)), "{f:?}");
                    }
                }
                Language::English => assert!(!has_cjk(&prose)),
            }
        }
    }
}

#[test]
fn the_noise_outnumbers_the_facts() {
    let s = generate(5, 10_000, Language::English);
    let text = s.transcript();
    let numbers = text
        .split(|c: char| !c.is_ascii_digit())
        .filter(|t| !t.is_empty())
        .count();
    assert!(
        numbers > 100 * s.facts.len(),
        "{numbers} numbers for {} facts",
        s.facts.len()
    );
    let polls = s
        .messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .filter(|c| c.arguments.contains("tail -n 8") || c.arguments.contains("grep -c ERROR"))
        .count();
    assert!(polls > 500, "{polls} polls");
    assert!(text.contains("Traceback (most recent call last)"));
    let long_prose = s
        .messages
        .iter()
        .filter(|m| m.role == Role::Assistant && m.content.len() > 500)
        .count();
    assert!(long_prose > 50, "{long_prose} long assistant messages");
}

#[test]
fn the_raw_session_holds_every_statement() {
    for (language, seed) in LANGUAGES
        .into_iter()
        .flat_map(|l| (0..3).map(move |s| (l, s)))
    {
        let s: FactSession = generate(seed, 2_000, language);
        let text = s.transcript();
        let plain: Vec<Fact> = s
            .facts
            .iter()
            .filter(|f| f.replaced.is_none())
            .cloned()
            .collect();
        let card = score(&text, &plain);
        assert_eq!(card.kept, card.total, "{language:?}\n{card}");
        for f in s.facts.iter().filter(|f| f.kind == FactKind::Correction) {
            let current = Fact {
                replaced: None,
                ..f.clone()
            };
            assert_eq!(statement_kept(&text, &current), Verdict::Kept, "{f:?}");
            // The old statement is still in the source, as current as it ever was: copying the
            // session verbatim does not keep a correction.
            if f.stated_at != Some(f.position) {
                assert_eq!(statement_kept(&text, f), Verdict::Stale, "{f:?}");
            }
        }
    }
}

#[test]
fn a_hundred_thousand_messages() {
    let start = Instant::now();
    let s = generate(1, 100_000, Language::English);
    let elapsed = start.elapsed();
    assert_eq!(s.messages.len(), 100_000);
    assert!(s.facts.len() >= 85, "{}", s.facts.len());
    let last = s.facts.iter().map(|f| f.position).max().unwrap();
    let first = s.facts.iter().map(|f| f.position).min().unwrap();
    assert!(first < 2_000 && last > 97_000, "{first}..{last}");
    eprintln!("100k messages, {} facts, in {elapsed:?}", s.facts.len());
}

// ---- the checker ----

#[test]
fn a_faithful_line_keeps_the_statement() {
    let f = fact(FactKind::UserClause, &["churn window"], "45 days");
    for text in [
        "- Churn window: 45 days (agreed with finance)",
        "The churn window we agreed on is 45 days.",
        "Agreed parameters:\n* churn windows are 45 days",
    ] {
        assert_eq!(statement_kept(text, &f), Verdict::Kept, "{text}");
    }
}

#[test]
fn a_bare_value_has_lost_its_subject() {
    let f = fact(FactKind::UserClause, &["churn window"], "45 days");
    assert_eq!(
        statement_kept("Parameters: 45 days, 0.72, EUR", &f),
        Verdict::SubjectLost
    );
    let label = fact(
        FactKind::ToolLabel,
        &["rows_dropped", "rows dropped", "dropped rows"],
        "1204",
    );
    assert_eq!(
        statement_kept("dedupe ran; 1204", &label),
        Verdict::SubjectLost
    );
    assert_eq!(
        statement_kept("dedupe: 1204 rows dropped", &label),
        Verdict::Kept
    );
}

#[test]
fn the_start_of_an_iban_is_truncated() {
    let f = fact(
        FactKind::SpacedLiteral,
        &["IBAN", "payout account"],
        "DE89 3704 0044 0532 0130 00",
    );
    assert_eq!(statement_kept("Payout IBAN: DE89", &f), Verdict::Truncated);
    assert_eq!(
        statement_kept("IBAN DE89 3704 0044…", &f),
        Verdict::Truncated
    );
    assert_eq!(statement_kept("no bank details", &f), Verdict::ValueMissing);
    assert_eq!(
        statement_kept("IBAN DE89 3704 0044 0532 0130 00", &f),
        Verdict::Kept
    );
    // Runs of spaces and no-break spaces are one space; nothing else is forgiven.
    assert_eq!(
        statement_kept(
            "payout account DE89\u{a0}3704  0044\t0532 0130\u{202f}00",
            &f
        ),
        Verdict::Kept
    );
    assert_eq!(
        statement_kept("IBAN DE8937040044053201300", &f),
        Verdict::ValueMissing
    );
}

#[test]
fn an_old_value_presented_alone_is_stale() {
    let f = correction(&["risk cut-off", "risk threshold"], "0.85", "0.8");
    assert_eq!(statement_kept("- risk threshold: 0.8", &f), Verdict::Stale);
    assert_eq!(
        statement_kept(
            "- risk threshold: 0.85\n- risk cut-off 0.8 (from the deck)",
            &f
        ),
        Verdict::Stale
    );
    assert_eq!(
        statement_kept("risk threshold 0.85 (was 0.8)", &f),
        Verdict::Kept
    );
    assert_eq!(statement_kept("risk threshold 0.85", &f), Verdict::Kept);
    // 0.8 is not inside 0.85, and an old value without the subject is no claim.
    assert_eq!(
        statement_kept("risk cut-off 0.85; AUC 0.8", &f),
        Verdict::Kept
    );
    assert_eq!(
        statement_kept("values seen: 0.8", &f),
        Verdict::ValueMissing
    );
}

#[test]
fn a_cell_under_its_header_is_kept() {
    let f = cell(&["churn_rate", "churn rate"], Some("DACH"), "4.37%");
    let table = "| region | subscribers | churn_rate |\n|---|---|---|\n| DACH | 41,220 | 4.37% |\n";
    assert_eq!(statement_kept(table, &f), Verdict::Kept);
    assert_eq!(statement_kept("DACH churn rate 4.37%", &f), Verdict::Kept);
    // The header must be in the same block, and the row must be named.
    let split = "| region | subscribers | churn_rate |\n\n| DACH | 41,220 | 4.37% |\n";
    assert_eq!(statement_kept(split, &f), Verdict::SubjectLost);
    let unnamed = "| region | subscribers | churn_rate |\n|---|---|---|\n| | 41,220 | 4.37% |\n";
    assert_eq!(statement_kept(unnamed, &f), Verdict::SubjectLost);
    // A one-row result is named by its column alone.
    let single = cell(&["active_subscribers"], None, "183204");
    let psql = " active_subscribers\n--------------------\n             183204\n(1 row)\n";
    assert_eq!(statement_kept(psql, &single), Verdict::Kept);
    // CSV: commas separate fields, not thousands.
    let csv_cell = cell(&["seats"], Some("A-98344"), "111");
    let csv = "account_id,plan,seats,mrr_eur\nA-98344,Enterprise,111,695.96\n";
    assert_eq!(statement_kept(csv, &csv_cell), Verdict::Kept);
}

#[test]
fn a_value_far_from_its_subject_is_lost() {
    let f = fact(FactKind::UserClause, &["churn window"], "45 days");
    let text =
        "The churn window was discussed at length.\n\nOther notes.\nThe lookback is 45 days.";
    assert_eq!(statement_kept(text, &f), Verdict::SubjectLost);
    let apart = "## Churn window\n\nWe went with 45 days.";
    assert_eq!(statement_kept(apart, &f), Verdict::SubjectLost);
}

#[test]
fn a_label_or_bullet_carries_its_subject() {
    let f = fact(
        FactKind::SpacedLiteral,
        &["IBAN", "payout account"],
        "DE89 3704 0044 0532 0130 00",
    );
    assert_eq!(
        statement_kept("Payout account:\nDE89 3704 0044 0532 0130 00", &f),
        Verdict::Kept
    );
    assert_eq!(
        statement_kept(
            "- new IBAN for the partner payouts, from next month,\n  DE89 3704 0044 0532 0130 00",
            &f
        ),
        Verdict::Kept
    );
    assert_eq!(
        statement_kept(
            "- payout account changed\n- DE89 3704 0044 0532 0130 00",
            &f
        ),
        Verdict::SubjectLost
    );
}

#[test]
fn values_are_tokens_and_subjects_are_words() {
    let f = fact(FactKind::CodeValue, &["max_retries", "retries"], "15");
    assert_eq!(statement_kept("max_retries 150", &f), Verdict::ValueMissing);
    assert_eq!(
        statement_kept("max_retries = 0.15", &f),
        Verdict::ValueMissing
    );
    assert_eq!(statement_kept("retries: 15,000", &f), Verdict::ValueMissing);
    assert_eq!(statement_kept("retries: 15.", &f), Verdict::Kept);
    let auc = fact(FactKind::ToolLabel, &["AUC"], "0.8132");
    assert_eq!(statement_kept("because 0.8132", &auc), Verdict::SubjectLost);
    // The subject must be more than the value itself.
    let join = fact(FactKind::Decision, &["join"], "LEFT JOIN");
    assert_eq!(statement_kept("LEFT JOIN", &join), Verdict::SubjectLost);
    assert_eq!(statement_kept("join: LEFT JOIN", &join), Verdict::Kept);
}

#[test]
fn chinese_statements() {
    let f = fact(FactKind::UserClause, &["流失窗口", "流失判定窗口"], "45 天");
    assert_eq!(
        statement_kept("- 流失窗口：45 天（与财务确认）", &f),
        Verdict::Kept
    );
    assert_eq!(statement_kept("对了，流失窗口是45 天。", &f), Verdict::Kept);
    assert_eq!(
        statement_kept("参数：45 天、0.72", &f),
        Verdict::SubjectLost
    );
    let c = correction(&["风险阈值"], "0.85", "0.80");
    assert_eq!(statement_kept("风险阈值 0.80", &c), Verdict::Stale);
    assert_eq!(
        statement_kept("风险阈值改为 0.85（原 0.80）", &c),
        Verdict::Kept
    );
}

#[test]
fn the_scorecard_reports_recall_per_kind_and_what_was_lost() {
    let facts = vec![
        fact(FactKind::UserClause, &["churn window"], "45 days"),
        correction(&["risk threshold"], "0.85", "0.8"),
        fact(
            FactKind::SpacedLiteral,
            &["IBAN"],
            "DE89 3704 0044 0532 0130 00",
        ),
        fact(FactKind::ToolLabel, &["rows_dropped"], "1204"),
    ];
    let summary = "- churn window: 45 days\n- risk threshold 0.8\n- IBAN DE89\n- 1204";
    let card = score(summary, &facts);
    assert_eq!((card.kept, card.total), (1, 4));
    assert_eq!(card.recall_of(FactKind::UserClause), Some(1.0));
    assert_eq!(card.recall_of(FactKind::Correction), Some(0.0));
    assert_eq!(card.recall_of(FactKind::Decision), None);
    let verdicts: Vec<Verdict> = card.lost.iter().map(|l| l.verdict).collect();
    assert_eq!(
        verdicts,
        [Verdict::Stale, Verdict::Truncated, Verdict::SubjectLost]
    );
    assert_eq!(
        card.lost[0].evidence.as_deref(),
        Some("- risk threshold 0.8")
    );
    let printed = card.to_string();
    for needle in [
        "user clause",
        "correction",
        "stale value",
        "truncated",
        "subject lost",
        "25%",
    ] {
        assert!(printed.contains(needle), "{needle} in\n{printed}");
    }
}

#[test]
fn a_corrected_value_never_contains_the_old_one() {
    // Otherwise "threshold 0.85" would also read as the stale "threshold 0.8".
    for language in LANGUAGES {
        for seed in 0..20 {
            for f in generate(seed, 2_000, language).facts {
                if let Some(old) = &f.replaced {
                    assert!(
                        !f.value.contains(old.as_str()) && !old.contains(&f.value),
                        "{f:?}"
                    );
                }
            }
        }
    }
}
