//! Literals written with inner spaces, which a word scanner would cut into pieces: IBANs
//! (`DE89 3704 0044 0532 0130 00`), phone numbers (`+1 415 555 0132`, `0171 234 5678`) and
//! amounts with space-grouped thousands and their currency (`1 234 567,89 €`, `EUR 12 000`).
//! Each recogniser looks at a run of words separated by exactly one space (or a no-break or
//! thin space) and says how many of them form the literal; it reads every word at most once.

use super::LiteralKind;

/// Word spans of the text, as the literal scanner makes them.
pub(super) type Words<'a> = &'a [(usize, usize)];

/// Whether words `j - 1` and `j` are separated by exactly one space.
fn joined(text: &str, words: Words<'_>, j: usize) -> bool {
    let (Some(a), Some(b)) = (j.checked_sub(1).and_then(|p| words.get(p)), words.get(j)) else {
        return false;
    };
    matches!(
        text.get(a.1..b.0),
        Some(" " | "\u{a0}" | "\u{202f}" | "\u{2009}")
    )
}

fn word<'a>(text: &'a str, words: Words<'_>, j: usize) -> Option<&'a str> {
    words.get(j).and_then(|&(s, e)| text.get(s..e))
}

/// A spaced literal starting at word `i`: the index of its last word and its kind.
pub(super) fn spaced_literal(
    text: &str,
    words: Words<'_>,
    i: usize,
) -> Option<(usize, LiteralKind)> {
    if !joined(text, words, i + 1) {
        return None;
    }
    let first = word(text, words, i)?;
    let b = first.as_bytes();
    if b.len() == 4
        && b[..2].iter().all(u8::is_ascii_uppercase)
        && b[2..].iter().all(u8::is_ascii_digit)
    {
        return iban(text, words, i).map(|last| (last, LiteralKind::Id));
    }
    if let Some(last) = phone(text, words, i, first) {
        return Some((last, LiteralKind::Number));
    }
    grouped_amount(text, words, i, first).map(|last| (last, LiteralKind::Number))
}

/// `DE89 3704 0044 0532 0130 00`: a country code and check digits, then groups of at most four
/// capitals or digits, 15 to 34 characters in all.
fn iban(text: &str, words: Words<'_>, i: usize) -> Option<usize> {
    let mut len = 4;
    let mut last = i;
    while joined(text, words, last + 1) {
        let Some(w) = word(text, words, last + 1) else {
            break;
        };
        let ok = (1..=4).contains(&w.len())
            && w.bytes()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
        if !ok || len + w.len() > 34 {
            break;
        }
        len += w.len();
        last += 1;
        if w.len() < 4 {
            break;
        }
    }
    (last >= i + 3 && len >= 15).then_some(last)
}

fn digit_group(w: &str) -> Option<usize> {
    let b = w.as_bytes();
    let ok = !b.is_empty()
        && b[0].is_ascii_digit()
        && b[b.len() - 1].is_ascii_digit()
        && b.iter().all(|c| c.is_ascii_digit() || *c == b'-');
    ok.then(|| b.iter().filter(|c| c.is_ascii_digit()).count())
}

/// `+1 415 555 0132`, `+86 138 0013 8000`, `0171 234 5678`, `415 555 0132`: a country code or
/// a leading zero (or the 3-3-4 North American form), then at least two groups of digits, 7 to
/// 15 digits in all.
fn phone(text: &str, words: Words<'_>, i: usize, first: &str) -> Option<usize> {
    let plus = first.strip_prefix('+');
    let head = plus.unwrap_or(first);
    let head_digits = digit_group(head)?;
    let mut digits = head_digits;
    let mut sizes = [head_digits, 0, 0, 0, 0, 0];
    let mut groups = 1;
    let mut last = i;
    while joined(text, words, last + 1) && groups < sizes.len() {
        let Some(n) = word(text, words, last + 1).and_then(digit_group) else {
            break;
        };
        // "+33 1 72 91 77 33": the group after a country code may be one digit.
        let min = if plus.is_some() && groups == 1 { 1 } else { 2 };
        if !(min..=8).contains(&n) {
            break;
        }
        digits += n;
        sizes[groups] = n;
        groups += 1;
        last += 1;
    }
    let ok = if plus.is_some() {
        head_digits <= 4 && groups >= 3 && (7..=15).contains(&digits)
    } else if first.starts_with('0') {
        groups >= 3 && (9..=13).contains(&digits)
    } else {
        groups == 3 && sizes[..3] == [3, 3, 4]
    };
    ok.then_some(last)
}

fn is_currency(w: &str) -> bool {
    matches!(
        w,
        "€" | "$"
            | "£"
            | "¥"
            | "₽"
            | "₹"
            | "zł"
            | "kr"
            | "Kč"
            | "Fr."
            | "CHF"
            | "EUR"
            | "USD"
            | "GBP"
            | "CNY"
            | "RMB"
            | "JPY"
            | "SEK"
            | "NOK"
            | "DKK"
            | "PLN"
            | "CZK"
            | "RUB"
            | "INR"
            | "元"
    )
}

/// `1 234 567,89 €`, `€ 12 000`, `12 000 000`: one to three digits, then groups of three (the
/// last may carry decimals after `,` or `.`), with a currency before or after. Two groups alone
/// need decimals or a currency, so "batch 100 200" stays two numbers.
fn grouped_amount(text: &str, words: Words<'_>, i: usize, first: &str) -> Option<usize> {
    let (start, lead_currency) = if is_currency(first) {
        (i + 1, true)
    } else {
        (i, false)
    };
    let head = word(text, words, start)?;
    let head = head.trim_start_matches(['€', '$', '£', '¥']);
    if head.is_empty() || head.len() > 3 || !head.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    if lead_currency && !joined(text, words, start) {
        return None;
    }
    let mut last = start;
    let mut groups = 1;
    let mut decimals = false;
    while joined(text, words, last + 1) {
        let Some(w) = word(text, words, last + 1) else {
            break;
        };
        let (int, frac) = match w.find([',', '.']) {
            Some(p) => (&w[..p], Some(&w[p + 1..])),
            None => (w, None),
        };
        let int_ok = int.len() == 3 && int.bytes().all(|c| c.is_ascii_digit());
        let frac_ok = frac
            .is_none_or(|f| (1..=2).contains(&f.len()) && f.bytes().all(|c| c.is_ascii_digit()));
        if !int_ok || !frac_ok {
            break;
        }
        groups += 1;
        last += 1;
        if frac.is_some() {
            decimals = true;
            break;
        }
    }
    if groups < 2 {
        return None;
    }
    let mut currency = lead_currency;
    if !currency
        && joined(text, words, last + 1)
        && word(text, words, last + 1).is_some_and(is_currency)
    {
        last += 1;
        currency = true;
    }
    (groups >= 3 || decimals || currency).then_some(last)
}

#[cfg(test)]
mod tests {
    use super::super::literals::scan_literals;

    fn lits(text: &str) -> Vec<String> {
        let mut v = Vec::new();
        scan_literals(text, true, &mut |t, _| v.push(t.to_string()));
        v
    }

    #[test]
    fn spaced_literals_are_kept_whole() {
        for (text, want) in [
            (
                "Pay to DE89 3704 0044 0532 0130 00 by Friday.",
                "DE89 3704 0044 0532 0130 00",
            ),
            (
                "IBAN: GB29 NWBK 6016 1331 9268 19.",
                "GB29 NWBK 6016 1331 9268 19",
            ),
            ("Call +1 415 555 0132 after lunch.", "+1 415 555 0132"),
            ("Dana Whitfield, +49 30 086659 84.", "+49 30 086659 84"),
            ("客户经理电话 +33 1 72 91 77 33。", "+33 1 72 91 77 33"),
            ("他的手机是 +86 138 0013 8000。", "+86 138 0013 8000"),
            ("Festnetz 0171 234 5678, bitte.", "0171 234 5678"),
            ("or 415 555 0132 in the US", "415 555 0132"),
            ("the budget is 1 234 567,89 € this year", "1 234 567,89 €"),
            ("cap it at EUR 12 000 per month", "EUR 12 000"),
            ("about 12 000 000 rows", "12 000 000"),
            ("we owe 567,89 today", "567,89"),
        ] {
            let found = lits(text);
            assert!(found.iter().any(|l| l == want), "{want} not in {found:?}");
        }
        for text in [
            "batches 100 200 were slow",
            "rows 12 34 56 78",
            "take 3 of 10",
        ] {
            let found = lits(text);
            assert!(
                found.iter().all(|l| !l.contains(' ')),
                "{found:?} from {text}"
            );
        }
    }
}
