//! Reads the claims of a text with what each is about: in a table (CSV, TSV, Markdown, or
//! columns aligned with spaces as pandas and psql print them) its column's header and its
//! row's label; after `label:` or `label =` the label; in prose the words before it.

use crate::figure::{Currency, Figure, Scale, Unit};
use crate::scan::{scan, scan_into};

/// A claim of a text, with where it sits and what it is about.
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    /// The figure, its span in the whole text.
    pub figure: Figure,
    /// What it is about, as the text says: "revenue · North", "Total cost", "rows scanned".
    pub subject: String,
    /// The line it is on (0-based).
    pub line: u32,
    /// Its column, when it sits in a table.
    pub column: Option<u16>,
}

/// How a block of lines separates its cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    Delimited(u8),
    Aligned,
    Prose,
}

/// A table's header: its cells' texts and, for aligned columns, their character ranges.
struct Header<'t> {
    layout: Layout,
    cells: Vec<(usize, usize, &'t str)>,
    /// Each cell's unit and scale, read once for the whole table.
    hints: Vec<Hint>,
}

/// A header cell's unit and scale, given to the plain figures under it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Hint {
    unit: Option<Unit>,
    scale: Scale,
}

const MAX_SUBJECT: usize = 80;

/// The claims of `text` with their subjects. Years, dates, ids and the like are left out: they
/// are what subjects are made of, not figures.
#[must_use]
pub fn read_figures(text: &str) -> Vec<Located> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // About one claim every 20 bytes in a table of numbers: one growth of the list at most.
    let mut out = Vec::with_capacity(text.len() / 20);
    let mut figures = Vec::new();
    let mut header: Option<Header<'_>> = None;
    let mut layout = Layout::Prose;
    let mut block_start = true;
    let mut offset = 0usize;
    for (line_no, raw) in lines.iter().enumerate() {
        let line = raw.trim_end_matches(['\n', '\r']);
        let here = offset;
        offset += raw.len();
        if line.trim().is_empty() {
            header = None;
            block_start = true;
            continue;
        }
        if is_rule(line) {
            continue;
        }
        figures.clear();
        if block_start {
            layout = block_layout(line, next_row(&lines[line_no + 1..]));
            figures_of(line, layout, &mut figures);
            header =
                (layout != Layout::Prose && figures.iter().all(|f| !f.is_claim())).then(|| {
                    let cells = cells_of(line, layout);
                    let hints = cells.iter().map(|c| header_hint(c.2)).collect();
                    Header {
                        layout,
                        cells,
                        hints,
                    }
                });
        } else {
            figures_of(line, layout, &mut figures);
        }
        block_start = false;
        if !figures.iter().any(Figure::is_claim) {
            continue;
        }
        let line_no = u32::try_from(line_no).unwrap_or(u32::MAX);
        // A table row's cells and label, read once for all of its figures.
        let row = header.as_ref().map(|h| {
            let cells = cells_of(line, h.layout);
            let label = row_label(line, h.layout, &cells);
            Row { cells, label }
        });
        for figure in figures.drain(..).filter(Figure::is_claim) {
            if header
                .as_ref()
                .is_some_and(|h| is_row_index(line, &figure, h))
            {
                continue;
            }
            let (subject, column) = subject_of(line, &figure, header.as_ref(), row.as_ref());
            let mut figure = figure;
            if let Some(hint) = column.and_then(|k| header.as_ref()?.hints.get(usize::from(k))) {
                apply_hint(&mut figure, *hint);
            }
            figure.start += here;
            figure.end += here;
            out.push(Located {
                figure,
                subject,
                line: line_no,
                column,
            });
        }
    }
    out
}

/// The block's next row after its first line, rules skipped; none past a blank line.
fn next_row<'t>(rest: &[&'t str]) -> Option<&'t str> {
    rest.iter()
        .map(|l| l.trim_end_matches(['\n', '\r']))
        .take_while(|l| !l.trim().is_empty())
        .find(|l| !is_rule(l))
}

/// How a block lays out its cells, from its first two rows: a delimiter the two rows hold
/// equally often (outside quotes), a Markdown pipe, columns aligned with runs of spaces, or
/// prose. One line alone is prose unless it is a Markdown row: "1,234,567" in a sentence is
/// one number.
fn block_layout(first: &str, next: Option<&str>) -> Layout {
    if first.trim_start().starts_with('|') {
        return Layout::Delimited(b'|');
    }
    let Some(next) = next else {
        return Layout::Prose;
    };
    // A comma or semicolon splits cells only under a header (a first row without figures) or
    // where no delimiter is followed by a space: "revenue 1,234,567, cost 800,000" is prose
    // whose numbers happen to hold as many commas as the next line's.
    let header = scan(first).iter().all(|f| !f.is_claim());
    for d in [b'\t', b';', b','] {
        let n = count_unquoted(first, d);
        if n == 0 || n != count_unquoted(next, d) {
            continue;
        }
        let spaced = |line: &str| {
            line.as_bytes()
                .windows(2)
                .any(|w| w[0] == d && w[1] == b' ')
        };
        if d == b'\t' || header || !(spaced(first) || spaced(next)) {
            return Layout::Delimited(d);
        }
    }
    if first.trim().contains("  ") && next.trim().contains("  ") {
        return Layout::Aligned;
    }
    Layout::Prose
}

fn count_unquoted(line: &str, delimiter: u8) -> usize {
    let mut quoted = false;
    let mut n = 0;
    for &b in line.as_bytes() {
        if b == b'"' {
            quoted = !quoted;
        } else if b == delimiter && !quoted {
            n += 1;
        }
    }
    n
}

/// A header's unit and scale ("margin (%)", "revenue ($M)", "cost, in thousands", "收入(万元)").
fn header_hint(column: &str) -> Hint {
    let lower = column.to_lowercase();
    let has = |w: &str| lower.contains(w);
    if has("%") || has("pct") || has("percent") || has("百分比") {
        return Hint {
            unit: Some(Unit::Percent),
            scale: Scale::One,
        };
    }
    let scale = if has("thousand") || has("(k)") || has("$k") || has("千") {
        Scale::Thousand
    } else if has("million") || has("$m)") || has("(m)") || has("(mn)") || has(" mn") || has("百万")
    {
        Scale::Million
    } else if has("billion") || has("$bn") || has("(bn)") || has("(b)") {
        Scale::Billion
    } else if has("万") {
        Scale::TenThousand
    } else if has("亿") {
        Scale::HundredMillion
    } else {
        Scale::One
    };
    let unit = [
        ("$", Currency::Dollar),
        ("usd", Currency::Dollar),
        ("€", Currency::Euro),
        ("eur", Currency::Euro),
        ("£", Currency::Pound),
        ("gbp", Currency::Pound),
        ("¥", Currency::Yen),
        ("元", Currency::Yen),
        ("cny", Currency::Yen),
        ("jpy", Currency::Yen),
    ]
    .into_iter()
    .find(|(mark, _)| has(mark))
    .map(|(_, c)| Unit::Currency(c));
    Hint { unit, scale }
}

/// Gives a plain figure its column's unit and scale.
fn apply_hint(figure: &mut Figure, hint: Hint) {
    if figure.unit != Unit::Plain || figure.scale != Scale::One {
        return;
    }
    if let Some(unit) = hint.unit {
        figure.unit = unit;
    }
    figure.scale = hint.scale;
    figure.value *= hint.scale.factor();
}

/// "|---|---|", "----- -----", "+----+": a table's rule.
fn is_rule(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty()
        && t.chars()
            .all(|c| matches!(c, '-' | '|' | ':' | '+' | '=' | ' ' | '\t'))
}

/// The figures of one line; a delimited line is read cell by cell, so that "1234,5678" in a
/// CSV is two figures and never a decimal comma.
fn figures_of(line: &str, layout: Layout, out: &mut Vec<Figure>) {
    match layout {
        Layout::Delimited(d) => {
            for_each_cell(line, d, |start, end| {
                scan_into(&line[start..end], start, out)
            });
        }
        Layout::Aligned | Layout::Prose => scan_into(line, 0, out),
    }
}

/// Calls `f` with each cell's byte range of a delimited line, a quoted cell's delimiters kept
/// inside it.
fn for_each_cell(line: &str, delimiter: u8, mut f: impl FnMut(usize, usize)) {
    let mut start = 0;
    let mut quoted = false;
    for (i, &b) in line.as_bytes().iter().enumerate() {
        if b == b'"' {
            quoted = !quoted;
        } else if b == delimiter && !quoted {
            f(start, i);
            start = i + 1;
        }
    }
    f(start, line.len());
}

/// The cells of a delimited line, a quoted cell's delimiters kept inside it.
fn split_cells(line: &str, delimiter: u8) -> Vec<(usize, usize, &str)> {
    let mut cells = Vec::new();
    for_each_cell(line, delimiter, |s, e| {
        cells.push((s, e, line[s..e].trim().trim_matches('"').trim()));
    });
    cells
}

/// Cells of a header or a row: delimited cells, or runs of text separated by two spaces or
/// more, with their character columns.
fn cells_of(line: &str, layout: Layout) -> Vec<(usize, usize, &str)> {
    match layout {
        Layout::Delimited(d) => split_cells(line, d),
        Layout::Aligned | Layout::Prose => aligned_cells(line),
    }
}

/// Runs of text separated by two spaces or more, with their character columns (not bytes: an
/// aligned table lines up characters).
fn aligned_cells(line: &str) -> Vec<(usize, usize, &str)> {
    let mut cells = Vec::new();
    let mut cell_start: Option<(usize, usize)> = None;
    let mut spaces = 0;
    let mut last_end = (0, 0);
    for (column, (i, c)) in line.char_indices().enumerate() {
        if c == ' ' {
            spaces += 1;
            if spaces >= 2
                && let Some((s, sc)) = cell_start.take()
            {
                cells.push((sc, last_end.1, &line[s..last_end.0]));
            }
            continue;
        }
        if cell_start.is_none() {
            cell_start = Some((i, column));
        }
        spaces = 0;
        last_end = (i + c.len_utf8(), column + 1);
    }
    if let Some((s, sc)) = cell_start {
        cells.push((sc, last_end.1, &line[s..last_end.0]));
    }
    cells
}

fn char_column(line: &str, byte: usize) -> usize {
    if line.is_ascii() {
        byte
    } else {
        line[..byte.min(line.len())].chars().count()
    }
}

/// A table row's cells and what it is about.
struct Row<'t> {
    cells: Vec<(usize, usize, &'t str)>,
    label: Option<String>,
}

/// The subject of a figure on `line`, and its column in the table it sits in.
fn subject_of(
    line: &str,
    figure: &Figure,
    header: Option<&Header<'_>>,
    row: Option<&Row<'_>>,
) -> (String, Option<u16>) {
    if let (Some(h), Some(row)) = (header, row)
        && let Some((column, name)) = column_of(line, figure, h, &row.cells)
    {
        let subject = match &row.label {
            Some(l) if l != name => {
                let mut s = String::with_capacity(name.len() + l.len() + 4);
                s.push_str(name);
                s.push_str(" · ");
                s.push_str(l);
                s
            }
            _ => name.to_owned(),
        };
        return (clipped(subject), u16::try_from(column).ok());
    }
    let near = prose_subject(line, figure.start);
    let subject = match line_label(line, figure.start) {
        Some(label) if !near.contains(label) => {
            if near.is_empty() {
                label.to_owned()
            } else {
                format!("{near} · {label}")
            }
        }
        _ => near.to_owned(),
    };
    (clipped(subject), None)
}

/// pandas' row numbers: an integer in front of the first header cell, a position, not data.
fn is_row_index(line: &str, figure: &Figure, h: &Header<'_>) -> bool {
    h.layout == Layout::Aligned
        && figure.place == 0
        && line[..figure.start].trim().is_empty()
        && h.cells
            .first()
            .is_some_and(|c| char_column(line, figure.end) <= c.0)
}

fn column_of<'h>(
    line: &str,
    figure: &Figure,
    h: &'h Header<'_>,
    cells: &[(usize, usize, &str)],
) -> Option<(usize, &'h str)> {
    match h.layout {
        Layout::Delimited(_) => {
            let k = cells
                .iter()
                .position(|c| figure.start >= c.0 && figure.start <= c.1)?;
            let name = h.cells.get(k)?.2;
            (!name.is_empty()).then_some((k, name))
        }
        Layout::Aligned | Layout::Prose => {
            let (fs, fe) = (
                char_column(line, figure.start),
                char_column(line, figure.end),
            );
            h.cells
                .iter()
                .enumerate()
                .find(|(_, c)| c.0 < fe && fs < c.1)
                .or_else(|| h.cells.iter().enumerate().find(|(_, c)| c.1 >= fe))
                .map(|(k, c)| (k, c.2))
        }
    }
}

/// The cells of a row that are words, not numbers ("East widgets"): what the row is about.
fn row_label(line: &str, layout: Layout, cells: &[(usize, usize, &str)]) -> Option<String> {
    let words = |parts: &mut dyn Iterator<Item = &str>| {
        let mut label = String::new();
        for word in parts
            .filter(|c| !c.is_empty() && c.chars().any(char::is_alphabetic))
            .take(3)
        {
            if !label.is_empty() {
                label.push(' ');
            }
            label.push_str(word);
        }
        (!label.is_empty()).then_some(label)
    };
    if layout == Layout::Aligned {
        words(&mut line.split_whitespace())
    } else {
        words(&mut cells.iter().map(|c| c.2))
    }
}

/// What a line of `label: value, value, …` is about: the label, when the figure comes after it.
fn line_label(line: &str, start: usize) -> Option<&str> {
    let colon = line.find(": ")?;
    if colon >= start || colon > 60 {
        return None;
    }
    let label = line[..colon]
        .trim()
        .trim_start_matches(['-', '*', '#', '>', ' ']);
    (label.chars().any(char::is_alphabetic) && !label.is_empty()).then_some(label)
}

/// In prose: the label before `:` or `=` on the line, else the few words before the figure in
/// its sentence.
fn prose_subject(line: &str, start: usize) -> &str {
    let head = &line[..start.min(line.len())];
    let trimmed = head.trim_end();
    if let Some(label) = trimmed
        .strip_suffix(':')
        .or_else(|| trimmed.strip_suffix('='))
    {
        let label = label.trim();
        let from = label.rfind(['.', ';', '|', '\t', ',']).map_or(0, |i| i + 1);
        return label[from..].trim();
    }
    let sentence_start = head
        .rfind(['.', ';', '!', '?', '(', '。', '；', '，', ','])
        .map_or(0, |i| {
            i + head[i..].chars().next().map_or(1, char::len_utf8)
        });
    let clause = head[sentence_start..].trim();
    let words: Vec<(usize, &str)> = clause
        .split_whitespace()
        .map(|w| (w.as_ptr() as usize - clause.as_ptr() as usize, w))
        .collect();
    let keep = words.len().saturating_sub(5);
    words
        .get(keep)
        .map_or(clause, |(at, _)| clause[*at..].trim())
}

/// `s` cut to [`MAX_SUBJECT`] bytes on a character boundary, in place.
fn clipped(mut s: String) -> String {
    if s.len() > MAX_SUBJECT {
        let mut end = MAX_SUBJECT;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subjects(text: &str) -> Vec<(String, String)> {
        read_figures(text)
            .into_iter()
            .map(|l| (text[l.figure.start..l.figure.end].to_owned(), l.subject))
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
        let text =
            "   region  revenue   cost\n0  North   1234.5  800.0\n1  South    999.0   12.0\n";
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
    fn spans_are_offsets_into_the_whole_text() {
        let text = "a\n\nx,y,z\n1,2,3\n";
        for l in read_figures(text) {
            assert!(text[l.figure.start..l.figure.end].parse::<f64>().is_ok());
        }
    }
}
