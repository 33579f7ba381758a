//! The reader's tests: subjects in each layout, units from headers, spans, and parts.

use super::*;

fn subjects(text: &str) -> Vec<(String, String)> {
    read_figures(text)
        .into_iter()
        .map(|l| {
            (
                text[l.figure.start..l.figure.end].to_owned(),
                l.subject.to_string(),
            )
        })
        .collect()
}

#[test]
fn a_csv_cell_is_about_its_header_and_row() {
    let text = "region,revenue,cost\nNorth,1234,800.5\nSouth,\"2,345\",900\n";
    let got = subjects(text);
    assert_eq!(got[0], ("1234".into(), "revenue · North".into()));
    assert_eq!(got[1], ("800.5".into(), "cost · North".into()));
    assert_eq!(got[2], ("2,345".into(), "revenue · South".into()));
}

#[test]
fn an_aligned_table_is_read_by_column_overlap() {
    let text = "   region  revenue   cost\n0  North   1234.5  800.0\n1  South    999.0   12.0\n";
    let got = subjects(text);
    assert_eq!(got.len(), 4, "{got:?}");
    assert_eq!(got[0], ("1234.5".into(), "revenue · North".into()));
    assert_eq!(got[3], ("12.0".into(), "cost · South".into()));
}

#[test]
fn a_markdown_table_is_read_by_cell() {
    let text = "| Region | Margin |\n|---|---|\n| East | 12.5% |\n";
    assert_eq!(
        subjects(text),
        vec![("12.5%".into(), "Margin · East".into())]
    );
}

#[test]
fn prose_gives_its_label_or_the_words_before() {
    let text = "Total cost: $1,234\nWe scanned 5,000 rows, and the mean latency was 12.5 ms.";
    let got = subjects(text);
    assert_eq!(got[0].1, "Total cost");
    assert_eq!(got[1].1, "We scanned");
    assert_eq!(got[2].1, "and the mean latency was");
}

#[test]
fn a_header_gives_its_unit_and_scale() {
    let text = "region,margin (%),revenue ($M)\nNorth,12.5,3.2\n";
    let got = read_figures(text);
    assert_eq!(got[0].figure.unit, Unit::Percent);
    assert!((got[0].figure.magnitude() - 0.125).abs() < 1e-12);
    assert_eq!(got[1].figure.unit, Unit::Currency(Currency::Dollar));
    assert!((got[1].figure.value - 3.2e6).abs() < 1e-6);
    assert!((got[1].figure.half_unit() - 50_000.0).abs() < 1e-6);
}

#[test]
fn a_text_read_in_two_parts_reads_as_it_does_in_one_wherever_it_is_cut() {
    let text = "Summary: revenue $1,234, cost $800\n\
                region,revenue (USD),margin\nNorth,1234,12.5%\nSouth,\"2,345\",9.1%\n\
                \n| Region | Margin |\n|---|---|\n| East | 12.5% |\n| West | 7.25% |\n\n\
                \x20  region  revenue   cost\n0  North   1234.5  800.0\n1  South    999.0   12.0\n\
                We scanned 5,000 rows, and the mean latency was 12.5 ms.\n";
    let whole = read_figures(text);
    let lines = Lines::of(text);
    for cut in 0..=lines.len() {
        let mut parts = Vec::new();
        lines.read(0..cut, |l| parts.push(l));
        lines.read(cut..lines.len(), |l| parts.push(l));
        assert_eq!(parts, whole, "cut before line {cut}");
    }
    assert_eq!(
        lines.parts(3).iter().map(|r| r.len()).sum::<usize>(),
        lines.len()
    );
}

#[test]
fn spans_are_offsets_into_the_whole_text() {
    let text = "a\n\nx,y,z\n1,2,3\n";
    for l in read_figures(text) {
        assert!(text[l.figure.start..l.figure.end].parse::<f64>().is_ok());
    }
}
