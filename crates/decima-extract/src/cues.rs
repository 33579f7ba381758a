//! What a sentence signals, in English and Chinese: a goal, a decision or a constraint; and how
//! text splits into sentences, which of them are todo items, and when a user message announces
//! a goal.

/// Splits text into sentences: at newlines, at `.`, `!` and `?` followed by a space, and at
/// Chinese `。！？；`. Terminators stay with their sentence.
pub(super) fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let cut = match b {
            b'\n' => Some((i, i + 1)),
            b'.' if bytes.get(i + 1) == Some(&b' ') && abbreviation(&bytes[start..i]) => None,
            b'.' | b'!' | b'?' => {
                let next = bytes.get(i + 1).copied();
                if next.is_none_or(|n| n == b' ' || n == b'\n' || n == b'\t' || n == b'\r') {
                    Some((i + 1, i + 1))
                } else {
                    None
                }
            }
            // 。 is E3 80 82; ！ EF BC 81; ？ EF BC 9F; ； EF BC 9B.
            0xE3 if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0x82) => {
                Some((i + 3, i + 3))
            }
            0xEF if bytes.get(i + 1) == Some(&0xBC)
                && matches!(bytes.get(i + 2), Some(0x81 | 0x9F | 0x9B)) =>
            {
                Some((i + 3, i + 3))
            }
            _ => None,
        };
        match cut {
            Some((end, next)) => {
                let s = text[start..end].trim();
                if !s.is_empty() {
                    out.push(s);
                }
                start = next;
                i = next;
            }
            None => i += 1,
        }
    }
    let s = text[start..].trim();
    if !s.is_empty() {
        out.push(s);
    }
    out
}

/// Whether the word that ends `before` (the text up to a dot) is an abbreviation a sentence
/// does not end with: "Globex Trading GmbH & Co. KG", "e.g. the", "Dr. Weber", "J. Smith".
fn abbreviation(before: &[u8]) -> bool {
    let word_len = before
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_alphabetic() || **b == b'.')
        .count();
    let word = &before[before.len() - word_len..];
    if word.len() == 1 && word[0].is_ascii_uppercase() {
        return true;
    }
    const ABBREVIATIONS: &[&[u8]] = &[
        b"Co", b"Inc", b"Ltd", b"Corp", b"Bros", b"Mr", b"Mrs", b"Ms", b"Dr", b"Prof", b"St",
        b"Jr", b"Sr", b"No", b"vs", b"e.g", b"i.e", b"approx", b"cf", b"Nr", b"Abs",
    ];
    ABBREVIATIONS.contains(&word)
}

pub(super) fn is_todo(s: &str) -> bool {
    let t = s.trim_start_matches(['-', '*', ' ']);
    t.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("todo"))
        || s.contains("[ ]")
        || s.contains("[x]")
        || s.contains("[X]")
}

pub(super) fn todo_key(s: &str) -> String {
    s.to_lowercase()
        .replace("[ ]", "")
        .replace("[x]", "")
        .trim_start_matches(['-', '*', ' '])
        .trim()
        .to_string()
}

/// A user message that announces itself as a goal.
pub(super) fn says_goal(text: &str) -> bool {
    let head: String = text.trim_start().chars().take(24).collect();
    let lower = head.to_lowercase();
    [
        "goal:",
        "goal -",
        "new goal",
        "objective:",
        "task:",
        "the goal",
        "our goal",
    ]
    .iter()
    .any(|m| lower.starts_with(m))
        || ["目标：", "目标:", "任务：", "任务:", "新目标"]
            .iter()
            .any(|m| head.starts_with(m))
}

fn en_decision_word(w: &str) -> bool {
    matches!(
        w,
        "decide"
            | "decided"
            | "decides"
            | "deciding"
            | "decision"
            | "decisions"
            | "choose"
            | "chose"
            | "chosen"
            | "choosing"
            | "agreed"
            | "adopt"
            | "adopted"
            | "adopting"
            | "opted"
            | "confirmed"
            | "confirm"
            | "confirms"
            | "approved"
            | "approve"
            | "prefer"
            | "preferred"
            | "picked"
            | "settled"
            | "switched"
            | "switching"
            | "finalized"
            | "finalised"
            | "verdict"
            | "conclusion"
            | "we'll"
            | "instead"
    )
}
fn en_decision_pair(w: &str, n: &str) -> bool {
    matches!(
        (w, n),
        ("go", "with")
            | ("going", "with")
            | ("went", "with")
            | ("stick", "with")
            | ("sticking", "with")
            | ("settle", "on")
            | ("rather", "than")
            | ("switch", "to")
            | ("opt", "for")
            | ("we", "will")
            | ("we", "shall")
            | ("let's", "use")
            | ("let's", "go")
            | ("let's", "keep")
            | ("let's", "switch")
            | ("let's", "stick")
            | ("let's", "drop")
            | ("let's", "exclude")
            | ("let's", "treat")
            | ("let's", "do")
            | ("from", "now")
            | ("plan", "is")
            | ("final", "call")
            | ("final", "answer")
            | ("ok", "we")
            | ("okay", "we")
            | ("sounds", "good")
            | ("pick", "the")
            | ("i'll", "use")
            | ("i'll", "go")
            | ("i'll", "stick")
            | ("i'll", "switch")
            | ("i'll", "treat")
            | ("i'm", "using")
            | ("i'm", "switching")
            | ("going", "forward")
            | ("from", "here")
    )
}
const ZH_DECISION: &[&str] = &[
    "确认",
    "决定",
    "决策",
    "选择",
    "选用",
    "选定",
    "采用",
    "采纳",
    "改用",
    "改为",
    "改成",
    "换成",
    "换用",
    "就用",
    "定了",
    "定下来",
    "确定",
    "同意",
    "拍板",
    "最终",
    "就按",
    "那就",
    "统一用",
    "为准",
    "还是用",
    "而非",
    "而不是",
    "不再用",
    "敲定",
    "就这么办",
    "商量好",
    "说好",
    "约定",
    "定好",
    "口径",
    "算作",
    "视为",
];
fn en_constraint_word(w: &str) -> bool {
    matches!(
        w,
        "must"
            | "mustn't"
            | "only"
            | "never"
            | "don't"
            | "dont"
            | "doesn't"
            | "cannot"
            | "can't"
            | "shouldn't"
            | "won't"
            | "avoid"
            | "ensure"
            | "always"
            | "required"
            | "requires"
            | "require"
            | "requirement"
            | "mandatory"
            | "forbidden"
            | "prohibited"
            | "without"
            | "exclude"
            | "excluding"
            | "limit"
            | "deadline"
            | "constraint"
            | "constraints"
            | "strictly"
            | "skip"
            | "ignore"
            | "refrain"
    )
}
/// A verb that, opening a sentence, sets how results are presented.
fn presentation_rule(w: &str) -> bool {
    matches!(
        w,
        "round" | "report" | "express" | "format" | "present" | "sort" | "cap" | "convert"
    )
}
fn en_constraint_pair(w: &str, n: &str) -> bool {
    matches!(
        (w, n),
        ("do", "not")
            | ("does", "not")
            | ("should", "not")
            | ("must", "not")
            | ("may", "not")
            | ("can", "not")
            | ("make", "sure")
            | ("at", "most")
            | ("at", "least")
            | ("no", "more")
            | ("no", "later")
            | ("not", "allowed")
            | ("not", "exceed")
            | ("stay", "within")
            | ("stay", "under")
            | ("stay", "below")
            | ("hands", "off")
            | ("off", "limits")
            | ("by", "eod")
            | ("by", "end")
            | ("not", "to")
            | ("has", "to")
            | ("have", "to")
            | ("needs", "to")
            | ("got", "to")
            | ("stay", "away")
            | ("stick", "to")
    )
}
/// What follows "keep" when it means recording, carrying on or informing ("keep notes of …",
/// "keep track", "keep going", "keep an eye on", "keep me posted") rather than holding something
/// as it is or within a limit ("keep it under 50 MB", "keep the raw files"), which is a
/// constraint. A later cue still makes the sentence one ("keep notes, but never share them").
fn keep_idiom_word(w: &str) -> bool {
    matches!(
        w,
        "notes"
            | "note"
            | "track"
            | "tabs"
            | "going"
            | "trying"
            | "working"
            | "running"
            | "polling"
            | "checking"
            | "looking"
            | "watching"
            | "monitoring"
            | "digging"
            | "iterating"
            | "waiting"
            | "up"
            | "at"
            | "on"
    )
}
/// The same, where the first word alone says too little ("keep a log" but "keep a copy of the
/// raw export", "keep it up" but "keep it under 50 MB").
fn keep_idiom_pair(w: &str, n: &str) -> bool {
    matches!(
        (w, n),
        ("a", "log")
            | ("a", "record")
            | ("a", "list")
            | ("a", "note")
            | ("a", "tally")
            | ("a", "journal")
            | ("a", "running")
            | ("a", "close")
            | ("an", "eye")
            | ("in", "mind")
            | ("it", "up")
            | ("me", "posted")
            | ("me", "updated")
            | ("me", "informed")
            | ("us", "posted")
            | ("us", "updated")
            | ("us", "informed")
    )
}
fn weekday(w: &str) -> bool {
    matches!(
        w,
        "monday"
            | "tuesday"
            | "wednesday"
            | "thursday"
            | "friday"
            | "saturday"
            | "sunday"
            | "tomorrow"
            | "tonight"
    )
}
fn no_stopword(w: &str) -> bool {
    matches!(
        w,
        "worries"
            | "problem"
            | "problems"
            | "idea"
            | "luck"
            | "thanks"
            | "clue"
            | "way"
            | "doubt"
            | "wonder"
            | "matter"
            | "longer"
            | "one"
    )
}
const ZH_CONSTRAINT: &[&str] = &[
    "四舍五入",
    "约束",
    "限制",
    "必须",
    "务必",
    "一定要",
    "只",
    "仅",
    "不要",
    "不需要",
    "不用",
    "别",
    "禁止",
    "不得",
    "不能",
    "不可",
    "不允许",
    "切勿",
    "请勿",
    "避免",
    "至少",
    "最多",
    "不超过",
    "以内",
    "之前",
    "截止",
    "确保",
    "保证",
    "千万",
    "不准",
    "严禁",
    "不许",
];

/// Whether the words after "keep" make it an idiom that sets no constraint (see [`keep_idiom_word`]).
fn keep_idiom(after: &[(&str, bool)]) -> bool {
    let first = after.first().map(|(w, _)| *w);
    let second = after.get(1).map(|(w, _)| *w);
    match (first, second) {
        (Some(a), Some(b)) if keep_idiom_pair(a, b) => true,
        (Some(a), _) => keep_idiom_word(a),
        _ => false,
    }
}

/// What a sentence signals: a goal, a decision or a constraint; and whether it may restate what
/// the user wants (worth the full test in `restatements`).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Cues {
    pub(super) goal: bool,
    pub(super) decision: bool,
    pub(super) constraint: bool,
    pub(super) may_restate: bool,
}

/// Words without which an English sentence restates nothing.
fn restate_hint(w: &str) -> bool {
    matches!(
        w,
        "you"
            | "your"
            | "you'd"
            | "you're"
            | "confirm"
            | "confirming"
            | "requirement"
            | "requirements"
            | "request"
            | "clear"
            | "clarify"
            | "recap"
            | "restate"
            | "restating"
            | "back"
            | "page"
            | "aligned"
            | "understand"
            | "understood"
            | "understanding"
            | "rule"
            | "words"
            | "brief"
            | "heard"
    )
}

impl Cues {
    pub(super) fn of(sentence: &str) -> Cues {
        let mut cues = Cues::default();
        let question = sentence.ends_with('?') || sentence.ends_with('？');
        if !sentence.is_ascii() {
            cues.goal = sentence.contains("目标：") || sentence.contains("目标:");
            cues.decision = !question && ZH_DECISION.iter().any(|m| sentence.contains(m));
            cues.constraint = ZH_CONSTRAINT.iter().any(|m| sentence.contains(m));
        }
        let lower = if sentence.is_ascii() {
            sentence.to_ascii_lowercase()
        } else {
            sentence.to_lowercase().replace('’', "'")
        };
        cues.goal |= lower.contains("goal:");
        // Words with their separators, so "no, thanks" is not "no thanks".
        let mut words: Vec<(&str, bool)> = Vec::new();
        let mut start = None;
        let mut last_end = 0;
        for (i, c) in lower.char_indices() {
            let word_char = c.is_alphanumeric() || c == '\'';
            match (word_char, start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    let spaced = lower[last_end..s].trim().is_empty();
                    words.push((lower[s..i].trim_matches('\''), spaced));
                    last_end = i;
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(s) = start {
            let spaced = lower[last_end..s].trim().is_empty();
            words.push((lower[s..].trim_matches('\''), spaced));
        }
        cues.may_restate = if sentence.is_ascii() {
            words.iter().any(|&(w, _)| restate_hint(w))
        } else {
            sentence.chars().any(|c| "你您需要确复理也按总".contains(c))
                || words.iter().any(|&(w, _)| restate_hint(w))
        };
        for (i, &(w, _)) in words.iter().enumerate() {
            let next = words
                .get(i + 1)
                .filter(|(_, spaced)| *spaced)
                .map(|(n, _)| *n);
            if !question && !cues.decision {
                cues.decision = en_decision_word(w) || next.is_some_and(|n| en_decision_pair(w, n));
            }
            if !cues.constraint {
                cues.constraint = en_constraint_word(w)
                    || (w == "keep" && !keep_idiom(&words[i + 1..]))
                    || next.is_some_and(|n| {
                        en_constraint_pair(w, n)
                            || (matches!(w, "before" | "by" | "until") && weekday(n))
                            || (w == "no"
                                && n.chars().next().is_some_and(char::is_alphabetic)
                                && !no_stopword(n))
                    });
            }
            if cues.constraint && (cues.decision || question) {
                break;
            }
        }
        // "Leave X out (of it)": an instruction to exclude, however long X is.
        if !cues.constraint
            && let Some(at) = words.iter().position(|&(w, _)| w == "leave")
        {
            cues.constraint = words[at + 1..].iter().any(|&(w, _)| w == "out");
        }
        // "Round everything to whole numbers", "Report amounts in EUR": an instruction on how
        // results are presented holds for the whole task.
        if !cues.constraint
            && !question
            && let Some(&(w, _)) = words.first()
        {
            cues.constraint = presentation_rule(w);
        }
        cues
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_and_constraints_in_both_languages() {
        let cases_decision = [
            "用户确认选择 A（而非 B）。",
            "ok, we'll use the median.",
            "Let's go with Parquet.",
            "We decided to drop batch 7.",
            "Use LEFT JOIN instead of INNER JOIN.",
            "改用中位数。",
            "最终采用方案二。",
        ];
        for s in cases_decision {
            assert!(Cues::of(s).decision, "{s}");
        }
        let cases_constraint = [
            "约束：只统计欧盟区。",
            "Please don't touch prod before Friday.",
            "报告里不要出现客户姓名。",
            "No PII in the export.",
            "You must keep it under 50 MB.",
            "不需要画图。",
            "禁止外发。",
            "不得超过 3 页。",
            "Only use the EU region.",
            "Round everything in the memo to whole numbers; finance hates false precision.",
            "Report all amounts in EUR.",
            "金额四舍五入到整数。",
        ];
        for s in cases_constraint {
            assert!(Cues::of(s).constraint, "{s}");
        }
        assert!(!Cues::of("Can we go with Parquet?").decision);
        assert!(!Cues::of("No, thanks.").constraint);
        assert!(!Cues::of("Report back when the batch is done?").constraint);
        assert!(!Cues::of("The report is in the shared folder.").constraint);
        for s in [
            "Continue with batch 4; keep notes of anything above the threshold.",
            "Keep going with the next batch.",
            "Keep an eye on the error rate.",
            "Keep me posted on batch 9.",
            "Keep a log of the retries.",
            "Keep track of the skipped rows!",
        ] {
            assert!(!Cues::of(s).constraint, "{s}");
        }
        for s in [
            "Keep it under 50 MB.",
            "Keep the raw export untouched.",
            "Keep PII out of the memo.",
            "Continue with batch 4; keep notes, but never above the threshold.",
            "Keep notes of anything above the threshold, and don't share them.",
        ] {
            assert!(Cues::of(s).constraint, "{s}");
        }
        assert_eq!(
            sentences("目标：汇总。约束：只看欧盟；不要画图！好吗？ok. next\nline"),
            vec![
                "目标：汇总。",
                "约束：只看欧盟；",
                "不要画图！",
                "好吗？",
                "ok.",
                "next",
                "line"
            ]
        );
    }
}
