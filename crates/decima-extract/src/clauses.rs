//! Clauses and their subjects. A sentence that states several values ("the churn window is 45
//! days, and the minimum tenure is 3 months") is cut into one clause per subject, so each can
//! be corrected on its own; the subject of a clause is what it says before its value ("churn
//! window"), normalised into a key that a later statement of the same subject shares ("Actually
//! the churn window should be 60 days" → `churn window`). A clause whose subject is only a
//! pronoun ("sorry, it is 15") has no specific subject: a correction finds its target otherwise.

use super::corrections::ZH_SLIPS;
use super::subject_words::{ZH_LEADING, ZH_PRONOUNS, ZH_TRAILING, has_cjk, pronoun, stopword};
use super::values::{Span, as_quoted};

/// A statement's text is cut around its values beyond this many bytes.
pub(super) const CLAUSE_BYTES: usize = 320;

/// One clause of a sentence: a byte range and the values in it (sentence offsets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Clause {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) values: Vec<Span>,
}

/// What a clause is about, as a key two statements of the same subject share.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct Subject {
    /// Lowercased content words (or CJK characters) nearest to the value.
    pub(super) key: String,
    /// False when the clause names its subject only by a pronoun, or not at all.
    pub(super) specific: bool,
    /// Whether a linking word or sign joins the subject to the value ("is", "=", "set to",
    /// "是"): a clause that only mentions a value ("use ticket OPS-1 for this") does not say
    /// what its subject now is, so it updates nothing.
    pub(super) linked: bool,
}

/// Whether the text before a value ends with a linking word or sign.
fn links(before: &str) -> bool {
    let b = before.trim_end().to_lowercase();
    let b = [
        "the", "a", "an", "about", "around", "roughly", "exactly", "only",
    ]
    .iter()
    .find_map(|a| {
        b.strip_suffix(a)
            .filter(|r| r.is_empty() || r.ends_with(' '))
            .map(str::trim_end)
    })
    .unwrap_or(&b);
    [
        "=", ":", "：", "是", "为", "成", "到", "至", "按", "以", "用", "定", "取", "约",
    ]
    .iter()
    .any(|m| b.ends_with(m))
        || b.rsplit(|c: char| !c.is_alphanumeric() && c != '\'')
            .next()
            .is_some_and(|w| {
                matches!(
                    w,
                    "is" | "are"
                        | "was"
                        | "were"
                        | "be"
                        | "to"
                        | "at"
                        | "now"
                        | "equals"
                        | "it's"
                        | "that's"
                        | "'s"
                )
            })
}

/// Separators between clauses, longest first.
const SEPARATORS: &[&str] = &[
    ": ", "; ", ", and ", ", but ", " and ", " but ", " while ", ", ", "；", "，", " — ", " – ",
];

/// Cuts `sentence` into clauses, one per value-bearing subject; `values` are its value spans.
pub(super) fn clauses(sentence: &str, values: &[Span]) -> Vec<Clause> {
    let mut out: Vec<Clause> = Vec::new();
    let mut start = 0;
    let mut current: Vec<Span> = Vec::new();
    for (i, &v) in values.iter().enumerate() {
        current.push(v);
        let Some(&next) = values.get(i + 1) else {
            break;
        };
        let gap = &sentence[v.1..next.0];
        let cut = SEPARATORS
            .iter()
            .filter_map(|sep| gap.rfind(sep).map(|p| (p, sep.len())))
            .max_by_key(|&(p, len)| (p + len, len));
        if let Some((p, len)) = cut {
            let after = &gap[p + len..];
            if !subject_of(after, "").key.is_empty() {
                out.push(Clause {
                    start,
                    end: v.1 + p,
                    values: std::mem::take(&mut current),
                });
                start = v.1 + p + len;
            }
        }
    }
    let mut end = sentence.len();
    if let Some(&(_, last_end)) = current.last() {
        // A remark after the last value, set apart by a semicolon or a dash, is not part of it.
        let tail = &sentence[last_end..];
        if let Some(p) = ["; ", "；", " — ", " – "]
            .iter()
            .filter_map(|sep| tail.find(sep))
            .min()
        {
            end = last_end + p;
        }
    }
    out.push(Clause {
        start,
        end,
        values: current,
    });
    for c in &mut out {
        let text = &sentence[c.start..c.end];
        let trimmed_start = text.len() - text.trim_start().len();
        c.start += trimmed_start;
        let t = sentence[c.start..c.end].trim_end_matches([' ', ',', ';', '，', '；', '、']);
        c.end = c.start + t.len();
    }
    out
}

/// The text of a clause, cut around its values when it is longer than [`CLAUSE_BYTES`]; a value
/// is never cut.
pub(super) fn clause_text<'a>(sentence: &'a str, c: &Clause) -> std::borrow::Cow<'a, str> {
    let text = &sentence[c.start..c.end];
    if text.len() <= CLAUSE_BYTES {
        return text.into();
    }
    let first = c.values.first().map_or(c.start, |v| v.0);
    let last = c.values.last().map_or(c.start, |v| v.1).max(first);
    let mut from = first.saturating_sub(CLAUSE_BYTES / 2).max(c.start);
    let mut to = (last + CLAUSE_BYTES / 4).min(c.end).max(last);
    while !sentence.is_char_boundary(from) {
        from -= 1;
    }
    while !sentence.is_char_boundary(to) {
        to += 1;
    }
    // Whole words at the cut ends.
    if from > c.start
        && let Some(sp) = sentence[from..first].find(' ')
    {
        from += sp + 1;
    }
    if to < c.end
        && let Some(sp) = sentence[last..to].rfind(' ')
    {
        to = last + sp;
    }
    let mut out = String::new();
    if from > c.start {
        out.push('…');
    }
    out.push_str(sentence[from..to].trim());
    if to < c.end {
        out.push('…');
    }
    out.into()
}

/// The subject of a clause whose text before its first value is `before` and after its last
/// value is `after`.
pub(super) fn subject_of(before: &str, after: &str) -> Subject {
    if has_cjk(before) || has_cjk(after) {
        let s = zh_subject(before);
        if !s.key.is_empty() {
            return s;
        }
        return zh_subject(after);
    }
    let s = en_subject(before, true);
    if !s.key.is_empty() {
        return s;
    }
    let s2 = en_subject(after, false);
    if s2.key.is_empty() { s } else { s2 }
}

/// The subject of the clause `text` with value spans `values` (offsets into `text`).
pub(super) fn subject_in(text: &str, values: &[Span]) -> Subject {
    let (Some(&(first, first_end)), Some(&(last, last_end))) = (values.first(), values.last())
    else {
        return subject_of(text, "");
    };
    let linked = links(&text[..first]);
    let before = &text[..first];
    // What counts the value ("4,300 credits") is part of it, not its subject.
    let last_end = as_quoted(text, (last, last_end)).1;
    let after = &text[last_end..];
    const PUNCT: [char; 14] = [
        ',', ';', ':', '(', ')', '—', '!', '?', '，', '；', '：', '（', '）', '。',
    ];
    // Nearest first: the words right before the value; those between its values ("use the
    // 90-day window instead of 60"); those right after it ("use 20% for holdout"); then the
    // rest of the sentence before and after.
    let near_before = before.rsplit(PUNCT).next().unwrap_or(before);
    let near_after = after.split(PUNCT).next().unwrap_or(after);
    let between = if last > first_end {
        &text[first_end..last]
    } else {
        ""
    };
    // The first specific subject, else the first found; looked for lazily, nearest first.
    let mut first: Option<Subject> = None;
    let places = [
        (near_before, ""),
        (between, ""),
        ("", near_after),
        (before, ""),
        ("", after),
    ];
    for (b, a) in places {
        if b.trim().is_empty() && a.trim().is_empty() {
            continue;
        }
        let s = subject_of(b, a);
        if s.specific {
            return Subject { linked, ..s };
        }
        if first.is_none() && !s.key.is_empty() {
            first = Some(s);
        }
    }
    Subject {
        linked,
        ..first.unwrap_or_default()
    }
}

/// The subject in English: the content words of the part (between punctuation) nearest the
/// value; a pronoun in that part makes it unspecific ("the knob you want is …").
fn en_subject(text: &str, nearest_last: bool) -> Subject {
    let parts: Vec<&str> = text
        .split([',', ';', ':', '(', ')', '—', '!', '?'])
        .collect();
    let ordered: Vec<&str> = if nearest_last {
        parts.into_iter().rev().collect()
    } else {
        parts
    };
    // The nearest part that names its subject without a pronoun, else the nearest that names
    // one at all ("Update on the refresh time: finance moved it to 03:30" is about the refresh
    // time).
    let subjects: Vec<Subject> = ordered
        .into_iter()
        .map(|part| part_subject(part, nearest_last))
        .filter(|s| !s.key.is_empty())
        .collect();
    let specific = subjects.iter().position(|s| s.specific);
    match specific {
        Some(i) => subjects.into_iter().nth(i).unwrap_or_default(),
        None => subjects.into_iter().next().unwrap_or_default(),
    }
}

/// Words of a correction's cue, which say nothing of its subject.
fn cue_word(w: &str) -> bool {
    matches!(
        w,
        "misspoke"
            | "mistyped"
            | "misread"
            | "apologies"
            | "apologize"
            | "oops"
            | "typo"
            | "scratch"
            | "corrected"
            | "correcting"
            | "amend"
            | "amended"
            | "erratum"
            | "revised"
            | "revise"
            | "disregard"
            | "ignore"
            | "forget"
            | "scrap"
            | "agreed"
            | "agree"
            | "settled"
            | "chose"
            | "picked"
            | "go"
            | "going"
            | "let's"
            | "lets"
            | "talking"
            | "talked"
            | "spoke"
            | "after"
            | "all"
            | "wait"
            | "hm"
            | "ah"
            | "uh"
            | "um"
            | "ugh"
            | "lol"
            | "nope"
            | "yeah"
            | "yep"
    )
}

/// Phrases that announce what follows and say nothing of its subject ("keep in mind the refund
/// window is …").
const ANNOUNCES: &[&str] = &[
    "keep in mind",
    "bear in mind",
    "remember that",
    "note that",
    "for the record",
    "just so you know",
    "heads up",
    "by the way",
    "reminder",
    "fyi",
    "btw",
];

/// `haystack.rfind(needle)` for the short parts of a sentence, without building a searcher
/// for every phrase (that setup was most of its cost).
fn rfind_short(haystack: &str, needle: &str) -> Option<usize> {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    let first = *n.first()?;
    (0..=h.len().checked_sub(n.len())?)
        .rev()
        .find(|&i| h[i] == first && h[i..].starts_with(n))
}

fn part_subject(part: &str, nearest_last: bool) -> Subject {
    let mut lower = if part.is_ascii() {
        part.to_ascii_lowercase()
    } else {
        part.to_lowercase().replace('’', "'")
    };
    // Before the value, only what follows an announcing phrase; after it, what precedes one.
    for a in ANNOUNCES {
        if let Some(p) = rfind_short(&lower, a) {
            lower = if nearest_last {
                lower[p + a.len()..].to_string()
            } else {
                lower[..p].to_string()
            };
        }
    }
    let mut words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-' || c == '_'))
        .map(|w| w.trim_matches(['\'', '-']))
        .filter(|w| !w.is_empty())
        .collect();
    if nearest_last {
        words.reverse();
    }
    let mut key: Vec<String> = Vec::new();
    let mut saw_pronoun = false;
    for w in words {
        if pronoun(w) {
            saw_pronoun = true;
            continue;
        }
        if stopword(w) || cue_word(w) || w.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if key.len() < 4 {
            key.push(singular(w));
        }
    }
    if nearest_last {
        key.reverse();
    }
    Subject {
        specific: !key.is_empty() && !saw_pronoun,
        key: key.join(" "),
        linked: false,
    }
}

/// A word without its plural `s`, as subject keys hold it.
pub(super) fn singular(w: &str) -> String {
    if w.len() > 3
        && w.ends_with('s')
        && !w.ends_with("ss")
        && !w.ends_with("us")
        && !w.ends_with("is")
    {
        w[..w.len() - 1].to_string()
    } else {
        w.to_string()
    }
}

fn zh_subject(text: &str) -> Subject {
    // The parts between separators, nearest the value first; the first that names something.
    text.rsplit([
        '，', ',', '：', ':', '；', ';', '。', '！', '？', '（', '(', '）', ')',
    ])
    .map(str::trim)
    .filter(|p| !p.is_empty())
    .map(zh_part_subject)
    .find(|s| s.specific)
    .unwrap_or_default()
}

/// What points at a number without naming it ("那个数", "这个值").
const ZH_POINTERS: &[&str] = &["个数", "个值", "个数字", "数字", "个"];

fn zh_part_subject(part: &str) -> Subject {
    let part = ZH_SLIPS
        .iter()
        .filter_map(|m| part.find(m))
        .min()
        .map_or(part, |at| &part[..at]);
    let mut s: String = part
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '_' || *c == '-' || *c == ' ')
        .collect::<String>()
        .trim()
        .to_lowercase();
    // One word at a time, the longest listed first, until none is left at either end.
    loop {
        let before = s.len();
        if let Some(r) = ZH_LEADING.iter().find_map(|l| s.strip_prefix(l)) {
            s = r.trim_start().to_string();
        }
        if let Some(r) = ZH_TRAILING.iter().find_map(|t| s.strip_suffix(t)) {
            s = r.trim_end().to_string();
        }
        if s.len() == before {
            break;
        }
    }
    // Latin words before the Chinese subject are chatter ("keep in mind 风险阈值"); a Latin word
    // after a space is the subject's own ("客服 SLA").
    let s = match s.rsplit_once(' ') {
        Some((_, tail)) if tail.chars().count() >= 2 => tail.to_string(),
        _ => s,
    };
    let chars: Vec<char> = s.chars().collect();
    let key: String = chars[chars.len().saturating_sub(8)..].iter().collect();
    let key = key.trim().to_string();
    // One character says too little to be what a value measures.
    let specific = key.chars().count() >= 2
        && !ZH_PRONOUNS.contains(&key.as_str())
        && !ZH_POINTERS.contains(&key.as_str());
    Subject {
        key: if specific { key } else { String::new() },
        specific,
        linked: false,
    }
}

/// Whether two subject keys name the same thing: equal, or one's words are all in the other's
/// ("threshold" and "alert threshold"); in Chinese, one ends with the other (阈值, 风险阈值).
pub(super) fn same_subject(a: &str, b: &str) -> bool {
    if a.is_empty() || b.is_empty() {
        return false;
    }
    if a == b {
        return true;
    }
    if has_cjk(a) || has_cjk(b) {
        let (short, long) = if a.chars().count() <= b.chars().count() {
            (a, b)
        } else {
            (b, a)
        };
        return short.chars().count() >= 2 && long.ends_with(short);
    }
    let (wa, wb): (Vec<&str>, Vec<&str>) = (a.split(' ').collect(), b.split(' ').collect());
    let (short, long) = if wa.len() <= wb.len() {
        (wa, wb)
    } else {
        (wb, wa)
    };
    // Every word of the shorter key is in the longer one ("first cohort" and "first cohort
    // agreed"); "churn window" and "retry window" differ.
    short.iter().all(|w| long.contains(w))
}

#[cfg(test)]
#[path = "clauses_tests.rs"]
mod tests;
