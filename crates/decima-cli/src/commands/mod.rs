//! One module per command group; each turns parsed arguments into store calls and output.

mod chat;
mod compress;
mod context;
mod conversation;
mod export;
mod import;
mod preset;
mod provider;

use decima_core::ConversationId;
use tracing::Instrument as _;

use crate::args::{Cli, Command};
use crate::data_dir;
use crate::error::CliError;

/// Runs a parsed command line inside a `command` span named after it (never its arguments,
/// which can be message text), so every line it logs says which command it belongs to.
pub async fn run(cli: Cli) -> Result<(), CliError> {
    let span = tracing::info_span!("command", name = cli.command.name());
    let started = std::time::Instant::now();
    let result = dispatch(cli).instrument(span.clone()).await;
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    match &result {
        Err(e) if !e.is_broken_pipe() => {
            // The exit code says what kind of failure; the message could quote the user's input.
            tracing::warn!(parent: &span, exit_code = e.exit_code(), duration_ms, "command failed");
        }
        _ => tracing::info!(parent: &span, duration_ms, "command finished"),
    }
    result
}

async fn dispatch(cli: Cli) -> Result<(), CliError> {
    let dir = data_dir::resolve(cli.data_dir)?;
    let store = data_dir::open_store(&dir).await?;
    let result = match cli.command {
        Command::Conversation(cmd) => conversation::run(&store, cmd).await,
        Command::Export {
            id,
            format,
            output,
            full,
        } => export::run(&store, &id, format, output.as_deref(), full).await,
        Command::Provider(cmd) => provider::run(&store, &dir, cmd).await,
        Command::Preset(cmd) => preset::run(&store, cmd).await,
        Command::Compress(args) => compress::run(&store, &dir, args).await,
        Command::Context { id, provider, json } => {
            context::run(&store, &id, provider.as_deref(), json).await
        }
        Command::Import { file } => import::run(&store, &file).await,
        Command::Chat {
            provider,
            conversation,
            message,
        } => {
            chat::run(
                &store,
                &dir,
                provider.as_deref(),
                conversation.as_deref(),
                message,
            )
            .await
        }
    };
    store.close().await;
    result
}

/// Parses a conversation id from the command line, refusing anything that is not a UUID.
fn conversation_id(text: &str) -> Result<ConversationId, CliError> {
    Ok(text.parse()?)
}
