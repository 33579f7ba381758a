//! The names MCP tools are offered under. Providers accept tool names of `[A-Za-z0-9_-]`, up
//! to 64 characters, and a server's own names may hold anything, so a tool is offered as
//! `mcp__<server>__<tool>`, cleaned and cut, with a hash of the real pair where it was cut or
//! where two tools would clean to one name. A call is mapped back through the table that
//! made the names, never by splitting on the prefix.

use std::collections::BTreeMap;

use sha2::{Digest as _, Sha256};

/// The prefix of every MCP tool's name.
pub const PREFIX: &str = "mcp__";
/// The longest tool name providers accept.
pub const MAX_TOOL_NAME: usize = 64;
/// Hex digits of the hash suffix.
const HASH_DIGITS: usize = 8;

/// Offered name → (server, the server's own tool name).
#[derive(Debug, Clone, Default)]
pub struct ToolTable {
    by_offered: BTreeMap<String, (String, String)>,
}

impl ToolTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a server's tool and returns the name it is offered under: the plain name when it
    /// fits and is free, else one with a hash of the pair. Adding the same pair again returns
    /// the name it already has.
    pub fn insert(&mut self, server: &str, tool: &str) -> String {
        if let Some(name) = self.name_of(server, tool) {
            return name;
        }
        let plain = format!("{PREFIX}{}__{}", clean(server), clean(tool));
        let name = if plain.len() <= MAX_TOOL_NAME && !self.by_offered.contains_key(&plain) {
            plain
        } else {
            hashed(&plain, server, tool)
        };
        self.by_offered
            .insert(name.clone(), (server.to_owned(), tool.to_owned()));
        name
    }

    /// The (server, tool) an offered name stands for.
    pub fn resolve(&self, offered: &str) -> Option<(&str, &str)> {
        self.by_offered
            .get(offered)
            .map(|(s, t)| (s.as_str(), t.as_str()))
    }

    /// The offered name of a pair already in the table.
    pub fn name_of(&self, server: &str, tool: &str) -> Option<String> {
        self.by_offered
            .iter()
            .find(|(_, (s, t))| s == server && t == tool)
            .map(|(n, _)| n.clone())
    }

    /// Every offered name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_offered.keys().map(String::as_str)
    }
}

/// Whether a tool name is an MCP tool's, by its prefix: for display only (a card's label);
/// calls are resolved through a [`ToolTable`].
pub fn is_mcp_name(name: &str) -> bool {
    name.starts_with(PREFIX)
}

/// Every character outside `[A-Za-z0-9_-]` becomes '_'.
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `plain` cut so that `_` and the pair's hash fit in [`MAX_TOOL_NAME`].
fn hashed(plain: &str, server: &str, tool: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(server.as_bytes());
    hasher.update([0]);
    hasher.update(tool.as_bytes());
    let digest = hasher.finalize();
    let hex: String = digest
        .iter()
        .take(HASH_DIGITS / 2)
        .map(|b| format!("{b:02x}"))
        .collect();
    // `plain` is ASCII after cleaning, so any byte index is a boundary.
    let keep = plain.len().min(MAX_TOOL_NAME - HASH_DIGITS - 1);
    format!("{}_{hex}", &plain[..keep])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        name.len() <= MAX_TOOL_NAME
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    #[test]
    fn a_short_name_is_offered_as_is_and_maps_back() {
        let mut t = ToolTable::new();
        let n = t.insert("everything", "get-sum");
        assert_eq!(n, "mcp__everything__get-sum");
        assert_eq!(t.resolve(&n), Some(("everything", "get-sum")));
        assert_eq!(t.insert("everything", "get-sum"), n, "same pair, same name");
    }

    #[test]
    fn long_and_odd_names_are_cut_with_a_hash_and_stay_distinct() {
        let mut t = ToolTable::new();
        let long_tool = "x".repeat(80);
        let a = t.insert("db", &long_tool);
        let b = t.insert("db", &format!("{long_tool}y"));
        assert!(valid(&a) && valid(&b), "{a} {b}");
        assert_ne!(a, b);
        assert_eq!(
            t.resolve(&b),
            Some(("db", format!("{long_tool}y").as_str()))
        );
        let dotted = t.insert("db", "query.run");
        let underscored = t.insert("db", "query_run");
        assert!(valid(&dotted) && valid(&underscored));
        assert_ne!(dotted, underscored, "two tools that clean to one name");
        assert_eq!(t.resolve(&dotted), Some(("db", "query.run")));
        assert_eq!(t.resolve(&underscored), Some(("db", "query_run")));
        let unicode = t.insert("db", "查询");
        assert!(valid(&unicode), "{unicode}");
    }

    #[test]
    fn a_name_that_only_looks_like_a_pair_does_not_resolve() {
        let mut t = ToolTable::new();
        t.insert("a", "b__c");
        assert_eq!(t.resolve("mcp__a__b__c"), Some(("a", "b__c")));
        assert_eq!(t.resolve("mcp__a_b__c"), None);
        assert_eq!(t.resolve("mcp__a__b"), None);
    }
}
