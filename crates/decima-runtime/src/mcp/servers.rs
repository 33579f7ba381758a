//! The analyst's MCP servers as settings: one list for the app, stored in SQLite without secret
//! values, which go to the secret store (the keyring, or the 0600 file where there is none)
//! under the account `mcp.<server>`. Adding and importing validate everything before anything
//! is stored; a duplicate name is refused.

use std::path::Path;

use decima_llm::secrets::{SecretStore, SecretString};
use decima_mcp::config::Secrets;
use decima_mcp::{Place, ServerConfig};
use decima_store::{McpServerRecord, Store};

use crate::error::{Result, RuntimeError};

/// The secret store's account for a server's secret values.
fn account(server: &str) -> String {
    format!("mcp.{server}")
}

/// Every server with its secret values, in the order they were added.
pub async fn list(store: &Store, data_dir: &Path) -> Result<Vec<ServerConfig>> {
    let rows = store.mcp_servers().list().await?;
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let (secrets, _warning) = SecretStore::open_async(data_dir).await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let config: ServerConfig = serde_json::from_value(row.config).map_err(|e| {
            RuntimeError::Config(format!(
                "the stored MCP server {:?} cannot be read ({e}); remove it with `decima mcp \
                 remove {}` and add it again",
                row.name, row.name
            ))
        })?;
        let kept = match secrets.get_async(&account(&config.name)).await? {
            Some(text) => serde_json::from_str::<Secrets>(text.expose()).unwrap_or_default(),
            None => Secrets::default(),
        };
        out.push(config.with_secrets(&kept));
    }
    Ok(out)
}

/// The stored servers without their secret values: for lists and the window, which never see
/// a secret.
pub async fn list_public(store: &Store) -> Result<Vec<ServerConfig>> {
    let rows = store.mcp_servers().list().await?;
    rows.into_iter()
        .map(|row| {
            serde_json::from_value(row.config).map_err(|e| {
                RuntimeError::Config(format!(
                    "the stored MCP server {:?} cannot be read ({e})",
                    row.name
                ))
            })
        })
        .collect()
}

/// Adds servers: all or none. Their secret values are kept first, so a row never points at a
/// secret that was not written; if the rows cannot be stored, the secrets are taken back.
pub async fn add(store: &Store, data_dir: &Path, servers: &[ServerConfig]) -> Result<()> {
    for s in servers {
        s.validate()?;
    }
    for (i, s) in servers.iter().enumerate() {
        if servers[..i].iter().any(|t| t.name == s.name) {
            return Err(RuntimeError::Config(format!(
                "the server name {:?} is given twice",
                s.name
            )));
        }
    }
    let with_secrets: Vec<&ServerConfig> =
        servers.iter().filter(|s| !s.secrets().is_empty()).collect();
    let secrets = if with_secrets.is_empty() {
        None
    } else {
        Some(SecretStore::open_async(data_dir).await?.0)
    };
    let existing: Vec<String> = store
        .mcp_servers()
        .list()
        .await?
        .into_iter()
        .map(|r| r.name)
        .collect();
    if let Some(taken) = servers.iter().find(|s| existing.contains(&s.name)) {
        return Err(RuntimeError::Store(decima_store::StoreError::Conflict(
            format!(
                "an MCP server named {:?} exists already; remove it first or pick another name",
                taken.name
            ),
        )));
    }
    if let Some(vault) = &secrets {
        for s in &with_secrets {
            let text = serde_json::to_string(&s.secrets())
                .map_err(|e| RuntimeError::Config(e.to_string()))?;
            vault
                .set_async(&account(&s.name), &SecretString::new(text))
                .await?;
        }
    }
    let rows: Vec<McpServerRecord> = servers
        .iter()
        .map(|s| McpServerRecord {
            name: s.name.clone(),
            config: serde_json::to_value(s.without_secrets()).unwrap_or_default(),
        })
        .collect();
    if let Err(e) = store.mcp_servers().add(&rows).await {
        if let Some(vault) = &secrets {
            for s in &with_secrets {
                let _ = vault.delete_async(&account(&s.name)).await;
            }
        }
        return Err(e.into());
    }
    Ok(())
}

/// Replaces a stored server's settings that hold no secret (enabled, timeouts, lists), keeping
/// its secret values.
pub async fn update(store: &Store, server: &ServerConfig) -> Result<()> {
    server.validate()?;
    store
        .mcp_servers()
        .update(&McpServerRecord {
            name: server.name.clone(),
            config: serde_json::to_value(server.without_secrets()).unwrap_or_default(),
        })
        .await?;
    Ok(())
}

/// Removes a server and its secret values; `false` when there was none.
pub async fn remove(store: &Store, data_dir: &Path, name: &str) -> Result<bool> {
    let removed = store.mcp_servers().remove(name).await?;
    if removed {
        let (vault, _warning) = SecretStore::open_async(data_dir).await?;
        vault.delete_async(&account(name)).await?;
    }
    Ok(removed)
}

/// Imports Claude Desktop's `claude_desktop_config.json`: every server in it or, when one
/// cannot be imported or its name is taken, none. Returns the names added.
pub async fn import_claude_desktop(
    store: &Store,
    data_dir: &Path,
    path: &Path,
    place: Place,
) -> Result<Vec<String>> {
    let text = tokio::fs::read_to_string(path)
        .await
        .map_err(|source| RuntimeError::Io {
            action: "read",
            path: path.to_path_buf(),
            source,
        })?;
    import_claude_desktop_text(store, data_dir, &text, place).await
}

/// [`import_claude_desktop`] of a file's text (a file picked in the window).
pub async fn import_claude_desktop_text(
    store: &Store,
    data_dir: &Path,
    text: &str,
    place: Place,
) -> Result<Vec<String>> {
    let servers = decima_mcp::claude_desktop::parse(text, place)?;
    add(store, data_dir, &servers).await?;
    Ok(servers.into_iter().map(|s| s.name).collect())
}

/// The server of `servers` called `name`, or the store's "not found".
fn named(servers: Vec<ServerConfig>, name: &str) -> Result<ServerConfig> {
    servers.into_iter().find(|s| s.name == name).ok_or_else(|| {
        RuntimeError::Store(decima_store::StoreError::NotFound {
            entity: "MCP server",
            id: name.to_owned(),
        })
    })
}

/// Turns a stored server on or off for every run.
pub async fn set_enabled(store: &Store, name: &str, enabled: bool) -> Result<()> {
    let mut server = named(list_public(store).await?, name)?;
    server.enabled = enabled;
    update(store, &server).await
}

/// Moves a stored stdio server between this computer and the Docker sandbox: what the window
/// offers when a server's program is not in the sandbox image. Its secrets and settings stay.
pub async fn set_place(store: &Store, name: &str, place: Place) -> Result<()> {
    let server = named(list_public(store).await?, name)?;
    if !matches!(server.transport, decima_mcp::Transport::Stdio { .. }) {
        return Err(RuntimeError::Config(format!(
            "MCP server {name:?} is reached over HTTP: it runs where its URL points"
        )));
    }
    update(store, &server.at(place)).await
}

/// What `decima mcp tools` shows of a server: its tools and what offering them costs.
#[derive(Debug, Clone)]
pub struct Probe {
    /// The server's tools as it listed them, with the tokens each one's offer takes.
    pub tools: Vec<(decima_mcp::McpTool, u32)>,
    /// How long it took to start and list them.
    pub started_in: std::time::Duration,
}

/// Starts a stored server where a run would start it, lists its tools with the tokens their
/// schemas take as offered, and stops it. A host server starts in `cwd`. A server placed in
/// Docker starts in `conversation`'s container, with its sandbox settings; without one, in a
/// container of the default settings made for the probe and removed after it. A server that
/// does not answer in time is a clear error, and nothing is left running. A server that fails
/// is turned off for runs (the analyst turns it on again once a check passes).
pub async fn probe(
    store: &Store,
    data_dir: &Path,
    name: &str,
    cwd: &Path,
    conversation: Option<decima_core::ConversationId>,
) -> Result<Probe> {
    let config = named(list(store, data_dir).await?, name)?;
    let log = decima_mcp::client::log_path(&data_dir.join("logs").join("mcp"), name);
    super::status::record(
        data_dir,
        name,
        &super::status::starting(config.startup_timeout()),
    );
    let probed = probe_where_placed(store, data_dir, &config, cwd, log.clone(), conversation).await;
    let state = match &probed {
        Ok(p) => super::status::ready(&p.tools, p.started_in),
        Err(e) => super::status::failed(&e.to_string(), &log),
    };
    super::status::record(data_dir, name, &state);
    if probed.is_err() && config.enabled {
        // A server that fails its check is not left in every run's tools, to fail there.
        tracing::warn!(
            server = name,
            "the check failed; runs no longer use the server"
        );
        set_enabled(store, name, false).await?;
    }
    probed
}

/// [`probe`] where the server is placed.
async fn probe_where_placed(
    store: &Store,
    data_dir: &Path,
    config: &ServerConfig,
    cwd: &Path,
    log: std::path::PathBuf,
    conversation: Option<decima_core::ConversationId>,
) -> Result<Probe> {
    let name = config.name.as_str();
    if matches!(
        config.transport,
        decima_mcp::Transport::Stdio {
            place: Place::Docker,
            ..
        }
    ) {
        return probe_in_docker(store, data_dir, config, log, conversation).await;
    }
    let host = decima_mcp::client::HostContext {
        workspace: cwd.to_path_buf(),
        log: Some(log),
    };
    let token = super::session::bearer_token(config);
    let client = decima_mcp::McpClient::connect(config, &host, token.as_deref()).await?;
    Ok(listed(client, name).await)
}

/// [`probe`] of a server placed in Docker.
async fn probe_in_docker(
    store: &Store,
    data_dir: &Path,
    config: &ServerConfig,
    log: std::path::PathBuf,
    conversation: Option<decima_core::ConversationId>,
) -> Result<Probe> {
    let name = &config.name;
    let unreachable = |e: decima_sandbox::SandboxError| {
        RuntimeError::Config(format!(
            "MCP server {name:?} runs in the Docker sandbox, and the Docker engine is not \
             available: {e}; start Docker, or run the server on this computer (\"on this \
             machine\" in Settings > MCP, --where host on the command line)"
        ))
    };
    let engine = crate::docker::engine(data_dir).await.map_err(unreachable)?;
    let (settings, key, throwaway) = match conversation {
        Some(id) => {
            store.conversations().get(id).await?;
            (
                crate::docker::config_of(store, id).await?,
                id.to_string(),
                false,
            )
        }
        None => (
            decima_sandbox::DockerConfig::default(),
            format!("mcp-probe-{}", decima_core::ConversationId::new()),
            true,
        ),
    };
    let sandbox = std::sync::Arc::new(decima_sandbox::DockerSandbox::new(engine, settings, &key)?);
    let started = super::session::start_in_docker(config, &sandbox, Some(log)).await;
    let probed = match started {
        Ok(client) => Ok(listed(client, name).await),
        Err(e) => Err(e.into()),
    };
    if throwaway && let Err(e) = sandbox.remove(true).await {
        tracing::warn!(error = %e, "the probe's container could not be removed");
    }
    probed
}

/// The tools of a connected server with what each one's offer costs; the server is stopped.
async fn listed(client: decima_mcp::McpClient, name: &str) -> Probe {
    let tools = priced(name, client.tools());
    let started_in = client.started_in;
    client.shutdown().await;
    Probe { tools, started_in }
}

/// A server's tools with the tokens each one's offer takes, as an OpenAI-compatible request
/// sends it (the name as offered, the description, the adapted schema).
pub(crate) fn priced(
    server: &str,
    tools: &[decima_mcp::McpTool],
) -> Vec<(decima_mcp::McpTool, u32)> {
    let counter = decima_llm::tokens::store_counter();
    let mut table = decima_mcp::ToolTable::new();
    tools
        .iter()
        .map(|t| {
            let offered = serde_json::json!({
                "type": "function",
                "function": {
                    "name": table.insert(server, &t.name),
                    "description": t.description,
                    "parameters": decima_mcp::schema::adapt(&t.input_schema, decima_mcp::schema::Dialect::OpenAi),
                }
            });
            (t.clone(), counter.count_text(&offered.to_string()))
        })
        .collect()
}
