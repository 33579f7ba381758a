//! Sentences and their words: a figure's sentence is what it is about, and what a derivation
//! may draw its operands from.

/// The byte span of the sentence holding `at`: from after the last full stop, question or
/// exclamation mark (not a decimal point) or line break, to the next.
#[must_use]
pub fn sentence_bounds(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let bytes = text.as_bytes();
    let ends_sentence = |i: usize| -> bool {
        match bytes[i] {
            b'\n' => true,
            b'.' | b'!' | b'?' | b';' => bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace()),
            _ => false,
        }
    };
    let mut start = 0;
    for i in (0..at).rev() {
        if ends_sentence(i) {
            start = i + 1;
            break;
        }
    }
    let cjk_start = text[start..at]
        .rfind(['。', '！', '？', '；'])
        .map(|k| start + k + 3);
    let start = cjk_start.unwrap_or(start);
    let mut end = text.len();
    for i in at..bytes.len() {
        if ends_sentence(i) {
            end = i + 1;
            break;
        }
    }
    let cjk_end = text[at..end]
        .find(['。', '！', '？', '；'])
        .map(|k| at + k + 3);
    (start, cjk_end.unwrap_or(end))
}

/// Lowercased words of three letters or more, and each CJK character pair: what subjects and
/// sentences are compared by.
#[must_use]
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for w in text.split(|c: char| !c.is_alphanumeric()) {
        if w.chars().any(|c| c as u32 >= 0x3000) {
            let chars: Vec<char> = w.chars().filter(|c| !c.is_ascii_digit()).collect();
            out.extend(chars.windows(2).map(|p| p.iter().collect::<String>()));
        } else if w.len() >= 3 && !w.chars().all(|c| c.is_ascii_digit()) {
            out.push(w.to_lowercase());
        }
    }
    out
}
