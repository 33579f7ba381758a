//! The options an execution runs under. They are stored with the execution, so a resumed or
//! recovered run keeps the rules it was started with.

use serde::{Deserialize, Serialize};

use super::subagent::SubagentLimits;
use crate::review::{RiskyCalls, TenthManMode};

/// The step budget when none is given: enough for a real task, a stop for a runaway loop.
pub const DEFAULT_MAX_STEPS: u32 = 50;
/// The same failing call this many times in a row is a stuck loop.
pub const DEFAULT_STUCK_AFTER: u32 = 3;

/// How an execution runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunOptions {
    /// Model calls this execution may make before the failure path stops it.
    pub max_steps: u32,
    /// Compress the history when every todo of a phase is completed.
    pub phase_compression: bool,
    /// Snapshot and compress when a checkpoint todo completes.
    pub checkpoint_compression: bool,
    /// Identical failing calls in a row that count as a stuck loop (at least 2).
    pub stuck_after: u32,
    /// The provider it was started with, by name; resume and recover use it again unless told
    /// otherwise.
    pub provider: Option<String>,
    /// Whether checkpoints snapshot the workspace. Subagents share their parent's workspace
    /// (and may run side by side), so theirs do not: a child's rollback would undo its
    /// siblings' work. A child's checkpoints restore its plan and history only; the parent's
    /// snapshot covers the workspace.
    pub workspace_snapshots: bool,
    /// How far its tree of subagents may grow.
    pub subagents: SubagentLimits,
    /// Where the tenth man runs: the tool, the final review, both, or neither.
    pub tenth_man: TenthManMode,
    /// The reviewer's provider by name; else the conversation's reviewer, else this run's.
    pub reviewer_provider: Option<String>,
    /// Whether risky calls get a quick review before they run, and which are risky.
    pub risky_calls: RiskyCalls,
    /// Tools approved for this run by name or pattern (`mcp__db__*`): MCP calls that match
    /// run without asking.
    pub allow_tools: Vec<String>,
    /// A quick chat: the model answers the message as a chat would, with no tools offered (no
    /// plan, subagents, MCP servers or tenth man), so a question does not become a long run
    /// with a final review.
    pub quick: bool,
    /// Whether the final answer's figures are matched against the tool outputs before the run
    /// ends, an unlinked one going to the analyst as a failure.
    pub check_figures: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            max_steps: DEFAULT_MAX_STEPS,
            phase_compression: true,
            checkpoint_compression: true,
            stuck_after: DEFAULT_STUCK_AFTER,
            provider: None,
            workspace_snapshots: true,
            subagents: SubagentLimits::default(),
            tenth_man: TenthManMode::default(),
            reviewer_provider: None,
            risky_calls: RiskyCalls::default(),
            allow_tools: Vec::new(),
            quick: false,
            check_figures: true,
        }
    }
}

impl RunOptions {
    /// The options stored with an execution; unknown or missing fields take their defaults, so
    /// executions written by older versions still resume.
    pub fn from_stored(value: &serde_json::Value) -> Self {
        serde_json::from_value(value.clone()).unwrap_or_default()
    }

    /// The JSON stored with the execution.
    pub fn to_stored(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_else(|_| serde_json::json!({}))
    }
}
