//! Progress reports. The runtime never prints: it emits typed events through one sink, which
//! the CLI turns into terminal output and the desktop app forwards to the webview.

use decima_core::ConversationId;
use serde::Serialize;

/// Something the runtime did or is doing, in the order it happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A chat turn started in this conversation (new or existing).
    TurnStarted {
        /// The conversation the turn belongs to.
        conversation_id: ConversationId,
    },
    /// A piece of the answer's visible text.
    TextDelta {
        /// The text.
        text: String,
    },
    /// A piece of the model's reasoning.
    ReasoningDelta {
        /// The text.
        text: String,
    },
    /// Everything streamed since the last final event is void: a retry starts over.
    Discarded {
        /// Why.
        reason: String,
    },
    /// A message was stored.
    MessageStored {
        /// Its seq.
        seq: i64,
        /// user, assistant, tool or system.
        role: &'static str,
    },
    /// A compaction was applied, automatically or on request.
    Compacted {
        /// The stored compaction, for undo.
        compaction_id: String,
        /// standard, deep, phase or checkpoint.
        level: &'static str,
        /// auto, manual, overflow, ...
        trigger: &'static str,
        /// Tokens the history needed before.
        tokens_before: u32,
        /// And after.
        tokens_after: u32,
    },
    /// Something the person should know that did not stop the operation.
    Warning {
        /// One line.
        message: String,
    },
}

/// Where events go. Implementations must be cheap: events are emitted from the streaming path.
pub trait EventSink: Send + Sync {
    /// Receives one event.
    fn emit(&self, event: Event);
}

/// A sink that drops everything, for callers that only want the result.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoEvents;

impl EventSink for NoEvents {
    fn emit(&self, _event: Event) {}
}

/// A sink that keeps every event, for tests and for callers that replay them later.
#[derive(Debug, Default)]
pub struct CollectEvents {
    events: std::sync::Mutex<Vec<Event>>,
}

impl CollectEvents {
    /// Everything emitted so far.
    pub fn take(&self) -> Vec<Event> {
        match self.events.lock() {
            Ok(mut events) => std::mem::take(&mut *events),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        }
    }
}

impl EventSink for CollectEvents {
    fn emit(&self, event: Event) {
        match self.events.lock() {
            Ok(mut events) => events.push(event),
            Err(poisoned) => poisoned.into_inner().push(event),
        }
    }
}
