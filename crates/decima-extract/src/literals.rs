//! The exact literals a digest keeps ([`Literal`], its [`LiteralKind`] and [`Origin`]) and the
//! recogniser that finds them in text.
//!
//! Literal recognition. Hand-written and linear: a word scanner (words end at whitespace, CJK
//! characters and brackets), a classifier per word, a few multi-word forms (a number and its
//! unit, a date with its time and zone, month names), and, in prose, quoted and backticked spans.
//! The classifier per word is in the `classify` module.

use super::classify::{classify, ends_with_zone, is_date, is_plain_int, is_time, is_unit, is_zone};
use super::spaced::spaced_literal;

/// What kind of exact literal a token is; used to fold dropped literals into counts per kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum LiteralKind {
    /// A number with decimals, a unit, a currency, a percent sign or many digits.
    Number,
    /// An IPv4 or IPv6 address, or a host with a port.
    Address,
    /// A URL of any scheme.
    Url,
    /// An e-mail address.
    Email,
    /// A hexadecimal hash (commit, sha256, ...).
    Hash,
    /// A semantic version.
    Version,
    /// A date, a time, or both, with its zone.
    Time,
    /// A ticket or issue id (ABC-1234, #1234).
    Ticket,
    /// A quoted or backticked span, quotes included.
    Quoted,
    /// A file path (unix, home, Windows) or a file name.
    Path,
    /// Any other identifier: UUIDs, mixed letters and digits, dotted or snake_case names.
    Id,
}

impl LiteralKind {
    /// The short name used in the "folded literals" line.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Where a literal was stated, best first: this is the order in which literals are kept when
/// the budget is short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    /// Stated by the user: never dropped while anything less important is kept.
    User,
    /// Written by the assistant, or an argument of a one-off tool call.
    Prose,
    /// Printed by a tool, or an argument of a tool call: kept fairly across operations, so
    /// one noisy operation cannot crowd out the others.
    Tool,
}

/// One exact literal with what decides whether it is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Literal {
    /// The text, verbatim.
    pub text: String,
    /// What it is.
    pub kind: LiteralKind,
    /// The best place it was stated.
    pub origin: Origin,
    /// When it was last seen (larger is more recent); newer literals are kept first.
    pub last_seen: u64,
    /// For a literal from a tool call or result: the shape of that operation (see
    /// [`Operation::line`](super::Operation::line)), under which it is rendered.
    pub group: Option<String>,
}

/// English month names and their abbreviations, lowercase: a number beside one is a day.
pub const MONTHS: &[&str] = &[
    "jan",
    "january",
    "feb",
    "february",
    "mar",
    "march",
    "apr",
    "april",
    "may",
    "jun",
    "june",
    "jul",
    "july",
    "aug",
    "august",
    "sep",
    "sept",
    "september",
    "oct",
    "october",
    "nov",
    "november",
    "dec",
    "december",
];

/// A literal the recogniser found: a slice of the text and its kind.
pub(super) fn scan_literals(text: &str, prose: bool, out: &mut dyn FnMut(&str, LiteralKind)) {
    let spans = if prose {
        quoted_spans(text)
    } else {
        Vec::new()
    };
    for &(s, e) in &spans {
        out(&text[s..e], LiteralKind::Quoted);
    }
    if !text.is_ascii() {
        for (s, e) in chinese_dates(text) {
            out(&text[s..e], LiteralKind::Time);
        }
    }
    let words = words(text);
    let inside = |pos: usize| spans.iter().any(|&(s, e)| pos >= s && pos < e);
    let mut i = 0;
    while i < words.len() {
        let (ws, we) = words[i];
        if !spans.is_empty() && inside(ws) {
            i += 1;
            continue;
        }
        let w = &text[ws..we];
        // A plain word of letters is no literal (only a month may open a date, a currency code
        // an amount): most words end here.
        let letters = w.bytes().all(|b| b.is_ascii_alphabetic());
        if letters && !(w.len() == 3 && w.bytes().all(|b| b.is_ascii_uppercase())) {
            // Only a capitalised month name opens a date among plain words.
            if w.starts_with(|c: char| c.is_ascii_uppercase())
                && let Some(end) = month_date(text, &words, i)
            {
                out(&text[ws..end.1], LiteralKind::Time);
                i = end.0 + 1;
            } else {
                i += 1;
            }
            continue;
        }
        // An IBAN, a phone number or an amount written with spaces, kept whole.
        if let Some((last, kind)) = spaced_literal(text, &words, i) {
            out(&text[ws..words[last].1], kind);
            i = last + 1;
            continue;
        }
        // A month name with a day (and year): "Nov 3, 2026", "3 November 2026".
        if let Some(end) = month_date(text, &words, i) {
            out(&text[ws..end.1], LiteralKind::Time);
            i = end.0 + 1;
            continue;
        }
        let Some((kind, sub)) = classify(w) else {
            // A plain integer with a unit after it: "300 rows".
            if is_plain_int(w)
                && let Some(unit) = adjacent(text, &words, i + 1)
                && is_unit(unit)
            {
                out(&text[ws..words[i + 1].1], LiteralKind::Number);
                i += 2;
                continue;
            }
            i += 1;
            continue;
        };
        let (ss, se) = (ws + sub.0, ws + sub.1);
        if !prose && kind == LiteralKind::Number && is_plain_int(&text[ss..se]) {
            // Counts printed by tools are not worth keeping verbatim; ids in prose are.
            i += 1;
            continue;
        }
        let (last, end) = literal_tail(text, &words, i, kind, (ss, se), we);
        out(&text[ss..end], kind);
        i = last + 1;
    }
}

/// The word after word `j - 1`, when a single space separates them.
fn adjacent<'t>(text: &'t str, words: &[(usize, usize)], j: usize) -> Option<&'t str> {
    let (ps, pe) = (words[j - 1].1, words.get(j)?.0);
    (pe == ps + 1 && text.as_bytes()[ps] == b' ').then(|| &text[words[j].0..words[j].1])
}

/// How far the literal found in word `i` (its span `ss..se`, the word ending at `we`) reaches:
/// a date takes its time and zone, a number its unit. The last word it takes, and its end.
fn literal_tail(
    text: &str,
    words: &[(usize, usize)],
    i: usize,
    kind: LiteralKind,
    (ss, se): (usize, usize),
    we: usize,
) -> (usize, usize) {
    let mut end = se;
    let mut last = i;
    match kind {
        LiteralKind::Time => {
            // A date, then its time, then its zone.
            if is_date(&text[ss..se])
                && let Some(t) = adjacent(text, words, last + 1)
                && is_time(t)
            {
                last += 1;
                end = words[last].1;
            }
            if let Some(z) = adjacent(text, words, last + 1)
                && is_zone(z)
                && !ends_with_zone(&text[ss..end])
            {
                last += 1;
                end = words[last].1;
            }
        }
        LiteralKind::Number if se == we && !text[ss..se].ends_with('%') => {
            if let Some(unit) = adjacent(text, words, i + 1)
                && is_unit(unit)
            {
                last = i + 1;
                end = words[last].1;
            }
        }
        _ => {}
    }
    (last, end)
}

fn is_word_break(c: char) -> bool {
    if c.is_ascii() {
        return ASCII_BREAKS[c as usize];
    }
    c.is_whitespace()
        || is_cjk(c)
        || matches!(c, '“' | '”' | '‘' | '’' | '«' | '»' | '，' | '。' | '、')
}

/// The ASCII characters that break words, by code: whitespace (with the vertical tab), brackets,
/// quotes, `|` and `;`. A table, as [`words`] asks it of every byte of every text.
const ASCII_BREAKS: [bool; 128] = {
    let mut table = [false; 128];
    let breaks = b" \t\n\x0b\x0c\r()[]{}<>\"'`|;";
    let mut i = 0;
    while i < breaks.len() {
        table[breaks[i] as usize] = true;
        i += 1;
    }
    table
};

/// CJK ideographs, kana, hangul, CJK punctuation and fullwidth forms.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3000..=0x303F | 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF |
        0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF | 0x20000..=0x2FFFF)
}

/// Word spans, trimmed of trailing sentence punctuation. A comma breaks words except between
/// digits ("1,234").
fn words(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(text.len() / 6 + 1);
    let bytes = text.as_bytes();
    let mut start: Option<usize> = None;
    let push = |s: usize, e: usize, out: &mut Vec<(usize, usize)>| {
        let w = &text[s..e];
        let b = w.as_bytes();
        if b.first().is_some_and(|&c| c != b'*') && b.last().is_some_and(u8::is_ascii_alphanumeric)
        {
            // Most words have nothing to trim.
            out.push((s, e));
            return;
        }
        let trimmed_end = w.trim_end_matches(['.', ',', ':', '!', '?', '*', '…', '：']);
        let trimmed = trimmed_end.trim_start_matches('*');
        if !trimmed.is_empty() {
            let ns = s + (trimmed_end.len() - trimmed.len());
            out.push((ns, ns + trimmed.len()));
        }
    };
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let (brk, len) = if b == b',' {
            let prev_digit = i > 0 && bytes[i - 1].is_ascii_digit();
            let next_digit = bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
            (!(prev_digit && next_digit), 1)
        } else if b.is_ascii() {
            (ASCII_BREAKS[usize::from(b)], 1)
        } else {
            // `i` is on a character's first byte: every step is a whole character.
            match text[i..].chars().next() {
                Some(c) => (is_word_break(c), c.len_utf8()),
                None => break,
            }
        };
        match (brk, start) {
            (true, Some(s)) => {
                push(s, i, &mut out);
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
        i += len;
    }
    if let Some(s) = start {
        push(s, text.len(), &mut out);
    }
    out
}

/// Quoted and backticked spans, delimiters included: "…", '…', “…”, ‘…’, 「…」, 『…』, «…»
/// and `…`, on one line and not too long to be a token.
fn quoted_spans(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    if !has_quote(text) {
        // Most texts quote nothing: no need to index their characters.
        return out;
    }
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut k = 0;
    while k < chars.len() {
        let (i, c) = chars[k];
        let close = match c {
            '"' => Some('"'),
            '“' => Some('”'),
            '‘' => Some('’'),
            '「' => Some('」'),
            '『' => Some('』'),
            '«' => Some('»'),
            '\'' => Some('\''),
            '`' => Some('`'),
            _ => None,
        };
        let Some(close) = close else {
            k += 1;
            continue;
        };
        let prev = k.checked_sub(1).map(|p| chars[p].1);
        let next = chars.get(k + 1).map(|x| x.1);
        let opener_ok = match c {
            '`' => {
                next != Some('`') && prev != Some('`') && next.is_some_and(|n| !n.is_whitespace())
            }
            '\'' | '"' => {
                prev.is_none_or(|p| {
                    p.is_whitespace() || is_cjk(p) || matches!(p, '(' | '[' | '{' | ':' | '=' | ',')
                }) && next.is_some_and(|n| !n.is_whitespace() && n != c)
            }
            _ => true,
        };
        if !opener_ok {
            k += 1;
            continue;
        }
        let max = match c {
            '\'' => 80,
            '`' => 160,
            _ => 120,
        };
        let mut found = None;
        for (j, &(pos, ch)) in chars.iter().enumerate().skip(k + 1).take(max + 1) {
            if ch == '\n' {
                break;
            }
            if ch == close {
                let after = chars.get(j + 1).map(|x| x.1);
                let closer_ok = match c {
                    '\'' => chars[j - 1].1 != ' ' && after.is_none_or(|a| !a.is_alphanumeric()),
                    '`' => after != Some('`'),
                    _ => true,
                };
                if closer_ok {
                    found = Some((j, pos + ch.len_utf8()));
                }
                break;
            }
        }
        match found {
            Some((j, end)) if j > k + 1 => {
                out.push((i, end));
                k = j + 1;
            }
            _ => k += 1,
        }
    }
    out
}

/// Whether `text` holds any opening delimiter [`quoted_spans`] knows, by its UTF-8 bytes:
/// `"`, `'`, `` ` ``, « (C2 AB), “ ‘ (E2 80 9C/98), 「 『 (E3 80 8C/8E).
fn has_quote(text: &str) -> bool {
    let b = text.as_bytes();
    if memchr::memchr3(b'"', b'\'', b'`', b).is_some() {
        return true;
    }
    if text.is_ascii() {
        return false;
    }
    memchr::memchr3_iter(0xC2, 0xE2, 0xE3, b).any(|i| match b[i] {
        0xC2 => b.get(i + 1) == Some(&0xAB),
        0xE2 => b.get(i + 1) == Some(&0x80) && matches!(b.get(i + 2), Some(0x9C | 0x98)),
        _ => b.get(i + 1) == Some(&0x80) && matches!(b.get(i + 2), Some(0x8C | 0x8E)),
    })
}

/// "2026年11月3日", "11月3日", optionally followed by a time.
fn chinese_dates(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut last_end = 0;
    for (m, _) in text.match_indices('月') {
        if m < last_end {
            continue;
        }
        let mut s = m;
        let month_digits = bytes[..m]
            .iter()
            .rev()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if month_digits == 0 || month_digits > 2 {
            continue;
        }
        s -= month_digits;
        if text[..s].ends_with('年') {
            let y = s - '年'.len_utf8();
            let yd = bytes[..y]
                .iter()
                .rev()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if yd == 4 {
                s = y - 4;
            }
        }
        let mut e = m + '月'.len_utf8();
        let dd = bytes[e..].iter().take_while(|b| b.is_ascii_digit()).count();
        if (1..=2).contains(&dd) {
            let after = &text[e + dd..];
            if after.starts_with('日') || after.starts_with('号') {
                e += dd + '日'.len_utf8();
            }
        }
        if e == m + '月'.len_utf8() && s + month_digits == m {
            // "3月" alone is not specific enough.
            continue;
        }
        let rest = text[e..].trim_start_matches(' ');
        let t = rest
            .char_indices()
            .find(|&(_, c)| !(c.is_ascii_digit() || c == ':'))
            .map_or(rest.len(), |(k, _)| k);
        if t > 0 && is_time(&rest[..t]) {
            e = text.len() - rest.len() + t;
        }
        out.push((s, e));
        last_end = e;
    }
    out
}

/// "Nov 3", "Nov 3, 2026", "3 Nov 2026", "November 3rd": returns (last word index, end byte).
fn month_date(text: &str, words: &[(usize, usize)], i: usize) -> Option<(usize, usize)> {
    let w = |j: usize| words.get(j).map(|&(s, e)| &text[s..e]);
    let gap = |j: usize| -> Option<&str> {
        let (a, b) = (words.get(j - 1)?.1, words.get(j)?.0);
        Some(&text[a..b])
    };
    let is_month = |s: &str| {
        let t = s.trim_end_matches('.');
        t.len() >= 3
            && t.starts_with(|c: char| c.is_ascii_uppercase())
            && MONTHS.iter().any(|m| m.eq_ignore_ascii_case(t))
    };
    let is_day = |s: &str| {
        let d = s.trim_end_matches(['s', 't', 'n', 'd', 'r', 'h']);
        !d.is_empty()
            && d.len() <= 2
            && d.bytes().all(|b| b.is_ascii_digit())
            && d.parse::<u32>().is_ok_and(|n| (1..=31).contains(&n))
    };
    let is_year = |s: &str| {
        s.len() == 4 && s.bytes().all(|b| b.is_ascii_digit()) && s.starts_with(['1', '2'])
    };
    let first = w(i)?;
    if is_month(first) {
        let day = w(i + 1)?;
        if gap(i + 1)? != " " || !is_day(day) {
            return None;
        }
        let mut last = i + 1;
        if let (Some(y), Some(g)) = (w(i + 2), gap(i + 2))
            && (g == ", " || g == " ")
            && is_year(y)
        {
            last = i + 2;
        }
        return Some((last, words[last].1));
    }
    if is_day(first) && first.bytes().all(|b| b.is_ascii_digit()) {
        let month = w(i + 1)?;
        if gap(i + 1)? != " " || !is_month(month) {
            return None;
        }
        let mut last = i + 1;
        if let (Some(y), Some(g)) = (w(i + 2), gap(i + 2))
            && g == " "
            && is_year(y)
        {
            last = i + 2;
        }
        return Some((last, words[last].1));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lits(text: &str, prose: bool) -> Vec<String> {
        let mut v = Vec::new();
        scan_literals(text, prose, &mut |t, _| v.push(t.to_string()));
        v
    }

    #[test]
    fn every_opening_delimiter_is_seen_before_the_characters_are_indexed() {
        for open in ['"', '\'', '`', '«', '“', '‘', '「', '『'] {
            let text = format!("见 {open}x");
            assert!(has_quote(&text), "{text}");
        }
        // CJK punctuation and other E2/E3 characters are no quotes.
        for text in ["核对。发票，阈值 0.8", "a — b … c", "plain"] {
            assert!(!has_quote(text), "{text}");
        }
        assert_eq!(
            lits("取「账单国家」和 『ACME-7』", true),
            ["「账单国家」", "『ACME-7』"]
        );
    }

    #[test]
    fn literal_classifier() {
        assert_eq!(
            lits(
                "and/or Q3 exit_code=0 0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a6b src/main.rs 5ms 20 %",
                false
            ),
            vec![
                "0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a6b",
                "src/main.rs",
                "5ms",
                "20 %"
            ]
        );
        let cases = [
            ("set the threshold 0.8375 now", "0.8375"),
            ("db at 10.20.30.40:5432 ok", "10.20.30.40:5432"),
            (
                "use pg-replica-2.corp.internal:6432 instead",
                "pg-replica-2.corp.internal:6432",
            ),
            ("cache redis-03:6379.", "redis-03:6379"),
            (
                "v6 is 2001:db8:85a3::8a2e:370:7334 here",
                "2001:db8:85a3::8a2e:370:7334",
            ),
            ("commit 9f3c2ab1 fixed it", "9f3c2ab1"),
            (
                "raw data in s3://acme-raw/2026/q3/ now",
                "s3://acme-raw/2026/q3/",
            ),
            ("mail ops.lead@example.org please", "ops.lead@example.org"),
            ("upgrade to v2.14.1, then", "v2.14.1"),
            ("tag 1.2.3-rc.1 is out", "1.2.3-rc.1"),
            ("due 2026-11-03 14:05 UTC sharp", "2026-11-03 14:05 UTC"),
            ("at 2026-11-03T14:05:00+08:00.", "2026-11-03T14:05:00+08:00"),
            ("by Nov 3, 2026 please", "Nov 3, 2026"),
            ("see DATA-4821 and #1287", "DATA-4821"),
            ("see DATA-4821 and #1287", "#1287"),
            (
                "the key `ingest.max_batch_rows` is",
                "`ingest.max_batch_rows`",
            ),
            ("name it \"Q3 final (v3)\" ok", "\"Q3 final (v3)\""),
            ("表名叫「季度汇总表」。", "「季度汇总表」"),
            ("open ~/reports/q3_draft.xlsx", "~/reports/q3_draft.xlsx"),
            (
                r"open C:\Users\ana\recon.xlsx now",
                r"C:\Users\ana\recon.xlsx",
            ),
            ("rate 12.5% and 3.2 GB and 450ms", "12.5%"),
            ("rate 12.5% and 3.2 GB and 450ms", "3.2 GB"),
            ("rate 12.5% and 3.2 GB and 450ms", "450ms"),
            ("阈值改成0.8375，端口是db-7.internal:5432。", "0.8375"),
            (
                "阈值改成0.8375，端口是db-7.internal:5432。",
                "db-7.internal:5432",
            ),
            ("截止2026年11月3日 14:05", "2026年11月3日 14:05"),
            ("paid €1,250.00 today", "€1,250.00"),
            (
                "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
                "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            ),
        ];
        for (text, want) in cases {
            let found = lits(text, true);
            assert!(
                found.iter().any(|l| l == want),
                "{want} not in {found:?} ({text})"
            );
        }
        for text in [
            "e.g. the 3rd time, 2x faster, no-op, and/or, it's fine, don't, 42 items? no",
            "Rows with a null customer id are excluded from the join.",
        ] {
            let found = lits(text, true);
            assert!(
                found.iter().all(|l| l == "42 items"),
                "{found:?} from {text}"
            );
        }
    }
}
