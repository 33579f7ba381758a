//! `decima mcp`: the analyst's MCP servers. Values that may be secret (environment and header
//! values) go to the keyring; the database keeps their names only.

use std::io::Write as _;
use std::path::Path;

use decima_mcp::config::parse_assignment;
use decima_mcp::{Place, ServerConfig, Transport};
use decima_runtime::mcp::servers;
use decima_store::Store;
use serde_json::json;

use crate::args::{McpAddArgs, McpCommand, McpPlaceArg};
use crate::error::CliError;

/// Runs one `decima mcp` subcommand.
pub async fn run(store: &Store, data_dir: &Path, cmd: McpCommand) -> Result<(), CliError> {
    match cmd {
        McpCommand::Add(args) => add(store, data_dir, args).await,
        McpCommand::Import { file, place } => {
            let names =
                servers::import_claude_desktop(store, data_dir, &file, place_of(place)).await?;
            let mut out = std::io::stdout().lock();
            writeln!(
                out,
                "imported {} server(s): {}",
                names.len(),
                names.join(", ")
            )
            .map_err(CliError::Output)?;
            Ok(())
        }
        McpCommand::List { json } => list(store, json).await,
        McpCommand::Remove { name } => {
            if servers::remove(store, data_dir, &name).await? {
                Ok(())
            } else {
                Err(decima_store::StoreError::NotFound {
                    entity: "MCP server",
                    id: name,
                }
                .into())
            }
        }
        McpCommand::Tools {
            name,
            json,
            conversation,
        } => tools(store, data_dir, &name, json, conversation.as_deref()).await,
        McpCommand::Enable { name, conversation } => {
            switch(store, &name, conversation.as_deref(), true).await
        }
        McpCommand::Disable { name, conversation } => {
            switch(store, &name, conversation.as_deref(), false).await
        }
    }
}

/// Turns a server on or off for every run, or for one conversation's.
async fn switch(
    store: &Store,
    name: &str,
    conversation: Option<&str>,
    on: bool,
) -> Result<(), CliError> {
    match conversation {
        Some(id) => {
            let id = super::conversation_id(id)?;
            store.conversations().get(id).await?;
            store
                .mcp_servers()
                .set_for_conversation(id, name, on)
                .await?;
        }
        None => servers::set_enabled(store, name, on).await?,
    }
    Ok(())
}

fn place_of(place: McpPlaceArg) -> Place {
    match place {
        McpPlaceArg::Docker => Place::Docker,
        McpPlaceArg::Host => Place::Host,
    }
}

async fn add(store: &Store, data_dir: &Path, args: McpAddArgs) -> Result<(), CliError> {
    let mut config = match (&args.url, args.command.split_first()) {
        (Some(url), None) => {
            let mut c = ServerConfig::http(&args.name, url);
            if let Transport::Http {
                headers,
                bearer_token_env,
                bearer_token,
                ..
            } = &mut c.transport
            {
                if args.bearer_token_stdin {
                    let mut line = String::new();
                    std::io::stdin()
                        .read_line(&mut line)
                        .map_err(CliError::Output)?;
                    let token = line.trim().trim_start_matches("Bearer ").trim().to_owned();
                    if token.is_empty() {
                        return Err(CliError::Provider(
                            "--bearer-token-stdin read an empty line: pipe the token in".into(),
                        ));
                    }
                    *bearer_token = Some(token);
                }
                for h in &args.header {
                    let (k, v) = parse_assignment(h).map_err(decima_runtime::RuntimeError::from)?;
                    headers.insert(k, v);
                }
                bearer_token_env.clone_from(&args.bearer_token_env);
            }
            c
        }
        (None, Some((command, rest))) => {
            let mut c = ServerConfig::stdio(&args.name, command, rest.to_vec());
            if let Transport::Stdio {
                env, place, cwd, ..
            } = &mut c.transport
            {
                *place = place_of(args.place);
                cwd.clone_from(&args.cwd);
                for e in &args.env {
                    let (k, v) = parse_assignment(e).map_err(decima_runtime::RuntimeError::from)?;
                    env.insert(k, v);
                }
            }
            c
        }
        (Some(_), Some(_)) => {
            return Err(CliError::Provider(
                "give either --url or a command after --, not both".into(),
            ));
        }
        (None, None) => {
            return Err(CliError::Provider(
                "give the server's command after -- (e.g. `decima mcp add files --where host -- \
                 node server.js /data`) or its --url"
                    .into(),
            ));
        }
    };
    config.startup_timeout_secs = args.startup_timeout;
    config.call_timeout_secs = args.call_timeout;
    config.allow = args.allow;
    config.deny = args.deny;
    servers::add(store, data_dir, std::slice::from_ref(&config)).await?;
    if matches!(
        config.transport,
        Transport::Stdio {
            place: Place::Host,
            ..
        }
    ) {
        eprintln!(
            "note: {} runs on this machine with your rights (its environment is cleared but for \
             PATH, HOME, the locale and the variables you set)",
            config.name
        );
    }
    Ok(())
}

async fn list(store: &Store, json_out: bool) -> Result<(), CliError> {
    let all = servers::list_public(store).await?;
    let mut out = std::io::stdout().lock();
    if json_out {
        let rows: Vec<_> = all
            .iter()
            .map(|s| {
                json!({
                    "name": s.name,
                    "enabled": s.enabled,
                    "transport": s.transport,
                    "startup_timeout_secs": s.startup_timeout_secs,
                    "call_timeout_secs": s.call_timeout_secs,
                    "allow": s.allow,
                    "deny": s.deny,
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::Value::Array(rows)).map_err(CliError::Output)?;
        return Ok(());
    }
    if all.is_empty() {
        writeln!(
            out,
            "no MCP servers; add one with `decima mcp add NAME -- COMMAND…` or import Claude \
             Desktop's with `decima mcp import FILE`"
        )
        .map_err(CliError::Output)?;
    }
    for s in &all {
        let state = if s.enabled { "" } else { " (disabled)" };
        writeln!(out, "{}{state}\t{}", s.name, s.describe()).map_err(CliError::Output)?;
    }
    Ok(())
}

async fn tools(
    store: &Store,
    data_dir: &Path,
    name: &str,
    json_out: bool,
    conversation: Option<&str>,
) -> Result<(), CliError> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| data_dir.to_path_buf());
    let conversation = conversation.map(super::conversation_id).transpose()?;
    let was_on = servers::list_public(store)
        .await?
        .iter()
        .any(|s| s.name == name && s.enabled);
    let probe = match servers::probe(store, data_dir, name, &cwd, conversation).await {
        Ok(probe) => probe,
        Err(e) => {
            if was_on {
                eprintln!(
                    "note: runs no longer use {name:?}; turn it on with `decima mcp enable                      {name}` once `decima mcp tools {name}` passes"
                );
            }
            return Err(e.into());
        }
    };
    let total: u32 = probe.tools.iter().map(|(_, t)| t).sum();
    let mut out = std::io::stdout().lock();
    if json_out {
        let rows: Vec<_> = probe
            .tools
            .iter()
            .map(|(t, tokens)| {
                json!({"name": t.name, "description": t.description, "tokens": tokens,
                       "read_only": t.read_only, "input_schema": t.input_schema})
            })
            .collect();
        writeln!(
            out,
            "{}",
            json!({"server": name, "tools": rows, "tokens": total,
                   "started_ms": probe.started_in.as_millis() as u64})
        )
        .map_err(CliError::Output)?;
        return Ok(());
    }
    for (t, tokens) in &probe.tools {
        let first = t.description.lines().next().unwrap_or("");
        writeln!(out, "{}\t{tokens} tokens\t{first}", t.name).map_err(CliError::Output)?;
    }
    writeln!(
        out,
        "{} tools, {total} tokens of schemas; started in {} ms",
        probe.tools.len(),
        probe.started_in.as_millis()
    )
    .map_err(CliError::Output)?;
    Ok(())
}
