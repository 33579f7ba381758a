//! Tables in tool output and in messages: Markdown (`| a | b |` over `|---|---|`), psql (`a | b`
//! over `---+---`), CSV and TSV (a header of names, then rows with as many fields) and aligned
//! columns (pandas, `kubectl get`, `df -h`: a header of names over rows split the same way,
//! pandas' index column allowed). Each row becomes its key (the first cell, with its header)
//! and its other cells under their headers, so no number is kept without what it measures.

/// Rows read per table, and cells per row: a larger table is cut, its first rows kept.
const MAX_ROWS: usize = 40;
const MAX_CELLS: usize = 8;
const MAX_CELL_CHARS: usize = 48;

/// A table row: its key cell with the key column's header, and the other cells with theirs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Row {
    pub(super) key_header: String,
    pub(super) key: String,
    pub(super) cells: Vec<(String, String)>,
}

impl Row {
    /// The row as kept: its non-empty cells, the first few, each cell cut to its length.
    fn cut_to_size(self) -> Row {
        Row {
            key_header: cut(&self.key_header),
            key: cut(&self.key),
            cells: self
                .cells
                .into_iter()
                .filter(|(_, c)| !c.is_empty())
                .take(MAX_CELLS)
                .map(|(h, c)| (cut(&h), cut(&c)))
                .collect(),
        }
    }

    /// The row as one line: `region EMEA: revenue 1.2M; churn 3.4%`.
    pub(super) fn text(&self) -> String {
        let mut out = String::new();
        if !self.key_header.is_empty() {
            out.push_str(&self.key_header);
            out.push(' ');
        }
        out.push_str(&self.key);
        out.push(':');
        for (i, (h, c)) in self.cells.iter().enumerate() {
            out.push_str(if i == 0 { " " } else { "; " });
            if !h.is_empty() {
                out.push_str(h);
                out.push(' ');
            }
            out.push_str(c);
        }
        out
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Pipes,
    Comma,
    Tab,
    /// Aligned columns split at runs of two or more spaces.
    Spaced,
    /// Aligned columns split at any run of spaces (single-word cells).
    Words,
}

fn split(line: &str, style: Style) -> Vec<&str> {
    match style {
        Style::Pipes => {
            let t = line.trim();
            let t = t.strip_prefix('|').unwrap_or(t);
            let t = t.strip_suffix('|').unwrap_or(t);
            t.split('|').map(str::trim).collect()
        }
        Style::Comma => split_csv(line),
        Style::Tab => line.split('\t').map(str::trim).collect(),
        Style::Spaced => line
            .trim()
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect(),
        Style::Words => line.split_whitespace().collect(),
    }
}

/// Comma-separated fields; a double-quoted field may hold commas.
fn split_csv(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                out.push(line[start..i].trim().trim_matches('"'));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(line[start..].trim().trim_matches('"'));
    out
}

/// A separator line under a header: `|---|:--:|`, `----+-----`, `=====  ====`.
fn is_rule(line: &str) -> bool {
    let t = line.trim();
    t.len() >= 3
        && t.contains(['-', '='])
        && t.chars()
            .all(|c| matches!(c, '-' | '=' | '+' | '|' | ':' | ' '))
}

/// A header cell: a name, not a value.
fn is_name(cell: &str) -> bool {
    !cell.is_empty()
        && cell.chars().count() <= MAX_CELL_CHARS
        && cell
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '#')
}

fn header_ok(cells: &[&str]) -> bool {
    cells.len() >= 2 && cells.iter().all(|c| is_name(c)) && {
        // Header cells are names, not a sentence cut at commas or spaces.
        let long = cells
            .iter()
            .filter(|c| c.split_whitespace().count() > 4)
            .count();
        long == 0
    }
}

/// A table starting at `lines[i]`: the index after its last line and its rows.
pub(super) fn table_at(lines: &[&str], i: usize) -> Option<(usize, Vec<Row>)> {
    let head = *lines.get(i)?;
    let next = *lines.get(i + 1)?;
    let (style, first_row) = table_style(head, next, i)?;
    let header = split(head, style);
    if !header_ok(&header) || style == Style::Words && header.len() < 3 {
        return None;
    }
    let mut rows = Vec::new();
    let mut j = first_row;
    let index_name = match pandas_index_name(lines, j, style, header.len()) {
        Some(name) => {
            j += 1;
            name
        }
        None => String::new(),
    };
    while let Some(line) = lines.get(j) {
        if line.trim().is_empty() || is_rule(line) && style == Style::Pipes {
            break;
        }
        let Some(row) = read_row(line, style, &header, &index_name) else {
            break;
        };
        if rows.len() < MAX_ROWS && !row.key.is_empty() {
            rows.push(row.cut_to_size());
        }
        j += 1;
    }
    (!rows.is_empty()).then_some((j, rows))
}

/// How a table whose header is `head` (at line `i`, `next` under it) splits its cells, and
/// the line its rows start at; `None` when `head` is no header.
fn table_style(head: &str, next: &str, i: usize) -> Option<(Style, usize)> {
    if head.trim().is_empty() || head.len() > 400 || next.trim().is_empty() {
        return None;
    }
    // A header holds two separators at least, and starts with a name.
    let t = head.trim();
    let separators = t
        .bytes()
        .filter(|&c| matches!(c, b'|' | b'\t' | b',' | b' '))
        .count();
    if separators < 1
        || !t
            .trim_start_matches('|')
            .trim_start()
            .starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '#')
    {
        return None;
    }
    if head.contains('|') && is_rule(next) {
        Some((Style::Pipes, i + 2))
    } else if head.contains('\t') {
        Some((Style::Tab, i + 1))
    } else if head.contains(',') && !head.contains(", ") {
        Some((Style::Comma, i + 1))
    } else if head.trim().contains("  ") {
        let skip = usize::from(is_rule(next));
        Some((Style::Spaced, i + 1 + skip))
    } else if head.split_whitespace().count() >= 2 && head.len() <= 120 {
        let skip = usize::from(is_rule(next));
        Some((Style::Words, i + 1 + skip))
    } else {
        None
    }
}

/// The index's name pandas prints alone on the line under the header (`lines[j]`), when the
/// rows after it hold one cell more than the `width` of the header.
fn pandas_index_name(lines: &[&str], j: usize, style: Style, width: usize) -> Option<String> {
    if matches!(style, Style::Spaced | Style::Words)
        && let Some(line) = lines.get(j)
        && split(line, style).len() == 1
        && is_name(line.trim())
        && lines
            .get(j + 1)
            .is_some_and(|next| split(next, style).len() == width + 1)
    {
        return Some(line.trim().to_string());
    }
    None
}

/// A row with its cells under their headers, uncut; `None` when the line ends the table (a
/// different number of cells, or aligned columns without a digit).
fn read_row(line: &str, style: Style, header: &[&str], index_name: &str) -> Option<Row> {
    let width = header.len();
    let cells = split(line, style);
    // pandas prints an unnamed index column before the named ones.
    let (key_header, key, rest): (&str, &str, &[&str]) = if cells.len() == width {
        (header[0], cells[0], &cells[1..])
    } else if cells.len() == width + 1 && matches!(style, Style::Spaced | Style::Words) {
        (index_name, cells[0], &cells[1..])
    } else {
        return None;
    };
    let named = if cells.len() == width {
        &header[1..]
    } else {
        header
    };
    let mut with_headers: Vec<(String, String)> = named
        .iter()
        .zip(rest)
        .map(|(h, c)| (h.to_string(), c.to_string()))
        .collect();
    // Aligned columns hold at least one digit a row, or the "table" is prose.
    if matches!(style, Style::Words | Style::Spaced) && !line.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    // pandas' default index says nothing: the first named column keys the row.
    let (mut key_header, mut key) = (key_header.to_string(), key.to_string());
    if key_header.is_empty() && key.bytes().all(|b| b.is_ascii_digit()) && !with_headers.is_empty()
    {
        let (h, c) = with_headers.remove(0);
        (key_header, key) = (h, c);
    }
    Some(Row {
        key_header,
        key,
        cells: with_headers,
    })
}

fn cut(s: &str) -> String {
    match s.char_indices().nth(MAX_CELL_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str) -> Vec<String> {
        let lines: Vec<&str> = text.lines().collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < lines.len() {
            match table_at(&lines, i) {
                Some((next, rows)) => {
                    out.extend(rows.iter().map(Row::text));
                    i = next;
                }
                None => i += 1,
            }
        }
        out
    }

    #[test]
    fn tables_keep_their_headers() {
        let psql = " region | revenue | churn\n--------+---------+-------\n EMEA   | 1.2M    | 3.4%\n APAC   | 0.8M    | 5.1%\n(2 rows)\n";
        assert_eq!(
            rows(psql),
            vec![
                "region EMEA: revenue 1.2M; churn 3.4%",
                "region APAC: revenue 0.8M; churn 5.1%"
            ]
        );
        let md = "| tier | accounts | churn rate |\n|---|---:|---:|\n| Basic | 1,204 | 4.2% |\n| Pro | 310 | 1.9% |\n";
        assert_eq!(
            rows(md),
            vec![
                "tier Basic: accounts 1,204; churn rate 4.2%",
                "tier Pro: accounts 310; churn rate 1.9%"
            ]
        );
        let pandas = "      region  revenue   churn\n0       EMEA     1.2M  0.034\n1  North America   0.9M  0.051\n";
        assert_eq!(
            rows(pandas),
            vec![
                "region EMEA: revenue 1.2M; churn 0.034",
                "region North America: revenue 0.9M; churn 0.051"
            ]
        );
        let csv = "month,signups,cancellations\n2026-07,1200,87\n2026-08,1310,95\n";
        assert_eq!(
            rows(csv),
            vec![
                "month 2026-07: signups 1200; cancellations 87",
                "month 2026-08: signups 1310; cancellations 95"
            ]
        );
        let kubectl = "NAME READY STATUS RESTARTS\nweb-1 1/1 Running 3\n";
        assert_eq!(
            rows(kubectl),
            vec!["NAME web-1: READY 1/1; STATUS Running; RESTARTS 3"]
        );
        let grouped = "            n_accounts  churn_rate\nplan_tier\nBasic             3512      0.0821\nEnterprise        1602      0.0860\n";
        assert_eq!(
            rows(grouped),
            vec![
                "plan_tier Basic: n_accounts 3512; churn_rate 0.0821",
                "plan_tier Enterprise: n_accounts 1602; churn_rate 0.0860"
            ]
        );
        assert!(
            rows("Nothing unusual in the last batch.\nTotals reconcile with finance.\n").is_empty()
        );
        assert!(rows("Batch done\nrows 1200\n").is_empty());
    }
}
