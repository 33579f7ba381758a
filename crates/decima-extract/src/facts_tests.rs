use super::*;
use crate::analysis::analyse;

fn user(seq: i64, text: &str) -> Statement {
    Statement {
        seq: Some(seq),
        origin: Origin::User,
        kind: StatementKind::Stated,
        text: text.into(),
        replaces: None,
        recurring: None,
        short: None,
        group: None,
        last_seen: seq as u64,
    }
}

fn add(f: &mut Facts, seq: i64, text: &str) -> Vec<Patch> {
    f.add_clause(user(seq, text), &analyse(text), Home::Listed)
}

fn shown(f: Facts) -> Vec<(Option<i64>, String, Option<String>)> {
    f.into_statements()
        .into_iter()
        .map(|s| (s.seq, s.text, s.replaces))
        .collect()
}

#[test]
fn corrections_replace_what_they_correct() {
    let mut f = Facts::default();
    add(&mut f, 3, "the alert threshold is 12 ms");
    add(&mut f, 5, "the churn window is 45 days");
    add(&mut f, 9, "sorry, it is 15, not 12");
    assert_eq!(
        shown(f),
        vec![
            (Some(5), "the churn window is 45 days".into(), None),
            (
                Some(9),
                "the alert threshold is 15 ms".into(),
                Some("12 ms".into())
            ),
        ]
    );

    let mut f = Facts::default();
    add(&mut f, 1, "流失窗口是45天");
    add(&mut f, 2, "报告币种是 EUR");
    add(&mut f, 7, "不对，流失窗口改成60天");
    let s = shown(f);
    assert_eq!(
        s[1],
        (
            Some(7),
            "不对，流失窗口改成60天".into(),
            Some("45天".into())
        )
    );
    assert_eq!(s.len(), 2);

    // An update of the same subject, without a cue; a pronoun subject updates nothing.
    let mut f = Facts::default();
    add(&mut f, 1, "The churn window is 45 days.");
    add(&mut f, 4, "Track this under DATA-1 please");
    add(&mut f, 6, "The churn window is 60 days.");
    add(&mut f, 8, "Track this under OPS-2 please");
    let s = shown(f);
    assert_eq!(s.len(), 3, "{s:?}");
    assert_eq!(
        s[1],
        (
            Some(6),
            "The churn window is 60 days.".into(),
            Some("45 days".into())
        )
    );

    // A strong cue with no subject corrects the latest number the user gave.
    let mut f = Facts::default();
    add(&mut f, 1, "My IBAN is DE89 3704 0044 0532 0130 00");
    add(&mut f, 2, "the retry limit is 4");
    add(&mut f, 3, "scratch that, make it 6");
    let s = shown(f);
    assert_eq!(
        s[1],
        (Some(3), "the retry limit is 6".into(), Some("4".into()))
    );
}

#[test]
fn notes_round_trip() {
    assert_eq!(
        split_note("the threshold is 15 ms (replaces 12 ms)"),
        ("the threshold is 15 ms", Some("12 ms"))
    );
    assert_eq!(split_note("a (b)"), ("a (b)", None));
}
