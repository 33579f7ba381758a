//! The types every stage shares: summaries as the store keeps them, compression levels,
//! thresholds, and the history budget with its shares.

use serde::{Deserialize, Serialize};

use crate::CoreError;

/// Whether a summary covers one segment of messages or everything folded so far. Maps onto the
/// `level` column of table `summaries` (`segment` | `global`).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum SummaryLevel {
    /// The single summary that segments fold into when they outgrow their share.
    Global,
    /// A summary of one contiguous range of messages.
    Segment,
}

impl SummaryLevel {
    /// The lowercase name stored in SQLite.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// How a summary was written. Maps onto the `strategy` column (`extract` | `llm` | `structured`).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Default,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Strategy {
    /// Rule-based, no LLM: goal, todos, decisions, literals and tool digests.
    #[default]
    Extract,
    /// An LLM summary with fixed sections that copies literals verbatim.
    Llm,
    /// A validated JSON summary that falls back to `extract` when validation fails.
    Structured,
}

impl Strategy {
    /// The lowercase name stored in SQLite and accepted by the CLI.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A summary of the messages `start_seq..=end_seq`. One row of table `summaries`; the store adds
/// `conversation_id` and `superseded_by` (set when a compaction folds this summary away).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// A UUID, so summaries made again after an undo never collide with the undone rows.
    pub id: String,
    /// Segment or global.
    pub level: SummaryLevel,
    /// The first seq it covers.
    pub start_seq: i64,
    /// The last seq it covers (inclusive).
    pub end_seq: i64,
    /// The summary itself, with fixed section headings.
    pub text: String,
    /// Tokens of `text` as a message, counted once when it is made; summaries made by
    /// [`crate::context::plan`] include their [`Summary::header`].
    pub tokens: u32,
    /// How it was written.
    pub strategy: Strategy,
}

impl Summary {
    /// The line that introduces this summary in a request, e.g.
    /// `[segment summary of messages 1–40]`; see [`summary_header`].
    pub fn header(&self) -> String {
        summary_header(self.level, self.start_seq, self.end_seq)
    }
}

/// The header a request puts before a summary's text, so the model knows what it covers.
/// Summaries made by [`crate::context::plan`] count it in their `tokens` (as
/// [`header_tokens`]), so a caller that renders it this way stays within the shares.
pub fn summary_header(level: SummaryLevel, start_seq: i64, end_seq: i64) -> String {
    format!(
        "[{} summary of messages {start_seq}–{end_seq}]",
        level.as_str()
    )
}

/// Tokens of [`summary_header`] and the newline after it.
pub fn header_tokens(
    level: SummaryLevel,
    start_seq: i64,
    end_seq: i64,
    counter: &dyn crate::TokenCounter,
) -> u32 {
    counter.count_text(&format!("{}\n", summary_header(level, start_seq, end_seq)))
}

/// What a compaction does. Maps onto the `level` column of table `compactions`.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Default,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum CompressionLevel {
    /// Keeps about 60%: goal, todos, every decision, the last 3 operations in detail.
    #[default]
    Standard,
    /// Keeps about 30%: goal, todo state, key decisions, one line per operation.
    Deep,
    /// Folds a completed phase (everything not yet covered) into one summary.
    Phase,
    /// Runs after a checkpoint passes; behaves like standard.
    Checkpoint,
}

impl CompressionLevel {
    /// The lowercase name stored in SQLite and accepted by the CLI.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The level a stored name stands for; `None` for a name no version of Decima wrote.
    pub fn parse(name: &str) -> Option<Self> {
        name.parse().ok()
    }

    /// The fraction of the recent share that stays verbatim after this compaction.
    pub fn keep_fraction(self) -> f64 {
        match self {
            CompressionLevel::Standard | CompressionLevel::Checkpoint => 0.6,
            CompressionLevel::Deep => 0.3,
            CompressionLevel::Phase => 0.0,
        }
    }
}

/// Where the meter changes colour and compression starts, as fractions of the window.
/// Configurable per provider; `enabled: false` turns automatic compression off.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    /// Warn from here (default 0.70).
    pub warn: f64,
    /// Standard compression from here (default 0.85).
    pub compress: f64,
    /// Deep compression from here (default 0.90).
    pub deep: f64,
    /// When false, the state never goes past `Warn`, so nothing compresses on its own.
    pub enabled: bool,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            warn: 0.70,
            compress: 0.85,
            deep: 0.90,
            enabled: true,
        }
    }
}

impl Thresholds {
    /// Rejects thresholds that are not increasing fractions, so a bad setting cannot disable
    /// compression by accident.
    pub fn validate(&self) -> Result<(), CoreError> {
        let ok = |x: f64| x.is_finite() && x > 0.0;
        if !(ok(self.warn) && ok(self.compress) && ok(self.deep))
            || self.warn > self.compress
            || self.compress > self.deep
        {
            return Err(CoreError::InvalidContext(format!(
                "thresholds must be positive and increasing (warn {} <= compress {} <= deep {})",
                self.warn, self.compress, self.deep
            )));
        }
        Ok(())
    }

    /// The state for a usage fraction (which may exceed 1.0).
    pub fn state(&self, usage: f64) -> ThresholdState {
        if self.enabled && usage >= self.deep {
            ThresholdState::Deep
        } else if self.enabled && usage >= self.compress {
            ThresholdState::Compress
        } else if usage >= self.warn {
            ThresholdState::Warn
        } else {
            ThresholdState::Ok
        }
    }
}

/// What the compression policy should do now. Serialised as the CLI's `state` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThresholdState {
    /// Below the warning threshold.
    Ok,
    /// Getting full: the meter warns, nothing runs yet.
    Warn,
    /// Standard compression should run.
    Compress,
    /// Deep compression should run.
    Deep,
}

impl ThresholdState {
    /// The level of compression this state calls for, if any.
    pub fn level(self) -> Option<CompressionLevel> {
        match self {
            ThresholdState::Ok | ThresholdState::Warn => None,
            ThresholdState::Compress => Some(CompressionLevel::Standard),
            ThresholdState::Deep => Some(CompressionLevel::Deep),
        }
    }
}

/// How the history budget is split between the global summary, the segment summaries and the
/// recent messages. Defaults 10% / 30% / 60%.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Shares {
    /// Share of the global summary.
    pub global: f64,
    /// Share of all segment summaries together.
    pub segments: f64,
    /// Share of the recent verbatim messages (pinned ones included).
    pub recent: f64,
}

impl Default for Shares {
    fn default() -> Self {
        Self {
            global: 0.10,
            segments: 0.30,
            recent: 0.60,
        }
    }
}

/// The tokens the history may use (window − output reserve − fixed layers, computed by the
/// caller) and how they are shared.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HistoryBudget {
    /// Total tokens for history.
    pub tokens: u32,
    /// How they are split.
    pub shares: Shares,
}

impl HistoryBudget {
    /// A budget with the default shares.
    pub fn new(tokens: u32) -> Self {
        Self {
            tokens,
            shares: Shares::default(),
        }
    }

    fn part(&self, share: f64) -> u32 {
        let v = (f64::from(self.tokens) * share.clamp(0.0, 1.0)).floor();
        // In range: share is clamped to [0, 1], so v <= tokens.
        v as u32
    }

    /// Tokens for the global summary.
    pub fn global(&self) -> u32 {
        self.part(self.shares.global)
    }

    /// Tokens for all segment summaries together.
    pub fn segments(&self) -> u32 {
        self.part(self.shares.segments)
    }

    /// Tokens for the recent messages.
    pub fn recent(&self) -> u32 {
        self.part(self.shares.recent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_map_usage_to_states() {
        let t = Thresholds::default();
        assert_eq!(t.state(0.1), ThresholdState::Ok);
        assert_eq!(t.state(0.7), ThresholdState::Warn);
        assert_eq!(t.state(0.86), ThresholdState::Compress);
        assert_eq!(t.state(1.4), ThresholdState::Deep);
        let off = Thresholds {
            enabled: false,
            ..t
        };
        assert_eq!(off.state(1.4), ThresholdState::Warn);
        assert!(t.validate().is_ok());
        assert!(Thresholds { warn: 0.9, ..t }.validate().is_err());
    }

    #[test]
    fn budget_shares_and_serde_names() {
        let b = HistoryBudget::new(1000);
        assert_eq!((b.global(), b.segments(), b.recent()), (100, 300, 600));
        assert_eq!(
            serde_json::to_string(&SummaryLevel::Segment).unwrap(),
            "\"segment\""
        );
        assert_eq!(serde_json::to_string(&Strategy::Llm).unwrap(), "\"llm\"");
        assert_eq!(CompressionLevel::Checkpoint.as_str(), "checkpoint");
    }
}
