//! What a run's channel carries: the runtime's own events, as the CLI's `--json` prints them,
//! each with the time it left Rust; then the run's end, which only the window has (an error
//! reaches it as the window's error type). No copy of the events exists to drift: their
//! TypeScript types are derived from the runtime's `Event` itself.

use decima_runtime::Event;
use decima_store::ExecutionStatus;
use serde::Serialize;
use specta::Type;

use crate::AppError;

/// One message on a run's channel, in the order it happened. `ended` is always the last one.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum RunUpdate {
    /// Something the run (or one of its subagents) did.
    Event {
        /// The event, as the runtime emitted it.
        event: Event,
        /// When Rust sent it, in milliseconds since the epoch: the window measures how long a
        /// text delta takes to reach the screen against it.
        sent_at_ms: f64,
    },
    /// The run is over: nothing follows.
    Ended {
        /// The execution's status, when it got that far.
        status: Option<ExecutionStatus>,
        /// The final answer, when it succeeded.
        answer: Option<String>,
        /// Why it could not go on, when it ended in an error.
        error: Option<AppError>,
    },
}

impl RunUpdate {
    /// An event, stamped now.
    pub fn event(event: Event) -> Self {
        Self::Event {
            event,
            sent_at_ms: now_ms(),
        }
    }
}

/// Wall-clock milliseconds since the epoch; 0 on a clock set before 1970.
fn now_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}
