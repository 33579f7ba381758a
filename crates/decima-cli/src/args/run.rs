//! The arguments of the commands that run, review, recover and compress.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

/// `decima run`: what the agent is asked and the rules it runs under.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Work in this conversation (its history is sent); by default a new one is created.
    #[arg(long, value_name = "ID")]
    pub conversation: Option<String>,
    /// The provider to use; defaults to the only one configured, or to the DECIMA_* variables
    /// when none is.
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,
    /// The directory the tools work in; by default a folder per conversation in the data
    /// directory.
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Model calls the execution may make before it stops as a failure.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_steps: Option<u32>,
    /// What happens when a todo fails: ask on the terminal, or stop and wait for
    /// `decima recover` (exit code 6). Defaults to ask when stdin is a terminal, else stop.
    #[arg(long, value_enum, value_name = "WHAT")]
    pub on_failure: Option<OnFailureArg>,
    /// Do not compress the history when every todo of a phase is completed.
    #[arg(long)]
    pub no_phase_compression: bool,
    /// Do not snapshot and compress when a checkpoint todo completes.
    #[arg(long)]
    pub no_checkpoint_compression: bool,
    /// Where the tools run: on this machine, in the workspace, or in a Docker container (one
    /// per conversation, no network, non-root, read-only root filesystem).
    #[arg(long, value_enum, value_name = "WHERE", default_value = "host")]
    pub sandbox: SandboxArg,
    /// The deepest a subagent may be (the run itself is depth 0).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub subagent_depth: u32,
    /// Subagents one execution may spawn.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub subagent_children: u32,
    /// Subagents of this run that may run at once.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub subagent_running: u32,
    /// Where the tenth man (an adversarial reviewer) runs: as a tool the agent can call, as a
    /// final review of the answer, both (hybrid), or not at all. Unset: the provider's default
    /// (`provider tenth-man`), else hybrid.
    #[arg(long, value_enum, value_name = "MODE")]
    pub tenth_man: Option<TenthManArg>,
    /// A quick chat: the model answers with no tools, plan or review.
    #[arg(long)]
    pub quick: bool,
    /// Whether the answer's figures are matched against the tool outputs before the run ends;
    /// figures no output holds stop it as an `unlinked` failure for the analyst to settle.
    #[arg(long, value_enum, value_name = "ON_OFF", default_value = "on")]
    pub figures: OnOff,
    /// The provider that reviews; defaults to the conversation's reviewer, else the agent's.
    #[arg(long, value_name = "NAME")]
    pub reviewer_provider: Option<String>,
    /// Review each risky call (deleting, overwriting, network) quickly before it runs; a high
    /// or critical review holds the call once.
    #[arg(long)]
    pub review_risky: bool,
    /// Approve MCP tools for this run by name or pattern (`mcp__db__*`); repeatable. Other
    /// MCP calls ask on the terminal, or are refused when there is none.
    #[arg(long, value_name = "PATTERN")]
    pub allow_tool: Vec<String>,
    /// Print one JSON event per line on stdout instead of the answer.
    #[arg(long)]
    pub json: bool,
    /// The task.
    pub task: String,
}

/// `--tenth-man`: where the reviewer runs during a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum TenthManArg {
    /// Never.
    Off,
    /// Only when the agent calls tenth_man_review.
    ToolOnly,
    /// Only the final review (and risky-call reviews with --review-risky).
    SystemOnly,
    /// The tool and the final review.
    Hybrid,
}

impl From<TenthManArg> for decima_runtime::review::TenthManMode {
    fn from(mode: TenthManArg) -> Self {
        use decima_runtime::review::TenthManMode;
        match mode {
            TenthManArg::Off => TenthManMode::Off,
            TenthManArg::ToolOnly => TenthManMode::ToolOnly,
            TenthManArg::SystemOnly => TenthManMode::SystemOnly,
            TenthManArg::Hybrid => TenthManMode::Hybrid,
        }
    }
}

/// `decima review`: what to review and how.
#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// The conversation to review.
    pub conversation: String,
    /// Review this run of the conversation (its task is the goal).
    #[arg(long, value_name = "ID")]
    pub execution: Option<String>,
    /// What to read: the whole history, the last N messages, or the given text.
    #[arg(
        long,
        value_name = "full|recent:N|content:TEXT",
        default_value = "full"
    )]
    pub mode: String,
    /// quick (a fast risk check), full (a complete critique), or recompute (the run's
    /// figures worked out again from its inputs in a fresh sandbox; --mode does not apply).
    #[arg(
        long = "type",
        value_name = "quick|full|recompute",
        default_value = "full"
    )]
    pub review_type: String,
    /// For a recompute: a figure to work out again besides the unlinked and headline ones, by
    /// its number in `decima execution numbers`; repeat for more.
    #[arg(long = "figure", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub figures: Vec<u32>,
    /// What the reviewer should look at hardest.
    #[arg(long, value_name = "TEXT")]
    pub focus: Option<String>,
    /// The provider that reviews; defaults to the conversation's reviewer, else the only one.
    #[arg(long, value_name = "NAME")]
    pub reviewer_provider: Option<String>,
    /// Print the stored review as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `--sandbox`: where tools run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SandboxArg {
    /// On this machine, in the workspace directory.
    Host,
    /// In a Docker container.
    Docker,
}

impl From<SandboxArg> for decima_store::SandboxKind {
    fn from(kind: SandboxArg) -> Self {
        match kind {
            SandboxArg::Host => Self::Host,
            SandboxArg::Docker => Self::Docker,
        }
    }
}

/// `--on-failure`: who answers a failed todo.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnFailureArg {
    /// Print the failure report on stderr and read one of the choices it offers from stdin.
    Ask,
    /// Stop; the execution waits for `decima recover`.
    Stop,
}

/// `recover --choice`: the analyst's answer to a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ChoiceArg {
    /// Run the failed todo again from its snapshot.
    Retry,
    /// Leave the todo undone and go on.
    Skip,
    /// Ask the model for a new plan.
    Replan,
    /// Stop the execution for good.
    Abort,
    /// Put the workspace, the plan and the history back to the todo's snapshot, then choose
    /// again (offered where the failure did not roll back on its own).
    Rollback,
    /// Fit the run to the window the server serves, compress the conversation deeply and try
    /// again (offered where a request was too long for the model).
    Compress,
    /// Ask the agent to compute the unlinked figures with a tool and answer again.
    Verify,
    /// Keep the unlinked figures, each marked as an estimate in the answer.
    Estimate,
    /// Replace an unlinked figure with the right value (`--figure N --value V`).
    Correct,
    /// Keep the unlinked figures as they are.
    Accept,
}

/// A switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnOff {
    /// On.
    On,
    /// Off.
    Off,
}

impl From<ChoiceArg> for decima_store::Resolution {
    fn from(choice: ChoiceArg) -> Self {
        use decima_store::Resolution;
        match choice {
            ChoiceArg::Retry => Resolution::Retry,
            ChoiceArg::Skip => Resolution::Skip,
            ChoiceArg::Replan => Resolution::Replan,
            ChoiceArg::Abort => Resolution::Abort,
            ChoiceArg::Rollback => Resolution::Rollback,
            ChoiceArg::Compress => Resolution::Compress,
            ChoiceArg::Verify => Resolution::Verify,
            ChoiceArg::Estimate => Resolution::Estimate,
            ChoiceArg::Correct => Resolution::Correct,
            ChoiceArg::Accept => Resolution::Accept,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum ExecutionCommand {
    /// List executions: a conversation's (oldest first), or the newest 100.
    List {
        /// Only this conversation's executions.
        #[arg(long, value_name = "ID")]
        conversation: Option<String>,
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show one execution: status, workspace, todos, snapshots, steps, failure reports and the
    /// subagents it spawned.
    Show {
        /// The execution id.
        id: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print the tree of subagents below an execution, with their statuses.
    Tree {
        /// The execution id.
        id: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check every figure of the execution's answer against the tool outputs it rests on:
    /// linked (with the output that holds it), derived (with its derivation) or unlinked.
    Numbers {
        /// The execution id.
        id: String,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct CompressArgs {
    #[command(subcommand)]
    pub undo: Option<CompressCommand>,
    /// The conversation id.
    pub id: Option<String>,
    /// The level; by default it follows the usage (85%: standard, 90%: deep).
    #[arg(long, value_enum)]
    pub level: Option<LevelArg>,
    /// How summaries are written. This version offers extract (no model needed).
    #[arg(long, value_enum, default_value_t = StrategyArg::Extract)]
    pub strategy: StrategyArg,
    /// Show what would change without storing anything.
    #[arg(long)]
    pub dry_run: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Take the context window from this provider.
    #[arg(long)]
    pub provider: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum CompressCommand {
    /// Undo a compaction (the newest of its conversation first).
    Undo {
        /// The compaction id printed by `compress`.
        compaction_id: String,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LevelArg {
    /// Keep about 60%: the goal, todos, every decision, the last operations in detail.
    Standard,
    /// Keep about 30%: the goal, todo state, key decisions, one line per operation.
    Deep,
    /// Fold everything not yet summarised into one summary.
    Phase,
    /// As standard, after a checkpoint.
    Checkpoint,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum StrategyArg {
    /// Rule-based: goal, todos, decisions, literals, tool digests.
    Extract,
    /// A model writes the summary.
    Llm,
    /// A model writes a validated JSON summary.
    Structured,
}
