use super::scan;
use crate::figure::{Currency, NotClaim, Scale, Unit};

/// The claims of `text`: (the text as written, value, unit, place).
fn claims(text: &str) -> Vec<(&str, f64, Unit, i32)> {
    scan(text)
        .into_iter()
        .filter(|f| f.is_claim())
        .map(|f| (&text[f.start..f.end], f.value, f.unit, f.place))
        .collect()
}

fn not_claims(text: &str) -> Vec<(&str, NotClaim)> {
    scan(text)
        .into_iter()
        .filter_map(|f| f.not_claim.map(|n| (&text[f.start..f.end], n)))
        .collect()
}

fn one(text: &str) -> (f64, Unit, i32) {
    let all = claims(text);
    assert_eq!(all.len(), 1, "{text}: {all:?}");
    (all[0].1, all[0].2, all[0].3)
}

#[test]
fn reads_grouping_and_decimal_marks_in_english_and_european_styles() {
    assert_eq!(
        one("revenue was 1,234,567.89 in total"),
        (1_234_567.89, Unit::Plain, -2)
    );
    assert_eq!(one("Umsatz 1.234.567,89"), (1_234_567.89, Unit::Plain, -2));
    assert_eq!(one("chiffre 1\u{202f}234,5"), (1234.5, Unit::Plain, -1));
    assert_eq!(one("Wert 3,5"), (3.5, Unit::Plain, -1));
    assert_eq!(one("ratio 0,125"), (0.125, Unit::Plain, -3));
    assert_eq!(
        one("CHF 1'234'000"),
        (1_234_000.0, Unit::Currency(Currency::Franc), 0)
    );
    assert_eq!(one("pi is 4.56789"), (4.56789, Unit::Plain, -5));
}

#[test]
fn reads_scientific_notation_with_its_precision() {
    let (v, _, place) = one("the rate was 1.2e-3 per hour");
    assert!((v - 0.0012).abs() < 1e-12);
    assert_eq!(place, -4);
    assert_eq!(one("count 3E+06"), (3e6, Unit::Plain, 6));
}

#[test]
fn reads_signs_and_accounting_negatives() {
    assert_eq!(one("net -1,234"), (-1234.0, Unit::Plain, 0));
    assert_eq!(one("net −12.5"), (-12.5, Unit::Plain, -1));
    assert_eq!(one("loss (1,234.50)"), (-1234.5, Unit::Plain, -2));
    assert_eq!(claims("loss (1,234.50)")[0].0, "(1,234.50)");
    // A hyphen between two numbers is a range, not a sign.
    let range = claims("between 10-15 units");
    assert_eq!(
        range.iter().map(|c| c.1.abs()).collect::<Vec<_>>(),
        vec![10.0, 15.0]
    );
}

#[test]
fn reads_currencies_scales_and_percentages() {
    assert_eq!(
        one("raised $1.2M"),
        (1.2e6, Unit::Currency(Currency::Dollar), -1)
    );
    assert_eq!(one("costs €3bn"), (3e9, Unit::Currency(Currency::Euro), 0));
    assert_eq!(one("sales of 4.5 million"), (4.5e6, Unit::Plain, -1));
    assert_eq!(one("margin 12.5%"), (12.5, Unit::Percent, -1));
    assert_eq!(one("margin 12.5 percent"), (12.5, Unit::Percent, -1));
    assert_eq!(one("up 3 pp"), (3.0, Unit::Percent, 0));
    assert_eq!(
        one("price 1.234,56 €"),
        (1234.56, Unit::Currency(Currency::Euro), -2)
    );
    assert_eq!(one("USD 40"), (40.0, Unit::Currency(Currency::Dollar), 0));
    assert_eq!(
        one("-$5.5k"),
        (-5500.0, Unit::Currency(Currency::Dollar), -1)
    );
    assert_eq!(one("5m rows"), (5.0, Unit::Plain, 0));
    assert_eq!(one("12k users"), (12_000.0, Unit::Plain, 0));
    let f = super::scan("1.2M");
    assert_eq!(f[0].scale, Scale::Million);
    assert!((f[0].half_unit() - 50_000.0).abs() < 1e-6);
}

#[test]
fn reads_chinese_numerals_and_scales() {
    assert_eq!(
        one("收入3.5万元"),
        (35_000.0, Unit::Currency(Currency::Yen), -1)
    );
    assert_eq!(one("用户1.2亿"), (1.2e8, Unit::Plain, -1));
    assert_eq!(one("共三千五百人"), (3500.0, Unit::Plain, 2));
    assert_eq!(one("增长百分之十五"), (15.0, Unit::Percent, 0));
    assert_eq!(claims("增长百分之十五")[0].0, "百分之十五");
    assert_eq!(one("利润率12.5％"), (12.5, Unit::Percent, -1));
    assert!(claims("我们统一一下，十分重要").is_empty());
}

#[test]
fn approximate_words_widen_the_rounding() {
    assert_eq!(one("about 1,200 rows").2, 2);
    assert_eq!(one("exactly 1,200 rows").2, 0);
    assert_eq!(one("约3000人").2, 3);
}

#[test]
fn years_dates_times_ids_and_list_numbers_are_not_claims() {
    let text = "1. In 2023 sales rose.\n2) On 2024-03-15 at 14:30, ticket #4521 (see [3], INV-2026) \
                moved to v2.1.3 on March 3 and Q3; FY2024 row 17 closed 3rd, 15.03.2024, 2019-2023, \
                3/15, port 8080, 4pm, 第3名, 5月, x86";
    let found = not_claims(text);
    let kinds: Vec<NotClaim> = found.iter().map(|f| f.1).collect();
    for want in [
        NotClaim::ListNumber,
        NotClaim::Year,
        NotClaim::Date,
        NotClaim::Time,
        NotClaim::Id,
        NotClaim::Reference,
        NotClaim::Version,
        NotClaim::Period,
        NotClaim::Ordinal,
    ] {
        assert!(kinds.contains(&want), "{want:?} missing from {found:?}");
    }
    assert!(claims(text).is_empty(), "{:?}", claims(text));
}

#[test]
fn counts_and_measures_stay_claims() {
    assert_eq!(
        claims("we saw 2,031 errors in 45 minutes on 12 hosts").len(),
        3
    );
    assert_eq!(one("a $2000 budget").0, 2000.0);
    assert_eq!(one("sold 2,000 units").0, 2000.0);
    assert_eq!(one("weighs 5kg").0, 5.0);
}

#[test]
fn spans_cover_the_figure_as_written() {
    let text = "Revenue: $1.2M (up 12.5% from 1,071,428)";
    let spans: Vec<&str> = claims(text).iter().map(|c| c.0).collect();
    assert_eq!(spans, vec!["$1.2M", "12.5%", "1,071,428"]);
}

#[test]
fn hostile_text_never_panics() {
    for text in [
        "",
        "9",
        "-",
        "(",
        "1e",
        "1e999",
        "1,",
        "1.,2",
        "$",
        "%5",
        "百分之",
        "第",
        "1\u{a0}",
        "999999999999999999999999999999",
        "0.0000000000000000000001",
        "1.2.3.4.5.6",
        "((1))",
        "一亿亿亿亿亿亿亿亿亿亿",
        "\u{feff}12",
        "12\u{0301}",
        "１２３",
    ] {
        let _ = scan(text);
    }
}

mod properties {
    use proptest::prelude::*;

    use super::scan;

    /// Text made of what numbers are made of, and what sits around them.
    fn numeric_text() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop::sample::select(vec![
                "0",
                "1",
                "7",
                "9",
                ",",
                ".",
                " ",
                "\u{a0}",
                "'",
                "-",
                "−",
                "+",
                "(",
                ")",
                "%",
                "$",
                "€",
                "¥",
                "e",
                "E",
                "k",
                "M",
                "bn",
                "万",
                "亿",
                "一",
                "十",
                "百",
                "千",
                "百分之",
                "第",
                "#",
                "v",
                "Q",
                "/",
                ":",
                "\n",
                "1.",
                "|",
                "\t",
                "a",
                "é",
                "年",
            ]),
            0..60,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #[test]
        fn spans_are_ordered_disjoint_and_on_char_boundaries(text in numeric_text()) {
            let figures = scan(&text);
            let mut end = 0;
            for f in &figures {
                prop_assert!(f.start < f.end && f.end <= text.len(), "{f:?} in {text:?}");
                prop_assert!(text.is_char_boundary(f.start) && text.is_char_boundary(f.end));
                prop_assert!(f.start >= end, "overlap at {f:?} in {text:?}");
                end = f.end;
            }
        }

        #[test]
        fn reading_is_total_over_any_text(text in "\\PC{0,200}") {
            let _ = crate::read_figures(&text);
        }
    }
}

#[test]
fn every_number_of_a_hyphenated_name_is_an_id() {
    assert!(
        claims("INV-2026-000123 differs by 500.00 EUR.")
            .iter()
            .all(|c| c.0 == "500.00 EUR")
    );
    assert_eq!(claims("INV-2026-000123 differs by 500.00 EUR.").len(), 1);
    // A range between numbers stays two figures.
    assert_eq!(claims("between 10-15 units").len(), 2);
}
