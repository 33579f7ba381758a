//! Typed ids. Each wraps a UUIDv7, so ids sort by creation time and a conversation id can never be
//! passed where a message id is expected.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::CoreError;

macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident, $kind:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[cfg_attr(feature = "specta", derive(specta::Type))]
        #[serde(transparent)]
        pub struct $name(#[cfg_attr(feature = "specta", specta(type = String))] Uuid);

        impl $name {
            /// A fresh, time-ordered id.
            pub fn new() -> Self {
                Self(Uuid::now_v7())
            }

            /// The underlying UUID, for storage layers.
            pub fn as_uuid(&self) -> Uuid {
                self.0
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl From<Uuid> for $name {
            fn from(value: Uuid) -> Self {
                Self(value)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.as_hyphenated().fmt(f)
            }
        }

        impl FromStr for $name {
            type Err = CoreError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                parse_uuid(s, $kind).map(Self)
            }
        }
    };
}

typed_id!(
    /// Identifies a conversation: the unit a user sees in the sidebar.
    ConversationId,
    "conversation"
);
typed_id!(
    /// Identifies one stored message.
    MessageId,
    "message"
);
typed_id!(
    /// Identifies one agent run (an execution), including subagent runs.
    ExecutionId,
    "execution"
);

/// Accepts only the canonical hyphenated form, so that ids round-trip byte for byte through
/// files and URLs, and anything else (paths, SQL, control characters) is refused.
fn parse_uuid(s: &str, kind: &'static str) -> Result<Uuid, CoreError> {
    let reject = || CoreError::InvalidId {
        kind,
        value: crate::names::echo_untrusted(s),
    };
    if s.len() != 36 {
        return Err(reject());
    }
    Uuid::try_parse(s).map_err(|_| reject())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_text() {
        let id = ConversationId::new();
        let parsed: ConversationId = id.to_string().parse().unwrap();
        assert_eq!(id, parsed);
    }

    #[test]
    fn rejects_hostile_ids_with_a_readable_error() {
        for bad in [
            "",
            "../../etc/passwd",
            "1; DROP TABLE conversations",
            "0190f3e27c1a7d3e9a4b1c2d3e4f5a6b",
            "{0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a6b}",
            "0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a6\n",
        ] {
            let err = bad.parse::<ConversationId>().unwrap_err();
            let text = err.to_string();
            assert!(text.contains("not a valid conversation id"), "{text}");
            assert!(
                !text.contains('\n'),
                "error must stay on one line: {text:?}"
            );
        }
    }

    #[test]
    fn echo_is_bounded() {
        let long = "x".repeat(10_000);
        let err = long.parse::<MessageId>().unwrap_err().to_string();
        assert!(err.len() < 300, "{}", err.len());
    }
}
