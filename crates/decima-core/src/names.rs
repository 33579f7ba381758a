//! Rules for names users type that later become keys elsewhere (keyring accounts, JSON keys,
//! database lookups), and a safe way to quote untrusted text back in an error.

/// Longest provider name.
pub const MAX_PROVIDER_NAME_CHARS: usize = 64;

/// Longest stretch of untrusted input quoted back in an error message.
pub const MAX_ECHOED_CHARS: usize = 64;

/// Checks a provider name: 1 to 64 characters of `[A-Za-z0-9._-]`, not only dots. The store and
/// the secret store both apply it, so a name valid in one is valid in the other. The error is the
/// reason, for the caller to wrap in its own error type.
pub fn check_provider_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("it is empty");
    }
    if name.chars().count() > MAX_PROVIDER_NAME_CHARS {
        return Err("it is longer than 64 characters");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        return Err("use only letters, digits, '.', '_' and '-'");
    }
    if name.chars().all(|c| c == '.') {
        return Err("it cannot be only dots");
    }
    Ok(())
}

/// A printable, bounded rendering of untrusted input, so a hostile value can neither flood a
/// terminal nor break an error onto several lines.
pub fn echo_untrusted(s: &str) -> String {
    let mut out: String = s
        .chars()
        .take(MAX_ECHOED_CHARS)
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect();
    if s.chars().count() > MAX_ECHOED_CHARS {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_names() {
        for good in ["openai", "ds-2", "local.vllm", "a_b"] {
            assert!(check_provider_name(good).is_ok(), "{good}");
        }
        for bad in ["", "..", "a/b", "a b", "x\n", &"a".repeat(65)] {
            assert!(check_provider_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn echo_is_bounded_and_single_line() {
        assert_eq!(echo_untrusted("a\nb"), "a\u{fffd}b");
        assert_eq!(echo_untrusted(&"x".repeat(100)).chars().count(), 65);
    }
}
