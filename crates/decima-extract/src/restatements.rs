//! An assistant sentence that restates what the user wants ("To confirm, you want the report in
//! EUR only", "So the requirement is that every invoice above €10 000 is flagged", "你的意思是
//! 只看欧盟区", "确认一下：阈值是 0.85"). It is the agent's reading of a requirement, worth
//! keeping beside the user's own words; a restatement that ends with a colon introduces a list,
//! whose items restate too.

const EN_CUES: &[&str] = &[
    "to confirm",
    "confirming",
    "to be clear",
    "to clarify",
    "so you want",
    "you want",
    "you'd like",
    "you would like",
    "you need",
    "you asked",
    "you said",
    "you mentioned",
    "you prefer",
    "you expect",
    "you mean",
    "you're asking",
    "you are asking",
    "your requirement",
    "your request",
    "the requirement",
    "requirements are",
    "requirement is",
    "as requested",
    "as you requested",
    "per your request",
    "if i understand",
    "if i understood",
    "so the rule is",
    "let me restate",
    "restating",
    "to recap",
    "in other words",
    "my understanding",
    "i understand that",
    "understood:",
    "play that back",
    "play it back",
    "playing back",
    "play back",
    "read that back",
    "read back",
    "repeat back",
    "echo back",
    "so we're aligned",
    "on the same page",
    "as i understand it",
    "if i've got this right",
    "if i have this right",
    "just so i'm clear",
    "so i'm clear",
    "what i heard",
    "what you're after",
    "check the requirements",
    "check the brief",
];

const ZH_CUES: &[&str] = &[
    "你的意思是",
    "你是说",
    "确认一下",
    "跟你确认",
    "和你确认",
    "向你确认",
    "你要的是",
    "你要求",
    "你希望",
    "你需要",
    "你想要",
    "按你说的",
    "按照你的要求",
    "按你的要求",
    "您的要求",
    "你的要求",
    "您希望",
    "您需要",
    "您的意思",
    "需求是",
    "要求是",
    "也就是说",
    "总结一下你的",
    "你刚才说",
    "我理解的是",
    "我的理解是",
    "我复述一下",
    "复述一下",
    "我重复一下",
    "按我的理解",
    "我理解为",
    "你是想",
    "你想要的是",
    "对一下需求",
    "核对一下需求",
    "确认需求",
    "需求确认",
];

const EN_CONFIRM: &[&str] = &[
    "correct me if",
    "shout if",
    "let me know if that",
    "let me know if this",
    "let me know if i",
    "tell me if that",
    "tell me if i",
    "stop me if",
    "flag it if",
    "is that right",
    "is that correct",
    "did i get that right",
    "have i got that right",
    "does that match",
    ", right?",
    ", correct?",
    ", yes?",
];

const ZH_CONFIRM: &[&str] = &[
    "如有不对",
    "如果不对",
    "不对的话",
    "有问题告诉我",
    "有误请",
    "对吗",
    "没错吧",
    "是这样吗",
    "对不对",
    "没问题的话",
    "如果没问题",
    "有问题的话",
    "对吧",
    "是否正确",
    "有遗漏吗",
    "有没有遗漏",
    "没问题吧",
];

/// Whether an assistant sentence restates what the user wants. Questions do not: "Do you want
/// the EU numbers too?" asks.
pub(super) fn restates(sentence: &str) -> bool {
    let t = sentence.trim_end();
    if !hints_at_restating(t) {
        return false;
    }
    // A question asks, unless it only asks to confirm what it says: "…, right?", "…，对吗？".
    if (t.ends_with('?') || t.ends_with('？')) && !asks_to_confirm(t) {
        return false;
    }
    if !t.is_ascii() && ZH_CUES.iter().any(|c| t.contains(c)) {
        return true;
    }
    let lower = if t.is_ascii() {
        t.to_ascii_lowercase()
    } else {
        t.to_lowercase().replace('’', "'")
    };
    EN_CUES.iter().any(|c| {
        lower.match_indices(c).any(|(at, _)| {
            let before_ok = at == 0 || !lower.as_bytes()[at - 1].is_ascii_alphanumeric();
            let end = at + c.len();
            let after_ok = end == lower.len()
                || !lower.as_bytes()[end].is_ascii_alphanumeric()
                || c.ends_with([':', ',']);
            before_ok && after_ok
        })
    })
}

/// A cheap test before the cue lists: a restatement speaks of "you", of a requirement, or says
/// it confirms, clarifies, recaps or plays back; in Chinese, of 你/您, 需求/要求 or 确认/复述/理解.
fn hints_at_restating(t: &str) -> bool {
    if !t.is_ascii() && t.chars().any(|c| "你您需要确复理也按总".contains(c)) {
        return true;
    }
    let lower = t.to_lowercase();
    [
        "you",
        "confirm",
        "requir",
        "request",
        "clear",
        "clarif",
        "recap",
        "restat",
        "back",
        "same page",
        "aligned",
        "understand",
        "rule is",
        "words",
        "brief",
    ]
    .iter()
    .any(|h| lower.contains(h))
}

/// Whether a sentence asks the user to confirm what was just said ("Shout if that's wrong.",
/// "Correct me if I'm off.", "对吗？"): the sentence before it restates.
pub(super) fn asks_to_confirm(sentence: &str) -> bool {
    let t = sentence.trim();
    if t.is_ascii() && !t.ends_with('?') && !t.contains("if ") {
        return false;
    }
    if !t.is_ascii() && ZH_CONFIRM.iter().any(|c| t.contains(c)) {
        return true;
    }
    let lower = t.to_lowercase().replace('’', "'");
    EN_CONFIRM.iter().any(|c| lower.contains(c)) || short_check(&lower)
}

/// A short question that only asks whether what came before holds: "Correct?", "Right?",
/// "Sound good?", "Anything I missed?", "All correct?".
fn short_check(lower: &str) -> bool {
    let Some(q) = lower.strip_suffix('?') else {
        return false;
    };
    let words: Vec<&str> = q
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    (1..=4).contains(&words.len())
        && words.iter().any(|w| {
            matches!(
                *w,
                "correct"
                    | "right"
                    | "ok"
                    | "okay"
                    | "agreed"
                    | "accurate"
                    | "good"
                    | "fine"
                    | "missed"
                    | "missing"
                    | "wrong"
                    | "yes"
            )
        })
}

/// Whether a restatement introduces a list of items ("To confirm, you want:").
pub(super) fn opens_list(sentence: &str) -> bool {
    let t = sentence.trim_end();
    t.ends_with(':') || t.ends_with('：')
}

/// The item without its list marker ("- EUR only" → "EUR only").
pub(super) fn strip_list_marker(sentence: &str) -> &str {
    let t = sentence.trim_start();
    if !is_list_item(t) {
        return sentence;
    }
    let cut = t.find(' ').map_or(0, |p| p + 1);
    t[cut..].trim_start()
}

/// Whether a sentence is an item of a list (`- x`, `* x`, `• x`, `1. x`, `2) x`).
pub(super) fn is_list_item(sentence: &str) -> bool {
    let t = sentence.trim_start();
    if ["- ", "* ", "• ", "· "].iter().any(|b| t.starts_with(b)) {
        return true;
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    (1..=2).contains(&digits) && (t[digits..].starts_with(". ") || t[digits..].starts_with(") "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restatements_in_both_languages() {
        for s in [
            "To confirm, you want the report in EUR only.",
            "So the requirement is that every invoice above €10 000 gets flagged.",
            "Just to be clear: the churn window is 45 days.",
            "If I understand correctly, only EU accounts count.",
            "你的意思是只看欧盟区的账户。",
            "确认一下：阈值是 0.85。",
            "按你说的，报告用欧元。",
        ] {
            assert!(restates(s), "{s}");
        }
        for s in [
            "Do you want the EU numbers too?",
            "The totals reconcile within rounding.",
            "I need a minute to rerun this.",
            "需要我再跑一遍吗？",
            "Your wanted list is long.",
        ] {
            assert!(!restates(s), "{s}");
        }
        assert!(opens_list("To confirm, you want:"));
        assert!(asks_to_confirm("Shout if that's wrong."));
        assert!(asks_to_confirm("对吗？"));
        assert!(asks_to_confirm("Correct?"));
        assert!(asks_to_confirm("Anything I missed?"));
        assert!(!asks_to_confirm("Which region is wrong in the export?"));
        assert!(!asks_to_confirm("The totals match."));
        assert!(is_list_item("- EUR only"));
        assert!(is_list_item("2) no charts"));
        assert!(!is_list_item("2026 was good"));
    }
}
