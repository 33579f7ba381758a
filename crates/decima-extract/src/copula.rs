//! The value after a copula or a verb of choosing, in a sentence without numbers or names: "the
//! output format should be parquet", "use Pro for Legacy tier", "报告币种是欧元", "改成 Word 文档".

use super::values::{Span, has_link_word, is_cjk, short_phrase};

/// Words that, before a colon, announce a sentence rather than label a value.
const ANNOUNCING: &[&str] = &[
    "goal",
    "task",
    "objective",
    "decision",
    "decided",
    "constraint",
    "remember",
    "note",
    "todo",
    "fyi",
    "btw",
    "update",
    "correction",
    "reminder",
    "important",
    "ps",
    "nb",
    "context",
    "background",
    "question",
    "answer",
    "summary",
    "plan",
    "next",
    "also",
    "first",
    "second",
    "third",
    "finally",
    "then",
    "so",
    "ok",
    "okay",
    "yes",
    "no",
];

/// Characters before 是 that make it something other than "is" (还是, 就是, 不是, …).
const ZH_NOT_COPULA: &[char] = &[
    '还', '就', '也', '都', '但', '可', '于', '总', '只', '不', '要', '若', '倒', '正', '算', '凡',
    '真', '像', '或', '即', '便', '硬', '老', '先', '而', '然', '么', '这', '那', '它', '他', '她',
];

/// A value that is a word or short phrase, in a sentence without numbers or names: what
/// follows "is", "are", "should be" or "是" when something is said before it ("the output
/// format should be parquet", "报告币种是欧元"). At most six words (twelve CJK characters), up
/// to the next punctuation; the caller checks that the subject names something.
pub(super) fn copula_value(sentence: &str) -> Option<Span> {
    if sentence.is_ascii() && !has_link_word(sentence) {
        return None;
    }
    let lower = sentence.to_ascii_lowercase();
    if let Some(span) = chosen_for(sentence, &lower).or_else(|| after_link(sentence, &lower)) {
        return Some(span);
    }
    if sentence.is_ascii() {
        return None;
    }
    after_full_width_colon(sentence)
        .or_else(|| after_verb_of_changing(sentence))
        .or_else(|| after_zh_link(sentence))
}

/// Where a value starting at `from` ends: at punctuation; a dot between letters or digits
/// ("p99.5", "v1.2") is its own.
fn value_end(sentence: &str, from: usize) -> usize {
    let b = sentence.as_bytes();
    sentence[from..]
        .char_indices()
        .find(|&(k, c)| {
            let at = from + k;
            match c {
                '.' => !b.get(at + 1).is_some_and(u8::is_ascii_alphanumeric),
                ',' | ';' | '!' | '?' | '。' | '，' | '；' | '！' | '？' | '、' | '(' | '（' => {
                    true
                }
                _ => false,
            }
        })
        .map_or(sentence.len(), |(k, _)| from + k)
}

/// The span of `sentence[start..end]` without its surrounding whitespace.
fn trimmed(sentence: &str, start: usize, end: usize) -> Span {
    let part = &sentence[start..end];
    let s = start + (part.len() - part.trim_start().len());
    (s, s + part.trim().len())
}

/// "use X for Y", "go with X for Y", "I think X for Y": X is the value, Y the subject.
fn chosen_for(sentence: &str, lower: &str) -> Option<Span> {
    for verb in [
        "use ",
        "go with ",
        "switch to ",
        "stick with ",
        "pick ",
        "think ",
        "prefer ",
        "suggest ",
        "propose ",
        "recommend ",
    ] {
        let Some(p) = lower
            .match_indices(verb)
            .map(|(p, _)| p)
            .find(|&p| p == 0 || !lower.as_bytes()[p - 1].is_ascii_alphanumeric())
        else {
            continue;
        };
        let start = p + verb.len();
        let end = value_end(sentence, start);
        if let Some(f) = lower[start..end].find(" for ") {
            let value = sentence[start..start + f].trim();
            let words = value.split_whitespace().count();
            if (1..=5).contains(&words) {
                return Some((start, start + value.len()));
            }
        }
    }
    None
}

/// The words after "should be", "must be", "will be", "is", "are" or a label's ": ", when
/// something is said before them and they are not a verb or an announced sentence.
fn after_link(sentence: &str, lower: &str) -> Option<Span> {
    for link in [
        " should be ",
        " must be ",
        " will be ",
        " is ",
        " are ",
        ": ",
    ] {
        if let Some(p) = lower.find(link) {
            let start = p + link.len();
            let end = value_end(sentence, start);
            let value = sentence[start..end].trim();
            let words = value.split_whitespace().count();
            // "Goal: …", "Note: …" announce a sentence; "Decision on outliers: …" labels a value.
            let label = &lower[..p];
            let announces = link == ": "
                && (label.split_whitespace().count() > 5
                    || !label.contains(' ') && ANNOUNCING.contains(&label.trim()));
            // After "is"/"are", a verb ("are excluded from the join") says what happens, not
            // what something is.
            let first = value.split_whitespace().next().unwrap_or("");
            let verb = link != ": "
                && first.len() > 4
                && (first.ends_with("ed") || first.ends_with("ing"));
            if p > 0 && (1..=6).contains(&words) && !value.is_empty() && !announces && !verb {
                return Some(trimmed(sentence, start, end));
            }
        }
    }
    None
}

/// "关于异常值：采用取对数": what follows a full-width colon, without the verb of choosing.
fn after_full_width_colon(sentence: &str) -> Option<Span> {
    let p = sentence.find('：')?;
    let start = p + '：'.len_utf8();
    let end = value_end(sentence, start);
    let value = sentence[start..end].trim();
    // The verb of choosing is not part of the value ("关于流失日期：采用账期结束日").
    let value = ["采用", "改用", "选用", "定为", "用", "是", "为"]
        .iter()
        .find_map(|l| value.strip_prefix(l).filter(|v| !v.trim().is_empty()))
        .map_or(value, str::trim_start);
    if short_phrase(value) && sentence[..p].chars().count() >= 2 {
        let s = end
            - (sentence[start..end].len() - sentence[start..end].trim_end().len())
            - value.len();
        return Some((s, s + value.len()));
    }
    None
}

/// A correction that gives only its new value ("改成 Word 文档", "不对，改为按周"): what
/// follows the verb of changing, at the start of a clause.
fn after_verb_of_changing(sentence: &str) -> Option<Span> {
    for verb in ["改成", "改为", "换成", "换为"] {
        for (p, _) in sentence.match_indices(verb) {
            let opens = sentence[..p]
                .chars()
                .next_back()
                .is_none_or(|c| !is_cjk(c) || "，。；：！、".contains(c));
            let start = p + verb.len();
            let end = value_end(sentence, start);
            let value = sentence[start..end].trim();
            if opens && short_phrase(value) {
                return Some(trimmed(sentence, start, end));
            }
        }
    }
    None
}

/// What follows "是", or a verb of choosing ("请采用取对数", "最后还是定按天"), not negated
/// (不用) and not inside a word.
fn after_zh_link(sentence: &str) -> Option<Span> {
    let links = ["是", "采用", "改用", "选用", "定为", "定按", "定", "用"];
    let mut found: Vec<(usize, usize)> = links
        .iter()
        .flat_map(|l| sentence.match_indices(l).map(move |(p, _)| (p, l.len())))
        .collect();
    found.sort_unstable();
    for (p, len) in found {
        let before = sentence[..p].chars().next_back();
        let after = sentence[p + len..].chars().next();
        // 用 inside a word (试用期, 费用, 使用, 用户) links nothing.
        let in_word = sentence[p..].starts_with('用')
            && (before
                .is_some_and(|c| "试使费应信采作适通效常实享占动运利引启任录租启调".contains(c))
                || after.is_some_and(|c| "户量途时法品语例于".contains(c)));
        if in_word
            || before.is_none_or(|c| {
                !is_cjk(c) || ZH_NOT_COPULA.contains(&c) || "没别使改选".contains(c)
            })
            || sentence[..p].chars().count() < 2
        {
            continue;
        }
        let start = p + len;
        let end = value_end(sentence, start);
        let value = sentence[start..end].trim();
        if short_phrase(value) {
            return Some(trimmed(sentence, start, end));
        }
    }
    None
}
