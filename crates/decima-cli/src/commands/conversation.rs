//! `decima conversation …`

use std::fmt::Write as _;
use std::path::Path;

use decima_core::export::{ExportFormat, render_message};
use decima_store::Store;

use super::conversation_id;
use decima_runtime::agent::{self, DockerConfig};
use decima_runtime::review;

use crate::args::{ConversationCommand, SandboxSettingsArgs};
use crate::error::CliError;
use crate::output::{self, AnswerJson, ConversationDetailJson, ConversationJson, MessageJson};

pub async fn run(
    store: &Store,
    data_dir: &std::path::Path,
    command: ConversationCommand,
) -> Result<(), CliError> {
    match command {
        ConversationCommand::Import {
            file,
            title,
            preset,
        } => import(store, &file, title, preset.as_deref()).await,
        ConversationCommand::Create { title, preset } => {
            let preset = checked_preset(store, preset.as_deref()).await?;
            let conversation = store.conversations().create(&title, preset).await?;
            output::print(&format!("{}\n", conversation.id))
        }
        ConversationCommand::List { json, deleted } => list(store, json, deleted).await,
        ConversationCommand::Show { id, json } => show(store, &id, json).await,
        ConversationCommand::Rename { id, title } => {
            store
                .conversations()
                .rename(conversation_id(&id)?, &title)
                .await?;
            Ok(())
        }
        ConversationCommand::Delete { id } => {
            let id = conversation_id(&id)?;
            store.conversations().soft_delete(id).await?;
            eprintln!(
                "Moved conversation {id} to the trash; `decima conversation restore {id}` brings it back."
            );
            Ok(())
        }
        ConversationCommand::Pin { id, seq } => {
            store
                .messages()
                .set_pinned(conversation_id(&id)?, seq, true)
                .await?;
            Ok(())
        }
        ConversationCommand::Unpin { id, seq } => {
            store
                .messages()
                .set_pinned(conversation_id(&id)?, seq, false)
                .await?;
            Ok(())
        }
        ConversationCommand::Restore { id } => {
            store.conversations().restore(conversation_id(&id)?).await?;
            Ok(())
        }
        ConversationCommand::Sandbox(args) => sandbox_settings(store, data_dir, args).await,
        ConversationCommand::Reviewer {
            id,
            provider,
            reset,
        } => {
            let id = conversation_id(&id)?;
            if let Some(name) = &provider {
                // A name that is not configured is refused now, not at the first review.
                store.providers().get_by_name(name).await?;
            }
            if provider.is_some() || reset {
                store
                    .conversations()
                    .set_reviewer_provider(id, provider.as_deref())
                    .await?;
            }
            let current = store.conversations().reviewer_provider(id).await?;
            output::print(&format!(
                "{}\n",
                current.as_deref().unwrap_or("(the agent's own provider)")
            ))
        }
    }
}

/// `conversation sandbox`: changes what was given, checks the result, stores it, prints it.
async fn sandbox_settings(
    store: &Store,
    data_dir: &std::path::Path,
    args: SandboxSettingsArgs,
) -> Result<(), CliError> {
    let id = conversation_id(&args.id)?;
    let new_image = args.image.is_some();
    let mut config = if args.reset {
        DockerConfig::default()
    } else {
        agent::sandbox_settings(store, id).await?
    };
    let changed = args.reset
        || args.image.is_some()
        || args.network.is_some()
        || args.user.is_some()
        || args.memory_mib.is_some()
        || args.cpus.is_some()
        || args.pids.is_some()
        || args.read_only_root.is_some();
    if let Some(image) = args.image {
        config.image = image;
    }
    if let Some(network) = args.network {
        config.network = network;
    }
    if let Some(user) = args.user {
        config.user = user;
    }
    if let Some(mib) = args.memory_mib {
        config.memory_bytes = mib.saturating_mul(1024 * 1024);
    }
    if let Some(cpus) = args.cpus {
        if !(cpus > 0.0 && cpus <= 1024.0) {
            return Err(CliError::Sandbox(format!(
                "--cpus takes a number of CPUs above 0, not {cpus}"
            )));
        }
        config.nano_cpus = (cpus * 1e9).round() as u64;
    }
    if let Some(pids) = args.pids {
        config.pids_limit = pids;
    }
    if let Some(read_only) = args.read_only_root {
        config.read_only_root = read_only;
    }
    if changed {
        agent::set_sandbox_settings(store, id, &config).await?;
    }
    if new_image {
        warn_of_missing_tools(data_dir, &config).await;
    }
    if args.json {
        return output::print_json(&config);
    }
    let cpus = config.nano_cpus as f64 / 1e9;
    output::print(&format!(
        "image           {}\nnetwork         {}\nuser            {}\nmemory          {} MiB\n\
         cpus            {cpus}\npids            {}\nread-only root  {}\n",
        config.image,
        if config.network { "on" } else { "off" },
        config.user,
        config.memory_bytes / (1024 * 1024),
        config.pids_limit,
        if config.read_only_root { "on" } else { "off" },
    ))
}

/// Says on stderr which of the commands the agent relies on a newly named image lacks, or why
/// it could not be checked. The settings are stored either way: the image may be built later.
async fn warn_of_missing_tools(data_dir: &std::path::Path, config: &DockerConfig) {
    let checked = match decima_runtime::docker::engine(data_dir).await {
        Ok(engine) => engine.missing_tools(config).await,
        Err(e) => Err(e),
    };
    match checked {
        Ok(missing) if missing.is_empty() => {}
        Ok(missing) => eprintln!(
            "warning: the image {} lacks {}: the agent's tools and analyses may fail there \
             ({} has them all)",
            config.image,
            missing.join(", "),
            DockerConfig::DEFAULT_IMAGE
        ),
        Err(e) => eprintln!(
            "warning: the image {} could not be checked for the tools the agent relies on: {e}",
            config.image
        ),
    }
}

/// The preset id, checked to name a live preset (a deleted one still satisfies the foreign key).
async fn checked_preset<'a>(
    store: &Store,
    preset: Option<&'a str>,
) -> Result<Option<&'a str>, CliError> {
    if let Some(id) = preset {
        store.presets().get(id).await?;
    }
    Ok(preset)
}

/// Reads every line first and imports only if all of them are valid, in one transaction.
async fn import(
    store: &Store,
    file: &Path,
    title: Option<String>,
    preset: Option<&str>,
) -> Result<(), CliError> {
    let preset = checked_preset(store, preset).await?;
    let conversation =
        decima_runtime::import::conversation_file(store, file, title, preset).await?;
    // A long history is digested for the tenth man now, block by block, rather than while the
    // analyst waits for the first review. It is a cache: failing to fill it fails nothing.
    let last = i64::try_from(conversation.message_count).unwrap_or(i64::MAX);
    if let Err(e) = review::digest_cache::warm(store, conversation.id, 0, last).await {
        tracing::warn!(error = %e, "the imported history was not digested ahead for reviews");
    }
    output::print(&format!("{}\n", conversation.id))
}

async fn list(store: &Store, json: bool, deleted: bool) -> Result<(), CliError> {
    let conversations = if deleted {
        store.conversations().list_deleted().await?
    } else {
        store.conversations().list().await?
    };
    if json {
        let rows: Vec<ConversationJson> =
            conversations.iter().map(ConversationJson::from).collect();
        return output::print_json(&rows);
    }
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{:<36}  {:>8}  {:>9}  {:<24}  TITLE",
        "ID", "MESSAGES", "TOKENS", "UPDATED"
    );
    for c in &conversations {
        let _ = writeln!(
            text,
            "{:<36}  {:>8}  {:>9}  {:<24}  {}",
            c.id,
            c.message_count,
            c.tokens,
            c.updated_at.to_rfc3339(),
            c.title
        );
    }
    output::print(&text)
}

async fn show(store: &Store, id: &str, json: bool) -> Result<(), CliError> {
    let id = conversation_id(id)?;
    let conversation = store.conversations().get(id).await?;
    let messages = store.messages().all(id).await?;
    if json {
        let mut answers: std::collections::HashMap<i64, decima_store::AnswerRecord> = store
            .answers()
            .of_conversation(id)
            .await?
            .into_iter()
            .map(|a| (a.seq, a.record))
            .collect();
        return output::print_json(&ConversationDetailJson {
            conversation: ConversationJson::from(&conversation),
            messages: messages
                .iter()
                .map(|m| MessageJson {
                    answer: answers.remove(&m.seq).map(AnswerJson::from),
                    ..MessageJson::from(m)
                })
                .collect(),
        });
    }
    let mut text = format!(
        "{}\n{}  ·  {} messages  ·  {} tokens  ·  updated {}\n\n",
        conversation.title,
        conversation.id,
        conversation.message_count,
        conversation.tokens,
        conversation.updated_at.to_rfc3339()
    );
    for m in &messages {
        render_message(ExportFormat::Text, m, &mut text);
    }
    output::print(&text)
}
