//! What a review reads (its mode), how deep it goes (its type), what asked for it (its trigger)
//! and where the tenth man runs during an execution: the names stored and the spellings read.

use serde::{Deserialize, Serialize};

use crate::error::{Result, RuntimeError};

/// What part of the history the reviewer reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewMode {
    /// The whole history through the sliding window (the default).
    FullHistory,
    /// The last `count` messages.
    RecentMessages {
        /// How many.
        count: u32,
    },
    /// Content given with the request (a draft, a call about to run).
    SpecificContent {
        /// The content.
        content: String,
    },
}

/// What part of the history a review reads, without its count or content: the name stored
/// with the review and sent when it starts (the content may be long, and is the analyst's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, strum::IntoStaticStr, strum::Display)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum ReviewScope {
    /// The whole history.
    FullHistory,
    /// The last messages.
    RecentMessages,
    /// Content given with the request.
    SpecificContent,
}

impl ReviewMode {
    /// What part of the history it reads.
    pub fn scope(&self) -> ReviewScope {
        match self {
            Self::FullHistory => ReviewScope::FullHistory,
            Self::RecentMessages { .. } => ReviewScope::RecentMessages,
            Self::SpecificContent { .. } => ReviewScope::SpecificContent,
        }
    }

    /// The name stored with the review.
    pub fn name(&self) -> &'static str {
        self.scope().into()
    }

    /// The mode's argument stored with the review: the count, or the content.
    pub(super) fn argument(&self) -> Option<String> {
        match self {
            Self::FullHistory => None,
            Self::RecentMessages { count } => Some(count.to_string()),
            Self::SpecificContent { content } => Some(content.clone()),
        }
    }

    /// Reads `full`, `recent:N` or `content:TEXT` (the CLI's spelling).
    pub fn parse(text: &str) -> Result<Self> {
        if text == "full" || text == "full_history" {
            return Ok(Self::FullHistory);
        }
        if let Some(n) = text.strip_prefix("recent:") {
            return match n.trim().parse::<u32>() {
                Ok(count) if count > 0 => Ok(Self::RecentMessages { count }),
                _ => Err(RuntimeError::Config(format!(
                    "recent:{} needs a message count above 0, like recent:20",
                    decima_core::names::echo_untrusted(n)
                ))),
            };
        }
        if let Some(content) = text.strip_prefix("content:") {
            if content.trim().is_empty() {
                return Err(RuntimeError::Config(
                    "content: needs the text to review, like content:\"the draft\"".into(),
                ));
            }
            return Ok(Self::SpecificContent {
                content: content.to_owned(),
            });
        }
        Err(RuntimeError::Config(format!(
            "unknown review mode {:?}: use full, recent:N or content:TEXT",
            decima_core::names::echo_untrusted(text)
        )))
    }
}

/// How deep the review goes.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    Default,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum ReviewType {
    /// A fast risk check: a quarter of the budget, at most three findings.
    Quick,
    /// A complete critique.
    #[default]
    Full,
    /// The answer's figures worked out again from the run's inputs, in a fresh sandbox, by a
    /// reviewer that never sees the agent's code or files.
    Recompute,
}

impl ReviewType {
    /// The name stored with the review.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// Reads `quick`, `full` or `recompute`.
    pub fn parse(text: &str) -> Result<Self> {
        text.parse().map_err(|_| {
            RuntimeError::Config(format!(
                "unknown review type {:?}: use quick, full or recompute",
                decima_core::names::echo_untrusted(text)
            ))
        })
    }

    /// The longest answer the reviewer may give.
    pub(super) fn max_output(self) -> u32 {
        match self {
            Self::Quick => 1_500,
            Self::Full | Self::Recompute => 4_096,
        }
    }
}

/// What asked for the review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, strum::IntoStaticStr, strum::Display)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum ReviewTrigger {
    /// The agent called `tenth_man_review`.
    Tool,
    /// The runtime: the final review, or one before a risky call.
    System,
    /// The analyst (`decima review`, the button).
    User,
}

impl ReviewTrigger {
    /// The name stored with the review.
    pub(super) fn name(self) -> &'static str {
        self.into()
    }
}

/// Where the tenth man runs during an execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, strum::EnumString)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum TenthManMode {
    /// Never.
    Off,
    /// Only when the agent calls the tool.
    ToolOnly,
    /// Only the runtime's reviews: the final one, and before risky calls when enabled.
    SystemOnly,
    /// The tool and the runtime's reviews.
    #[default]
    Hybrid,
}

impl TenthManMode {
    /// Whether the agent is offered the tool.
    pub fn tool(self) -> bool {
        matches!(self, Self::ToolOnly | Self::Hybrid)
    }

    /// Whether the runtime reviews on its own.
    pub fn system(self) -> bool {
        matches!(self, Self::SystemOnly | Self::Hybrid)
    }

    /// Reads off, tool_only, system_only or hybrid.
    pub fn parse(text: &str) -> Result<Self> {
        text.parse().map_err(|_| {
            RuntimeError::Config(format!(
                "unknown tenth-man mode {:?}: use off, tool_only, system_only or hybrid",
                decima_core::names::echo_untrusted(text)
            ))
        })
    }
}
