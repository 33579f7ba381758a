//! Stuck loops: the same failing call, with the same arguments, several times in a row.

/// Counts identical failing calls in a row.
#[derive(Debug, Default)]
pub struct StuckDetector {
    last: Option<(String, String)>,
    repeats: u32,
}

impl StuckDetector {
    /// Notes a call's result; returns how many times in a row this same call has now failed.
    pub fn observe(&mut self, name: &str, arguments: &str, failed: bool) -> u32 {
        if !failed {
            self.last = None;
            self.repeats = 0;
            return 0;
        }
        let key = (name.to_owned(), normalise(arguments));
        if self.last.as_ref() == Some(&key) {
            self.repeats += 1;
        } else {
            self.last = Some(key);
            self.repeats = 1;
        }
        self.repeats
    }

    /// Forgets the streak (after a recovery choice).
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

/// Arguments compared as JSON values when they parse, so `{"a":1}` and `{ "a": 1 }` match.
fn normalise(arguments: &str) -> String {
    serde_json::from_str::<serde_json::Value>(arguments)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| arguments.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_identical_failures_in_a_row_count_three_and_success_resets() {
        let mut d = StuckDetector::default();
        assert_eq!(d.observe("shell", r#"{"command":"cat x"}"#, true), 1);
        assert_eq!(d.observe("shell", r#"{ "command": "cat x" }"#, true), 2);
        assert_eq!(d.observe("shell", r#"{"command":"cat x"}"#, true), 3);
        assert_eq!(d.observe("shell", r#"{"command":"cat y"}"#, true), 1);
        assert_eq!(d.observe("shell", r#"{"command":"cat y"}"#, false), 0);
        assert_eq!(d.observe("shell", r#"{"command":"cat y"}"#, true), 1);
    }
}
