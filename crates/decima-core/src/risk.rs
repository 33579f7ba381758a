//! The tenth man's scales: how grave one finding is and how much is at risk in a conclusion.
//! Both are ordered lowest first, so a merge of passes keeps the highest with `max` and the
//! answer check compares a finding with the review's level, never by looking names up.

use serde::{Deserialize, Serialize};

use crate::CoreError;

/// How much a review thinks is wrong with the conclusion it read.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[serde(rename_all = "lowercase")]
#[strum(
    serialize_all = "lowercase",
    parse_err_ty = CoreError,
    parse_err_fn = unknown_risk_level
)]
pub enum RiskLevel {
    /// Nothing found against it.
    #[default]
    None,
    /// Minor doubts.
    Low,
    /// Worth a look before relying on it.
    Medium,
    /// Probably wrong in a way that matters: the run's result is contested.
    High,
    /// Wrong, or unsafe to act on: the run's result is contested.
    Critical,
}

impl RiskLevel {
    /// Every level, lowest first.
    pub const ALL: [RiskLevel; 5] = [
        Self::None,
        Self::Low,
        Self::Medium,
        Self::High,
        Self::Critical,
    ];

    /// The lowercase name the reviewer writes and the store keeps.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Whether a final review at this level contests the run's result.
    pub fn contests(self) -> bool {
        self >= Self::High
    }

    /// The names, lowest first, for a message that lists what is accepted.
    pub fn names() -> String {
        names(Self::ALL.iter().map(|l| l.as_str()))
    }
}

/// How grave one finding is.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[serde(rename_all = "lowercase")]
#[strum(
    serialize_all = "lowercase",
    parse_err_ty = CoreError,
    parse_err_fn = unknown_severity
)]
pub enum Severity {
    /// A detail.
    Low,
    /// Worth fixing.
    Medium,
    /// Changes the conclusion.
    High,
    /// Makes the conclusion wrong or unsafe.
    Critical,
}

impl Severity {
    /// Every severity, lowest first.
    pub const ALL: [Severity; 4] = [Self::Low, Self::Medium, Self::High, Self::Critical];

    /// The lowercase name the reviewer writes and the store keeps.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The least risk level a review with this finding can have.
    pub fn least_risk(self) -> RiskLevel {
        match self {
            Self::Low => RiskLevel::Low,
            Self::Medium => RiskLevel::Medium,
            Self::High => RiskLevel::High,
            Self::Critical => RiskLevel::Critical,
        }
    }

    /// The names, lowest first, for a message that lists what is accepted.
    pub fn names() -> String {
        names(Self::ALL.iter().map(|s| s.as_str()))
    }
}

fn names<'a>(all: impl Iterator<Item = &'a str>) -> String {
    all.collect::<Vec<_>>().join(", ")
}

/// The error for a name that is not a risk level. Parsing takes exact lowercase names only: a
/// reviewer's casing is normalised by the answer check, a stored row is never guessed at.
fn unknown_risk_level(value: &str) -> CoreError {
    unknown("risk level", value, &RiskLevel::names())
}

/// The error for a name that is not a severity (exact lowercase names only, as for levels).
fn unknown_severity(value: &str) -> CoreError {
    unknown("severity", value, &Severity::names())
}

fn unknown(what: &'static str, value: &str, expected: &str) -> CoreError {
    CoreError::UnknownName {
        what,
        value: crate::names::echo_untrusted(value),
        expected: expected.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_order_lowest_first_and_round_trip_through_their_names() {
        assert!(RiskLevel::None < RiskLevel::Low && RiskLevel::High < RiskLevel::Critical);
        assert!(Severity::Medium < Severity::High);
        for l in RiskLevel::ALL {
            assert_eq!(l.as_str().parse::<RiskLevel>(), Ok(l));
            assert_eq!(serde_json::to_string(&l).unwrap(), format!("\"{l}\""));
        }
        for s in Severity::ALL {
            assert_eq!(s.as_str().parse::<Severity>(), Ok(s));
            assert!(s.least_risk() >= RiskLevel::Low);
        }
        assert!(!RiskLevel::Medium.contests() && RiskLevel::High.contests());
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_names_accepted() {
        let e = "High".parse::<RiskLevel>().unwrap_err().to_string();
        assert!(e.contains("none, low, medium, high, critical"), "{e}");
        let e = "severe".parse::<Severity>().unwrap_err().to_string();
        assert!(
            e.contains("severe") && e.contains("low, medium, high, critical"),
            "{e}"
        );
    }
}
