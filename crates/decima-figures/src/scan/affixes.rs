//! What is written around a number's digits: its sign and currency before, its scale, unit
//! and currency after.

use crate::figure::{Currency, Scale, Unit};

/// The character just before `at`.
pub(crate) fn char_before(text: &str, at: usize) -> Option<char> {
    text.get(..at)?.chars().next_back()
}

/// The character at `at`.
pub(crate) fn char_at(text: &str, at: usize) -> Option<char> {
    text.get(at..)?.chars().next()
}

/// The word (letters only) that ends just before `at`, skipping spaces.
pub(crate) fn word_before(text: &str, at: usize) -> &str {
    // Most numbers follow a delimiter or a sign: no word, and no need to walk back.
    match at.checked_sub(1).and_then(|k| text.as_bytes().get(k)) {
        None => return "",
        Some(&b) if b.is_ascii() && !b.is_ascii_alphabetic() && !matches!(b, b' ' | b'.') => {
            return "";
        }
        _ => {}
    }
    let head = text
        .get(..at)
        .unwrap_or("")
        .trim_end_matches([' ', '\u{a0}']);
    let start = head
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphabetic() || *c == '.')
        .last()
        .map_or(head.len(), |(i, _)| i);
    head[start..].trim_end_matches('.')
}

/// The word (letters only) that starts at `at`, after spaces.
pub(crate) fn word_after(text: &str, at: usize) -> (&str, usize) {
    match text.as_bytes().get(at) {
        None => return ("", at),
        Some(&b) if b.is_ascii() && !b.is_ascii_alphabetic() && b != b' ' => return ("", at),
        _ => {}
    }
    let tail = text.get(at..).unwrap_or("");
    let skipped = tail.len() - tail.trim_start_matches([' ', '\u{a0}']).len();
    let rest = &tail[skipped..];
    let n = rest
        .char_indices()
        .find(|(_, c)| !c.is_alphabetic())
        .map_or(rest.len(), |(i, _)| i);
    (&rest[..n], at + skipped + n)
}

fn currency_symbol(c: char) -> Option<Currency> {
    match c {
        '$' => Some(Currency::Dollar),
        '€' => Some(Currency::Euro),
        '£' => Some(Currency::Pound),
        '¥' | '￥' => Some(Currency::Yen),
        '₹' => Some(Currency::Rupee),
        _ => None,
    }
}

fn currency_word(w: &str) -> Option<Currency> {
    match w {
        "USD" | "US$" | "dollars" | "dollar" | "美元" => Some(Currency::Dollar),
        "EUR" | "euros" | "euro" | "欧元" => Some(Currency::Euro),
        "GBP" | "pounds" | "英镑" => Some(Currency::Pound),
        "JPY" | "CNY" | "RMB" | "yen" | "yuan" | "元" | "円" | "日元" | "人民币" => {
            Some(Currency::Yen)
        }
        "INR" | "Rs" | "rupees" => Some(Currency::Rupee),
        "CHF" | "francs" => Some(Currency::Franc),
        _ => None,
    }
}

/// A sign and a currency written before the digits at `start` ("-$1.2M", "$-3", "USD 40",
/// "−5", "(1,234"): the sign, the currency, where the figure starts and whether it opened a
/// parenthesis an accountant's negative closes.
pub(crate) struct Prefix {
    pub negative: bool,
    pub currency: Option<Currency>,
    pub start: usize,
    pub paren: bool,
}

pub(crate) fn prefix(text: &str, digits_start: usize) -> Prefix {
    let mut p = Prefix {
        negative: false,
        currency: None,
        start: digits_start,
        paren: false,
    };
    // After a delimiter or a line's start (a table's cell, most often) nothing is written
    // before the digits.
    match digits_start
        .checked_sub(1)
        .and_then(|k| text.as_bytes().get(k))
    {
        None => return p,
        Some(&b) if b.is_ascii() && !matches!(b, b'-' | b'+' | b'$' | b' ' | b'(') => return p,
        _ => {}
    }
    read_sign(text, &mut p);
    if let Some(c) = char_before(text, p.start).and_then(currency_symbol) {
        p.currency = Some(c);
        p.start -= char_before(text, p.start).map_or(0, char::len_utf8);
        if char_before(text, p.start) == Some('S') && text[..p.start].ends_with("US") {
            p.start -= 2;
        }
    } else if char_before(text, p.start) == Some(' ') && three_capitals_before(text, p.start - 1) {
        let w = word_before(text, p.start);
        if w.len() == 3
            && w.chars().all(|c| c.is_ascii_uppercase())
            && let Some(c) = currency_word(w)
        {
            p.currency = Some(c);
            p.start -= 1 + w.len();
        }
    }
    if p.currency.is_some() && !p.negative {
        read_sign(text, &mut p);
    }
    if char_before(text, p.start) == Some('(') {
        p.paren = true;
    }
    p
}

/// Whether the three bytes before `at` are capital letters ("USD" before "USD 40"): the only
/// word before a number that can be a currency code, checked before the word is read.
fn three_capitals_before(text: &str, at: usize) -> bool {
    at >= 3
        && text.as_bytes()[at - 3..at]
            .iter()
            .all(u8::is_ascii_uppercase)
}

fn read_sign(text: &str, p: &mut Prefix) {
    match char_before(text, p.start) {
        Some('−') => {
            p.negative = true;
            p.start -= '−'.len_utf8();
        }
        Some(c @ ('-' | '+')) => {
            // A hyphen after a letter or digit joins ("A-1", "2019-2020"), it is no sign.
            let before = char_before(text, p.start - 1);
            if before.is_none_or(|b| !b.is_alphanumeric()) {
                p.negative = c == '-';
                p.start -= 1;
            }
        }
        _ => {}
    }
}

/// The scale, unit and currency written after the digits, and where the figure ends.
pub(crate) struct Suffix {
    pub scale: Scale,
    pub unit: Option<Unit>,
    pub end: usize,
    /// Letters glued to the digits that are neither scale nor unit ("3rd", "5kg"), if any.
    pub glued: Option<(usize, usize)>,
}

pub(crate) fn suffix(text: &str, digits_end: usize, has_currency: bool) -> Suffix {
    let mut s = Suffix {
        scale: Scale::One,
        unit: None,
        end: digits_end,
        glued: None,
    };
    // A delimiter or a line's end after the digits (past plain spaces, as in an aligned
    // table): no scale, unit or currency follows.
    let bytes = text.as_bytes();
    let mut next = digits_end;
    while bytes.get(next) == Some(&b' ') {
        next += 1;
    }
    match bytes.get(next) {
        None => return s,
        Some(&b) if b.is_ascii() && !b.is_ascii_alphabetic() && !matches!(b, b'%' | b'$') => {
            return s;
        }
        _ => {}
    }
    read_scale(text, &mut s, has_currency);
    read_unit(text, &mut s);
    s
}

fn read_scale(text: &str, s: &mut Suffix, has_currency: bool) {
    let glued = char_at(text, s.end).is_some_and(char::is_alphabetic);
    let (word, word_end) = word_after(text, s.end);
    let letter_scale = match word {
        "k" | "K" => Some(Scale::Thousand),
        "M" | "mn" | "MM" | "mln" => Some(Scale::Million),
        "m" if has_currency => Some(Scale::Million),
        "bn" | "B" | "bln" => Some(Scale::Billion),
        "b" if has_currency => Some(Scale::Billion),
        "tn" | "T" | "trn" => Some(Scale::Trillion),
        _ => None,
    };
    if let Some(scale) = letter_scale.filter(|_| glued || has_currency || word.len() > 1) {
        s.scale = scale;
        s.end = word_end;
        return;
    }
    let is = |w: &str| word.eq_ignore_ascii_case(w);
    let word_scale = if word.len() < 7 {
        None
    } else if is("thousand") {
        Some(Scale::Thousand)
    } else if is("million") || is("millions") {
        Some(Scale::Million)
    } else if is("billion") || is("billions") {
        Some(Scale::Billion)
    } else if is("trillion") || is("trillions") {
        Some(Scale::Trillion)
    } else {
        None
    };
    if let Some(scale) = word_scale {
        s.scale = scale;
        s.end = word_end;
        return;
    }
    let tail = &text[s.end..];
    for (mark, scale) in [
        ("万亿", Scale::Trillion),
        ("万", Scale::TenThousand),
        ("亿", Scale::HundredMillion),
        ("千", Scale::Thousand),
    ] {
        if tail.starts_with(mark) {
            s.scale = scale;
            s.end += mark.len();
            return;
        }
    }
    if glued {
        s.glued = Some((s.end, word_end));
    }
}

fn read_unit(text: &str, s: &mut Suffix) {
    let tail = &text[s.end..];
    let spaced = tail.trim_start_matches([' ', '\u{a0}', '\u{202f}']);
    let gap = tail.len() - spaced.len();
    if let Some(c) = spaced.chars().next() {
        if (c == '%' || c == '％') && gap <= 1 {
            s.unit = Some(Unit::Percent);
            s.end += gap + c.len_utf8();
            return;
        }
        if let Some(cur) = currency_symbol(c).filter(|_| gap <= 1) {
            s.unit = Some(Unit::Currency(cur));
            s.end += gap + c.len_utf8();
            return;
        }
    }
    if s.glued.is_some() && gap > 0 {
        return;
    }
    let (word, word_end) = word_after(text, s.end);
    let is = |w: &str| word.eq_ignore_ascii_case(w);
    if is("percent") || is("pct") || is("pp") {
        s.unit = Some(Unit::Percent);
        s.end = word_end;
        s.glued = None;
    } else if is("per") && text[word_end..].trim_start().starts_with("cent") {
        let rest = &text[word_end..];
        s.unit = Some(Unit::Percent);
        s.end = word_end + (rest.len() - rest.trim_start().len()) + "cent".len();
    } else if is("percentage") {
        let (points, points_end) = word_after(text, word_end);
        if matches!(points, "points" | "point") {
            s.unit = Some(Unit::Percent);
            s.end = points_end;
        }
    } else if let Some(cur) = currency_word(word) {
        s.unit = Some(Unit::Currency(cur));
        s.end = word_end;
        s.glued = None;
    } else {
        for (mark, cur) in [
            ("美元", Currency::Dollar),
            ("欧元", Currency::Euro),
            ("英镑", Currency::Pound),
            ("日元", Currency::Yen),
            ("元", Currency::Yen),
            ("円", Currency::Yen),
        ] {
            if text[s.end..].starts_with(mark) {
                s.unit = Some(Unit::Currency(cur));
                s.end += mark.len();
                return;
            }
        }
    }
}
