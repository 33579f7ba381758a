//! The arguments of the commands that keep Decima's library: conversations, presets, providers,
//! the database, the sandbox image and MCP servers.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

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
        /// ollama, lmstudio, llamacpp, vllm. Decima asks a local server's preset what window
        /// it serves.
        #[arg(long, conflicts_with = "kind", required_unless_present = "kind")]
        preset: Option<String>,
        /// The wire protocol of a custom endpoint.
        #[arg(long, value_enum, requires = "base_url")]
        kind: Option<KindArg>,
        /// The endpoint: for openai up to the /v1-style prefix, for anthropic the host root.
        /// With a preset, where its server runs if not at the preset's address (a llama.cpp
        /// server on another port).
        #[arg(long)]
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
    /// Set where the tenth man runs for this provider's runs that do not choose (`default`
    /// follows Decima's: hybrid). Off suits a small local model.
    TenthMan {
        /// The provider's name.
        name: String,
        /// off, tool_only, system_only, hybrid, or default.
        mode: String,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum KindArg {
    /// OpenAI-compatible chat completions.
    Openai,
    /// Anthropic Messages.
    Anthropic,
    /// Ollama's native chat API (which takes the window per request).
    Ollama,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExportFormatArg {
    /// Greppable text: a `### seq=N role=R time=T` header per message.
    Text,
    /// One OpenAI-style message per line; `conversation import` reads it back exactly.
    Jsonl,
    /// Markdown for reading.
    Md,
    /// A Jupyter notebook that runs again: the Python cells, the shell calls as `%%bash` and
    /// the files written as `%%writefile` cells, in order; run it from the workspace's folder.
    Ipynb,
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
    /// and openpyxl, sqlite3, jq, csvkit, git and Node.js with npm, built from Debian's packages.
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
