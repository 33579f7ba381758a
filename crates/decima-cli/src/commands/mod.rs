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

use crate::args::{Cli, Command};
use crate::data_dir;
use crate::error::CliError;

/// Runs a parsed command line.
pub async fn run(cli: Cli) -> Result<(), CliError> {
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
            context::run(&store, &dir, &id, provider.as_deref(), json).await
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
