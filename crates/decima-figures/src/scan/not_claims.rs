//! Numbers that are not claims: years, dates, times, list numbers, ids, versions, ordinals,
//! references and periods. An answer is full of them, and flagging them would bury the
//! figures that matter.

use super::affixes::{char_at, char_before, word_after};
use super::core::{Chain, Digits};
use crate::figure::NotClaim;
use decima_extract::MONTHS;

/// Words after which a number names a thing rather than counts it.
const ID_WORDS: &[&str] = &[
    "id", "no", "issue", "ticket", "pr", "row", "line", "page", "port", "pid", "step", "section",
    "chapter", "table", "figure", "fig", "item", "part", "version", "build", "commit", "order",
    "invoice", "account", "room", "case", "seq", "call", "run", "attempt", "phase", "stage",
    "exhibit", "appendix", "note", "footnote", "level", "tier", "round", "rule", "article",
    "option", "question", "slide", "task", "sheet", "column", "col", "code", "signal",
];

fn is_month(w: &str) -> bool {
    (3..=9).contains(&w.len()) && MONTHS.iter().any(|m| w.eq_ignore_ascii_case(m))
}

/// What a plain number is not, from what is written around it. `start` is where the figure
/// (its sign and currency included) starts, `digits_start` where its digits do.
pub(crate) struct Context<'a> {
    pub text: &'a str,
    pub start: usize,
    /// The word that ends just before `start`.
    pub before: &'a str,
    pub digits_start: usize,
    pub digits: &'a Digits,
    pub bare: bool,
    pub glued: Option<&'a str>,
}

/// Why the number is not a claim, and where a date or time that runs on ends.
pub(crate) fn classify(cx: &Context<'_>) -> Option<(NotClaim, Option<usize>)> {
    if let Some(found) = before_marks(cx) {
        return Some((found, None));
    }
    if let Some(chain) = cx.digits.chain {
        return Some(match chain {
            Chain::Dotted if dotted_date(cx) => (NotClaim::Date, None),
            Chain::Dotted => (NotClaim::Version, None),
        });
    }
    if let Some(glued) = cx.glued {
        if matches!(glued, "st" | "nd" | "rd" | "th") {
            return Some((NotClaim::Ordinal, None));
        }
        if glued.eq_ignore_ascii_case("am") || glued.eq_ignore_ascii_case("pm") {
            return Some((NotClaim::Time, None));
        }
        if glued.starts_with('日') || glued.starts_with('号') || glued.starts_with('月') {
            return Some((NotClaim::Date, None));
        }
        if glued.starts_with('年') && cx.bare {
            return Some((NotClaim::Year, None));
        }
    }
    if let Some(end) = joined_date_or_time(cx) {
        return Some(end);
    }
    if !cx.bare {
        return None;
    }
    after_words(cx)
}

/// Marks just before the number: `#`, letters glued to it, `v`, `Q`, `FY`, `[`, `^`, `第`, a
/// path or a port.
fn before_marks(cx: &Context<'_>) -> Option<NotClaim> {
    let prev = char_before(cx.text, cx.start)?;
    match prev {
        '#' | '/' | '\\' | '_' | '@' => return Some(NotClaim::Id),
        '[' | '^' if char_at(cx.text, cx.digits.end) == Some(']') || prev == '^' => {
            return Some(NotClaim::Reference);
        }
        '第' => return Some(NotClaim::Ordinal),
        ':' if char_before(cx.text, cx.start - 1).is_some_and(char::is_alphanumeric) => {
            return Some(NotClaim::Id);
        }
        '.' if char_before(cx.text, cx.start - 1).is_some_and(|c| c.is_ascii_alphanumeric()) => {
            return Some(NotClaim::Id);
        }
        // "invoice-3", "INV-2026-000123", "COVID-19": a name with a number, not a count.
        '-' if hyphenated_name(&cx.text[..cx.start - 1]) => return Some(NotClaim::Id),
        _ => {}
    }
    if prev.is_ascii_alphabetic() {
        let w = cx.before;
        return Some(match w {
            "v" | "V" => NotClaim::Version,
            "Q" | "H" | "FY" | "CY" | "W" => NotClaim::Period,
            _ => NotClaim::Id,
        });
    }
    None
}

/// Whether the text before a hyphen ends with a token of letters and digits that holds a
/// letter: the hyphen joins a name to its number.
fn hyphenated_name(head: &str) -> bool {
    head.chars()
        .rev()
        .take_while(|c| c.is_alphanumeric() || matches!(c, '-' | '_'))
        .any(char::is_alphabetic)
}

/// "15.03.2024" rather than "1.2.3".
fn dotted_date(cx: &Context<'_>) -> bool {
    let span = &cx.text[cx.digits_start..cx.digits.end];
    let parts: Vec<&str> = span.split('.').collect();
    parts.len() == 3
        && parts[0].len() <= 2
        && parts[1].len() <= 2
        && (parts[2].len() == 4 || parts[2].len() == 2)
        && parts[1].parse::<u32>().is_ok_and(|m| (1..=12).contains(&m))
}

/// A date or a time joined to the number: "2024-03-15", "3/15/2024", "12:30", "2019-2023".
fn joined_date_or_time(cx: &Context<'_>) -> Option<(NotClaim, Option<usize>)> {
    if cx.digits.fractional && char_at(cx.text, cx.digits.end) != Some(':') {
        return None;
    }
    let bytes = cx.text.as_bytes();
    let mark = *bytes.get(cx.digits.end)?;
    if !matches!(mark, b'-' | b'/' | b':') {
        return None;
    }
    let mut end = cx.digits.end;
    let mut parts = vec![&cx.text[cx.digits_start..cx.digits.end]];
    while bytes.get(end) == Some(&mark) {
        let n = bytes[end + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if n == 0 {
            break;
        }
        parts.push(&cx.text[end + 1..end + 1 + n]);
        end += 1 + n;
    }
    if parts.len() < 2 {
        return None;
    }
    if mark == b':' {
        return Some((NotClaim::Time, Some(end)));
    }
    let year_like =
        |p: &str| p.len() == 4 && p.parse::<u32>().is_ok_and(|y| (1900..=2100).contains(&y));
    if parts.len() == 3 {
        return Some((NotClaim::Date, Some(end)));
    }
    // Two parts: a span of years ("2019-2023", "2023/24") or a day and a month ("3/15").
    if year_like(parts[0]) && (year_like(parts[1]) || parts[1].len() == 2) {
        return Some((NotClaim::Year, Some(end)));
    }
    if mark == b'/' && parts.iter().all(|p| p.len() <= 2) {
        return Some((NotClaim::Date, Some(end)));
    }
    None
}

/// Bare integers read from the words around them: years, list numbers, ids, days of a month.
fn after_words(cx: &Context<'_>) -> Option<(NotClaim, Option<usize>)> {
    let d = cx.digits;
    if d.fractional || d.grouped {
        return None;
    }
    let value = d.value;
    if d.digit_count == 4 && (1900.0..=2100.0).contains(&value) {
        return Some((NotClaim::Year, None));
    }
    if d.digit_count >= 10 {
        return Some((NotClaim::Id, None));
    }
    if list_number(cx) {
        return Some((NotClaim::ListNumber, None));
    }
    let before = cx.before;
    if !before.is_empty() && ID_WORDS.iter().any(|w| before.eq_ignore_ascii_case(w)) {
        return Some((NotClaim::Id, None));
    }
    if value > 31.0 {
        return None;
    }
    let (after, _) = word_after(cx.text, cx.digits.end);
    if is_month(before) || is_month(after) {
        return Some((NotClaim::Date, None));
    }
    if value <= 24.0
        && matches!(
            after,
            "am" | "pm" | "a.m" | "p.m" | "AM" | "PM" | "h" | "o'clock"
        )
    {
        return Some((NotClaim::Time, None));
    }
    None
}

/// A number that opens a line ("1. ", "2) ", "## 3. "), numbering what follows.
fn list_number(cx: &Context<'_>) -> bool {
    // Only marks may stand between the line's start and the number: walked back byte by byte,
    // so that a long line is not searched for its start.
    let opens_line = cx.text.as_bytes()[..cx.start]
        .iter()
        .rev()
        .take_while(|&&b| b != b'\n')
        .all(|b| matches!(b, b' ' | b'\t' | b'#' | b'>' | b'-' | b'*' | b'+' | b'|'));
    if !opens_line {
        return false;
    }
    let after = &cx.text[cx.digits.end..];
    (after.starts_with('.') || after.starts_with(')'))
        && after[1..].chars().next().is_none_or(|c| c.is_whitespace())
}
