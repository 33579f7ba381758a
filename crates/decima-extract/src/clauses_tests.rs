use super::super::values::value_spans;
use super::*;

#[test]
fn the_short_reverse_search_finds_what_rfind_finds() {
    for (h, n) in [
        ("keep in mind the window, keep in mind", "keep in mind"),
        ("note that 风险 note", "note"),
        ("fyi", "fyi"),
        ("fy", "fyi"),
        ("", "btw"),
        ("提醒一下 btw", "btw"),
    ] {
        assert_eq!(rfind_short(h, n), h.rfind(n), "{h:?} {n:?}");
    }
}

fn split(s: &str) -> Vec<(String, String)> {
    let values = value_spans(s, &[]);
    clauses(s, &values)
        .into_iter()
        .map(|c| {
            let text = &s[c.start..c.end];
            let rel: Vec<Span> = c
                .values
                .iter()
                .map(|v| (v.0 - c.start, v.1 - c.start))
                .collect();
            (text.to_string(), subject_in(text, &rel).key)
        })
        .collect()
}

#[test]
fn clauses_keep_their_subjects() {
    assert_eq!(
        split("The churn window is 45 days, and the minimum tenure is 3 months."),
        vec![
            ("The churn window is 45 days".into(), "churn window".into()),
            (
                "the minimum tenure is 3 months.".into(),
                "minimum tenure".into()
            ),
        ]
    );
    assert_eq!(
        split("sorry, it is 15, not 12"),
        vec![("sorry, it is 15, not 12".into(), String::new())]
    );
    assert_eq!(
        split("Actually, set the alert thresholds to 15 ms; the rest stays."),
        vec![(
            "Actually, set the alert thresholds to 15 ms".into(),
            "alert threshold".into()
        )]
    );
    assert_eq!(
        split("不对，流失窗口应该是60天，最短在网时长是3个月。"),
        vec![
            ("不对，流失窗口应该是60天".into(), "流失窗口".into()),
            ("最短在网时长是3个月。".into(), "最短在网时长".into()),
        ]
    );
    assert_eq!(split("改成15")[0].1, "");
    let linked = |s: &str| {
        let v = value_spans(s, &[]);
        subject_in(s, &v).linked
    };
    assert!(linked("The churn window is 45 days"));
    assert!(linked("set the retry limit to 4"));
    assert!(linked("流失窗口是45天"));
    assert!(!linked("Use ticket OPS-1 for this"));
    assert!(!linked("Rerun batch 7 tonight"));
    assert!(same_subject("threshold", "alert threshold"));
    assert!(!same_subject("churn window", "retry window"));
    assert!(same_subject("阈值", "风险阈值"));
    assert!(!same_subject("window", ""));
}
