//! The store's futures stay small on SQLite, now that every method also has a PostgreSQL side:
//! PostgreSQL's futures run the wire protocol inline and are several kilobytes, and inline in a
//! SQLite store's futures they grew every caller's, until a subagent's nested run overflowed a
//! 2 MiB thread stack in a debug build. `on_pool!` boxes the PostgreSQL side; this holds it.
#![allow(clippy::unwrap_used)]

use crate::common;

use decima_core::{ConversationId, ExecutionId, NewMessage, Role};
use decima_store::{ExecutionStatus, StepNotes};

/// What the sizes were before the PostgreSQL backend, with room to spare (debug build).
const LIMIT: usize = 2_048;

#[tokio::test]
async fn store_futures_stay_under_two_kilobytes() {
    let (_dir, store) = common::temp_sqlite_store().await;
    let c = ConversationId::new();
    let e = ExecutionId::new();
    let sizes = [
        (
            "append",
            std::mem::size_of_val(&store.messages().append(c, NewMessage::new(Role::User, "x"))),
        ),
        (
            "append_noting",
            std::mem::size_of_val(&store.messages().append_noting(
                c,
                NewMessage::new(Role::User, "x"),
                StepNotes {
                    execution: e,
                    records: &[],
                    started_call: None,
                },
            )),
        ),
        (
            "set_status",
            std::mem::size_of_val(&store.executions().set_status(e, ExecutionStatus::Running)),
        ),
        ("busy", std::mem::size_of_val(&store.claims().busy(c))),
        (
            "live_state",
            std::mem::size_of_val(&store.compactions().live_state(c)),
        ),
        (
            "page_before",
            std::mem::size_of_val(&store.messages().page_before(c, 0, 9, 9)),
        ),
        (
            "record_all",
            std::mem::size_of_val(&store.steps().record_all(e, &[])),
        ),
    ];
    for (name, size) in sizes {
        assert!(size <= LIMIT, "{name}'s future is {size} bytes");
    }
}
