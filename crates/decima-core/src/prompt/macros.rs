//! `{{char}}` and `{{user}}` substitution, as SillyTavern does it: case-insensitive, spaces inside
//! the braces allowed, unknown macros left untouched so other tools can still expand them.

/// Names the macros stand for.
#[derive(Debug, Clone, Copy, Default)]
pub struct MacroValues<'a> {
    /// What `{{char}}` becomes.
    pub char_name: &'a str,
    /// What `{{user}}` becomes.
    pub user_name: &'a str,
}

/// Replaces `{{char}}` and `{{user}}` (any case, spaces inside the braces allowed) in `text`.
/// Linear in the length of `text`: at each `{{` only the next few characters are looked at
/// (a name, then `}}`), never the rest of the text, so hostile card fields such as megabytes of
/// `{{` cannot stall assembly. Substituted values are not expanded again, so a name containing
/// `{{user}}` cannot loop. Unknown macros are left as they are.
pub fn substitute(text: &str, values: MacroValues<'_>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match macro_at(after) {
            Some((name, len)) => {
                out.push_str(match name {
                    Macro::Char => values.char_name,
                    Macro::User => values.user_name,
                });
                rest = &after[len..];
            }
            None => {
                // Not a known macro: keep the opening braces and rescan after them, so
                // `{{x{{user}}` still expands the inner macro.
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

enum Macro {
    Char,
    User,
}

/// The longest name a known macro has; a longer name cannot match, so scanning stops there.
const MAX_NAME: usize = 4;

/// Matches `\s*(char|user)\s*}}` at the start of `s`, returning the macro and the bytes it
/// takes. Whitespace runs are walked once per `{{` that precedes them directly, so the total
/// work stays linear.
fn macro_at(s: &str) -> Option<(Macro, usize)> {
    let trimmed = s.trim_start();
    let name_len = trimmed
        .char_indices()
        .take(MAX_NAME + 1)
        .find(|&(_, c)| c.is_whitespace() || c == '}' || c == '{')
        .map_or(trimmed.len().min(MAX_NAME + 1), |(i, _)| i);
    let name = trimmed.get(..name_len)?;
    let kind = if name.eq_ignore_ascii_case("char") {
        Macro::Char
    } else if name.eq_ignore_ascii_case("user") {
        Macro::User
    } else {
        return None;
    };
    let tail = &trimmed[name_len..];
    let close = tail.trim_start().strip_prefix("}}")?;
    Some((kind, s.len() - close.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: MacroValues<'static> = MacroValues {
        char_name: "Ada",
        user_name: "Bob",
    };

    #[test]
    fn substitutes_case_insensitively() {
        assert_eq!(
            substitute("{{char}} greets {{USER}}; {{ Char }}!", V),
            "Ada greets Bob; Ada!"
        );
    }

    #[test]
    fn leaves_unknown_and_unclosed_macros() {
        assert_eq!(substitute("{{random}} {{user}}", V), "{{random}} Bob");
        assert_eq!(substitute("{{x{{user}}", V), "{{xBob");
        assert_eq!(substitute("tail {{user", V), "tail {{user");
        assert_eq!(substitute("", V), "");
        assert_eq!(substitute("é{{char}}é", V), "éAdaé");
    }

    #[test]
    fn odd_spacing_and_unicode() {
        assert_eq!(substitute("{{\n user\t}}", V), "Bob");
        assert_eq!(
            substitute("{{users}} {{use}} {{user}", V),
            "{{users}} {{use}} {{user}"
        );
        assert_eq!(substitute("{{char}}}", V), "Ada}");
        assert_eq!(substitute("{{{{user}}}}", V), "{{Bob}}");
        assert_eq!(substitute("{{ é }}{{cha", V), "{{ é }}{{cha");
    }

    /// Defect c: a field of braces made substitution quadratic and hung assembly.
    #[test]
    fn hostile_braces_are_linear() {
        let size = 4 * 1024 * 1024;
        let inputs = [
            "{{".repeat(size / 2),
            format!("{}}}}}", "{{".repeat(size / 2)),
            format!("{}}}}}", "{".repeat(size)),
            format!("{}x}}}}", "{{ ".repeat(size / 3)),
            "{{u".repeat(size / 3),
        ];
        for input in inputs {
            let (tx, rx) = std::sync::mpsc::channel();
            let handle = std::thread::spawn(move || {
                let started = std::time::Instant::now();
                let out = substitute(&input, V);
                let _ = tx.send((out.len(), input.len(), started.elapsed()));
            });
            let (out, len, took) = rx
                .recv_timeout(std::time::Duration::from_secs(20))
                .expect("substitution must not hang");
            handle.join().unwrap();
            assert_eq!(out, len, "unknown macros are left as they are");
            assert!(took < std::time::Duration::from_secs(4), "{took:?}");
        }
    }

    #[test]
    fn does_not_expand_substituted_values() {
        let v = MacroValues {
            char_name: "{{user}}",
            user_name: "Bob",
        };
        assert_eq!(substitute("{{char}}", v), "{{user}}");
    }
}
