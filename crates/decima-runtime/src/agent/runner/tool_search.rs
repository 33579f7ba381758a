//! `search_tools` inside a run (see [`crate::mcp::search`]): the tools held back, and a
//! search adding what it found to the tools of every later request (the tools change once, so
//! a prompt cache misses once). A tool can be called by name before it was found: the registry
//! knows every tool.

use super::Runner;
use crate::tools::ToolOutcome;
use decima_core::FailureClass;
use std::sync::Arc;
use std::time::Instant;

use decima_llm::ToolSpec;
use decima_sandbox::host::BoxFuture;

use crate::mcp::search::{MAX_LISTED, rank};
use crate::tools::{AgentTool, ToolCallContext};

/// The tools held back for search, and those a search has added.
#[derive(Default)]
pub(crate) struct Deferred {
    /// Every MCP tool not offered directly.
    pub(crate) held: Vec<ToolSpec>,
    /// The servers they come from, for the search tool's description.
    pub(crate) servers: Vec<String>,
    /// The names of those a search has added, in the order found.
    pub(crate) loaded: std::sync::Mutex<Vec<String>>,
}

/// `search_tools` in the registry: finds held tools and adds them to the next requests.
pub(crate) struct SearchTool(pub(crate) Arc<Deferred>);

impl AgentTool for SearchTool {
    fn spec(&self) -> ToolSpec {
        crate::mcp::search::search_tools_spec(&self.0.servers)
    }

    fn call<'a>(&'a self, call: ToolCallContext<'a>) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move { self.search(call.arguments) })
    }
}

impl SearchTool {
    /// Answers a search and adds what it found to the next requests' tools.
    fn search(&self, arguments: &serde_json::Value) -> ToolOutcome {
        let started = Instant::now();
        let deferred = &self.0;
        let query = arguments
            .get("query")
            .and_then(|q| q.as_str())
            .map(str::to_owned);
        let Some(query) = query.filter(|q| !q.trim().is_empty()) else {
            return ToolOutcome::failed(
                FailureClass::Data,
                "search_tools takes {\"query\": \"words for what the tool should do\"}",
                started.elapsed(),
            );
        };
        let found = rank(&deferred.held, &query);
        if found.is_empty() {
            let names: Vec<&str> = deferred
                .held
                .iter()
                .take(MAX_LISTED)
                .map(|s| s.name.as_str())
                .collect();
            return ToolOutcome::ok(
                format!(
                    "no tool matched {query:?}. The tools are: {}{}",
                    names.join(", "),
                    if deferred.held.len() > MAX_LISTED {
                        ", …"
                    } else {
                        ""
                    }
                ),
                started.elapsed(),
            );
        }
        let mut text = String::from("Found (now in your tools; call them by name):\n");
        if let Ok(mut loaded) = deferred.loaded.lock() {
            for spec in &found {
                text.push_str(&format!("- {}: {}\n", spec.name, spec.description));
                if !loaded.contains(&spec.name) {
                    loaded.push(spec.name.clone());
                }
            }
        }
        ToolOutcome::ok(text.trim_end().to_owned(), started.elapsed())
    }
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
        let loaded = self
            .deferred
            .loaded
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default();
        self.deferred
            .held
            .iter()
            .filter(|s| loaded.contains(&s.name))
            .map(|s| {
                self.counting
                    .model_memo
                    .counter()
                    .count_text(&serde_json::to_string(s).unwrap_or_default())
            })
            .sum()
    }
}
