//! `search_tools`: when the MCP servers' schemas would take more than a tenth of the window,
//! their tools are not all offered at once. The model gets one `search_tools` tool instead; a
//! search lists the matching tools and adds their schemas to the tools of every later request
//! (the tools change once, so a prompt cache misses once). A tool can be called by name before
//! it was found: the registry knows every tool.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;

use decima_llm::ToolSpec;
use serde_json::json;

use super::*;

/// The tool's name.
pub(crate) const SEARCH_TOOLS: &str = "search_tools";
/// Share of the window the MCP tools' schemas may take before they are offered by search.
pub(crate) const DIRECT_SHARE: f64 = 0.10;
/// Tools a search returns at most.
const MAX_FOUND: usize = 8;
/// Names listed when nothing matched.
const MAX_LISTED: usize = 100;

/// The `search_tools` tool as offered.
pub(crate) fn search_tools_spec(servers: &[String]) -> ToolSpec {
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

/// The tools held back for search, and those a search has added.
#[derive(Default)]
pub(crate) struct Deferred {
    /// Every MCP tool not offered directly.
    pub(crate) held: Vec<ToolSpec>,
    /// The names of those a search has added, in the order found.
    pub(crate) loaded: std::sync::Mutex<Vec<String>>,
    /// The tokens the added tools' schemas take, for the request's estimate.
    pub(crate) loaded_tokens: std::sync::atomic::AtomicU32,
}

/// The tools of `held` that `query` finds, best first: each query word found in a tool's name or
/// description counts once.
pub(crate) fn rank<'a>(held: &'a [ToolSpec], query: &str) -> Vec<&'a ToolSpec> {
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

impl Runner<'_, '_> {
    /// The tools of the next request: those offered from the start, then those searches added.
    pub(super) fn offered_tools(&self) -> Vec<ToolSpec> {
        let loaded = self
            .deferred
            .loaded
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default();
        if loaded.is_empty() {
            return self.tools.clone();
        }
        let mut tools = self.tools.clone();
        tools.extend(
            self.deferred
                .held
                .iter()
                .filter(|s| loaded.contains(&s.name))
                .cloned(),
        );
        tools
    }

    /// The tokens of the schemas searches added since the request's base was counted.
    pub(super) fn loaded_tokens(&self) -> u32 {
        self.deferred.loaded_tokens.load(Ordering::Relaxed)
    }

    /// Answers a `search_tools` call and adds what it found to the next requests' tools.
    pub(super) fn search_tools(&self, call: &ToolCall) -> ToolOutcome {
        let started = Instant::now();
        let query = serde_json::from_str::<serde_json::Value>(&call.arguments)
            .ok()
            .and_then(|v| v.get("query").and_then(|q| q.as_str()).map(str::to_owned));
        let Some(query) = query.filter(|q| !q.trim().is_empty()) else {
            return ToolOutcome::failed(
                FailureClass::Data,
                "search_tools takes {\"query\": \"words for what the tool should do\"}",
                started.elapsed(),
            );
        };
        let found = rank(&self.deferred.held, &query);
        if found.is_empty() {
            let names: Vec<&str> = self
                .deferred
                .held
                .iter()
                .take(MAX_LISTED)
                .map(|s| s.name.as_str())
                .collect();
            return ToolOutcome::ok(
                format!(
                    "no tool matched {query:?}. The tools are: {}{}",
                    names.join(", "),
                    if self.deferred.held.len() > MAX_LISTED {
                        ", …"
                    } else {
                        ""
                    }
                ),
                started.elapsed(),
            );
        }
        let mut text = String::from("Found (now in your tools; call them by name):\n");
        let mut added = 0u32;
        if let Ok(mut loaded) = self.deferred.loaded.lock() {
            for spec in &found {
                text.push_str(&format!("- {}: {}\n", spec.name, spec.description));
                if !loaded.contains(&spec.name) {
                    loaded.push(spec.name.clone());
                    added = added.saturating_add(
                        self.model_memo
                            .counter()
                            .count_text(&serde_json::to_string(spec).unwrap_or_default()),
                    );
                }
            }
        }
        self.deferred
            .loaded_tokens
            .fetch_add(added, Ordering::Relaxed);
        ToolOutcome::ok(text.trim_end().to_owned(), started.elapsed())
    }
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
