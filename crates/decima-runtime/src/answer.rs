//! What is recorded beside an answer of the model, for chat turns and runs alike: how it ended
//! (whole, cut by the output cap, stopped, or ended because it looped), the usage the provider
//! reported with its estimated cost, and whether the server dropped part of the prompt.

use decima_llm::{Completion, FinishReason, Prices, Usage};
use decima_store::{AnswerEnd, AnswerRecord, CallUsage};

/// How a completion ended, as the store keeps it.
pub fn ending(completion: &Completion) -> AnswerEnd {
    match completion.finish {
        Some(FinishReason::Length) => AnswerEnd::Cut,
        Some(FinishReason::Stopped) => AnswerEnd::Stopped,
        Some(FinishReason::Repetition) => AnswerEnd::Looping,
        _ => AnswerEnd::Complete,
    }
}

/// The usage as the store keeps it.
pub fn call_usage(usage: Usage) -> CallUsage {
    CallUsage {
        tokens_in: usage.prompt_tokens,
        tokens_out: usage.completion_tokens,
        cache_read_tokens: usage.cache_read_tokens,
        cache_write_tokens: usage.cache_write_tokens,
    }
}

/// A call's estimated cost in millionths of a dollar, rounded to the nearest.
pub fn cost_microdollars(usage: &CallUsage, prices: &Prices) -> u64 {
    let dollars = prices.cost(
        u64::from(usage.tokens_in),
        u64::from(usage.cache_read_tokens),
        u64::from(usage.cache_write_tokens),
        u64::from(usage.tokens_out),
    );
    (dollars * 1_000_000.0).round() as u64
}

/// The record of an answer: its end, its usage and cost at `prices`, and what the caller found
/// about its prompt and its calls.
pub fn record(
    completion: &Completion,
    prices: Option<Prices>,
    prompt_truncated: bool,
    calls_from_text: Option<&str>,
) -> AnswerRecord {
    let usage = completion.usage.map(call_usage);
    AnswerRecord {
        ended: ending(completion),
        usage,
        cost_microdollars: usage
            .zip(prices)
            .map(|(u, prices)| cost_microdollars(&u, &prices)),
        prompt_truncated,
        calls_from_text: calls_from_text.map(str::to_owned),
    }
}

/// What the analyst is told about an answer that did not end whole; `None` for a whole one.
pub fn ending_note(ended: AnswerEnd, cap: Option<u32>) -> Option<String> {
    match ended {
        AnswerEnd::Complete => None,
        AnswerEnd::Cut => Some(match cap {
            Some(cap) => format!(
                "the answer was cut by the output cap ({cap} tokens): it may end mid-sentence"
            ),
            None => "the answer was cut by the output cap: it may end mid-sentence".to_owned(),
        }),
        AnswerEnd::Stopped => Some("the answer was stopped; what had arrived is kept".to_owned()),
        AnswerEnd::Looping => Some(
            "the answer kept repeating itself and was ended early; it is kept up to the first \
             repetition"
                .to_owned(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_finish_maps_to_its_end_and_priced_usage_to_a_cost() {
        let mut completion = Completion::default();
        assert_eq!(ending(&completion), AnswerEnd::Complete);
        for (finish, end) in [
            (FinishReason::Stop, AnswerEnd::Complete),
            (FinishReason::ToolCalls, AnswerEnd::Complete),
            (FinishReason::Length, AnswerEnd::Cut),
            (FinishReason::Stopped, AnswerEnd::Stopped),
            (FinishReason::Repetition, AnswerEnd::Looping),
        ] {
            completion.finish = Some(finish);
            assert_eq!(ending(&completion), end);
        }
        completion.usage = Some(Usage {
            prompt_tokens: 1_000_000,
            completion_tokens: 0,
            cache_read_tokens: 500_000,
            cache_write_tokens: 0,
        });
        let prices = Prices {
            input: 2.0,
            cached_input: 0.5,
            cache_write: 2.0,
            output: 8.0,
        };
        let r = record(&completion, Some(prices), true, Some("hermes"));
        assert_eq!(r.cost_microdollars, Some(1_250_000));
        assert!(r.prompt_truncated);
        assert_eq!(r.calls_from_text.as_deref(), Some("hermes"));
        assert_eq!(
            record(&completion, None, false, None).cost_microdollars,
            None
        );
        assert!(ending_note(AnswerEnd::Cut, Some(512)).is_some_and(|n| n.contains("512")));
        assert_eq!(ending_note(AnswerEnd::Complete, None), None);
    }
}
