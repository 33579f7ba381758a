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

/// Replaces `{{char}}` and `{{user}}` (any case) in `text`. One linear pass; substituted values
/// are not expanded again, so a name containing `{{user}}` cannot loop.
pub fn substitute(text: &str, values: MacroValues<'_>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find("}}") {
            Some(end) => {
                let name = after[..end].trim();
                if name.eq_ignore_ascii_case("char") {
                    out.push_str(values.char_name);
                    rest = &after[end + 2..];
                } else if name.eq_ignore_ascii_case("user") {
                    out.push_str(values.user_name);
                    rest = &after[end + 2..];
                } else {
                    // Unknown: keep the opening braces and rescan after them, so `{{x{{user}}`
                    // still expands the inner macro.
                    out.push_str("{{");
                    rest = after;
                }
            }
            None => {
                out.push_str(&rest[start..]);
                return out;
            }
        }
    }
    out.push_str(rest);
    out
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
    fn does_not_expand_substituted_values() {
        let v = MacroValues {
            char_name: "{{user}}",
            user_name: "Bob",
        };
        assert_eq!(substitute("{{char}}", v), "{{user}}");
    }
}
