//! Offering MCP tools by search: when the servers' schemas would take more than a tenth of the
//! window, the model gets one `search_tools` tool instead of every schema, and a search finds
//! tools by the words of what they do.

use std::collections::BTreeSet;

use decima_llm::ToolSpec;
use serde_json::json;

/// The tool's name.
pub const SEARCH_TOOLS: &str = "search_tools";
/// Share of the window the MCP tools' schemas may take before they are offered by search.
pub const DIRECT_SHARE: f64 = 0.10;
/// Tools a search returns at most.
const MAX_FOUND: usize = 8;
/// Names listed when nothing matched.
pub const MAX_LISTED: usize = 100;

/// The `search_tools` tool as offered.
pub fn search_tools_spec(servers: &[String]) -> ToolSpec {
    ToolSpec {
        name: SEARCH_TOOLS.to_owned(),
        description: format!(
            "Find tools of the analyst's MCP servers ({}) by what they do. The tools found are \
             added to your tools from the next step on; call them by name.",
            servers.join(", ")
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words for what the tool should do, e.g. \"query postgres\""}
            },
            "required": ["query"]
        }),
    }
}

/// The tools of `held` that `query` finds, best first: each query word found in a tool's name or
/// description counts once.
pub fn rank<'a>(held: &'a [ToolSpec], query: &str) -> Vec<&'a ToolSpec> {
    let words: BTreeSet<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 2)
        .map(str::to_lowercase)
        .collect();
    let mut scored: Vec<(usize, &ToolSpec)> = held
        .iter()
        .map(|spec| {
            let hay = format!("{} {}", spec.name, spec.description).to_lowercase();
            (
                words.iter().filter(|w| hay.contains(w.as_str())).count(),
                spec,
            )
        })
        .filter(|(score, _)| *score > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
    scored
        .into_iter()
        .take(MAX_FOUND)
        .map(|(_, spec)| spec)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, description: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters: json!({"type": "object"}),
        }
    }

    #[test]
    fn the_best_matches_come_first_and_nothing_unrelated() {
        let held = vec![
            spec("mcp__db__query", "Run a read-only SQL query on postgres"),
            spec(
                "mcp__db__schema",
                "List the tables of the postgres database",
            ),
            spec("mcp__tickets__create", "Open a ticket"),
        ];
        let found: Vec<&str> = rank(&held, "postgres SQL query")
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(found, ["mcp__db__query", "mcp__db__schema"]);
        assert!(rank(&held, "weather").is_empty());
        assert!(rank(&held, "a").is_empty(), "one letter finds nothing");
    }
}
