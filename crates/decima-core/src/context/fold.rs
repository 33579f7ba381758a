//! Folding: summaries of summaries. Segment summaries that outgrow their share are merged into
//! the global summary by summarising again; a global summary that outgrows its share is rendered
//! more deeply. A maximum length is enforced by folding, never by dropping: the text is parsed
//! back into a [`Digest`] so every literal of what is folded is kept.

use crate::TokenCounter;
use crate::context::extract::{Detail, Digest};
use crate::context::summary::Summary;

/// Tokens a summary costs when sent as a message.
pub fn summary_tokens(text: &str, counter: &dyn TokenCounter) -> u32 {
    counter
        .count_text(text)
        .saturating_add(counter.message_overhead())
}

/// Renders `digest` at `from` detail, or deeper until it fits `max_tokens`. When even the
/// deepest rendering is too long it is returned anyway: dropping literals is never an option,
/// and the selection reports the overflow.
pub fn render_within(
    digest: &Digest,
    from: Detail,
    max_tokens: u32,
    counter: &dyn TokenCounter,
) -> (String, u32) {
    let mut last = (String::new(), 0);
    for detail in [Detail::Standard, Detail::Deep, Detail::Folded] {
        if detail < from {
            continue;
        }
        let text = digest.render(detail);
        let tokens = summary_tokens(&text, counter);
        if tokens <= max_tokens {
            return (text, tokens);
        }
        last = (text, tokens);
    }
    last
}

/// Folds summaries (oldest first) and optionally a fresh digest of messages into one text that
/// fits `max_tokens` when it can, keeping every literal.
pub fn fold_summaries(
    summaries: &[&Summary],
    extra: Option<Digest>,
    from: Detail,
    max_tokens: u32,
    counter: &dyn TokenCounter,
) -> (String, u32) {
    let mut digest = Digest::default();
    for s in summaries {
        digest.merge(Digest::parse(&s.text));
    }
    if let Some(d) = extra {
        digest.merge(d);
    }
    render_within(&digest, from, max_tokens, counter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::extract::Source;
    use crate::context::summary::{Strategy, SummaryLevel};
    use crate::{EstimateCounter, Role};

    #[test]
    fn folding_goes_deeper_but_keeps_literals() {
        let texts: Vec<String> = (0..30)
            .map(|i| {
                format!(
                    "Decision: exclude batch {i}. We will read /data/part-{i}.csv and ACC-{i:05}."
                )
            })
            .collect();
        let summaries: Vec<Summary> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let d = Digest::from_sources([Source {
                    role: Role::Assistant,
                    content: t,
                    tool_calls: &[],
                    tool_call_id: None,
                }]);
                let text = d.render(Detail::Standard);
                Summary {
                    id: format!("s{i}"),
                    level: SummaryLevel::Segment,
                    start_seq: i as i64 + 1,
                    end_seq: i as i64 + 1,
                    tokens: summary_tokens(&text, &EstimateCounter),
                    text,
                    strategy: Strategy::Extract,
                }
            })
            .collect();
        let refs: Vec<&Summary> = summaries.iter().collect();
        let (full, full_tokens) =
            fold_summaries(&refs, None, Detail::Standard, u32::MAX, &EstimateCounter);
        let (small, small_tokens) =
            fold_summaries(&refs, None, Detail::Standard, 10, &EstimateCounter);
        assert!(small_tokens < full_tokens);
        for i in 0..30 {
            for lit in [format!("/data/part-{i}.csv"), format!("ACC-{i:05}")] {
                assert!(full.contains(&lit) && small.contains(&lit), "{lit}");
            }
        }
        // Folding a fold again is stable.
        let again = Summary {
            text: small.clone(),
            ..summaries[0].clone()
        };
        let (twice, _) = fold_summaries(&[&again], None, Detail::Folded, 10, &EstimateCounter);
        assert_eq!(twice, small);
    }
}
