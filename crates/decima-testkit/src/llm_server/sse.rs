//! SSE framing, and the plan of writes and pauses a stream turns into once options and faults
//! are applied.

use std::time::Duration;

use super::Protocol;
use super::script::{StreamFault, StreamOptions};

/// One SSE event (or comment) as its lines, without terminators.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SseEvent {
    lines: Vec<String>,
}

impl SseEvent {
    /// `data: <data>`
    pub(crate) fn data(data: impl AsRef<str>) -> SseEvent {
        SseEvent {
            lines: vec![format!("data: {}", data.as_ref())],
        }
    }

    /// `event: <name>` then `data: <data>`
    pub(crate) fn named(name: &str, data: impl AsRef<str>) -> SseEvent {
        SseEvent {
            lines: vec![format!("event: {name}"), format!("data: {}", data.as_ref())],
        }
    }

    /// `: <text>`, a comment line that SSE parsers must ignore.
    pub(crate) fn comment(text: &str) -> SseEvent {
        SseEvent {
            lines: vec![format!(": {text}")],
        }
    }

    /// The bytes: lines joined by `nl`, then `nl` and the blank line unless `terminated` is false.
    pub(crate) fn to_bytes(&self, nl: &str, terminated: bool) -> Vec<u8> {
        let mut out = self.lines.join(nl);
        if terminated {
            out.push_str(nl);
            out.push_str(nl);
        }
        out.into_bytes()
    }
}

/// One step of writing a stream body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// Body bytes (one HTTP chunk, or cut into pieces by split_every).
    Data(Vec<u8>),
    /// A pause, during which the server still watches for the client going away.
    Pause(Duration),
}

/// How a stream body ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The terminal zero-length chunk; the connection may be reused.
    Complete,
    /// The connection is closed without the terminal chunk.
    Cut,
    /// Nothing more is sent until the client goes away.
    Stall,
}

/// Everything the writer needs for one streamed body.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub(crate) ops: Vec<Op>,
    pub(crate) ending: Ending,
    /// Write the bytes between pauses in HTTP chunks of at most this many bytes.
    pub(crate) split_every: Option<usize>,
}

impl Plan {
    /// A raw body: each chunk written verbatim after its delay.
    pub(crate) fn raw(chunks: Vec<(Duration, Vec<u8>)>) -> Plan {
        let mut ops = Vec::new();
        for (delay, bytes) in chunks {
            if !delay.is_zero() {
                ops.push(Op::Pause(delay));
            }
            ops.push(Op::Data(bytes));
        }
        Plan {
            ops,
            ending: Ending::Complete,
            split_every: None,
        }
    }

    /// Applies the fault and the framing options to a protocol's rendered events.
    pub(crate) fn stream(
        protocol: Protocol,
        mut events: Vec<SseEvent>,
        options: &StreamOptions,
        fault: Option<&StreamFault>,
    ) -> Plan {
        let ending = match fault {
            None => Ending::Complete,
            Some(StreamFault::CutAfter(n)) => {
                events.truncate(*n);
                Ending::Cut
            }
            Some(StreamFault::StallAfter(n)) => {
                events.truncate(*n);
                Ending::Stall
            }
            Some(StreamFault::MalformedAfter(n)) => {
                let at = (*n).min(events.len());
                events.insert(at, protocol.malformed_event());
                Ending::Complete
            }
            Some(StreamFault::ErrorEventAfter(n)) => {
                events.truncate(*n);
                events.push(protocol.error_event());
                Ending::Complete
            }
        };
        let nl = if options.crlf { "\r\n" } else { "\n" };
        let ping = options.ping_events && protocol == Protocol::Anthropic;
        let mut ops = Vec::new();
        let count = events.len();
        for (i, event) in events.iter().enumerate() {
            let mut extras = Vec::new();
            if options.keepalive_comments {
                let text = options.keepalive_text.as_deref().unwrap_or("keep-alive");
                extras.push(SseEvent::comment(text).to_bytes(nl, true));
            }
            if ping && i > 0 {
                extras.push(SseEvent::named("ping", r#"{"type": "ping"}"#).to_bytes(nl, true));
            }
            match options.event_delay.filter(|d| i > 0 && !d.is_zero()) {
                Some(delay) if !extras.is_empty() => {
                    let half = delay / 2;
                    ops.push(Op::Pause(half));
                    ops.extend(extras.into_iter().map(Op::Data));
                    ops.push(Op::Pause(delay - half));
                }
                Some(delay) => {
                    ops.push(Op::Pause(delay));
                }
                None => ops.extend(extras.into_iter().map(Op::Data)),
            }
            let last = i + 1 == count;
            ops.push(Op::Data(
                event.to_bytes(nl, !(last && options.no_trailing_newline)),
            ));
        }
        Plan {
            ops,
            ending,
            split_every: options.split_every.map(|n| n.max(1)),
        }
    }
}
