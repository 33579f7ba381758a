//! Failure classes: the runtime's recovery policy keys on these, so every error in every crate
//! maps to exactly one.

use serde::{Deserialize, Serialize};

/// What kind of failure happened, which decides what recovery does.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum FailureClass {
    /// Worth retrying as is: rate limits, 5xx, timeouts, dropped connections.
    Transient,
    /// The input is wrong: a bad request, an unknown model, malformed data.
    Data,
    /// The model's output is unusable (e.g. tool arguments that stay invalid JSON): replan.
    Logic,
    /// Credentials or rights: 401, 403.
    Permission,
    /// The machine or the program: disk, database, bugs.
    System,
    /// The request did not fit the model's context window: compress deeply and retry.
    ContextOverflow,
    /// The user or the program stopped it on purpose.
    Cancelled,
    /// The model's output ran in a loop (the same run of text over and over) until Decima
    /// ended it: a small model that lost its way, which asking again rarely mends.
    Degenerate,
    /// The answer states figures that no tool output or file the run saw holds, and that no
    /// sum, difference, ratio or mean of such figures gives: made up, misread or misattributed
    /// until the analyst or a tool says otherwise.
    Unlinked,
}

impl FailureClass {
    /// The snake_case name stored in `failures.class` and printed by the CLI.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}
