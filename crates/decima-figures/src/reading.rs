//! Reads the claims of a text with what each is about: in a table (CSV, TSV, Markdown, or
//! columns aligned with spaces as pandas and psql print them) its column's header and its
//! row's label; after `label:` or `label =` the label; in prose the words before it.

use std::sync::{Arc, LazyLock};

use aho_corasick::AhoCorasick;

use crate::figure::{Currency, Figure, Scale, Unit};
use crate::scan::{scan, scan_into};
use crate::subject::Subject;

/// A claim of a text, with where it sits and what it is about.
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    /// The figure, its span in the whole text.
    pub figure: Figure,
    /// What it is about, as the text says: "revenue · North", "Total cost", "rows scanned".
    pub subject: Subject,
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
    /// Each cell's name as subjects hold it, made once for every figure under it.
    names: Vec<Option<Arc<str>>>,
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
    let mut out = Vec::with_capacity(claims_at_most_about(text));
    read_figures_with(text, |l| out.push(l));
    out
}

/// Room for the claims of `text` that a table of numbers holds (about one every 19 bytes), so
/// that the list of them is not grown and copied while a large output is read.
pub(crate) fn claims_at_most_about(text: &str) -> usize {
    text.len() / 16
}

/// [`read_figures`], each claim handed to `sink` as it is read: the ledger keeps its entries
/// without a list of claims in between.
pub(crate) fn read_figures_with(text: &str, sink: impl FnMut(Located)) {
    let lines = Lines::of(text);
    lines.read(0..lines.len(), sink);
}

/// A text's lines with where each starts, so that a part of them can be read on its own: a
/// long output is read in parts, one per core.
pub(crate) struct Lines<'t> {
    lines: Vec<&'t str>,
    starts: Vec<usize>,
}

impl<'t> Lines<'t> {
    pub(crate) fn of(text: &'t str) -> Self {
        let mut lines = Vec::with_capacity(text.len() / 40);
        let mut starts = Vec::with_capacity(text.len() / 40);
        let mut at = 0;
        for end in memchr::memchr_iter(b'\n', text.as_bytes()) {
            // A newline is one byte of its own: the cut is always a character boundary.
            lines.push(&text[at..=end]);
            starts.push(at);
            at = end + 1;
        }
        if at < text.len() {
            lines.push(&text[at..]);
            starts.push(at);
        }
        Self { lines, starts }
    }

    pub(crate) fn len(&self) -> usize {
        self.lines.len()
    }

    /// Where the text's lines may be cut into `parts` ranges of about equal size.
    pub(crate) fn parts(&self, parts: usize) -> Vec<std::ops::Range<usize>> {
        let n = self.lines.len();
        let parts = parts.clamp(1, n.max(1));
        (0..parts)
            .map(|k| (k * n / parts)..((k + 1) * n / parts))
            .collect()
    }

    /// The claims of lines `range`, read as they read in the whole text: a part that starts
    /// inside a table first reads the table's header.
    pub(crate) fn read(&self, range: std::ops::Range<usize>, mut sink: impl FnMut(Located)) {
        let lines = &self.lines;
        let mut block = self.block_at(range.start);
        let mut figures = Vec::new();
        // A row's cells and label, kept between rows so that each row reuses their memory.
        let mut row = Row {
            cells: Vec::new(),
            ascii: true,
            label: None,
        };
        let mut label = String::new();
        for line_no in range {
            let raw = lines[line_no];
            let here = self.starts[line_no];
            let line = raw.trim_end_matches(['\n', '\r']);
            if line.trim().is_empty() {
                block = Block::fresh();
                continue;
            }
            if is_rule(line) {
                continue;
            }
            figures.clear();
            if block.start {
                block = Block::opened_by(line, next_row(&lines[line_no + 1..]), &mut figures);
            } else {
                figures_of(line, block.layout, &mut figures);
            }
            if !figures.iter().any(Figure::is_claim) {
                continue;
            }
            let header = block.header.as_ref();
            let line_no = u32::try_from(line_no).unwrap_or(u32::MAX);
            // A table row's cells and label, read once for all of its figures.
            if let Some(h) = header {
                // An aligned row is placed by its header's columns and labelled by its words:
                // only a delimited row's own cells are read.
                if let Layout::Delimited(_) = h.layout {
                    cells_into(line, h.layout, &mut row.cells);
                } else {
                    row.ascii = line.is_ascii();
                }
                label.clear();
                row.label = row_label(line, h.layout, &row.cells, &mut label)
                    .then(|| Arc::from(clipped(&label)));
            }
            let mut prose = ProseLine::new(line);
            for figure in figures.drain(..).filter(Figure::is_claim) {
                if header.is_some_and(|h| is_row_index(line, &figure, h)) {
                    continue;
                }
                let (subject, column) =
                    match header.and_then(|h| table_subject(line, &figure, h, &row)) {
                        Some(found) => found,
                        None => (prose.subject_of(&figure), None),
                    };
                let mut figure = figure;
                if let Some(hint) = column.and_then(|k| header?.hints.get(usize::from(k))) {
                    apply_hint(&mut figure, *hint);
                }
                figure.start += here;
                figure.end += here;
                sink(Located {
                    figure,
                    subject,
                    line: line_no,
                    column,
                });
            }
        }
    }

    /// The block state at line `at`, as reading from the text's start would leave it: the
    /// layout and header of the block `at` sits in, from the block's first line.
    fn block_at(&self, at: usize) -> Block<'t> {
        let lines = &self.lines;
        let content = |k: usize| lines[k].trim_end_matches(['\n', '\r']);
        let mut first = at;
        while first > 0 && !content(first - 1).trim().is_empty() {
            first -= 1;
        }
        let Some(opening) = (first..at).find(|&k| !is_rule(content(k))) else {
            return Block::fresh();
        };
        let mut figures = Vec::new();
        Block::opened_by(
            content(opening),
            next_row(&lines[opening + 1..]),
            &mut figures,
        )
    }
}

/// Where reading stands in a block of lines: its layout, and its header if it is a table.
struct Block<'t> {
    start: bool,
    layout: Layout,
    header: Option<Header<'t>>,
}

impl<'t> Block<'t> {
    /// Before a block's first line.
    fn fresh() -> Self {
        Self {
            start: true,
            layout: Layout::Prose,
            header: None,
        }
    }

    /// The block that `line` opens, `next` its next row; the line's own figures into `figures`.
    fn opened_by(line: &'t str, next: Option<&str>, figures: &mut Vec<Figure>) -> Self {
        let layout = block_layout(line, next);
        figures_of(line, layout, figures);
        let header =
            (layout != Layout::Prose && figures.iter().all(|f| !f.is_claim())).then(|| {
                let mut cells = Vec::new();
                cells_into(line, layout, &mut cells);
                let hints = cells.iter().map(|c| header_hint(c.2)).collect();
                let names = cells
                    .iter()
                    .map(|c| (!c.2.is_empty()).then(|| Arc::from(clipped(c.2))))
                    .collect();
                Header {
                    layout,
                    cells,
                    hints,
                    names,
                }
            });
        Self {
            start: false,
            layout,
            header,
        }
    }
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

/// What a word of a header says about the figures under it.
#[derive(Debug, Clone, Copy)]
enum HintWord {
    Percent,
    Scale(Scale),
    Currency(Currency),
}

/// The words a header gives its unit and scale with, in the order they win: a percentage
/// before any scale, "thousand" before "million", the first currency named.
const HINT_WORDS: &[(&str, HintWord)] = &[
    ("%", HintWord::Percent),
    ("pct", HintWord::Percent),
    ("percent", HintWord::Percent),
    ("百分比", HintWord::Percent),
    ("thousand", HintWord::Scale(Scale::Thousand)),
    ("(k)", HintWord::Scale(Scale::Thousand)),
    ("$k", HintWord::Scale(Scale::Thousand)),
    ("千", HintWord::Scale(Scale::Thousand)),
    ("million", HintWord::Scale(Scale::Million)),
    ("$m)", HintWord::Scale(Scale::Million)),
    ("(m)", HintWord::Scale(Scale::Million)),
    ("(mn)", HintWord::Scale(Scale::Million)),
    (" mn", HintWord::Scale(Scale::Million)),
    ("百万", HintWord::Scale(Scale::Million)),
    ("billion", HintWord::Scale(Scale::Billion)),
    ("$bn", HintWord::Scale(Scale::Billion)),
    ("(bn)", HintWord::Scale(Scale::Billion)),
    ("(b)", HintWord::Scale(Scale::Billion)),
    ("万", HintWord::Scale(Scale::TenThousand)),
    ("亿", HintWord::Scale(Scale::HundredMillion)),
    ("$", HintWord::Currency(Currency::Dollar)),
    ("usd", HintWord::Currency(Currency::Dollar)),
    ("€", HintWord::Currency(Currency::Euro)),
    ("eur", HintWord::Currency(Currency::Euro)),
    ("£", HintWord::Currency(Currency::Pound)),
    ("gbp", HintWord::Currency(Currency::Pound)),
    ("¥", HintWord::Currency(Currency::Yen)),
    ("元", HintWord::Currency(Currency::Yen)),
    ("cny", HintWord::Currency(Currency::Yen)),
    ("jpy", HintWord::Currency(Currency::Yen)),
];

/// [`HINT_WORDS`] as one automaton, ASCII case ignored (the other words have no case).
static HINT_FINDER: LazyLock<Option<AhoCorasick>> = LazyLock::new(|| {
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(HINT_WORDS.iter().map(|(w, _)| w))
        .ok()
});

/// A header's unit and scale ("margin (%)", "revenue ($M)", "cost, in thousands", "收入(万元)").
fn header_hint(column: &str) -> Hint {
    let mut hint = Hint {
        unit: None,
        scale: Scale::One,
    };
    let Some(finder) = HINT_FINDER.as_ref() else {
        return hint;
    };
    // The first word of each kind in the list's order wins, wherever it sits in the header.
    let (mut percent, mut scale, mut currency) = (false, usize::MAX, usize::MAX);
    for found in finder.find_overlapping_iter(column) {
        let k = found.pattern().as_usize();
        match HINT_WORDS[k].1 {
            HintWord::Percent => percent = true,
            HintWord::Scale(_) => scale = scale.min(k),
            HintWord::Currency(_) => currency = currency.min(k),
        }
    }
    if percent {
        hint.unit = Some(Unit::Percent);
        return hint;
    }
    if let Some((_, HintWord::Scale(s))) = HINT_WORDS.get(scale) {
        hint.scale = *s;
    }
    if let Some((_, HintWord::Currency(c))) = HINT_WORDS.get(currency) {
        hint.unit = Some(Unit::Currency(*c));
    }
    hint
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

/// Cells of a header or a row into `out`: delimited cells (a quoted cell's delimiters kept
/// inside it), or runs of text separated by two spaces or more, with their character columns.
fn cells_into<'t>(line: &'t str, layout: Layout, out: &mut Vec<(usize, usize, &'t str)>) {
    out.clear();
    match layout {
        Layout::Delimited(d) => for_each_cell(line, d, |s, e| {
            out.push((s, e, cell_text(&line[s..e])));
        }),
        Layout::Aligned | Layout::Prose => aligned_cells(line, out),
    }
}

/// A cell's text without the spaces and quotes around it; most cells have none, and are
/// returned as they are.
fn cell_text(cell: &str) -> &str {
    let bare = |b: Option<&u8>| !matches!(b, Some(b'"') | Some(b' ' | b'\t' | b'\r') | None);
    if bare(cell.as_bytes().first()) && bare(cell.as_bytes().last()) {
        return cell;
    }
    cell.trim().trim_matches('"').trim()
}

/// Runs of text separated by two spaces or more, with their character columns (not bytes: an
/// aligned table lines up characters).
fn aligned_cells<'t>(line: &'t str, cells: &mut Vec<(usize, usize, &'t str)>) {
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
}

/// The character column of byte `byte` of `line`; `ascii` says whether the line is all ASCII,
/// found once per row, where a byte is a character.
fn char_column(line: &str, ascii: bool, byte: usize) -> usize {
    if ascii {
        byte
    } else {
        line[..byte.min(line.len())].chars().count()
    }
}

/// A table row's cells and what it is about.
struct Row<'t> {
    cells: Vec<(usize, usize, &'t str)>,
    /// Whether the row is all ASCII, where a character column is a byte's.
    ascii: bool,
    label: Option<Arc<str>>,
}

/// The subject of a figure of a table row and its column: the header cell it sits under,
/// with the row's label. None where no named header cell is above it.
fn table_subject(
    line: &str,
    figure: &Figure,
    h: &Header<'_>,
    row: &Row<'_>,
) -> Option<(Subject, Option<u16>)> {
    let column = column_of(line, figure, h, row)?;
    let name = h.names.get(column)?.as_ref()?;
    let subject = Subject {
        about: Some(name.clone()),
        row: row.label.as_ref().filter(|l| *l != name).cloned(),
    };
    Some((subject, u16::try_from(column).ok()))
}

/// A line read as prose: the label it opens with (`label: value, value`), found once and shared
/// by its figures.
struct ProseLine<'t> {
    line: &'t str,
    /// Where the label's colon is, and the label; looked for at the first figure.
    label: Option<Option<(usize, &'t str, Arc<str>)>>,
}

impl<'t> ProseLine<'t> {
    fn new(line: &'t str) -> Self {
        Self { line, label: None }
    }

    /// The label before `: ` on the line, else the few words before the figure in its sentence.
    fn subject_of(&mut self, figure: &Figure) -> Subject {
        let line = self.line;
        let label = self
            .label
            .get_or_insert_with(|| {
                line_label(line).map(|(colon, label)| (colon, label, Arc::from(clipped(label))))
            })
            .as_ref()
            .filter(|(colon, _, _)| *colon < figure.start);
        let near = prose_subject(line, figure.start);
        match label {
            Some((_, text, shared)) if !near.contains(text) => {
                if near.is_empty() {
                    Subject {
                        about: Some(shared.clone()),
                        row: None,
                    }
                } else {
                    Subject {
                        about: Some(Arc::from(clipped(near))),
                        row: Some(shared.clone()),
                    }
                }
            }
            _ => Subject::about(clipped(near)),
        }
    }
}

/// pandas' row numbers: an integer in front of the first header cell, a position, not data.
fn is_row_index(line: &str, figure: &Figure, h: &Header<'_>) -> bool {
    h.layout == Layout::Aligned
        && figure.place == 0
        && line[..figure.start].trim().is_empty()
        && h.cells
            .first()
            .is_some_and(|c| char_column(line, line.is_ascii(), figure.end) <= c.0)
}

/// The header cell a figure sits under.
fn column_of(line: &str, figure: &Figure, h: &Header<'_>, row: &Row<'_>) -> Option<usize> {
    match h.layout {
        Layout::Delimited(_) => row
            .cells
            .iter()
            .position(|c| figure.start >= c.0 && figure.start <= c.1),
        Layout::Aligned | Layout::Prose => {
            let (fs, fe) = (
                char_column(line, row.ascii, figure.start),
                char_column(line, row.ascii, figure.end),
            );
            h.cells
                .iter()
                .enumerate()
                .find(|(_, c)| c.0 < fe && fs < c.1)
                .or_else(|| h.cells.iter().enumerate().find(|(_, c)| c.1 >= fe))
                .map(|(k, _)| k)
        }
    }
}

/// The cells of a row that are words, not numbers ("East widgets"), written into `label`:
/// what the row is about. False when it has none.
fn row_label(
    line: &str,
    layout: Layout,
    cells: &[(usize, usize, &str)],
    label: &mut String,
) -> bool {
    let wordy = |c: &str| {
        if c.is_ascii() {
            c.bytes().any(|b| b.is_ascii_alphabetic())
        } else {
            c.chars().any(char::is_alphabetic)
        }
    };
    let mut words = |parts: &mut dyn Iterator<Item = &str>| {
        for word in parts.filter(|c| !c.is_empty() && wordy(c)).take(3) {
            if !label.is_empty() {
                label.push(' ');
            }
            label.push_str(word);
        }
    };
    if layout == Layout::Aligned {
        words(&mut line.split_whitespace());
    } else {
        words(&mut cells.iter().map(|c| c.2));
    }
    !label.is_empty()
}

/// What a line of `label: value, value, …` is about: where its colon is, and the label, which
/// figures after the colon share.
fn line_label(line: &str) -> Option<(usize, &str)> {
    let colon = line.find(": ")?;
    if colon > 60 {
        return None;
    }
    let label = line[..colon]
        .trim()
        .trim_start_matches(['-', '*', '#', '>', ' ']);
    (label.chars().any(char::is_alphabetic) && !label.is_empty()).then_some((colon, label))
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
    // Back from the figure to the clause's start (a stop, a comma, a bracket) or to the fifth
    // word before it, whichever is nearer: one walk over the few characters that matter.
    let mut ended = 0;
    let mut in_word = false;
    for (i, c) in head.char_indices().rev() {
        if matches!(c, '.' | ';' | '!' | '?' | '(' | '。' | '；' | '，' | ',') {
            return head[i + c.len_utf8()..].trim();
        }
        if c.is_whitespace() {
            if in_word {
                ended += 1;
                in_word = false;
                if ended == 5 {
                    return head[i + c.len_utf8()..].trim();
                }
            }
        } else {
            in_word = true;
        }
    }
    head.trim()
}

/// `s` cut to [`MAX_SUBJECT`] bytes on a character boundary.
fn clipped(s: &str) -> &str {
    &s[..s.floor_char_boundary(MAX_SUBJECT)]
}

#[cfg(test)]
#[path = "reading_tests.rs"]
mod tests;
