//! Finds every number in a text and reads it as a [`Figure`]: one pass, byte by byte to the
//! next digit or Chinese numeral, so that a megabyte of tool output takes a few milliseconds.

mod affixes;
mod chinese;
mod core;
mod not_claims;

use crate::figure::{Figure, NotClaim, Scale, Unit};
use affixes::{char_at, char_before, word_before};

/// Every number in `text`, in order, with why it is not a claim where it is not.
#[must_use]
pub fn scan(text: &str) -> Vec<Figure> {
    let mut out = Vec::new();
    scan_into(text, 0, &mut out);
    out
}

/// [`scan`] into `out`, each span moved by `offset`: a table's cells are read into one list.
pub(crate) fn scan_into(text: &str, offset: usize, out: &mut Vec<Figure>) {
    let bytes = text.as_bytes();
    let mut at = 0;
    // Where the last figure ended: the next one's sign or currency may not reach before it.
    let mut floor = 0;
    while let Some(k) = next_candidate(bytes, at) {
        if bytes[k].is_ascii_digit() {
            let (mut figure, end) = read_arabic(text, k, floor);
            figure.start += offset;
            figure.end += offset;
            out.push(figure);
            at = end.max(k + 1);
            floor = at;
        } else {
            let width = char_at(text, k).map_or(1, char::len_utf8);
            match read_chinese(text, k, floor) {
                Some((mut figure, end)) => {
                    figure.start += offset;
                    figure.end += offset;
                    out.push(figure);
                    at = end;
                    floor = end;
                }
                None => at = k + width,
            }
        }
    }
}

/// The next ASCII digit, or the lead byte of a three-byte character in the range that holds
/// the Chinese numerals (U+3007 to U+9FFF).
fn next_candidate(bytes: &[u8], from: usize) -> Option<usize> {
    bytes
        .get(from..)?
        .iter()
        .position(|b| b.is_ascii_digit() || (0xE3..=0xE9).contains(b))
        .map(|p| from + p)
}

/// Words that say a figure is rounded further than its digits: "about 1,200" is rounded to the
/// hundred.
fn approximate(text: &str, start: usize, w: &str) -> bool {
    if matches!(char_before(text, start), Some('~' | '≈' | '约' | '近')) {
        return true;
    }
    [
        "about",
        "around",
        "approximately",
        "approx",
        "roughly",
        "nearly",
        "almost",
        "some",
        "circa",
        "over",
        "under",
    ]
    .iter()
    .any(|a| w.eq_ignore_ascii_case(a))
        || matches!(w, "大约" | "约" | "超过")
}

fn trailing_zeros(value: f64) -> i32 {
    let mut v = value.abs().round();
    let mut n = 0;
    while v >= 10.0 && (v % 10.0) == 0.0 && n < 15 {
        v /= 10.0;
        n += 1;
    }
    n
}

/// Reads the number whose digits start at `digits_start`; its sign and currency may not reach
/// back before `floor`, where the figure before it ended ("0$0" is "0$" and "0").
fn read_arabic(text: &str, digits_start: usize, floor: usize) -> (Figure, usize) {
    let digits = core::read_digits(text, digits_start);
    let mut pre = affixes::prefix(text, digits_start);
    if pre.start < floor || (pre.paren && pre.start == floor) {
        pre = affixes::Prefix {
            negative: false,
            currency: None,
            start: digits_start,
            paren: false,
        };
    }
    let suf = affixes::suffix(text, digits.end, pre.currency.is_some());
    let glued = suf.glued.map(|(s, e)| &text[s..e]);
    let bare = pre.currency.is_none() && suf.unit.is_none() && suf.scale == Scale::One;
    // The word before the figure, read once for what it says about the figure.
    let before = word_before(text, pre.start);
    let cx = not_claims::Context {
        text,
        start: pre.start,
        before,
        digits_start,
        digits: &digits,
        bare: bare && !pre.negative,
        glued,
    };
    let classified = not_claims::classify(&cx);
    let mut end = suf.end;
    if let Some((_, Some(run_end))) = classified {
        end = end.max(run_end);
    }
    let unit = suf
        .unit
        .or(pre.currency.map(Unit::Currency))
        .unwrap_or(Unit::Plain);
    let mut start = pre.start;
    let mut negative = pre.negative;
    let accounting = digits.grouped || digits.fractional || pre.currency.is_some();
    if pre.paren && accounting && char_at(text, end) == Some(')') {
        negative = true;
        start -= 1;
        end += 1;
    }
    let mut place = digits.place;
    let before = if start == pre.start {
        before
    } else {
        word_before(text, start)
    };
    if !digits.fractional && approximate(text, start, before) {
        place = place.max(trailing_zeros(digits.value));
    }
    let magnitude = digits.value * suf.scale.factor();
    let figure = Figure {
        start,
        end,
        value: if negative { -magnitude } else { magnitude },
        unit,
        scale: suf.scale,
        place,
        not_claim: classified.map(|(n, _)| n),
    };
    (figure, end)
}

fn read_chinese(text: &str, start: usize, floor: usize) -> Option<(Figure, usize)> {
    let (value, numerals_end) = chinese::read(text, start)?;
    let suf = affixes::suffix(text, numerals_end, false);
    let end = if suf.unit.is_some() {
        suf.end
    } else {
        numerals_end
    };
    let percent = text[..start].ends_with("百分之") && start - "百分之".len() >= floor;
    let start = if percent {
        start - "百分之".len()
    } else {
        start
    };
    let not_claim = text[end..]
        .chars()
        .next()
        .and_then(|c| match c {
            '月' | '日' | '号' => Some(NotClaim::Date),
            _ => None,
        })
        .or_else(|| (char_before(text, start) == Some('第')).then_some(NotClaim::Ordinal));
    let figure = Figure {
        start,
        end,
        value,
        unit: if percent {
            Unit::Percent
        } else {
            suf.unit.unwrap_or(Unit::Plain)
        },
        scale: Scale::One,
        place: trailing_zeros(value),
        not_claim,
    };
    Some((figure, end))
}

#[cfg(test)]
mod tests;
