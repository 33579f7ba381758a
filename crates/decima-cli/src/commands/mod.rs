//! One module per command group; each turns parsed arguments into store calls and output.

mod agent;
mod chat;
mod compress;
mod context;
mod conversation;
mod db;
mod execution;
mod export;
mod import;
mod mcp;
mod numbers;
mod preset;
mod provider;
mod render;
mod rerun;
mod review;
mod sandbox;
mod signals;

use decima_core::{ConversationId, ExecutionId};
use tracing::Instrument as _;

use crate::args::{Cli, Command, DbCommand};
use crate::data_dir;
use crate::error::CliError;

/// Runs a parsed command line inside a `command` span named after it (never its arguments,
/// which can be message text), so every line it logs says which command it belongs to.
pub async fn run(cli: Cli) -> Result<(), CliError> {
    let span = tracing::info_span!("command", name = cli.command.name());
    let started = std::time::Instant::now();
    // A conversation taken over from a process that died on this machine is said on stderr.
    let take_overs: decima_runtime::busy::TakeOverNote =
        std::sync::Arc::new(|line: &str| render::note(&format!("note: {line}")));
    let result = decima_runtime::busy::noting_take_overs(take_overs, dispatch(cli))
        .instrument(span.clone())
        .await;
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
    let location = data_dir::location(&dir, cli.database_url.as_deref()).await?;
    // Migrating must not open the store first: a shared database behind this build refuses it.
    if let Command::Db(DbCommand::Migrate) = cli.command {
        return db::migrate(&location).await;
    }
    let store = data_dir::open_store(&dir, &location).await?;
    let result = match cli.command {
        Command::Db(DbCommand::Migrate) => db::migrate(&location).await,
        Command::Db(DbCommand::Copy { to }) => db::copy(&store, &to).await,
        Command::Conversation(cmd) => conversation::run(&store, &dir, cmd).await,
        Command::Export {
            id,
            format,
            output,
            full,
        } => export::run(&store, &dir, &id, format, output.as_deref(), full).await,
        Command::Provider(cmd) => provider::run(&store, &dir, cmd).await,
        Command::Mcp(cmd) => mcp::run(&store, &dir, cmd).await,
        Command::Sandbox(cmd) => sandbox::run(&dir, cmd).await,
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
        Command::Run(args) => agent::run(&store, &dir, args).await,
        Command::Recover {
            execution_id,
            choice,
            note,
            figures,
            value,
            json,
        } => {
            let choice = decima_runtime::agent::Choice::new(choice.into(), note.as_deref())?
                .for_figures(figures.into_iter().map(|n| n as usize).collect())
                .with_value(value);
            agent::recover(&store, &dir, &execution_id, choice, json).await
        }
        Command::Resume { execution_id, json } => {
            agent::resume(&store, &dir, &execution_id, json).await
        }
        Command::Execution(cmd) => execution::run(&store, &dir, cmd).await,
        Command::Numbers {
            conversation_id: id,
            message,
            json,
        } => {
            let conversation = conversation_id(&id)?;
            let report =
                decima_runtime::figures::check_message(&store, &dir, conversation, message).await?;
            numbers::print(&report, json)
        }
        Command::Review(args) => review::run(&store, &dir, args).await,
        Command::Rerun {
            execution_id,
            inputs,
            json,
        } => rerun::run(&store, &dir, &execution_id, &inputs, json).await,
    };
    store.close().await;
    result
}

/// Parses a conversation id from the command line, refusing anything that is not a UUID.
fn conversation_id(text: &str) -> Result<ConversationId, CliError> {
    Ok(text.parse()?)
}

/// Parses an execution id from the command line, refusing anything that is not a UUID (paths,
/// newlines), so a hostile id never reaches the store or a lock file name.
fn execution_id(text: &str) -> Result<ExecutionId, CliError> {
    Ok(text.parse()?)
}

/// Marks `running` executions whose process is gone as `interrupted`, and says so on stderr:
/// every agent command does this first, so what it shows or continues is the truth.
async fn interrupt_orphans(
    store: &decima_store::Store,
    data_dir: &std::path::Path,
) -> Result<(), CliError> {
    for id in decima_runtime::agent::interrupt_orphans(store, data_dir).await? {
        eprintln!(
            "note: execution {id} was interrupted (its process is gone); \
             `decima resume {id}` continues it"
        );
    }
    Ok(())
}
