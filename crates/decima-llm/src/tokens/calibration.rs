//! A per-model correction factor learned from the provider's own usage figures.
//!
//! Local counts are exact only for OpenAI models. For the others (a cl100k stand-in, an HF
//! tokenizer without the chat template, Anthropic with no public tokenizer) the provider's
//! reported `prompt_tokens` is the truth: after each response, the ratio of that figure to our
//! estimate of the same request nudges a factor that later estimates are multiplied by.

use serde::{Deserialize, Serialize};

/// The factor never leaves this range: a sample far outside it is a bug or a mismatched
/// request, and one bad sample must not double or halve every later budget.
pub const MIN_FACTOR: f64 = 0.5;
/// Upper bound of the factor; see [`MIN_FACTOR`].
pub const MAX_FACTOR: f64 = 2.0;
/// Samples where either count is below this are ignored: on a few tokens, framing dominates and
/// the ratio says nothing about the tokenizer.
pub const MIN_SAMPLE_TOKENS: u32 = 64;
/// Samples after which the factor is taken as settled, for telling a truncated prompt.
const SETTLED_SAMPLES: u32 = 3;
/// How far short of the estimate a reported prompt may fall before it counts as truncated,
/// while the factor is unsettled (the stand-in tokenizers differ by up to about 30%) ...
const UNSETTLED_SHORTFALL: f64 = 0.4;
/// ... and once it is settled (successive requests of one model agree within about 10%).
const SETTLED_SHORTFALL: f64 = 0.25;
/// Weight of a new sample once warmed up. Successive requests of one conversation share most of
/// their text, so a slow average loses little and keeps one odd request from swinging it.
const SMOOTHING: f64 = 0.1;

/// How far a model's real prompt sizes are from our estimates, kept per model (and worth
/// persisting with the model's settings). Starts neutral; the first samples are averaged
/// equally, later ones exponentially, so it settles within a few requests and then tracks drift.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Multiplier from our estimate to the provider's count.
    pub factor: f64,
    /// Samples taken into account so far.
    pub samples: u32,
}

impl Default for Calibration {
    fn default() -> Self {
        Self::new()
    }
}

impl Calibration {
    /// A neutral calibration: estimates pass through unchanged.
    pub fn new() -> Self {
        Self {
            factor: 1.0,
            samples: 0,
        }
    }

    /// Learns from one response: `estimated` is our *uncalibrated* count of the request
    /// (`count_request`), `actual` the provider's reported prompt tokens for it.
    pub fn update(&mut self, estimated: u32, actual: u32) {
        if estimated < MIN_SAMPLE_TOKENS || actual < MIN_SAMPLE_TOKENS {
            return;
        }
        let ratio = (f64::from(actual) / f64::from(estimated)).clamp(MIN_FACTOR, MAX_FACTOR);
        let current = self.current();
        let weight = (1.0 / (f64::from(self.samples) + 1.0)).max(SMOOTHING);
        self.factor = (current + weight * (ratio - current)).clamp(MIN_FACTOR, MAX_FACTOR);
        self.samples = self.samples.saturating_add(1);
    }

    /// Whether the provider counted so far fewer prompt tokens than were sent that it must have
    /// dropped part of the prompt (Ollama cuts a prompt longer than its `num_ctx` from the front
    /// without a word). `estimated` is the uncalibrated count, as for [`Calibration::update`].
    /// The margin is the counting error: wide until a few samples have settled the factor (a
    /// stand-in tokenizer can be 30% off), narrower after. Such a sample must not be learned.
    pub fn looks_truncated(&self, estimated: u32, actual: u32) -> bool {
        if estimated < MIN_SAMPLE_TOKENS {
            return false;
        }
        let expected = f64::from(self.apply(estimated));
        let margin = if self.samples < SETTLED_SAMPLES {
            UNSETTLED_SHORTFALL
        } else {
            SETTLED_SHORTFALL
        };
        f64::from(actual) < expected * (1.0 - margin)
    }

    /// Our estimate corrected by what has been learned so far.
    pub fn apply(&self, estimate: u32) -> u32 {
        let scaled = (f64::from(estimate) * self.current()).round();
        // `as` saturates: anything above u32::MAX becomes u32::MAX.
        scaled as u32
    }

    /// The factor, made safe even if a stored value was corrupted (NaN, out of range).
    fn current(&self) -> f64 {
        if self.factor.is_finite() {
            self.factor.clamp(MIN_FACTOR, MAX_FACTOR)
        } else {
            1.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_prompt_counted_far_short_of_what_was_sent_is_truncated_within_the_counting_error_not() {
        let mut c = Calibration::new();
        // Unsettled: a stand-in tokenizer 30% off is not a truncation; half the prompt is.
        assert!(!c.looks_truncated(10_000, 7_000));
        assert!(c.looks_truncated(10_000, 4_096));
        for _ in 0..5 {
            c.update(10_000, 9_000);
        }
        // Settled at about 0.9: 8,000 is within its error, 6,000 is not.
        assert!(!c.looks_truncated(10_000, 8_000));
        assert!(c.looks_truncated(10_000, 6_000));
        // Tiny requests say nothing.
        assert!(!c.looks_truncated(40, 1));
    }

    #[test]
    fn starts_neutral() {
        let c = Calibration::default();
        assert_eq!(c.samples, 0);
        assert_eq!(c.apply(0), 0);
        assert_eq!(c.apply(1234), 1234);
        assert_eq!(c.apply(u32::MAX), u32::MAX);
    }

    #[test]
    fn converges_on_a_constant_ratio() {
        let mut c = Calibration::new();
        c.update(1_000, 1_200);
        assert!(
            (c.factor - 1.2).abs() < 1e-9,
            "the first sample is taken as is"
        );
        for i in 0..50u32 {
            let estimated = 500 + i * 97;
            c.update(estimated, (f64::from(estimated) * 1.2).round() as u32);
        }
        assert!((c.factor - 1.2).abs() < 0.005, "{}", c.factor);
        assert_eq!(c.samples, 51);
        assert_eq!(c.apply(10_000), 12_000);
    }

    #[test]
    fn averages_noise_and_follows_drift() {
        let mut c = Calibration::new();
        for i in 0..200 {
            let actual = if i % 2 == 0 { 1_100 } else { 1_300 };
            c.update(1_000, actual);
        }
        assert!((c.factor - 1.2).abs() < 0.02, "{}", c.factor);
        // The provider changed tokenizer: the factor moves to the new ratio.
        for _ in 0..100 {
            c.update(1_000, 800);
        }
        assert!((c.factor - 0.8).abs() < 0.01, "{}", c.factor);
    }

    #[test]
    fn ignores_tiny_samples() {
        let mut c = Calibration::new();
        c.update(10, 1_000);
        c.update(1_000, 10);
        c.update(0, 0);
        c.update(0, 5_000);
        c.update(5_000, 0);
        assert_eq!(c, Calibration::new());
    }

    #[test]
    fn clamps_outliers_and_huge_values() {
        let mut c = Calibration::new();
        c.update(100, 1_000_000);
        assert_eq!(c.factor, MAX_FACTOR);
        assert_eq!(c.apply(u32::MAX), u32::MAX);
        let mut c = Calibration::new();
        c.update(u32::MAX, MIN_SAMPLE_TOKENS);
        assert_eq!(c.factor, MIN_FACTOR);
        let mut c = Calibration::new();
        c.update(u32::MAX, u32::MAX);
        assert_eq!(c.factor, 1.0);
        assert_eq!(c.apply(u32::MAX), u32::MAX);
    }

    #[test]
    fn survives_a_corrupted_stored_factor() {
        for factor in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -3.0, 1e300] {
            let mut c = Calibration { factor, samples: 7 };
            let applied = c.apply(1_000);
            assert!((500..=2_000).contains(&applied), "{factor}: {applied}");
            c.update(1_000, 1_500);
            assert!(c.factor.is_finite() && (MIN_FACTOR..=MAX_FACTOR).contains(&c.factor));
        }
    }

    #[test]
    fn round_trips_through_json() {
        let mut c = Calibration::new();
        c.update(1_000, 1_337);
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<Calibration>(&json).unwrap(), c);
    }

    proptest! {
        #[test]
        fn stays_finite_and_in_range(samples in prop::collection::vec((any::<u32>(), any::<u32>()), 0..64), probe in any::<u32>()) {
            let mut c = Calibration::new();
            for (estimated, actual) in samples {
                c.update(estimated, actual);
                prop_assert!(c.factor.is_finite());
                prop_assert!((MIN_FACTOR..=MAX_FACTOR).contains(&c.factor));
            }
            let applied = c.apply(probe);
            prop_assert!(f64::from(applied) <= f64::from(probe) * MAX_FACTOR + 1.0);
            prop_assert!(f64::from(applied) >= f64::from(probe) * MIN_FACTOR - 1.0);
        }
    }
}
