//! The command line, as clap reads it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Decima: an agent workbench for analysts, without a window.
#[derive(Debug, Parser)]
#[command(name = "decima", version = crate::VERSION, about, long_about = None)]
pub struct Cli {
    /// Where Decima keeps its database (decima.db) and files. Defaults to the OS data directory.
    #[arg(long, global = true, env = "DECIMA_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// Keep conversations in this database instead of DIR/decima.db: a team's shared
    /// PostgreSQL (postgres://user@host:5432/db?sslmode=verify-full&sslrootcert=ca.pem) or
    /// another SQLite file. Logs and workspaces stay in DIR.
    #[arg(long, global = true, env = "DECIMA_DATABASE_URL", value_name = "URL")]
    pub database_url: Option<String>,

    /// How much goes to the log file in DIR/logs/ (never to the terminal). Without it, DECIMA_LOG,
    /// then RUST_LOG, then `info`. Applies to Decima's own code: other libraries stay at `warn`.
    #[arg(long, global = true, value_enum, value_name = "LEVEL")]
    pub log_level: Option<LogLevelArg>,

    #[command(subcommand)]
    pub command: Command,
}

/// The levels `--log-level` takes, from silent to everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogLevelArg {
    /// No log lines at all.
    Off,
    /// Failures only.
    Error,
    /// Failures and retries.
    Warn,
    /// Commands and model requests with their timings and token usage.
    Info,
    /// Also each request's size and response headers' timing.
    Debug,
    /// Everything Decima records.
    Trace,
}

impl From<LogLevelArg> for decima_runtime::logging::LevelFilter {
    fn from(level: LogLevelArg) -> Self {
        use decima_runtime::logging::LevelFilter;
        match level {
            LogLevelArg::Off => LevelFilter::OFF,
            LogLevelArg::Error => LevelFilter::ERROR,
            LogLevelArg::Warn => LevelFilter::WARN,
            LogLevelArg::Info => LevelFilter::INFO,
            LogLevelArg::Debug => LevelFilter::DEBUG,
            LogLevelArg::Trace => LevelFilter::TRACE,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create, list, show, rename, delete and import conversations.
    #[command(subcommand)]
    Conversation(ConversationCommand),
    /// Print the request the next step would send: its layers, usage and messages.
    Context {
        /// The conversation id.
        id: String,
        /// Take the context window from this provider.
        #[arg(long)]
        provider: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Import a SillyTavern character card (JSON or PNG) or prompt preset; prints the preset id.
    Import {
        /// The card or preset file.
        file: PathBuf,
    },
    /// Compress a conversation's history into summaries (or preview it), or undo a compaction.
    Compress(CompressArgs),
    /// List and show prompt presets.
    #[command(subcommand)]
    Preset(PresetCommand),
    /// Configure LLM providers: add, list, remove, test.
    #[command(subcommand)]
    Provider(ProviderCommand),
    /// Configure MCP servers, whose tools runs offer beside the built-in ones: add, import,
    /// list, remove, and list a server's tools.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// The analyst's Docker sandbox image: build it from the project's recipe, or show it.
    #[command(subcommand)]
    Sandbox(SandboxCommand),
    /// The database itself: bring a shared database's schema up to this version.
    #[command(subcommand)]
    Db(DbCommand),
    /// Send one message and stream the answer to stdout; both are stored in the conversation.
    Chat {
        /// The provider to use; defaults to the only one configured, or to the DECIMA_* variables
        /// when none is.
        #[arg(long)]
        provider: Option<String>,
        /// Continue this conversation (its history is sent); by default a new one is created.
        #[arg(long)]
        conversation: Option<String>,
        /// The message.
        message: String,
    },
    /// Write a conversation's history as greppable text, JSONL or Markdown.
    Export {
        /// The conversation id.
        id: String,
        /// The output format.
        #[arg(long, value_enum, default_value_t = ExportFormatArg::Text)]
        format: ExportFormatArg,
        /// Write to this file instead of stdout. Exporting to the same file again appends only
        /// the messages that are new since the last export.
        #[arg(short = 'o', long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Rewrite the whole file even when appending would do.
        #[arg(long, requires = "output")]
        full: bool,
    },
    /// Give the agent a task: it plans it as todos and works through them with tools in a
    /// workspace. Prints the final answer on stdout, the execution id and progress on stderr.
    Run(RunArgs),
    /// Continue an execution that waits on a failure, with the analyst's choice.
    Recover {
        /// The execution id (printed by `run` as `execution <id>`).
        execution_id: String,
        /// What to do about the failure it waits on.
        #[arg(long, value_enum)]
        choice: ChoiceArg,
        /// Print one JSON event per line on stdout instead of the answer.
        #[arg(long)]
        json: bool,
    },
    /// Continue an execution that was interrupted (its process died) from its last stored state.
    Resume {
        /// The execution id.
        execution_id: String,
        /// Print one JSON event per line on stdout instead of the answer.
        #[arg(long)]
        json: bool,
    },
    /// List and show agent executions: status, plan, snapshots, steps and failure reports.
    #[command(subcommand)]
    Execution(ExecutionCommand),
    /// Ask the tenth man, an adversarial reviewer, to argue against the conversation's current
    /// conclusion. Prints the risk level and the findings with the seqs they cite.
    Review(ReviewArgs),
}

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
    /// final review of the answer, both (hybrid), or not at all.
    #[arg(long, value_enum, value_name = "MODE", default_value = "hybrid")]
    pub tenth_man: TenthManArg,
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
    /// quick (a fast risk check) or full (a complete critique).
    #[arg(long = "type", value_name = "quick|full", default_value = "full")]
    pub review_type: String,
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
}

impl Command {
    /// The command as typed, without its arguments (which can be message text): the name of the
    /// command's log span.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Conversation(cmd) => match cmd {
                ConversationCommand::Import { .. } => "conversation import",
                ConversationCommand::Create { .. } => "conversation create",
                ConversationCommand::List { .. } => "conversation list",
                ConversationCommand::Pin { .. } => "conversation pin",
                ConversationCommand::Unpin { .. } => "conversation unpin",
                ConversationCommand::Show { .. } => "conversation show",
                ConversationCommand::Rename { .. } => "conversation rename",
                ConversationCommand::Delete { .. } => "conversation delete",
                ConversationCommand::Restore { .. } => "conversation restore",
                ConversationCommand::Sandbox(_) => "conversation sandbox",
                ConversationCommand::Reviewer { .. } => "conversation reviewer",
            },
            Command::Context { .. } => "context",
            Command::Import { .. } => "import",
            Command::Compress(args) => match &args.undo {
                Some(CompressCommand::Undo { .. }) => "compress undo",
                None => "compress",
            },
            Command::Preset(cmd) => match cmd {
                PresetCommand::List { .. } => "preset list",
                PresetCommand::Show { .. } => "preset show",
            },
            Command::Provider(cmd) => match cmd {
                ProviderCommand::Add { .. } => "provider add",
                ProviderCommand::List { .. } => "provider list",
                ProviderCommand::Remove { .. } => "provider remove",
                ProviderCommand::Test { .. } => "provider test",
            },
            Command::Db(DbCommand::Migrate) => "db migrate",
            Command::Db(DbCommand::Copy { .. }) => "db copy",
            Command::Sandbox(SandboxCommand::Image(cmd)) => match cmd {
                ImageCommand::Build { .. } => "sandbox image build",
                ImageCommand::Status { .. } => "sandbox image status",
            },
            Command::Mcp(cmd) => match cmd {
                McpCommand::Add(_) => "mcp add",
                McpCommand::Import { .. } => "mcp import",
                McpCommand::List { .. } => "mcp list",
                McpCommand::Remove { .. } => "mcp remove",
                McpCommand::Enable { .. } => "mcp enable",
                McpCommand::Disable { .. } => "mcp disable",
                McpCommand::Tools { .. } => "mcp tools",
            },
            Command::Chat { .. } => "chat",
            Command::Export { .. } => "export",
            Command::Run(_) => "run",
            Command::Recover { .. } => "recover",
            Command::Resume { .. } => "resume",
            Command::Execution(cmd) => match cmd {
                ExecutionCommand::List { .. } => "execution list",
                ExecutionCommand::Show { .. } => "execution show",
                ExecutionCommand::Tree { .. } => "execution tree",
            },
            Command::Review(_) => "review",
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum ConversationCommand {
    /// Import a JSONL file of OpenAI-style chat messages; prints the new conversation id.
    Import {
        /// One message per line: role, content, optional tool_calls, tool_call_id, reasoning_content, name.
        file: PathBuf,
        /// The title; defaults to the file name.
        #[arg(long)]
        title: Option<String>,
        /// The prompt preset the conversation uses.
        #[arg(long, value_name = "ID")]
        preset: Option<String>,
    },
    /// Create an empty conversation; prints its id.
    Create {
        /// The title.
        #[arg(long, default_value = "New conversation")]
        title: String,
        /// The prompt preset the conversation uses.
        #[arg(long, value_name = "ID")]
        preset: Option<String>,
    },
    /// List conversations, most recently updated first.
    List {
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
        /// List the conversations in the trash instead.
        #[arg(long)]
        deleted: bool,
    },
    /// Pin a message: it stays verbatim whatever compression does.
    Pin {
        /// The conversation id.
        id: String,
        /// The message's seq.
        seq: i64,
    },
    /// Unpin a message.
    Unpin {
        /// The conversation id.
        id: String,
        /// The message's seq.
        seq: i64,
    },
    /// Show a conversation and its messages.
    Show {
        /// The conversation id.
        id: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Give a conversation a new title.
    Rename {
        /// The conversation id.
        id: String,
        /// The new title.
        title: String,
    },
    /// Move a conversation to the trash (nothing is erased; `restore` brings it back).
    Delete {
        /// The conversation id.
        id: String,
    },
    /// Bring a conversation back from the trash.
    Restore {
        /// The conversation id.
        id: String,
    },
    /// Show or change the Docker sandbox settings of a conversation (its subagents share them).
    /// With no option, prints them.
    Sandbox(SandboxSettingsArgs),
    /// Show or set the provider that reviews this conversation (the tenth man). A second model
    /// argues better than the one that did the work.
    Reviewer {
        /// The conversation id.
        id: String,
        /// The provider's name; with neither this nor --reset, prints the current one.
        #[arg(conflicts_with = "reset")]
        provider: Option<String>,
        /// Go back to the agent's own provider.
        #[arg(long)]
        reset: bool,
    },
}

/// `conversation sandbox`: the Docker sandbox settings; every option left out keeps its value.
#[derive(Debug, Args)]
pub struct SandboxSettingsArgs {
    /// The conversation id.
    pub id: String,
    /// The image to run (it needs busybox-like sh, setsid, sleep, kill, realpath, mkdir, rm,
    /// stat and chown).
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// Network access for the tools (off by default).
    #[arg(long, value_name = "on|off", value_parser = on_off)]
    pub network: Option<bool>,
    /// The numeric uid:gid the tools run as (not 0).
    #[arg(long, value_name = "UID:GID")]
    pub user: Option<String>,
    /// Memory limit in MiB.
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(16..))]
    pub memory_mib: Option<u64>,
    /// CPU limit, in CPUs (e.g. 0.5).
    #[arg(long, value_name = "CPUS")]
    pub cpus: Option<f64>,
    /// Most processes at once.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(8..))]
    pub pids: Option<u64>,
    /// A read-only root filesystem (on by default; only /workspace and /tmp are writable).
    #[arg(long, value_name = "on|off", value_parser = on_off)]
    pub read_only_root: Option<bool>,
    /// Go back to the defaults (applied before the other options).
    #[arg(long)]
    pub reset: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

fn on_off(value: &str) -> Result<bool, String> {
    match value {
        "on" | "true" | "yes" => Ok(true),
        "off" | "false" | "no" => Ok(false),
        other => Err(format!("expected on or off, not {other:?}")),
    }
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

#[derive(Debug, Subcommand)]
pub enum PresetCommand {
    /// List presets, newest first.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Print a preset as JSON.
    Show {
        /// The preset id.
        id: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum ProviderCommand {
    /// Add a provider from a preset or as a custom endpoint.
    Add {
        /// A name of your choice (letters, digits, '.', '_', '-').
        name: String,
        /// Start from a preset: openai, anthropic, deepseek, qwen, moonshot, zhipu, openrouter,
        /// ollama, lmstudio, llamacpp, vllm.
        #[arg(long, conflicts_with_all = ["kind", "base_url"], required_unless_present = "kind")]
        preset: Option<String>,
        /// The wire protocol of a custom endpoint.
        #[arg(long, value_enum, requires = "base_url")]
        kind: Option<KindArg>,
        /// The endpoint: for openai up to the /v1-style prefix, for anthropic the host root.
        #[arg(long, requires = "kind")]
        base_url: Option<String>,
        /// The model id (defaults to the preset's).
        #[arg(long)]
        model: Option<String>,
        /// The model's context window in tokens (defaults to the preset's).
        #[arg(long)]
        context_window: Option<u32>,
        /// Read the API key from this environment variable.
        #[arg(long, value_name = "VAR", conflicts_with = "api_key_stdin")]
        api_key_env: Option<String>,
        /// Read the API key from the first line of standard input.
        #[arg(long)]
        api_key_stdin: bool,
        /// The model's tokenizer.json, for exact token counts of non-OpenAI models.
        #[arg(long, value_name = "PATH")]
        tokenizer_json: Option<std::path::PathBuf>,
        /// Usage fractions where the meter warns, compression starts and deep compression starts.
        #[arg(long, value_name = "WARN,COMPRESS,DEEP", value_delimiter = ',')]
        thresholds: Option<Vec<f64>>,
        /// Never compress this provider's conversations on their own (the meter still warns).
        #[arg(long)]
        no_compression: bool,
    },
    /// List the configured providers.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Remove a provider and its stored key.
    Remove {
        /// The provider's name.
        name: String,
    },
    /// Send one tiny request and print the latency and the usage.
    Test {
        /// The provider's name.
        name: String,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum KindArg {
    /// OpenAI-compatible chat completions.
    Openai,
    /// Anthropic Messages.
    Anthropic,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExportFormatArg {
    /// Greppable text: a `### seq=N role=R time=T` header per message.
    Text,
    /// One OpenAI-style message per line; `conversation import` reads it back exactly.
    Jsonl,
    /// Markdown for reading.
    Md,
}

/// `decima db …`.
#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Apply this version's migrations to the database (--database-url, or DIR/decima.db),
    /// under the database's migration lock, and print its schema version before and after.
    /// Refuses a database a newer Decima migrated.
    Migrate,
    /// Copy this (local SQLite) store into a shared PostgreSQL one: conversations with their
    /// messages, summaries, compactions, runs and reviews, presets and settings (keys stay in
    /// the keyring). Conversations the target holds already are left alone, so running it twice
    /// is safe. Prints the counts and a checksum of the messages on both sides.
    Copy {
        /// The shared store (migrated first with `decima db migrate`).
        #[arg(long, value_name = "URL")]
        to: String,
    },
}

/// `decima sandbox …`.
#[derive(Debug, Subcommand)]
pub enum SandboxCommand {
    /// The sandbox image, decima-sandbox:latest: Python with pandas, numpy, scipy, matplotlib
    /// and openpyxl, sqlite3, jq, csvkit, git and Node.js, built from Debian's packages.
    #[command(subcommand)]
    Image(ImageCommand),
}

/// `decima sandbox image …`.
#[derive(Debug, Subcommand)]
pub enum ImageCommand {
    /// Build the image from the recipe (minutes; no image registry needed). Nothing is done
    /// when the image was built from this recipe already.
    Build {
        /// Build it again even so.
        #[arg(long)]
        force: bool,
    },
    /// Show the image: present or not, its recipe, size and creation time.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `decima mcp …`.
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Add a server: a command run over stdio (`decima mcp add NAME -- COMMAND ARGS…`) or a
    /// streamable-HTTP endpoint (`--url`).
    Add(McpAddArgs),
    /// Import the servers of Claude Desktop's claude_desktop_config.json (its "mcpServers").
    Import {
        /// The file.
        file: PathBuf,
        /// Where its stdio servers run.
        #[arg(long = "where", value_enum, default_value = "docker")]
        place: McpPlaceArg,
    },
    /// List the servers.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Turn a server on: for every run, or for one conversation's runs.
    Enable {
        /// The server's name.
        name: String,
        /// Only in this conversation (its runs use the server again).
        #[arg(long, value_name = "ID")]
        conversation: Option<String>,
    },
    /// Turn a server off: for every run, or for one conversation's runs.
    Disable {
        /// The server's name.
        name: String,
        /// Only in this conversation.
        #[arg(long, value_name = "ID")]
        conversation: Option<String>,
    },
    /// Remove a server, its secret values and its approvals.
    Remove {
        /// The server's name.
        name: String,
    },
    /// Start a server and list its tools with the tokens their schemas take.
    Tools {
        /// The server's name.
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Start a server placed in Docker in this conversation's container, with its sandbox
        /// settings (by default, in a container of the default settings, removed after).
        #[arg(long)]
        conversation: Option<String>,
    },
}

/// `decima mcp add`.
#[derive(Debug, clap::Args)]
pub struct McpAddArgs {
    /// A name of your choice (letters, digits, '_', '-'; at most 32): tools are offered as
    /// mcp__NAME__TOOL.
    pub name: String,
    /// Where a stdio server runs: in the conversation's Docker sandbox (seeing /workspace, no
    /// network), or on this machine with your rights.
    #[arg(
        long = "where",
        value_enum,
        default_value = "docker",
        conflicts_with = "url"
    )]
    pub place: McpPlaceArg,
    /// A variable for a stdio server (its value is kept in the keyring, not in the database);
    /// repeatable.
    #[arg(long, value_name = "KEY=VALUE", conflicts_with = "url")]
    pub env: Vec<String>,
    /// The working directory of a stdio server (on this machine for --where host, in the
    /// container, relative to /workspace or absolute, for --where docker). Default: the run's
    /// workspace.
    #[arg(long, value_name = "DIR", conflicts_with = "url")]
    pub cwd: Option<String>,
    /// Offer only this tool of the server (its own name); repeatable. Default: every tool.
    #[arg(long, value_name = "TOOL")]
    pub allow: Vec<String>,
    /// Never offer this tool of the server (its own name); repeatable.
    #[arg(long, value_name = "TOOL")]
    pub deny: Vec<String>,
    /// Seconds the server may take to start and list its tools.
    #[arg(long, value_name = "S", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub startup_timeout: u64,
    /// Seconds one call may take.
    #[arg(long, value_name = "S", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..))]
    pub call_timeout: u64,
    /// A streamable-HTTP endpoint instead of a command.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// A header for an HTTP server (its value is kept in the keyring); repeatable.
    #[arg(long, value_name = "K=V", requires = "url")]
    pub header: Vec<String>,
    /// The environment variable that holds an HTTP server's bearer token, read when it starts.
    #[arg(
        long,
        value_name = "VAR",
        requires = "url",
        conflicts_with = "bearer_token_stdin"
    )]
    pub bearer_token_env: Option<String>,
    /// Read an HTTP server's bearer token from the first line of standard input and keep it in
    /// the keyring (never on the command line, never in the database).
    #[arg(long, requires = "url")]
    pub bearer_token_stdin: bool,
    /// The command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `--where` for MCP servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum McpPlaceArg {
    /// In the conversation's Docker sandbox.
    Docker,
    /// On this machine, with your rights.
    Host,
}
