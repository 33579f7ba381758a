use crate::{
    Check, LedgerBuilder, Operation, Origin, Source, Status, check_answer, ledger::Ledger,
};

fn tool(seq: i64) -> Source {
    Source {
        origin: Origin::Tool,
        message_seq: seq,
        tool_call_id: Some(format!("call_{seq}")),
        path: None,
    }
}

fn ledger(outputs: &[&str]) -> Ledger {
    let mut b = LedgerBuilder::new();
    for (k, text) in outputs.iter().enumerate() {
        b.add_text(tool(i64::try_from(k).unwrap() + 2), text);
    }
    b.build()
}

fn statuses(answer: &str, l: &Ledger) -> Vec<(String, Status)> {
    check_answer(answer, l)
        .into_iter()
        .map(|c| (c.text, c.status))
        .collect()
}

const SALES: &str = "region,revenue,cost\nNorth,1234567,800000\nSouth,2345678,1500000\n\
                     total rows: 2\nmargin: 0.3521\n";

#[test]
fn a_figure_rounded_reformatted_or_rescaled_is_linked() {
    let l = ledger(&[SALES]);
    for answer in [
        "North brought in 1,234,567.",
        "North brought in $1.23M.",
        "North brought in 1.2 million.",
        "North brought in 1234.6k.",
        "The margin was 35.2%.",
        "The margin was 35%.",
        "The margin was 0.35.",
        "North brought in 123.5万.",
    ] {
        let got = statuses(answer, &l);
        assert_eq!(got.len(), 1, "{answer}: {got:?}");
        assert_eq!(got[0].1, Status::Linked, "{answer}: {got:?}");
    }
}

#[test]
fn a_figure_off_by_a_digit_or_a_unit_is_unlinked() {
    let l = ledger(&[SALES]);
    for answer in [
        "North brought in 1,284,567.",
        "North brought in $1.24M.",
        "North brought in $1.2bn.",
        "The margin was 35.3%.",
        "The margin was 3.52%.",
        "The margin was 0.3621.",
    ] {
        let got = statuses(answer, &l);
        assert_eq!(got.len(), 1, "{answer}: {got:?}");
        assert_eq!(got[0].1, Status::Unlinked, "{answer}: {got:?}");
    }
}

#[test]
fn sums_differences_ratios_and_changes_of_linked_figures_are_derived() {
    let l = ledger(&[SALES]);
    let cases = [
        (
            "North made 1,234,567 and South 2,345,678, 3,580,245 together.",
            Operation::Sum,
        ),
        (
            "South made 2,345,678, which is 1,111,111 more than North's 1,234,567.",
            Operation::Difference,
        ),
        (
            "South's revenue of 2,345,678 is 90.0% above North's 1,234,567.",
            Operation::PercentChange,
        ),
        (
            "North's cost of 800,000 is 64.8% of its revenue of 1,234,567.",
            Operation::Ratio,
        ),
        (
            "North's revenue was 1,234,567 against costs of 800,000, a profit of 434,567.",
            Operation::Difference,
        ),
    ];
    for (answer, op) in cases {
        let checks: Vec<Check> = check_answer(answer, &l);
        let derived: Vec<&Check> = checks
            .iter()
            .filter(|c| c.status == Status::Derived)
            .collect();
        assert_eq!(derived.len(), 1, "{answer}: {checks:#?}");
        assert_eq!(
            derived[0].derivation.as_ref().unwrap().operation,
            op,
            "{answer}"
        );
        assert!(
            checks.iter().all(|c| c.status != Status::Unlinked),
            "{answer}: {checks:#?}"
        );
    }
}

#[test]
fn a_derivation_from_the_row_of_a_linked_figure_counts() {
    // 434,567 = 1,234,567 − 800,000: only the revenue is in the sentence, the cost is its row's.
    let l = ledger(&[SALES]);
    let checks = check_answer("North's revenue of 1,234,567 left a profit of 434,567.", &l);
    assert_eq!(checks[1].status, Status::Derived, "{checks:#?}");
    let d = checks[1].derivation.as_ref().unwrap();
    assert!(
        d.describe(&l).contains("1234567 − 800000 = 434567"),
        "{}",
        d.describe(&l)
    );
}

#[test]
fn years_dates_and_the_analysts_own_figures_are_not_checked() {
    let mut b = LedgerBuilder::new();
    b.add_text(
        Source {
            origin: Origin::Analyst,
            message_seq: 1,
            tool_call_id: None,
            path: None,
        },
        "Our budget is 50,000 EUR.",
    );
    let l = b.build();
    let got = statuses(
        "1. In 2024, on 2024-03-15, within the budget of €50,000, see [2] and ticket #123.",
        &l,
    );
    assert!(got.is_empty(), "{got:?}");
}

#[test]
fn currencies_that_differ_never_link() {
    let l = ledger(&["price: $1,200"]);
    assert_eq!(statuses("It costs €1,200.", &l)[0].1, Status::Unlinked);
    assert_eq!(statuses("It costs $1,200.", &l)[0].1, Status::Linked);
    assert_eq!(statuses("It costs 1,200.", &l)[0].1, Status::Linked);
}

#[test]
fn the_link_names_the_source_and_span_that_hold_the_value() {
    let l = ledger(&["noise 7\n", SALES]);
    let checks = check_answer("South brought in 2,345,678.", &l);
    let entry = l.entry(checks[0].entry.unwrap()).unwrap();
    let source = l.source_of(entry).unwrap();
    assert_eq!(source.message_seq, 3);
    assert_eq!(&SALES[entry.start as usize..entry.end as usize], "2345678");
    assert_eq!(entry.subject.to_string(), "revenue · South");
}

#[test]
fn of_two_sources_holding_a_value_the_one_about_the_sentences_subject_wins() {
    let l = ledger(&["latency p50: 120\n", "headcount: 120\n"]);
    let checks = check_answer("The headcount is 120.", &l);
    let entry = l.entry(checks[0].entry.unwrap()).unwrap();
    assert_eq!(entry.subject.to_string(), "headcount");
}

#[test]
fn names_with_numbers_are_ids_and_a_count_a_tool_printed_links() {
    let l = ledger(&["invoice-1\ninvoice-2\ninvoice-3\n3 invoices\n[exit code 0]"]);
    assert_eq!(l.len(), 1, "{:?}", l.entries());
    let got = statuses("There are 3 invoices; the ledger could not be checked.", &l);
    assert_eq!(got, [("3".to_owned(), Status::Linked)]);
}
