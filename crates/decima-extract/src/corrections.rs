//! Corrections: a clause that replaces a value said earlier ("sorry, it is 15, not 12",
//! "actually the window is 60 days", "scratch that, make it 20", "阈值改成0.85", "不对，应该是
//! 15，不是12"). What matters is how sure the cue is, and which of the clause's values, if any,
//! is the old one; the caller relates the clause to the statement it corrects.

use super::values::Span;

/// How a clause corrects an earlier statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Correction {
    /// Strong cues ("sorry", "correction", "make that", "改成", "不对") may correct the latest
    /// statement even when the clause does not say what it is about; weak ones ("actually",
    /// "instead") only a statement of the same subject.
    pub(super) strong: bool,
    /// The index (into the clause's values) of the value it names as replaced ("not 12",
    /// "instead of 12", "from 12 to 15", "12改成15").
    pub(super) old: Option<usize>,
}

fn strong_word(w: &str) -> bool {
    matches!(
        w,
        "sorry"
            | "correction"
            | "corrected"
            | "correcting"
            | "oops"
            | "typo"
            | "meant"
            | "scratch"
            | "wrong"
            | "mistake"
            | "mistyped"
            | "misspoke"
            | "misread"
            | "amend"
            | "amended"
            | "erratum"
            | "revised"
            | "apologies"
            | "disregard"
            | "scrap"
            | "retract"
    )
}

fn weak_word(w: &str) -> bool {
    matches!(
        w,
        "actually" | "instead" | "rather" | "update" | "updated" | "changed" | "moved" | "revise"
    )
}

fn strong_pair(w: &str, n: &str) -> bool {
    matches!(
        (w, n),
        ("make", "that")
            | ("make", "it")
            | ("change", "that")
            | ("change", "it")
            | ("should", "have")
            | ("no", "wait")
            | ("my", "bad")
            | ("i", "meant")
            | ("not", "but")
    )
}

fn change_word(w: &str) -> bool {
    matches!(
        w,
        "change"
            | "changed"
            | "changes"
            | "move"
            | "moved"
            | "went"
            | "go"
            | "goes"
            | "bump"
            | "bumped"
            | "raise"
            | "raised"
            | "lower"
            | "lowered"
            | "increase"
            | "increased"
            | "decrease"
            | "decreased"
            | "drop"
            | "dropped"
            | "update"
            | "updated"
            | "switch"
            | "switched"
            | "adjust"
            | "adjusted"
    )
}

/// Words that admit a slip ("打错了", "刚才那个数说错了"): what follows them is no subject, and
/// what precedes them is one only if it names something ("阈值说错了").
pub(super) const ZH_SLIPS: &[&str] = &[
    "说错", "写错", "搞错", "弄错", "打错", "记错", "口误", "笔误", "说反", "搞混", "有误",
];

/// Strong correction cues in Chinese besides the slips.
const ZH_STRONG: &[&str] = &[
    "改成",
    "改为",
    "改到",
    "换成",
    "不对",
    "更正",
    "纠正",
    "修正",
    "订正",
    "抱歉",
    "不好意思",
    "应改为",
    "改主意",
    "改口",
];
/// "而非"/"而不是" ("rather than") name an alternative, which may or may not be the old value.
const ZH_WEAK: &[&str] = &[
    "其实是",
    "应该是",
    "实际上",
    "现在是",
    "调整为",
    "更新为",
    "而非",
    "而不是",
];

/// Words right before a value that mark it as the old one; a short noun may sit between
/// ("instead of option 8", "而非方案8").
fn marks_old_before(before: &str) -> bool {
    let b = before.trim_end().to_lowercase();
    if marks_old_right_before(&b, false) {
        return true;
    }
    // Up to four CJK characters between the marker and the value ("而非方案8").
    let mut cut = b.as_str();
    for _ in 0..4 {
        match cut.chars().next_back() {
            Some(c) if ('\u{4e00}'..='\u{9fff}').contains(&c) => {
                cut = &cut[..cut.len() - c.len_utf8()];
                if marks_old_right_before(cut, true) {
                    return true;
                }
            }
            _ => break,
        }
    }
    // Or one word ("instead of option 4").
    b.is_ascii()
        && b.rfind(' ')
            .is_some_and(|p| marks_old_right_before(b[..p].trim_end(), true))
}

/// Markers right before an old value; `loose` ones may have a short noun in between.
const OLD_MARKERS: &[(&str, bool)] = &[
    ("not", false),
    ("isn't", false),
    ("instead of", true),
    ("rather than", true),
    ("replacing", true),
    ("replaces", true),
    ("不是", true),
    ("而不是", true),
    ("而非", true),
    ("不用", true),
    ("不要", true),
    ("别用", true),
    ("不再用", true),
    ("原来是", false),
    ("原先是", false),
    ("之前是", false),
];

fn marks_old_right_before(b: &str, loose_only: bool) -> bool {
    let b = b
        .strip_suffix(" the")
        .or_else(|| b.strip_suffix(" a"))
        .unwrap_or(b)
        .trim_end();
    OLD_MARKERS
        .iter()
        .filter(|(_, loose)| *loose || !loose_only)
        .any(|(m, _)| b.ends_with(m) && (!m.is_ascii() || word_start(b, m)))
}

fn word_start(b: &str, m: &str) -> bool {
    let at = b.len() - m.len();
    at == 0 || !b.as_bytes()[at - 1].is_ascii_alphanumeric()
}

/// Words right after a value that mark it as the old one.
fn marks_old_after(after: &str) -> bool {
    let a = after.trim_start().to_lowercase();
    [
        "改成",
        "改为",
        "改到",
        "换成",
        "→",
        "->",
        "=>",
        "is wrong",
        "was wrong",
        "是错的",
        "不对",
        "should be",
        "应该是",
        "应为",
    ]
    .iter()
    .any(|m| a.starts_with(m))
}

/// Words people say before a "no" that takes back what they said.
const FILLERS: &[&str] = &[
    "hmm", "oh", "ah", "uh", "um", "well", "ok", "okay", "lol", "ugh", "wait",
];

/// Whether `text` (a clause, with value spans `values`) is a correction, and how.
pub(super) fn correction(text: &str, values: &[Span]) -> Option<Correction> {
    let lower = if text.is_ascii() {
        text.to_ascii_lowercase()
    } else {
        text.to_lowercase().replace('’', "'")
    };
    let mut strong = false;
    let mut weak = false;
    if !text.is_ascii() {
        strong = ZH_STRONG.iter().chain(ZH_SLIPS).any(|m| text.contains(m));
        weak = ZH_WEAK.iter().any(|m| text.contains(m));
    }
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    for (i, w) in words.iter().enumerate() {
        strong |= strong_word(w) || words.get(i + 1).is_some_and(|n| strong_pair(w, n));
        weak |= weak_word(w);
        // "… hmm no, the window I gave you …": a no after a filler, anywhere.
        strong |= *w == "no" && i > 0 && FILLERS.contains(&words[i - 1]);
    }
    let changes =
        words.iter().any(|w| change_word(w)) || text.contains('改') || text.contains('调');
    // "No, it's 15", "hmm no, …": a leading no, after any filler.
    let opening = lower
        .trim_start_matches(|c: char| c.is_whitespace() || c == ',' || c.is_ascii_punctuation());
    let opening = FILLERS
        .iter()
        .find_map(|f| {
            opening
                .strip_prefix(f)
                .filter(|r| r.starts_with([' ', ',']))
        })
        .map_or(opening, |r| r.trim_start_matches([' ', ',']));
    strong |= opening.starts_with("no,") || opening.starts_with("no ") && words.len() <= 6;
    // The old value: one marked by the words around it, when another value is the new one.
    let old = if values.len() >= 2 {
        values.iter().enumerate().find_map(|(i, &(s, e))| {
            let before_old = marks_old_before(&text[..s]);
            // "changed from 12 to 15": `from` marks the old value only with a later value after
            // `to` and a verb of change ("from 2026-01-01 to 2026-03-31" is a range).
            let from = text[..s].trim_end().to_lowercase().ends_with("from");
            let ok = if from {
                changes
                    && values
                        .get(i + 1)
                        .is_some_and(|&(ns, _)| text[e..ns].trim().to_lowercase().ends_with("to"))
            } else {
                before_old || marks_old_after(&text[e..])
            };
            ok.then_some(i)
        })
    } else {
        None
    };
    (strong || weak || old.is_some()).then_some(Correction {
        strong: strong || old.is_some(),
        old,
    })
}

/// Where a phrase value ends: at punctuation or the end, after at most `max` words.
fn phrase_end(text: &str, from: usize, max: usize) -> Option<usize> {
    let rest = &text[from..];
    let end = rest
        .find([
            '.', ',', ';', '!', '?', '(', '—', '。', '，', '；', '！', '？', '（',
        ])
        .unwrap_or(rest.len());
    let phrase = rest[..end]
        .trim_end()
        .trim_end_matches(['吧', '了', '呢', '啊', '吗']);
    let words = if phrase.is_ascii() {
        phrase.split_whitespace().count()
    } else {
        phrase.chars().count().div_ceil(3)
    };
    (!phrase.is_empty() && words <= max).then(|| from + phrase.len())
}

/// Where a phrase value that ends at `to` begins: after the last linking word or sign before it
/// ("it's", "is", "use", "make it", "go with", ":", "—", "是", "用").
fn phrase_start(text: &str, to: usize) -> Option<usize> {
    let before = &text[..to];
    let lower = before.to_lowercase();
    if lower.len() != before.len() {
        return None;
    }
    let words = [
        "it's",
        "it is",
        "that's",
        "is",
        "use",
        "make it",
        "make that",
        "go with",
        "be",
        "to",
    ];
    let signs = [
        ": ", "：", "—", " - ", "是", "用", "为", "改成", "改为", "换成",
    ];
    let boundary = |i: usize| i == 0 || !lower.as_bytes()[i - 1].is_ascii_alphanumeric();
    let at = words
        .iter()
        .filter_map(|w| {
            lower
                .match_indices(w)
                .filter(|(i, _)| boundary(*i) && lower[i + w.len()..].starts_with(' '))
                .map(|(i, _)| i + w.len())
                .last()
        })
        .chain(
            signs
                .iter()
                .filter_map(|s| lower.rfind(s).map(|p| p + s.len())),
        )
        .max()?;
    let start = at + (before[at..].len() - before[at..].trim_start().len());
    (start < to && !before[start..].trim().is_empty()).then_some(start)
}

/// Whether a text holds what a correction in words needs: "not", "instead", "rather", "不是",
/// "而非", "不用", "不要", "别用".
pub(super) fn marks_alternative(text: &str) -> bool {
    if !text.is_ascii()
        && ["不是", "而非", "不用", "不要", "别用", "不再用"]
            .iter()
            .any(|m| text.contains(m))
    {
        return true;
    }
    text.split(|c: char| !c.is_ascii_alphabetic()).any(|w| {
        ["not", "instead", "rather"]
            .iter()
            .any(|m| w.eq_ignore_ascii_case(m))
    })
}

/// Adds the values of a correction in words ("X, not Y") to the `values` found in `text`
/// (sorted): the old phrase, and the new one unless a value found already stands there (the
/// phrase would cut it: "run it in the 21:00–07:00 CET window, not during office hours").
/// Returns the index of the old value.
pub(super) fn add_text_correction(text: &str, values: &mut Vec<Span>) -> Option<usize> {
    if values.len() >= 2 || !marks_alternative(text) {
        return None;
    }
    let (new, old) = text_correction(text)?;
    let overlaps = |(a, b): Span, values: &[Span]| values.iter().any(|&(s, e)| s < b && e > a);
    if overlaps(old, values) {
        return None;
    }
    // A value inside the new phrase is part of it ("clip at p99.5"); one the phrase would cut
    // stands as found.
    values.retain(|&(s, e)| !(s >= new.0 && e <= new.1));
    if !overlaps(new, values) {
        values.push(new);
    }
    values.push(old);
    values.sort_unstable();
    values.iter().position(|v| *v == old)
}

/// A correction whose values are words ("sorry, it's clip at p99.5, not log-transform", "use
/// the median instead of the mean", "不是均值，是中位数"): the spans of its new and its old
/// value, in that order.
pub(super) fn text_correction(text: &str) -> Option<(Span, Span)> {
    let lower = text.to_lowercase();
    // NEW …, not OLD / NEW instead of OLD / NEW rather than OLD.
    for marker in [
        ", not ",
        " not ",
        " instead of ",
        " rather than ",
        "，不是",
        " 不是",
        "，而不是",
        "而不是",
        "而非",
        "，不用",
        "，不要",
        "，别用",
        "，不再用",
    ] {
        let Some(m) = lower.find(marker) else {
            continue;
        };
        let old_start = m + marker.len();
        let old_start =
            old_start + (text[old_start..].len() - text[old_start..].trim_start().len());
        let old_start = ["the ", "a "]
            .iter()
            .find_map(|a| {
                lower[old_start..]
                    .starts_with(a)
                    .then(|| old_start + a.len())
            })
            .unwrap_or(old_start);
        let Some(old_end) = phrase_end(text, old_start, 6) else {
            continue;
        };
        let new_end = text[..m].trim_end_matches([',', ' ', '，']).len();
        if let Some(new_start) = phrase_start(text, new_end)
            && new_end - new_start <= 60
        {
            // "first payment month for cohort bucketing, not signup week": what follows "for"
            // is the subject.
            let new_end = lower[new_start..new_end]
                .find(" for ")
                .filter(|&f| f > 0)
                .map_or(new_end, |f| new_start + f);
            return Some(((new_start, new_end), (old_start, old_end)));
        }
    }
    // not OLD but NEW / 不是OLD，是NEW / 不是OLD，而是NEW.
    for (first, second) in [("not ", " but "), ("不是", "是")] {
        let Some(m) = lower.find(first) else {
            continue;
        };
        let old_start = m + first.len();
        let Some(b) = lower[old_start..].find(second).map(|p| old_start + p) else {
            continue;
        };
        let old_end = text[..b].trim_end_matches([',', ' ', '，', '而']).len();
        let new_start = b + second.len();
        let new_start =
            new_start + (text[new_start..].len() - text[new_start..].trim_start().len());
        if old_end > old_start
            && let Some(new_end) = phrase_end(text, new_start, 6)
        {
            return Some(((new_start, new_end), (old_start, old_end)));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::values::value_spans;
    use super::*;

    fn corr(s: &str) -> Option<(bool, Option<String>)> {
        let v = value_spans(s, &[]);
        correction(s, &v).map(|c| (c.strong, c.old.map(|i| s[v[i].0..v[i].1].to_string())))
    }

    #[test]
    fn corrections_and_their_old_values() {
        assert_eq!(
            corr("sorry, it is 15, not 12"),
            Some((true, Some("12".into())))
        );
        assert_eq!(corr("make that 15"), Some((true, None)));
        assert_eq!(
            corr("use 15 instead of 12"),
            Some((true, Some("12".into())))
        );
        assert_eq!(corr("not 12 but 15"), Some((true, Some("12".into()))));
        assert_eq!(
            corr("it went from 12 to 15"),
            Some((true, Some("12".into())))
        );
        assert_eq!(corr("Actually the window is 60 days"), Some((false, None)));
        assert_eq!(corr("阈值改成15"), Some((true, None)));
        assert_eq!(corr("把12改成15"), Some((true, Some("12".into()))));
        assert_eq!(
            corr("不对，应该是15，不是12"),
            Some((true, Some("12".into())))
        );
        assert_eq!(corr("The window is 60 days."), None);
        assert_eq!(corr("Do not exceed 50 MB."), None);
        assert_eq!(corr("Do not exceed 50 MB or 3 files."), None);
        assert_eq!(corr("Copy rows 10 to 20 from 3 files"), None);
        assert_eq!(corr("Only use data from 2026-01-01 to 2026-03-31."), None);
        assert_eq!(
            corr("用户确认选择方案7（而非方案8）"),
            Some((true, Some("8".into())))
        );
        assert_eq!(
            corr("go with option 3 instead of option 4"),
            Some((true, Some("4".into())))
        );
        let tc = |s: &'static str| text_correction(s).map(|(n, o)| (&s[n.0..n.1], &s[o.0..o.1]));
        assert_eq!(
            tc("sorry, it's clip at p99.5, not log-transform"),
            Some(("clip at p99.5", "log-transform"))
        );
        assert_eq!(
            tc("use the median instead of the mean."),
            Some(("the median", "mean"))
        );
        assert_eq!(
            tc("not the mean but the median"),
            Some(("the median", "the mean"))
        );
        assert_eq!(tc("不是均值，是中位数。"), Some(("中位数", "均值")));
        assert_eq!(tc("The totals are fine."), None);
    }
}
