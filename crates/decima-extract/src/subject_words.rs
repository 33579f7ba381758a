//! The words a clause's subject is read around: English stopwords and pronouns, and the Chinese
//! words a subject does not begin or end with.

use super::values::is_cjk;

/// Words that say nothing about what a value measures.
pub(super) fn stopword(w: &str) -> bool {
    grammar_word(w)
        || chat_word(w)
        || verb_of_change(w)
        || verb_of_wanting(w)
        || pointing_word(w)
        || correction_word(w)
        || contraction(w)
        || history_word(w)
}

/// Articles, possessives, forms of "be", auxiliaries, prepositions and conjunctions.
fn grammar_word(w: &str) -> bool {
    matches!(
        w,
        "a" | "an"
            | "the"
            | "my"
            | "our"
            | "your"
            | "their"
            | "his"
            | "her"
            | "its"
            | "is"
            | "are"
            | "was"
            | "were"
            | "be"
            | "been"
            | "being"
            | "am"
            | "s"
            | "re"
            | "m"
            | "do"
            | "does"
            | "did"
            | "has"
            | "have"
            | "had"
            | "will"
            | "would"
            | "shall"
            | "should"
            | "can"
            | "could"
            | "may"
            | "might"
            | "must"
            | "to"
            | "of"
            | "for"
            | "at"
            | "in"
            | "on"
            | "by"
            | "from"
            | "with"
            | "as"
            | "into"
            | "than"
            | "throughout"
            | "then"
            | "so"
            | "and"
            | "or"
            | "but"
            | "though"
            | "equal"
            | "equals"
    )
}

/// Fillers, greetings and hedges that chat wraps around a statement.
fn chat_word(w: &str) -> bool {
    matches!(
        w,
        "also"
            | "just"
            | "now"
            | "currently"
            | "still"
            | "already"
            | "please"
            | "fyi"
            | "btw"
            | "ok"
            | "okay"
            | "hey"
            | "hi"
            | "well"
            | "oh"
            | "hmm"
            | "yes"
            | "no"
            | "not"
            | "anyway"
            | "ugh"
            | "lol"
    )
}

/// Verbs that set, change or keep a value ("bump it to 15", "keep 30 days").
fn verb_of_change(w: &str) -> bool {
    matches!(
        w,
        "set"
            | "change"
            | "changed"
            | "move"
            | "moved"
            | "update"
            | "updated"
            | "use"
            | "using"
            | "used"
            | "make"
            | "made"
            | "put"
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
            | "go"
            | "goes"
            | "went"
            | "come"
            | "comes"
            | "came"
            | "got"
            | "get"
            | "gets"
            | "keep"
    )
}

/// Verbs of wanting and thinking ("I think", "let's").
fn verb_of_wanting(w: &str) -> bool {
    matches!(
        w,
        "want" | "wants" | "need" | "needs" | "like" | "think" | "guess" | "let" | "let's"
    )
}

/// Question words, directions and intensifiers.
fn pointing_word(w: &str) -> bool {
    matches!(
        w,
        "here"
            | "there"
            | "what"
            | "which"
            | "where"
            | "when"
            | "how"
            | "right"
            | "about"
            | "around"
            | "up"
            | "down"
            | "out"
            | "again"
            | "yet"
            | "very"
            | "really"
    )
}

/// Words of correcting and confirming, and the adjectives that go with them ("quick
/// correction", "the old one").
fn correction_word(w: &str) -> bool {
    matches!(
        w,
        "said"
            | "say"
            | "says"
            | "sorry"
            | "actually"
            | "correction"
            | "oops"
            | "typo"
            | "meant"
            | "mean"
            | "means"
            | "instead"
            | "rather"
            | "scratch"
            | "wrong"
            | "mistake"
            | "confirm"
            | "confirming"
            | "confirmed"
            | "understand"
            | "understood"
            | "note"
            | "heads"
            | "quick"
            | "small"
            | "big"
            | "last"
            | "new"
            | "old"
            | "should've"
    )
}

/// Contractions of a pronoun (or "here", "there") and a verb.
fn contraction(w: &str) -> bool {
    matches!(
        w,
        "it's" | "that's" | "i'm" | "we're" | "you're" | "they're" | "there's" | "here's" | "at's"
    )
}

/// Words about when and how a value was stated ("the draft figure I gave you earlier").
fn history_word(w: &str) -> bool {
    matches!(
        w,
        "stands"
            | "sits"
            | "decision"
            | "decided"
            | "mind"
            | "record"
            | "draft"
            | "figure"
            | "signed-off"
            | "gave"
            | "given"
            | "told"
            | "mentioned"
            | "wrote"
            | "before"
            | "earlier"
            | "previously"
            | "today"
            | "yesterday"
            | "tomorrow"
            | "ago"
            | "later"
    )
}

pub(super) fn pronoun(w: &str) -> bool {
    matches!(
        w,
        "it" | "this"
            | "that"
            | "these"
            | "those"
            | "they"
            | "them"
            | "we"
            | "you"
            | "i"
            | "he"
            | "she"
            | "me"
            | "us"
            | "him"
            | "one"
            | "it's"
            | "that's"
            | "this's"
    )
}

/// Chinese words a subject does not end with (linking verbs, copulas) or begin with (cues).
pub(super) const ZH_TRAILING: &[&str] = &[
    "最后还是定",
    "还是定",
    "最终定",
    "就定",
    "现在",
    "目前",
    "仍然",
    "最后",
    "最终",
    "还是",
    "那个数",
    "这个数",
    "那个值",
    "这个值",
    "那个",
    "这个",
    "我",
    "请",
    "有误",
    "有错",
    "记错了",
    "说错了",
    "为准",
    "执行",
    "按",
    "以",
    "采用",
    "改用",
    "还是",
    "应该是",
    "应当是",
    "其实是",
    "改成",
    "改为",
    "改到",
    "换成",
    "设为",
    "设置为",
    "设成",
    "调到",
    "调成",
    "定为",
    "定成",
    "更新为",
    "是",
    "为",
    "到",
    "成",
    "在",
    "约",
    "大概",
    "了",
    "就",
    "都",
    "还",
    "也",
    "要",
    "用",
    "叫",
    "的",
];

pub(super) const ZH_LEADING: &[&str] = &[
    "前面说的",
    "上面说的",
    "刚刚说的",
    "之前提到的",
    "前面提到的",
    "之前说的",
    "刚才说的",
    "之前",
    "刚才",
    "关于",
    "对于",
    "本次分析的",
    "本次",
    "需要说明的是",
    "天",
    "个月",
    "小时",
    "分钟",
    "元",
    "而不是",
    "并不是",
    "不是",
    "而非",
    "并非",
    "不对",
    "更正",
    "更正一下",
    "纠正",
    "抱歉",
    "不好意思",
    "其实",
    "另外",
    "还有",
    "顺便说一下",
    "提醒一下",
    "确认一下",
    "你的意思是",
    "也就是说",
    "你是希望",
    "你希望",
    "是希望",
    "希望",
    "所以",
    "那么",
    "我们",
    "我",
    "你",
    "把",
    "将",
    "请",
    "那",
    "这",
    "的",
];

pub(super) const ZH_PRONOUNS: &[&str] = &[
    "它", "这", "那", "这个", "那个", "这些", "那些", "他", "她", "他们",
];

pub(super) fn has_cjk(s: &str) -> bool {
    !s.is_ascii() && s.chars().any(is_cjk)
}
