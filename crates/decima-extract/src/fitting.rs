//! Rendering within a budget counted by a slow counter (a real tokenizer): the layout plans
//! with a byte rate sampled from the digest's own texts, and only its result is counted.
//!
//! The layout counts every line it places, several times over; with a tokenizer, counting a
//! 10k-message digest (some 300 KB of candidate lines) takes longer than laying it out.

use super::candidates::Cand;
use super::{Detail, Digest};
use crate::CountTokens;

/// Counts by bytes at a rate measured on the text being rendered.
struct ByteRate {
    bytes_per_token: f64,
    overhead: u32,
}

impl CountTokens for ByteRate {
    fn count_text(&self, text: &str) -> u32 {
        (text.len() as f64 / self.bytes_per_token).ceil() as u32
    }

    fn message_overhead(&self) -> u32 {
        self.overhead
    }
}

/// Bytes of candidate text the rate is sampled from: enough to average over many lines,
/// little enough to count in well under a millisecond.
const SAMPLE_BYTES: usize = 12_000;

/// Layouts tried with the byte rate before the exact counter plans one itself.
const TRIES: usize = 3;

/// The bytes per token of the candidates' longest texts, from an even sample of them counted
/// with `counter`. Lines are counted one by one, as the layout counts them.
fn sampled_rate(cands: &[Cand], counter: &dyn CountTokens) -> f64 {
    let total: usize = cands
        .iter()
        .filter_map(|c| c.texts.first())
        .map(String::len)
        .sum();
    let step = (total / SAMPLE_BYTES).max(1);
    let (mut bytes, mut tokens) = (0usize, 0u64);
    for text in cands.iter().step_by(step).filter_map(|c| c.texts.first()) {
        bytes += text.len();
        tokens += u64::from(counter.count_text(text));
    }
    if tokens == 0 {
        return 4.0;
    }
    (bytes as f64 / tokens as f64).clamp(1.0, 8.0)
}

impl Digest {
    /// Like [`Digest::render_budgeted`], for a `counter` too slow to count every line a
    /// layout weighs (a real tokenizer over a long digest): the layout plans with a byte rate
    /// sampled from the digest's texts, and only its result is counted with `counter`. A
    /// result over the budget, or one that leaves more than a tenth of it unused, corrects
    /// the rate from that count and is laid out again; after [`TRIES`] layouts the best one
    /// under the budget is kept, or, if none fits, `counter` plans the layout itself. The
    /// tokens never exceed `max_tokens` unless even an empty text does.
    pub fn render_fitted(
        &self,
        detail: Detail,
        max_tokens: u32,
        counter: &dyn CountTokens,
    ) -> (String, u32) {
        let overhead = counter.message_overhead();
        let cost = |text: &str| counter.count_text(text).saturating_add(overhead);
        let cands = self.candidates(detail, true);
        let mut rate = ByteRate {
            bytes_per_token: sampled_rate(&cands, counter),
            overhead,
        };
        // The whole digest, when its size says it may fit.
        let whole_bytes: usize = cands
            .iter()
            .filter_map(|c| c.texts.first())
            .map(String::len)
            .sum();
        let room = f64::from(max_tokens.saturating_sub(overhead));
        if (whole_bytes as f64) / rate.bytes_per_token <= room * 1.25 {
            let whole = self.layout(&cands, None, None);
            let tokens = cost(&whole);
            if tokens <= max_tokens {
                return (whole, tokens);
            }
        }
        let mut best: Option<(String, u32)> = None;
        for _ in 0..TRIES {
            let text = self.layout(
                &cands,
                Some((max_tokens.saturating_sub(overhead), &rate)),
                None,
            );
            let tokens = cost(&text);
            let measured = (text.len() as f64 / f64::from(tokens.saturating_sub(overhead).max(1)))
                .clamp(1.0, 8.0);
            if tokens <= max_tokens {
                if best.as_ref().is_some_and(|(t, _)| text.len() <= t.len()) {
                    // Another try gave no more: the rate is as right as it gets.
                    break;
                }
                let full = u64::from(tokens) * 10 >= u64::from(max_tokens) * 9;
                best = Some((text, tokens));
                if full {
                    break;
                }
                rate.bytes_per_token = measured;
            } else {
                // A little lower, so the next try lands under.
                rate.bytes_per_token = measured * 0.97;
            }
        }
        best.unwrap_or_else(|| self.render_over(detail, max_tokens, counter))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EstimateCounter;
    use crate::{Speaker, src};

    /// A counter unlike a byte rate: one token per word.
    struct PerWord;

    impl CountTokens for PerWord {
        fn count_text(&self, text: &str) -> u32 {
            text.split_whitespace().count() as u32
        }
    }

    fn long_digest() -> Digest {
        let messages: Vec<String> = (0..400)
            .map(|i| {
                format!(
                    "Invoice INV-{i:05} for ACME-{} totals {}.{:02} EUR, due 2026-12-{:02}; \
                     keep the threshold at 0.{i:04}.",
                    i % 37,
                    1_000 + i * 7,
                    i % 100,
                    i % 28 + 1
                )
            })
            .collect();
        Digest::from_sources(messages.iter().map(|m| src(Speaker::User, m)))
    }

    #[test]
    fn a_fitted_rendering_stays_within_the_budget_and_fills_most_of_it() {
        let d = long_digest();
        for counter in [&EstimateCounter as &dyn CountTokens, &PerWord] {
            for max in [300, 1_500, 6_000] {
                let (text, tokens) = d.render_fitted(Detail::Standard, max, counter);
                assert!(tokens <= max, "{tokens} > {max}");
                assert_eq!(
                    tokens,
                    counter.count_text(&text) + counter.message_overhead(),
                    "the tokens returned are the counter's"
                );
                assert!(tokens * 10 >= max * 7, "only {tokens} of {max} used");
            }
        }
    }

    #[test]
    fn a_digest_that_fits_whole_is_rendered_whole() {
        let d = Digest::from_sources([src(Speaker::User, "Keep the refund window at 30 days.")]);
        let whole = d.render(Detail::Standard);
        let (text, _) = d.render_fitted(Detail::Standard, 10_000, &EstimateCounter);
        assert_eq!(text, whole);
    }
}
