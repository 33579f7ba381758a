//! Approval of MCP calls. A server is code the analyst did not write, so every MCP call asks
//! before it runs, unless the analyst allowed it: for this run (`--allow-tool` patterns), for
//! this conversation, or always for this tool of this server. The server's own hints
//! (`readOnlyHint`, `destructiveHint`) are shown with the question; they never answer it.

/// The analyst's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum Approval {
    /// Run this call.
    Once,
    /// Run this tool's calls in this conversation from now on.
    Conversation,
    /// Run this tool's calls always.
    Always,
    /// Do not run it.
    Deny,
}

/// What the analyst is asked about.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    /// The server.
    pub server: String,
    /// The server's own name for the tool.
    pub tool: String,
    /// The name the model called it by.
    pub offered: String,
    /// The call's arguments, as the model sent them.
    pub arguments: String,
    /// The server says the tool changes nothing.
    pub read_only: Option<bool>,
    /// The server says the tool may destroy data.
    pub destructive: Option<bool>,
}

impl ApprovalRequest {
    /// One line for a prompt: the call, and what the server says about it.
    pub fn describe(&self) -> String {
        let hint = match (self.read_only, self.destructive) {
            (Some(true), _) => " (the server says it only reads)",
            (_, Some(true)) => " (the server says it may destroy data)",
            _ => "",
        };
        let shown: String = self.arguments.chars().take(300).collect();
        format!(
            "MCP server {:?} wants to run {}{hint} with {shown}",
            self.server, self.tool
        )
    }
}

/// Whether `name` matches a `--allow-tool` pattern: exact, or with `*` standing for any run of
/// characters (`mcp__db__*`).
pub fn pattern_matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, rest) = (parts[0], &parts[1..]);
    let Some(mut left) = name.strip_prefix(first) else {
        return false;
    };
    let (last, middle) = match rest.split_last() {
        Some((last, middle)) => (*last, middle),
        None => return true,
    };
    for part in middle {
        match left.find(part) {
            Some(i) => left = &left[i + part.len()..],
            None => return false,
        }
    }
    left.len() >= last.len() && left.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_whole_names_or_with_stars() {
        assert!(pattern_matches("mcp__db__query", "mcp__db__query"));
        assert!(!pattern_matches("mcp__db__query", "mcp__db__query2"));
        assert!(pattern_matches("mcp__db__*", "mcp__db__query"));
        assert!(!pattern_matches("mcp__db__*", "mcp__dbx__query"));
        assert!(pattern_matches("*", "anything"));
        assert!(pattern_matches(
            "mcp__*__read*",
            "mcp__files__read_text_file"
        ));
        assert!(!pattern_matches("mcp__*__read*", "mcp__files__write_file"));
        assert!(pattern_matches("*_file", "mcp__files__write_file"));
        assert!(!pattern_matches("a*a", "a"));
    }
}
