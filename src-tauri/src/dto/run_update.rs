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

#[cfg(test)]
mod tests {
    use super::*;
    use decima_store::Resolution;

    #[test]
    fn an_event_crosses_in_the_runtimes_own_shape_inside_the_envelope() {
        let update = RunUpdate::event(Event::Recovered {
            failure_id: "f1".into(),
            choice: Resolution::Rollback,
        });
        let json = serde_json::to_value(&update).unwrap();
        assert_eq!(json["kind"], "event");
        assert_eq!(
            json["event"],
            serde_json::json!({"type": "recovered", "failure_id": "f1", "choice": "rollback"})
        );
        assert!(json["sentAtMs"].as_f64().unwrap() > 1.7e12);
    }

    #[test]
    fn the_end_is_its_own_kind() {
        let ended = RunUpdate::Ended {
            status: Some(ExecutionStatus::AwaitingUser),
            answer: None,
            error: None,
        };
        assert_eq!(
            serde_json::to_value(&ended).unwrap(),
            serde_json::json!({"kind": "ended", "status": "awaiting_user", "answer": null, "error": null})
        );
    }
}
