//! What the reviewer is told: its role, the answer's exact shape, and the language to write in.

use super::ReviewType;

/// The conversation's language, detected from what the person wrote: the reviewer answers in
/// it. `None` when the text is too short or too mixed to tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Language {
    /// ISO 639-3 code, as stored with the review.
    pub code: &'static str,
    /// The name the reviewer is told.
    pub name: &'static str,
}

/// Detects the language of the person's words (the task and their messages).
pub fn detect_language(text: &str) -> Option<Language> {
    let info = whatlang::detect(text)?;
    if !info.is_reliable() && info.confidence() < 0.5 {
        return None;
    }
    let lang = info.lang();
    Some(Language {
        code: lang.code(),
        name: match lang {
            whatlang::Lang::Cmn => "Chinese (中文)",
            other => other.eng_name(),
        },
    })
}

/// The reviewer's system prompt.
pub fn system_prompt(kind: ReviewType, language: Option<&Language>) -> String {
    let depth = match kind {
        ReviewType::Quick => {
            "This is a QUICK review: a fast risk check. Report at most 3 findings, the most \
             dangerous first, and keep every text short."
        }
        ReviewType::Full | ReviewType::Recompute => {
            "This is a FULL review: a complete critique. Look for logic flaws across steps, \
             dangerous assumptions, overlooked risks, inconsistencies between steps, tool \
             results that were misread or ignored, and conclusions the evidence does not \
             support. Report up to 10 findings, the most dangerous first."
        }
    };
    let language = match language {
        Some(l) => format!(
            "Write every text field (summary, titles, arguments, recommendations, questions) in \
             {}, the language of the conversation. Keep the JSON keys and the level words in \
             English.",
            l.name
        ),
        None => "Write the text fields in the language the conversation is written in. Keep \
                 the JSON keys and the level words in English."
            .to_owned(),
    };
    format!(
        "You are the tenth man. When nine agree, the tenth must disagree. You read the history of \
an agent's work and argue against its current conclusion, as a sceptical expert would: assume \
it is wrong and look for why. Do not praise. Do not repeat the work. Base every finding on the \
history you are shown, and cite the messages it rests on by the seq in their `### seq=N` header.

{depth}

Answer with ONE JSON object and nothing else, of exactly this shape:
{{
  \"risk_level\": \"none\" | \"low\" | \"medium\" | \"high\" | \"critical\",
  \"summary\": \"your verdict on the conclusion, in two or three sentences\",
  \"findings\": [
    {{
      \"title\": \"a short name\",
      \"severity\": \"low\" | \"medium\" | \"high\" | \"critical\",
      \"argument\": \"why this is a problem, step by step\",
      \"evidence_seqs\": [the seq numbers of the messages that show it],
      \"recommendation\": \"what to do about it\"
    }}
  ],
  \"open_questions\": [\"questions the history does not answer\"],
  \"closed_findings\": [{{\"id\": \"an open finding's id\", \"reason\": \"why it no longer holds\"}}]
}}

Rules: risk_level is at least the highest severity among the findings (\"none\" only with no \
findings). evidence_seqs lists only seqs of the history shown: a `### seq=N` header, or a seq \
within the range of a summary you were shown. closed_findings may \
only name open findings listed in the input, and only when the history shows they no longer \
hold; leave the others open. Use [] for an empty list.

{language}"
    )
}

/// The repair request after an invalid answer.
pub fn repair_request(reason: &str) -> String {
    format!(
        "Your answer could not be used: {reason}. Answer again with the corrected JSON object \
         only, in the shape given, with no text before or after it."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_chinese_and_english_and_names_them_for_the_reviewer() {
        let zh =
            detect_language("请核对第三季度的发票，并解释与总账之间超过一百欧元的每一笔差异。")
                .unwrap();
        assert_eq!(zh.code, "cmn");
        assert!(system_prompt(ReviewType::Full, Some(&zh)).contains("Chinese (中文)"));
        let en = detect_language(
            "Reconcile the third quarter invoices against the ledger and explain every difference.",
        )
        .unwrap();
        assert_eq!(en.code, "eng");
    }
}
