//! The digits of a number: groups, the decimal mark and an exponent, read the way the text
//! most plausibly means them ("1,234.5", "1.234,5", "1 234,5", "1'234", "3,5", "1.2e-3").

/// The digits of one number, before its sign, currency, scale and unit are read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Digits {
    /// Where the digits end (byte offset into the text).
    pub end: usize,
    /// The value the digits write.
    pub value: f64,
    /// The power of ten of the last digit written.
    pub place: i32,
    /// Whether the number has a decimal part or an exponent (never a year, a list number).
    pub fractional: bool,
    /// Digits written, without separators.
    pub digit_count: usize,
    /// Digits before the decimal mark, without separators.
    pub integer_digits: usize,
    /// Whether grouping separators were read ("1,234").
    pub grouped: bool,
    /// What stopped the reading, when it was a chain the scanner could not read as one number:
    /// `1.2.3` (a version or a date) or `1,2,3`.
    pub chain: Option<Chain>,
}

/// A run of digit groups that is not one number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Chain {
    /// Three or more groups joined by dots that are not thousands: a version or a date.
    Dotted,
}

/// Digit groups read after the first.
const MAX_GROUPS: usize = 16;

/// The digits of a number as Rust's parser reads them ("1234.5e-3"), on the stack; a number
/// longer than the buffer is read from a string instead.
struct Digitbuf {
    bytes: [u8; 48],
    len: usize,
    spill: Option<Vec<u8>>,
}

impl Default for Digitbuf {
    fn default() -> Self {
        Self {
            bytes: [0; 48],
            len: 0,
            spill: None,
        }
    }
}

impl Digitbuf {
    fn push(&mut self, part: &[u8]) {
        if let Some(spill) = &mut self.spill {
            spill.extend_from_slice(part);
        } else if self.len + part.len() <= self.bytes.len() {
            self.bytes[self.len..self.len + part.len()].copy_from_slice(part);
            self.len += part.len();
        } else {
            let mut spill = self.bytes[..self.len].to_vec();
            spill.extend_from_slice(part);
            self.spill = Some(spill);
        }
    }

    fn value(&self) -> f64 {
        let bytes = self.spill.as_deref().unwrap_or(&self.bytes[..self.len]);
        exact_small(bytes).unwrap_or_else(|| {
            std::str::from_utf8(bytes)
                .ok()
                .and_then(|s| s.parse::<f64>().ok())
                .unwrap_or(f64::NAN)
        })
    }
}

/// Powers of ten that an `f64` holds exactly.
const EXACT_POWERS: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The value of `digits[.digits]` when its digits fit 53 bits and its decimals 22 places: the
/// quotient of two exact floats is the correctly rounded value, as the full parser would give
/// (Clinger's fast path), at a fraction of its cost. Most figures of a table are such numbers.
fn exact_small(bytes: &[u8]) -> Option<f64> {
    let mut mantissa: u64 = 0;
    let mut decimals: Option<usize> = None;
    for &b in bytes {
        match b {
            b'0'..=b'9' => {
                mantissa = mantissa.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
                if let Some(d) = &mut decimals {
                    *d += 1;
                }
            }
            b'.' if decimals.is_none() => decimals = Some(0),
            _ => return None,
        }
    }
    if mantissa > 1 << 53 {
        return None;
    }
    #[allow(clippy::cast_precision_loss)]
    let m = mantissa as f64;
    Some(m / *EXACT_POWERS.get(decimals.unwrap_or(0))?)
}

fn separator_at(text: &str, i: usize) -> Option<(char, usize)> {
    let c = text.get(i..)?.chars().next()?;
    matches!(
        c,
        ',' | '.' | '\'' | '’' | '\u{a0}' | '\u{202f}' | '\u{2009}'
    )
    .then(|| (c, c.len_utf8()))
}

fn digit_run(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count()
}

/// Reads the digits starting at `start`, which must be an ASCII digit.
pub(crate) fn read_digits(text: &str, start: usize) -> Digits {
    let first = digit_run(text.as_bytes(), start);
    simple_number(text.as_bytes(), start, first)
        .unwrap_or_else(|| read_digits_general(text, start, first))
}

/// [`read_digits`] for any number: groups, decimal marks, chains and an exponent.
fn read_digits_general(text: &str, start: usize, first: usize) -> Digits {
    let bytes = text.as_bytes();
    // Each later group: the separator before it and its digit count and start. A number has a
    // few; reading stops at MAX_GROUPS, so a long chain costs no allocation.
    let mut slots = [('\0', 0usize, 0usize); MAX_GROUPS];
    let mut count = 0;
    let mut at = start + first;
    while count < MAX_GROUPS
        && let Some((sep, width)) = separator_at(text, at)
    {
        let n = digit_run(bytes, at + width);
        if n == 0 {
            break;
        }
        slots[count] = (sep, n, at + width);
        count += 1;
        at += width + n;
    }
    let groups = &slots[..count];
    let leading_zero = first == 1 && bytes[start] == b'0';
    let (groups_used, decimal) = interpret(first, leading_zero, groups);
    let chain =
        (groups_used < groups.len() && groups.iter().all(|g| g.0 == '.') && groups.len() >= 2)
            .then_some(Chain::Dotted);
    let used = &groups[..groups_used];
    let mut end = used.last().map_or(start + first, |g| g.2 + g.1);
    if chain.is_some() {
        end = groups.last().map_or(end, |g| g.2 + g.1);
    }
    let mut buf = Digitbuf::default();
    buf.push(&bytes[start..start + first]);
    let mut decimals = 0usize;
    let mut integer_digits = first;
    for (k, (_, n, s)) in used.iter().enumerate() {
        if decimal == Some(k) {
            buf.push(b".");
            decimals = *n;
        } else {
            integer_digits += n;
        }
        buf.push(&bytes[*s..*s + *n]);
    }
    let grouped = used.len() > usize::from(decimal.is_some());
    let mut place = -(i32::try_from(decimals).unwrap_or(i32::MAX));
    let mut fractional = decimals > 0;
    if chain.is_none()
        && let Some((exp, exp_end)) = exponent(text, end)
    {
        buf.push(b"e");
        buf.push(&bytes[end + 1..exp_end]);
        place += exp;
        fractional = true;
        end = exp_end;
    }
    let value = buf.value();
    Digits {
        end,
        value,
        place,
        fractional,
        digit_count: integer_digits + decimals,
        integer_digits,
        grouped,
        chain,
    }
}

/// Whether a byte may continue a number past a run of digits: a separator (or the lead byte of
/// one), or an exponent.
fn continues(b: Option<&u8>) -> bool {
    matches!(b, Some(b',' | b'.' | b'\'' | 0xC2 | 0xE2 | b'e' | b'E'))
}

/// "1234" or "1234.5" followed by nothing that could continue it, read without the general
/// path's groups: most figures of a table are such numbers.
fn simple_number(bytes: &[u8], start: usize, first: usize) -> Option<Digits> {
    let int_end = start + first;
    let (end, decimals) = match bytes.get(int_end) {
        Some(b'.') => {
            let n = digit_run(bytes, int_end + 1);
            if n == 0 {
                // "12." ends a sentence: the general path reads it as the integer it is.
                return None;
            }
            (int_end + 1 + n, n)
        }
        next if continues(next) => return None,
        _ => (int_end, 0),
    };
    if continues(bytes.get(end)) || first + decimals > 15 {
        return None;
    }
    let digits = |from: usize, to: usize| {
        bytes[from..to]
            .iter()
            .fold(0u64, |m, b| m * 10 + u64::from(b - b'0'))
    };
    let mut mantissa = digits(start, int_end);
    if decimals > 0 {
        mantissa = mantissa * 10u64.pow(u32::try_from(decimals).ok()?) + digits(int_end + 1, end);
    }
    #[allow(clippy::cast_precision_loss)]
    let value = mantissa as f64 / EXACT_POWERS.get(decimals)?;
    Some(Digits {
        end,
        value,
        place: -(i32::try_from(decimals).ok()?),
        fractional: decimals > 0,
        digit_count: first + decimals,
        integer_digits: first,
        grouped: false,
        chain: None,
    })
}

/// How many of the groups after the first belong to the number, and which of them (if any) is
/// the decimal part.
fn interpret(
    first: usize,
    leading_zero: bool,
    groups: &[(char, usize, usize)],
) -> (usize, Option<usize>) {
    if groups.is_empty() {
        return (0, None);
    }
    // The longest prefix of thousands groups with one separator, then an optional decimal part
    // after a different mark.
    let grouping = groups[0].0;
    let thousands = (1..=3).contains(&first)
        && !leading_zero
        && groups[0].1 == 3
        && !(groups.len() == 1 && matches!(grouping, '.'));
    if thousands {
        let run = groups
            .iter()
            .take_while(|g| g.0 == grouping && g.1 == 3)
            .count();
        if let Some(next) = groups.get(run)
            && is_decimal_mark(next.0)
            && next.0 != grouping
        {
            return (run + 1, Some(run));
        }
        // "1,234" in English, "1.234.567" in German (a lone "1.234" reads as a decimal).
        return (run, None);
    }
    let (sep, _, _) = groups[0];
    if is_decimal_mark(sep) {
        // "3,5", "12.75", "0,125": the first mark is the decimal one, and the number ends there
        // unless a chain of dots says it was never a number ("1.2.3", "15.03.2024").
        return (1, Some(0));
    }
    (0, None)
}

fn is_decimal_mark(c: char) -> bool {
    matches!(c, '.' | ',')
}

/// An exponent after the digits ("e6", "E-04"), not glued to more letters ("1e6x" is an id).
fn exponent(text: &str, at: usize) -> Option<(i32, usize)> {
    let bytes = text.as_bytes();
    if !matches!(bytes.get(at), Some(b'e' | b'E')) {
        return None;
    }
    let mut k = at + 1;
    let negative = match bytes.get(k) {
        Some(b'-') => {
            k += 1;
            true
        }
        Some(b'+') => {
            k += 1;
            false
        }
        _ => false,
    };
    let n = digit_run(bytes, k);
    if n == 0 || n > 3 || bytes.get(k + n).is_some_and(u8::is_ascii_alphabetic) {
        return None;
    }
    let magnitude: i32 = text[k..k + n].parse().ok()?;
    Some((if negative { -magnitude } else { magnitude }, k + n))
}

#[cfg(test)]
mod fast_path_tests {
    use super::*;

    #[test]
    fn a_simple_number_reads_as_the_general_path_reads_it() {
        for text in [
            "1234",
            "0",
            "12.5",
            "0.125",
            "999999999999999",
            "12.",
            "1.5e3",
            "1,234",
            "3,5 x",
            "12.5.1",
            "7.25%",
            "1234,5678",
            "42\n",
            "0.0001)",
            "12.34 ms",
        ] {
            let first = digit_run(text.as_bytes(), 0);
            let Some(simple) = simple_number(text.as_bytes(), 0, first) else {
                continue;
            };
            assert_eq!(simple, read_digits_general(text, 0, first), "{text}");
        }
    }

    #[test]
    fn the_fast_path_gives_what_the_full_parser_gives() {
        let mut rng = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..200_000 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let digits = (rng % 17) as usize + 1;
            let point = (rng >> 8) as usize % (digits + 1);
            let mut text = String::new();
            let mut r = rng;
            for k in 0..digits {
                if k == point && k > 0 {
                    text.push('.');
                }
                text.push(char::from(b'0' + (r % 10) as u8));
                r /= 10;
            }
            let parsed: f64 = text.parse().unwrap();
            match exact_small(text.as_bytes()) {
                Some(fast) => assert_eq!(fast.to_bits(), parsed.to_bits(), "{text}"),
                // Only numbers of more than 15 digits may need the full parser.
                None => assert!(digits > 15, "{text}"),
            }
        }
        assert_eq!(exact_small(b"12345678901234567890"), None);
        assert_eq!(exact_small(b"1.5e3"), None);
        assert_eq!(exact_small(b"0.1"), Some(0.1));
    }
}
