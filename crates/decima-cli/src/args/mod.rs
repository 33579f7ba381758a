//! The command line, as clap reads it.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

mod library;
mod run;

pub use library::{
    ConversationCommand, DbCommand, ExportFormatArg, ImageCommand, KindArg, McpAddArgs, McpCommand,
    McpPlaceArg, PresetCommand, ProviderCommand, SandboxCommand, SandboxSettingsArgs,
};
pub use run::{
    ChoiceArg, CompressArgs, CompressCommand, ExecutionCommand, LevelArg, OnFailureArg, OnOff,
    ReviewArgs, RunArgs, StrategyArg,
};

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
        /// Guidance for the agent with the choice ("use ledger_q3.csv"), stored as your message
        /// in the conversation before the run goes on.
        #[arg(long, value_name = "TEXT")]
        note: Option<String>,
        /// For unlinked figures: the figure the choice is for, by its number in the failure's
        /// list (repeat for several); all of them when not given.
        #[arg(long = "figure", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        figures: Vec<u32>,
        /// For `--choice correct`: the right value, as the answer should say it.
        #[arg(long, value_name = "VALUE")]
        value: Option<String>,
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
    /// Check every figure of an assistant's answer against the tool outputs before it: linked
    /// (with the output that holds it), derived (with its derivation) or unlinked.
    Numbers {
        /// The conversation id.
        conversation_id: String,
        /// The seq of the assistant's message to check.
        #[arg(long, value_name = "SEQ")]
        message: i64,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Run a finished run again without its model: its tool calls replayed in order in a fresh
    /// sandbox restored from its first snapshot, each output compared with the one recorded
    /// (same, different, or nondeterministic). With --input, on new data: which of the
    /// answer's figures changed, old and new, and which the new data could not give.
    Rerun {
        /// The run's id.
        execution_id: String,
        /// Replace one of the run's inputs with a file of this computer: INPUT=FILE
        /// (`q3.csv=/data/q4.csv`). Repeat for more.
        #[arg(long = "input", value_name = "INPUT=FILE")]
        inputs: Vec<String>,
        /// Print JSON instead of a table.
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
                ProviderCommand::TenthMan { .. } => "provider tenth-man",
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
                ExecutionCommand::Numbers { .. } => "execution numbers",
            },
            Command::Review(_) => "review",
            Command::Numbers { .. } => "numbers",
            Command::Rerun { .. } => "rerun",
        }
    }
}
