//! Stuck loops: the same call, with the same arguments and the same result, several times in a
//! row with nothing else in between. Whether the call failed does not matter: a model that
//! reads the same file again and again, or sends the same plan again, is going nowhere just as
//! surely as one that repeats a failing command.

use std::hash::{DefaultHasher, Hash as _, Hasher as _};

/// Counts identical calls with identical results in a row.
#[derive(Debug, Default)]
pub struct StuckDetector {
    /// The last call's fingerprint. A 64-bit hash is enough: it is compared with one call
    /// only, and a collision costs one false streak step, never a wrong result.
    last: Option<u64>,
    repeats: u32,
}

/// What a call came back with, as far as repeating it is concerned.
#[derive(Debug, Clone, Copy)]
pub struct Observed<'a> {
    /// The tool.
    pub name: &'a str,
    /// Its arguments as the model wrote them.
    pub arguments: &'a str,
    /// The text the model got back.
    pub result: &'a str,
    /// Its exit code, where it has one.
    pub exit_code: Option<i32>,
    /// Whether it failed.
    pub failed: bool,
}

impl StuckDetector {
    /// Notes a call and its result; returns how many times in a row this same call has now
    /// come back the same way. Any other call, or another result, starts a new streak.
    pub fn observe(&mut self, call: Observed<'_>) -> u32 {
        let key = key_of(&call);
        if self.last == Some(key) {
            self.repeats += 1;
        } else {
            self.last = Some(key);
            self.repeats = 1;
        }
        self.repeats
    }

    /// Forgets the streak (after a recovery choice, or when a todo starts).
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

fn key_of(call: &Observed<'_>) -> u64 {
    let mut hasher = DefaultHasher::new();
    // `str`'s Hash ends each string with a marker, so the parts cannot run into each other.
    call.name.hash(&mut hasher);
    normalise(call.arguments).hash(&mut hasher);
    call.result.hash(&mut hasher);
    call.exit_code.hash(&mut hasher);
    call.failed.hash(&mut hasher);
    hasher.finish()
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

    fn call<'a>(arguments: &'a str, result: &'a str, failed: bool) -> Observed<'a> {
        Observed {
            name: "shell",
            arguments,
            result,
            exit_code: Some(i32::from(failed)),
            failed,
        }
    }

    #[test]
    fn the_same_call_and_result_counts_up_whether_it_failed_or_not() {
        let mut d = StuckDetector::default();
        assert_eq!(d.observe(call(r#"{"command":"cat x"}"#, "no x", true)), 1);
        assert_eq!(
            d.observe(call(r#"{ "command": "cat x" }"#, "no x", true)),
            2
        );
        assert_eq!(d.observe(call(r#"{"command":"cat x"}"#, "no x", true)), 3);
        // A successful call repeated with the same output is just as stuck.
        assert_eq!(d.observe(call(r#"{"command":"wc -l a"}"#, "3 a", false)), 1);
        assert_eq!(d.observe(call(r#"{"command":"wc -l a"}"#, "3 a", false)), 2);
        assert_eq!(d.observe(call(r#"{"command":"wc -l a"}"#, "3 a", false)), 3);
    }

    #[test]
    fn another_result_or_another_call_in_between_starts_over() {
        let mut d = StuckDetector::default();
        assert_eq!(
            d.observe(call(r#"{"command":"poll"}"#, "running", false)),
            1
        );
        assert_eq!(
            d.observe(call(r#"{"command":"poll"}"#, "running", false)),
            2
        );
        // The world changed: the same call now says something else.
        assert_eq!(d.observe(call(r#"{"command":"poll"}"#, "done", false)), 1);
        assert_eq!(d.observe(call(r#"{"command":"ls"}"#, "a b", false)), 1);
        assert_eq!(d.observe(call(r#"{"command":"poll"}"#, "done", false)), 1);
        d.reset();
        assert_eq!(d.observe(call(r#"{"command":"poll"}"#, "done", false)), 1);
    }
}
