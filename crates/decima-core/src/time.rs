//! Wall-clock instants as stored: integer milliseconds since the Unix epoch, UTC.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Milliseconds since the Unix epoch. Integers sort and compare cheaply in SQLite; RFC 3339 text is
/// produced only at the edges, for people and exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// The current instant. The only impure helper in the core: callers that need determinism pass
    /// their own timestamps instead.
    pub fn now() -> Self {
        let nanos = OffsetDateTime::now_utc().unix_timestamp_nanos();
        Self(i64::try_from(nanos / 1_000_000).unwrap_or(i64::MAX))
    }

    /// RFC 3339 with millisecond precision, e.g. `2026-11-22T04:45:12.123Z`.
    pub fn to_rfc3339(self) -> String {
        let nanos = i128::from(self.0) * 1_000_000;
        OffsetDateTime::from_unix_timestamp_nanos(nanos)
            .ok()
            .and_then(|t| t.format(&Rfc3339).ok())
            .unwrap_or_else(|| format!("@{}ms", self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_milliseconds() {
        assert_eq!(Timestamp(0).to_rfc3339(), "1970-01-01T00:00:00Z");
        assert_eq!(
            Timestamp(1_795_000_000_123).to_rfc3339(),
            "2026-11-18T11:06:40.123Z"
        );
    }

    #[test]
    fn out_of_range_does_not_panic() {
        assert_eq!(Timestamp(i64::MAX).to_rfc3339(), format!("@{}ms", i64::MAX));
    }
}
