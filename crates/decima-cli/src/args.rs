//! The command line, as clap reads it.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// Decima: an agent workbench for analysts, without a window.
#[derive(Debug, Parser)]
#[command(name = "decima", version, about, long_about = None)]
pub struct Cli {
    /// Where Decima keeps its database (decima.db) and files. Defaults to the OS data directory.
    #[arg(long, global = true, env = "DECIMA_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create, list, show, rename, delete and import conversations.
    #[command(subcommand)]
    Conversation(ConversationCommand),
    /// Write a conversation's history as greppable text, JSONL or Markdown.
    Export {
        /// The conversation id.
        id: String,
        /// The output format.
        #[arg(long, value_enum, default_value_t = ExportFormatArg::Text)]
        format: ExportFormatArg,
        /// Write to this file instead of stdout (replaced atomically).
        #[arg(short = 'o', long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
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
