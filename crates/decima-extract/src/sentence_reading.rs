//! How the builder reads one sentence: the literals in it, whether it corrects, retracts or
//! refers back to what was said, whether it answers its own question, and how a patched sentence
//! keeps its place.

use super::LINE_CHARS;
use super::corrections::correction;
use super::operations::exit_code;
use super::text::FastMap;
use super::values::{Span, is_cjk};
use std::collections::BTreeMap;

/// The literal spans of `lits` (message offsets, sorted) inside the sentence at `at` of `len`
/// bytes, as sentence offsets.
pub(super) fn literals_in(lits: &[Span], at: usize, len: usize) -> Vec<Span> {
    let end = at + len;
    let first = lits.partition_point(|&(s, _)| s < at);
    lits[first..]
        .iter()
        .take_while(|&&(s, _)| s < end)
        .filter(|&&(_, e)| e <= end)
        .map(|&(s, e)| (s - at, e - at))
        .collect()
}

/// Where a correction that names its subject but states no value begins ("hmm no, the refund
/// window I gave you earlier was the draft figure"): a strong cue, no value, and the words of
/// a subject stated before (`named`, found by the registry), from the part that names it.
pub(super) fn names_a_correction<'s>(sentence: &'s str, named: &str) -> Option<&'s str> {
    if correction(sentence, &[]).is_none_or(|c| !c.strong) && !retracts(sentence) {
        return None;
    }
    let lower = sentence.to_lowercase();
    if lower.len() != sentence.len() {
        return None;
    }
    let first_word = named.split(' ').next().unwrap_or(named);
    let at = lower.find(first_word)?;
    let part = lower[..at]
        .rfind([',', ';', '，', '；', '—'])
        .map_or(0, |p| {
            p + lower[p..].chars().next().map_or(1, char::len_utf8)
        });
    Some(sentence[part..].trim_start())
}

/// Whether a sentence takes something back ("let's not do log-transform for outliers", "别用
/// 折线图"): its replacement may follow in the next sentence.
pub(super) fn retracts(sentence: &str) -> bool {
    if !sentence.is_ascii()
        && ["不要", "不用", "别用", "不做", "先不"]
            .iter()
            .any(|m| sentence.contains(m))
    {
        return true;
    }
    sentence
        .split(|c: char| !(c.is_ascii_alphabetic() || c == '\'' || c == '’'))
        .any(|w| {
            let w = w.to_ascii_lowercase();
            matches!(
                w.as_str(),
                "not" | "don't" | "dont" | "don’t" | "skip" | "drop"
            )
        })
}

/// How many sentences before it a decision that refers back ("let's do that") takes in.
pub(super) const REFERRED_SENTENCES: usize = 3;

/// A short sentence that decides on what was just said ("let's do that", "go with it", "就这么
/// 定了", "就按这个来").
pub(super) fn refers_back(sentence: &str) -> bool {
    if !sentence.is_ascii() {
        return sentence.chars().filter(|c| is_cjk(*c)).count() <= 8
            && ["这", "那", "就这样"].iter().any(|p| sentence.contains(p));
    }
    let words: Vec<String> = sentence
        .split(|c: char| !(c.is_ascii_alphabetic() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    words.len() <= 5
        && words
            .iter()
            .any(|w| matches!(w.as_str(), "that" | "this" | "it"))
}

/// Whether `sentence` confirms the choice the question before it proposed ("…用账单国家吧？" then
/// "嗯，就账单国家"; "Pro for Legacy tier?" then "yes, Pro"): it opens with a yes and names
/// again something the question said.
pub(super) fn answers_own_question(question: &str, sentence: &str) -> bool {
    let question = question.trim();
    if !(question.ends_with('?') || question.ends_with('？')) || sentence.chars().count() > 40 {
        return false;
    }
    let lower = sentence.trim().to_lowercase();
    let Some(rest) = [
        "嗯", "对", "好", "是的", "yes", "yeah", "yep", "ok", "okay", "right",
    ]
    .iter()
    .find_map(|y| lower.strip_prefix(y)) else {
        return false;
    };
    let rest = rest
        .trim_start_matches(|c: char| c.is_whitespace() || ",，.。!！".contains(c))
        .trim_start_matches("就")
        .trim_start_matches("then ")
        .trim_end_matches(|c: char| c.is_whitespace() || ",，.。!！".contains(c));
    rest.chars().count() >= 2 && question.to_lowercase().contains(rest)
}

/// An assistant sentence up to this long that states a spaced literal is kept whole.
pub(super) const WHOLE_SENTENCE_CHARS: usize = 200;

/// A tool result of one line (exit-code lines aside), at most a line long.
pub(super) fn one_line_answer(head: &str) -> Option<&str> {
    let mut lines = head
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && exit_code(l).is_none());
    let line = lines.next()?;
    (lines.next().is_none() && line.chars().count() <= LINE_CHARS).then_some(line)
}

/// Rewrites the sentence `sentence` of `list` with `old` replaced by `new`, keeping its place,
/// its time and its count.
pub(super) fn patch_list(
    list: &mut [String],
    seen: &mut FastMap<String, u64>,
    stated: &mut BTreeMap<String, u64>,
    sentence: &str,
    old: &str,
    new: &str,
) {
    let Some(item) = list.iter_mut().find(|s| s.as_str() == sentence) else {
        return;
    };
    if !item.contains(old) || item.contains(new) {
        return;
    }
    let patched = item.replacen(old, new, 1);
    if let Some(t) = seen.remove(sentence) {
        seen.insert(patched.clone(), t);
    }
    if let Some(n) = stated.remove(sentence) {
        stated.insert(patched.clone(), n);
    }
    *item = patched;
}
