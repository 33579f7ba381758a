//! The values a sentence states: the literals the recogniser found in it, and what a literal
//! list does not keep but a statement must: bare numbers ("make that 15", "45天"), and names
//! after a linking word ("the contact is Jean Dupont", "the report language is German"). A
//! capitalised word elsewhere is more often what the sentence is about ("the SLA", "VPN") than
//! its value, so it is left to the subject.

use super::copula::copula_value;

/// A value: a byte span of the sentence.
pub(super) type Span = (usize, usize);

/// Words after which a capitalised run is a value.
fn links_to_value(w: &str) -> bool {
    matches!(
        w,
        "is" | "are"
            | "was"
            | "were"
            | "be"
            | "called"
            | "named"
            | "to"
            | "as"
            | "from"
            | "by"
            | "with"
            | "under"
            | "for"
            | "means"
    )
}

/// Small words that may sit inside a name ("Banco de la Nación", "Ludwig van Beethoven").
fn name_particle(w: &str) -> bool {
    matches!(
        w,
        "de" | "da"
            | "del"
            | "der"
            | "di"
            | "du"
            | "la"
            | "le"
            | "van"
            | "von"
            | "y"
            | "bin"
            | "al"
            | "&"
            | "and"
            | "of"
    )
}

fn capitalised(w: &str) -> bool {
    let mut chars = w.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    first.is_uppercase() && w != "I" && !matches!(w, "OK" | "FYI" | "BTW" | "ASAP" | "PS")
}

pub(super) fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3000..=0x303F | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xFF00..=0xFFEF)
}

/// Whether `pos` falls inside one of `spans` (sorted, disjoint).
fn inside(spans: &[Span], pos: usize) -> bool {
    let k = spans.partition_point(|&(s, _)| s <= pos);
    k > 0 && pos < spans[k - 1].1
}

/// The values of `sentence`, sorted and disjoint: the literal spans given (byte offsets into the
/// sentence), then bare numbers and names outside them.
pub(super) fn value_spans(sentence: &str, literals: &[Span]) -> Vec<Span> {
    let mut lits: Vec<Span> = literals.to_vec();
    lits.sort_unstable();
    let numbers = bare_numbers(sentence, &lits);
    let mut out = lits;
    out.extend(numbers);
    out.sort_unstable();
    // Names: a run of capitalised words (particles allowed inside) of two or more words that
    // does not open the sentence ("Dana Whitfield", "Northwind Data Services B.V."), or of any
    // length a few lowercase words after a linking word ("issued to the legal entity Acme").
    // Without a capital past the first letter there is none.
    let trimmed = sentence.trim_start();
    if trimmed.is_ascii() && !trimmed.bytes().skip(1).any(|b| b.is_ascii_uppercase()) {
        join_ranges(sentence, &mut out);
        group_parenthesised(sentence, &mut out);
        return out;
    }
    let names = names(sentence, &out);
    out.extend(names);
    out.sort_unstable();
    out.dedup();
    join_ranges(sentence, &mut out);
    group_parenthesised(sentence, &mut out);
    out
}

/// Bare numbers outside the literals `lits` (sorted): a run of digits (with inner `.`, `,`,
/// `:`, `/` or `-` between digits) that is a word of its own, or sits next to CJK text.
fn bare_numbers(sentence: &str, lits: &[Span]) -> Vec<Span> {
    let bytes = sentence.as_bytes();
    let mut numbers: Vec<Span> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() || inside(lits, i) {
            i += 1;
            continue;
        }
        // A percentile ("p99.5", "P95") is a value of its own; "Q3" names a period.
        let lettered = i >= 1
            && matches!(bytes[i - 1], b'p' | b'P')
            && (i == 1 || !bytes[i - 2].is_ascii_alphanumeric() && bytes[i - 2] != b'_');
        let starts_word =
            i == 0 || lettered || !bytes[i - 1].is_ascii_alphabetic() && bytes[i - 1] != b'_';
        let mut j = i;
        while j < bytes.len()
            && (bytes[j].is_ascii_digit()
                || matches!(bytes[j], b'.' | b',' | b':' | b'/' | b'-')
                    && bytes.get(j + 1).is_some_and(u8::is_ascii_digit))
        {
            j += 1;
        }
        let ends_word = bytes
            .get(j)
            .is_none_or(|b| !b.is_ascii_alphabetic() && *b != b'_');
        let next_literal = lits.partition_point(|&(s, _)| s < i);
        let clear = lits.get(next_literal).is_none_or(|&(s, _)| s >= j);
        if starts_word && ends_word && clear {
            numbers.push((if lettered { i - 1 } else { i }, j));
        }
        i = j.max(i + 1);
    }
    numbers
}

/// Names outside the values found so far (`out`, sorted): a run of two or more capitalised
/// words that does not open the sentence, or a run of any length a few words after a linking
/// word.
fn names(sentence: &str, out: &[Span]) -> Vec<Span> {
    let words = word_spans(sentence);
    let mut names: Vec<Span> = Vec::new();
    let mut since_link: Option<usize> = None;
    let mut k = 0;
    while k < words.len() {
        let (ws, we) = words[k];
        let w = &sentence[ws..we];
        if !capitalised(w) || inside(out, ws) {
            if links_to_value(&w.to_ascii_lowercase()) {
                since_link = Some(0);
            } else if let Some(n) = since_link.as_mut() {
                *n += 1;
                if *n > 3 || sentence[we..].starts_with([',', ';', '.', ':', '!', '?']) {
                    since_link = None;
                }
            }
            k += 1;
            continue;
        }
        let last = name_end(sentence, &words, k, out);
        let length = last - k + 1;
        let opens = sentence[..ws].trim().is_empty();
        // One capitalised word that a lowercase noun follows names what the noun is about
        // ("for Legacy tier"), not a value.
        let qualifies = length == 1
            && sentence[words[last].1..].starts_with(' ')
            && words
                .get(last + 1)
                .is_some_and(|&(s, _)| sentence[s..].starts_with(|c: char| c.is_lowercase()));
        if length >= 2 && !opens || since_link.is_some() && !qualifies {
            names.push((words[k].0, words[last].1));
        }
        since_link = None;
        k = last + 1;
    }
    names
}

/// The last capitalised word of the name that starts at `words[k]`: the name goes on over
/// capitalised words and particles separated by spaces (or a spaced dash), and ends at
/// punctuation.
fn name_end(sentence: &str, words: &[Span], k: usize, out: &[Span]) -> usize {
    let mut last = k;
    let mut m = k;
    loop {
        // A name ends at punctuation.
        let end = words[m].1;
        if sentence[end..].starts_with([',', ';', ':', '!', '?', ')']) {
            break;
        }
        let Some(&(s, e)) = words.get(m + 1) else {
            break;
        };
        // Only spaces between the words of a name, or a dash between spaces ("SMB – Self
        // Serve"); "Legacy 档用专业版（Q1" is none.
        let gap = &sentence[end..s];
        let dashed = gap.len() > 2
            && gap.starts_with(' ')
            && gap.ends_with(' ')
            && matches!(gap.trim(), "–" | "—" | "-" | "/");
        if !(gap.bytes().all(|b| b == b' ') || dashed && capitalised(&sentence[s..e])) {
            break;
        }
        let next = &sentence[s..e];
        if capitalised(next) && !inside(out, s) {
            last = m + 1;
        } else if !name_particle(next) {
            break;
        }
        m += 1;
    }
    last
}

/// A range is one value: "21:00–07:00 CET", "2026-01-01 – 2026-03-31", "3-5 days"; a time
/// keeps the time zone written after it.
fn join_ranges(sentence: &str, out: &mut Vec<Span>) {
    let mut k = 0;
    while k + 1 < out.len() {
        let (s, e) = out[k];
        let (s2, e2) = out[k + 1];
        // Spans may overlap (a name around a number); only a short gap between them joins.
        let gap = sentence.get(e..s2).unwrap_or("x").trim_matches(' ');
        if e <= s2 && s2 - e <= 5 && matches!(gap, "–" | "—" | "-" | "~" | "～") {
            out[k] = (s, e2);
            out.remove(k + 1);
        } else {
            k += 1;
        }
    }
    for span in out.iter_mut() {
        let (s, e) = *span;
        let v = &sentence[s..e];
        if !v.ends_with(|c: char| c.is_ascii_digit()) || !v.contains(':') {
            continue;
        }
        let rest = &sentence[e..];
        let Some(word) = rest.strip_prefix(' ') else {
            continue;
        };
        let zone = word.bytes().take_while(|b| b.is_ascii_uppercase()).count();
        let ends = word
            .as_bytes()
            .get(zone)
            .is_none_or(|b| !b.is_ascii_alphanumeric());
        if (2..=5).contains(&zone) && ends {
            *span = (s, e + 1 + zone);
        }
    }
}

/// A parenthesised list of values is one value: "(account_id, period_start)".
fn group_parenthesised(sentence: &str, out: &mut Vec<Span>) {
    let mut from = 0;
    while let Some(open) = sentence[from..].find('(').map(|p| from + p) {
        from = open + 1;
        let Some(close) = sentence[open..]
            .find(')')
            .map(|p| open + p)
            .filter(|&c| c - open <= 80 && !sentence[open + 1..c].contains('('))
        else {
            continue;
        };
        let inner = &sentence[open + 1..close];
        if !inner.contains(',') || !out.iter().any(|&(s, e)| s > open && e <= close) {
            continue;
        }
        out.retain(|&(s, e)| e <= open || s > close);
        out.push((open, close + 1));
        out.sort_unstable();
        from = close + 1;
    }
}

/// The value of a correction that gives only its new value in English ("scratch that, use
/// Pro", "no, make it weekly"): the words after a verb of choosing that opens a clause, up to
/// the clause's end.
pub(super) fn new_value_only(sentence: &str) -> Option<Span> {
    if !sentence.is_ascii() {
        return zh_new_value_only(sentence);
    }
    let lower = sentence.to_ascii_lowercase();
    for verb in [
        "use ",
        "make it ",
        "make that ",
        "go with ",
        "switch to ",
        "change it to ",
        "it should be ",
        "it's ",
        "it is ",
    ] {
        for (p, _) in lower.match_indices(verb) {
            let opens = lower[..p].trim_end().is_empty()
                || lower[..p]
                    .trim_end()
                    .ends_with([',', ';', ':', '.', '-', '—']);
            if !opens {
                continue;
            }
            let start = p + verb.len();
            let b = sentence.as_bytes();
            let end = (start..b.len())
                .find(|&k| match b[k] {
                    b',' | b';' | b'!' | b'?' | b'(' => true,
                    // "0.85" and "p99.5" keep their dot.
                    b'.' => !b.get(k + 1).is_some_and(u8::is_ascii_alphanumeric),
                    _ => false,
                })
                .unwrap_or(b.len());
            let value = sentence[start..end].trim();
            // "sorry, it's fine" judges; it gives no value.
            let verdict = matches!(
                value.to_ascii_lowercase().as_str(),
                "fine"
                    | "ok"
                    | "okay"
                    | "good"
                    | "done"
                    | "correct"
                    | "right"
                    | "wrong"
                    | "that"
                    | "this"
                    | "it"
            );
            if (1..=4).contains(&value.split_whitespace().count()) && !verdict {
                let s =
                    start + (sentence[start..end].len() - sentence[start..end].trim_start().len());
                return Some((s, s + value.len()));
            }
        }
    }
    None
}

/// The Chinese form of [`new_value_only`] ("刚才那个数说错了，用 专业版", "不对，应该是 p99.5 截断"):
/// what follows a verb of choosing or a copula that opens a clause, up to its end.
fn zh_new_value_only(sentence: &str) -> Option<Span> {
    let mut start = 0;
    for part in sentence.split_inclusive(['，', '。', '；', '！', ',', ';']) {
        let clause = part.trim_start();
        let at = start + (part.len() - clause.len());
        start += part.len();
        let Some(verb) = ["应该是", "应为", "改用", "用", "是"]
            .iter()
            .find(|v| clause.starts_with(**v))
        else {
            continue;
        };
        let value = clause[verb.len()..].trim_end_matches(['，', '。', '；', '！', ',', ';', ' ']);
        let lead = value.len() - value.trim_start().len();
        let value = value.trim_start();
        if short_phrase(value) {
            let s = at + verb.len() + lead;
            return Some((s, s + value.len()));
        }
    }
    None
}

/// In Chinese, a value written with a word after it ("截止时间是 周二 10:30", "应该是 p99.5
/// 截断") is the whole phrase after the copula: the spans it holds become that one span.
pub(super) fn widen_to_phrase(sentence: &str, values: &mut Vec<Span>, corrects: bool) {
    if sentence.is_ascii() || values.is_empty() {
        return;
    }
    let mut start = 0;
    for part in sentence.split_inclusive(['，', '。', '；', '！', '？', ',', ';']) {
        let offset = start;
        start += part.len();
        let Some((s, e)) = copula_value(part)
            .or_else(|| corrects.then(|| zh_new_value_only(part)).flatten())
            .map(|(s, e)| (offset + s, offset + e))
        else {
            continue;
        };
        let inside = |&(a, b): &Span| a >= s && b <= e && (a, b) != (s, e);
        // Only a phrase of the value and a few words around it, never a clause.
        // One value, not a correction's pair ("是 0.9115 不是 0.9358"), with words set off by a
        // space ("为0.85" is the value 0.85).
        let spaced = values.iter().filter(|v| inside(v)).all(|&(a, b)| {
            (a == s || sentence[..a].ends_with(' ')) && (b == e || sentence[b..].starts_with(' '))
        });
        if values.iter().filter(|v| inside(v)).count() == 1
            && spaced
            && !["不是", "而非", "并非"]
                .iter()
                .any(|m| sentence[s..e].contains(m))
            && !values
                .iter()
                .any(|&(a, b)| a < e && b > s && !inside(&(a, b)))
            && sentence[s..e].chars().count() <= 16
        {
            values.retain(|v| !inside(v));
            values.push((s, e));
            values.sort_unstable();
        }
    }
}

/// A value after a Chinese copula: up to 12 Chinese characters, or a longer Latin one
/// ("Asia/Shanghai", "finance-review@acme.example").
pub(super) fn short_phrase(value: &str) -> bool {
    let all = value.chars().count();
    let cjk = value.chars().filter(|c| is_cjk(*c)).count();
    all >= 1 && cjk <= 12 && all <= 40
}

/// Units a bare number carries in Chinese text ("53 天", "3个月").
const ZH_UNITS: &[&str] = &[
    "个月", "小时", "分钟", "天", "月", "年", "周", "秒", "元", "万", "亿", "次", "人", "行", "个",
    "倍", "家", "份", "条", "笔", "户", "席",
];

/// The span of a value with the unit that follows a bare number ("53 天", "45 days"), as a
/// reader would quote it.
pub(super) fn with_unit(text: &str, (s, e): Span) -> Span {
    let v = &text[s..e];
    if !v
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b','))
    {
        return (s, e);
    }
    let rest = &text[e..];
    let gap = rest.len() - rest.trim_start_matches(' ').len();
    let after = &rest[gap..];
    if gap <= 1
        && let Some(u) = ZH_UNITS.iter().find(|u| after.starts_with(*u))
    {
        // The unit and the words that qualify it ("4 个工作小时"), up to a pause.
        let mut end = e + gap + u.len();
        for c in text[end..].chars().take(4) {
            if !is_cjk(c) || "，。；、！？（）：不是的为".contains(c) {
                break;
            }
            end += c.len_utf8();
        }
        return (s, end);
    }
    (s, e)
}

/// Words that end the words a number is quoted with ("10 business hours, not 11").
fn ends_quote(w: &str) -> bool {
    matches!(
        w,
        "for"
            | "to"
            | "not"
            | "and"
            | "or"
            | "as"
            | "in"
            | "of"
            | "per"
            | "from"
            | "instead"
            | "rather"
            | "than"
            | "the"
            | "a"
            | "an"
            | "is"
            | "was"
            | "are"
            | "were"
            | "be"
            | "with"
            | "by"
            | "at"
            | "on"
            | "but"
            | "so"
            | "if"
            | "when"
            | "which"
            | "that"
            | "this"
            | "it"
            | "please"
            | "now"
            | "then"
            | "after"
            | "before"
            | "until"
            | "since"
    )
}

/// The span of a value as a reader would quote it: a bare number with the unit or the few
/// lowercase words that say what it counts ("53 天", "10 business hours").
pub(super) fn as_quoted(text: &str, span: Span) -> Span {
    let (s, e) = with_unit(text, span);
    if e != span.1
        || !text[s..e]
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b','))
    {
        return (s, e);
    }
    let mut end = e;
    for _ in 0..3 {
        let rest = &text[end..];
        let Some(after) = rest.strip_prefix(' ') else {
            break;
        };
        let w_len = after
            .find(|c: char| !c.is_ascii_lowercase() && c != '-')
            .unwrap_or(after.len());
        let w = &after[..w_len];
        if w.len() < 2 || ends_quote(w) {
            break;
        }
        end += 1 + w_len;
    }
    (s, end)
}

/// Whether a user sentence may state a value at all: it holds a digit, a quote, a capital past
/// its first letter, a linking word or a Chinese linking character. A cheap test that spares
/// most chatter the full reading.
pub(super) fn might_state(sentence: &str) -> bool {
    let b = sentence.trim_start().as_bytes();
    if b.iter()
        .any(|c| c.is_ascii_digit() || matches!(c, b'"' | b'`' | b'\''))
        || b.iter().skip(1).any(u8::is_ascii_uppercase)
    {
        return true;
    }
    if !sentence.is_ascii() && sentence.chars().any(|c| "是用定按为：“「『".contains(c)) {
        return true;
    }
    has_link_word(sentence)
}

/// Whether an ASCII text holds a linking word or sign ("is", "are", "be", "was", "use", "go",
/// "switch", "stick", "pick", "it's", "think", ": "), read word by word without allocating.
pub(super) fn has_link_word(text: &str) -> bool {
    text.contains(": ")
        || text
            .split(|c: char| !(c.is_ascii_alphabetic() || c == '\''))
            .any(|w| {
                [
                    "is",
                    "are",
                    "be",
                    "was",
                    "use",
                    "go",
                    "switch",
                    "stick",
                    "pick",
                    "it's",
                    "think",
                    "prefer",
                    "suggest",
                    "propose",
                    "recommend",
                ]
                .iter()
                .any(|l| w.eq_ignore_ascii_case(l))
            })
}

/// Whether an assistant sentence may hold a literal with inner spaces or a name: two capitals,
/// or a digit followed by a space and another digit.
pub(super) fn might_state_spaced(sentence: &str) -> bool {
    let b = sentence.trim_start().as_bytes();
    // Capitals that start a word, past the first.
    let capitals = b
        .windows(2)
        .filter(|w| !w[0].is_ascii_alphanumeric() && w[1].is_ascii_uppercase())
        .count();
    capitals >= 2
        || b.windows(3)
            .any(|w| w[0].is_ascii_digit() && w[1] == b' ' && w[2].is_ascii_digit())
}

/// Word spans: runs of letters, digits and `-`, `'`, `_`, `.` or `&` (trailing dots dropped).
pub(super) fn word_spans(s: &str) -> Vec<Span> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in s.char_indices() {
        let inner = c.is_alphanumeric() && !is_cjk(c) || matches!(c, '-' | '\'' | '_' | '.' | '&');
        match (inner, start) {
            (true, None) => start = Some(i),
            (false, Some(st)) => {
                push_word(s, st, i, &mut out);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(st) = start {
        push_word(s, st, s.len(), &mut out);
    }
    out
}

fn push_word(s: &str, start: usize, end: usize, out: &mut Vec<Span>) {
    let w = s[start..end].trim_end_matches(['.', '\'', '-']);
    let lead = w.len() - w.trim_start_matches(['.', '\'', '-']).len();
    if w.len() > lead {
        out.push((start + lead, start + w.len()));
    }
}

#[cfg(test)]
#[path = "values_tests.rs"]
mod tests;
