//! The analyst's MCP servers in the settings: listed (never a secret value), added, imported
//! from Claude Desktop's file, turned on or off, checked (started, its tools listed with what
//! they cost, stopped) and removed. The rules live in `decima-runtime::mcp`.

use decima_mcp::{Place, ServerConfig, Transport};
use decima_runtime::mcp::{servers, status};
use tauri::State;

use crate::dto::{McpCheckView, McpServerOptions, McpServerView, McpSwitchView, McpToolView};
use crate::{AppError, AppState};

/// The servers, in the order they were added, each with how its last start went.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "mcp_server_list"))]
pub async fn mcp_server_list(state: State<'_, AppState>) -> Result<Vec<McpServerView>, AppError> {
    Ok(servers::list_public(&state.store)
        .await?
        .iter()
        .map(|s| McpServerView {
            status: status::read(&state.data_dir, &s.name).map(Into::into),
            ..McpServerView::from(s)
        })
        .collect())
}

/// Adds a stdio server (`command`: the program and its arguments, split as a shell would) or
/// an HTTP one (`url`). `place`: `docker` or `host`. `options`: its variables or headers, an
/// HTTP server's bearer token, a stdio server's folder and the timeouts.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "mcp_server_add"))]
pub async fn mcp_server_add(
    state: State<'_, AppState>,
    name: String,
    command: Option<String>,
    url: Option<String>,
    place: String,
    options: McpServerOptions,
) -> Result<McpServerView, AppError> {
    let mut config = match (
        command.filter(|c| !c.trim().is_empty()),
        url.filter(|u| !u.trim().is_empty()),
    ) {
        (Some(line), None) => {
            let words = shell_words::split(&line).map_err(|e| {
                AppError::invalid(format!(
                    "the command cannot be read ({e}); check its quotes"
                ))
            })?;
            let Some((program, args)) = words.split_first() else {
                return Err(AppError::invalid("give the command that starts the server"));
            };
            ServerConfig::stdio(&name, program, args.to_vec()).at(place_of(&place)?)
        }
        (None, Some(url)) => ServerConfig::http(&name, url.trim()),
        _ => {
            return Err(AppError::invalid(
                "give either the command that starts the server or its URL",
            ));
        }
    };
    apply_options(&mut config, options)?;
    servers::add(&state.store, &state.data_dir, std::slice::from_ref(&config)).await?;
    Ok(McpServerView::from(&config))
}

/// Puts the form's variables or headers, token, folder and timeouts on `config`.
fn apply_options(config: &mut ServerConfig, options: McpServerOptions) -> Result<(), AppError> {
    let mut pairs = Vec::new();
    for line in options
        .variables
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
    {
        let (key, value) = decima_mcp::config::parse_assignment(line)
            .map_err(|e| AppError::invalid(e.to_string()))?;
        // A form's `KEY = value` means the value without the spaces around the sign.
        pairs.push((key, value.trim().to_owned()));
    }
    let given = |v: Option<String>| v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
    match &mut config.transport {
        Transport::Stdio { env, cwd, .. } => {
            if given(options.bearer_token).is_some() {
                return Err(AppError::invalid(
                    "a bearer token is for a server reached by URL; give a command's secrets as \
                     KEY=VALUE variables",
                ));
            }
            env.extend(pairs);
            *cwd = given(options.cwd);
        }
        Transport::Http {
            headers,
            bearer_token,
            ..
        } => {
            if given(options.cwd).is_some() {
                return Err(AppError::invalid(
                    "a folder is for a server started by a command, not one reached by URL",
                ));
            }
            headers.extend(pairs);
            *bearer_token = given(options.bearer_token)
                .map(|t| t.trim_start_matches("Bearer ").trim().to_owned());
        }
    }
    let names = |text: &str| -> Vec<String> {
        text.split(|c: char| c == ',' || c.is_whitespace())
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
            .collect()
    };
    config.allow = names(&options.allow);
    config.deny = names(&options.deny);
    if let Some(s) = options.startup_timeout_secs {
        config.startup_timeout_secs = u64::from(s);
    }
    if let Some(s) = options.call_timeout_secs {
        config.call_timeout_secs = u64::from(s);
    }
    Ok(())
}

fn place_of(place: &str) -> Result<Place, AppError> {
    place.parse().map_err(|_| {
        AppError::invalid(format!(
            "{:?} is not a place: docker or host",
            decima_core::names::echo_untrusted(place)
        ))
    })
}

/// Imports the servers of Claude Desktop's `claude_desktop_config.json`, picked in the window:
/// all of them, or none. Returns their names.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "mcp_server_import"))]
pub async fn mcp_server_import(
    state: State<'_, AppState>,
    bytes: Vec<u8>,
    place: String,
) -> Result<Vec<String>, AppError> {
    let text = String::from_utf8(bytes)
        .map_err(|_| AppError::invalid("this file is not text: pick claude_desktop_config.json"))?;
    Ok(
        servers::import_claude_desktop_text(
            &state.store,
            &state.data_dir,
            &text,
            place_of(&place)?,
        )
        .await?,
    )
}

/// Turns a server on or off for every run.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "mcp_server_set_enabled"))]
pub async fn mcp_server_set_enabled(
    state: State<'_, AppState>,
    name: String,
    enabled: bool,
) -> Result<(), AppError> {
    Ok(servers::set_enabled(&state.store, &name, enabled).await?)
}

/// Removes a server, its secret values and its approvals.
/// Moves a stdio server between this computer (`host`) and the Docker sandbox (`docker`): the
/// recovery a check offers when the server's program is not in the sandbox image.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "mcp_server_set_place"))]
pub async fn mcp_server_set_place(
    state: State<'_, AppState>,
    name: String,
    place: String,
) -> Result<(), AppError> {
    servers::set_place(&state.store, &name, place_of(&place)?).await?;
    Ok(())
}

#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "mcp_server_remove"))]
pub async fn mcp_server_remove(state: State<'_, AppState>, name: String) -> Result<(), AppError> {
    if servers::remove(&state.store, &state.data_dir, &name).await? {
        Ok(())
    } else {
        Err(AppError::not_found("there is no MCP server of that name"))
    }
}

/// Starts a server, lists its tools with the tokens each offer takes, and stops it: the
/// server's state as a run would meet it. A server that does not start is an error saying why,
/// with its last stderr lines.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "mcp_server_check"))]
pub async fn mcp_server_check(
    state: State<'_, AppState>,
    name: String,
) -> Result<McpCheckView, AppError> {
    let cwd = state.data_dir.join("workspaces");
    let _ = tokio::fs::create_dir_all(&cwd).await;
    // A server placed in Docker starts in a container of the default sandbox settings, made
    // for the check and removed after it.
    let probe = servers::probe(&state.store, &state.data_dir, &name, &cwd, None).await?;
    let tools: Vec<McpToolView> = probe
        .tools
        .iter()
        .map(|(t, tokens)| McpToolView {
            name: t.name.clone(),
            description: t.description.lines().next().unwrap_or("").to_owned(),
            tokens: *tokens,
        })
        .collect();
    Ok(McpCheckView {
        tokens: tools.iter().map(|t| t.tokens).sum(),
        tools,
        started_ms: u32::try_from(probe.started_in.as_millis()).unwrap_or(u32::MAX),
    })
}

/// The servers as one conversation uses them: each server, whether runs use it at all, and
/// whether this conversation switched it off.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "mcp_conversation_list"))]
pub async fn mcp_conversation_list(
    state: State<'_, AppState>,
    conversation_id: String,
) -> Result<Vec<McpSwitchView>, AppError> {
    let conversation = super::conversation_id(&conversation_id)?;
    state.store.conversations().get(conversation).await?;
    let off = state.store.mcp_servers().switched_off(conversation).await?;
    Ok(servers::list_public(&state.store)
        .await?
        .into_iter()
        .map(|s| McpSwitchView {
            on_here: !off.contains(&s.name),
            name: s.name,
            enabled: s.enabled,
        })
        .collect())
}

/// Switches a server on or off for one conversation's runs.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "mcp_conversation_set"))]
pub async fn mcp_conversation_set(
    state: State<'_, AppState>,
    conversation_id: String,
    name: String,
    on: bool,
) -> Result<(), AppError> {
    let conversation = super::conversation_id(&conversation_id)?;
    state.store.conversations().get(conversation).await?;
    state
        .store
        .mcp_servers()
        .set_for_conversation(conversation, &name, on)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(variables: &str) -> McpServerOptions {
        McpServerOptions {
            variables: variables.into(),
            ..McpServerOptions::default()
        }
    }

    #[test]
    fn the_forms_variables_token_folder_and_timeouts_land_where_the_server_takes_them() {
        let mut stdio = ServerConfig::stdio("db", "node", vec!["db.js".into()]);
        apply_options(
            &mut stdio,
            McpServerOptions {
                cwd: Some(" /data ".into()),
                startup_timeout_secs: Some(90),
                deny: "drop_table, truncate\nvacuum".into(),
                ..options("DB_URL=postgres://u:p@h/db\n\n  TOKEN = abc  \n")
            },
        )
        .unwrap();
        assert_eq!(stdio.deny, ["drop_table", "truncate", "vacuum"]);
        assert!(stdio.allow.is_empty());
        let Transport::Stdio { env, cwd, .. } = &stdio.transport else {
            panic!()
        };
        assert_eq!(env["DB_URL"], "postgres://u:p@h/db");
        assert_eq!(env["TOKEN"], "abc");
        assert_eq!(cwd.as_deref(), Some("/data"));
        assert_eq!(stdio.startup_timeout_secs, 90);
        assert_eq!(stdio.call_timeout_secs, 120, "the default stays");

        let mut http = ServerConfig::http("tickets", "https://mcp.example.com/mcp");
        apply_options(
            &mut http,
            McpServerOptions {
                bearer_token: Some("Bearer tok-1".into()),
                ..options("X-Team=analytics")
            },
        )
        .unwrap();
        let Transport::Http {
            headers,
            bearer_token,
            ..
        } = &http.transport
        else {
            panic!()
        };
        assert_eq!(headers["X-Team"], "analytics");
        assert_eq!(bearer_token.as_deref(), Some("tok-1"));
    }

    #[test]
    fn what_does_not_fit_the_server_is_refused_with_why() {
        let mut stdio = ServerConfig::stdio("db", "node", vec![]);
        let e = apply_options(
            &mut stdio,
            McpServerOptions {
                bearer_token: Some("tok".into()),
                ..McpServerOptions::default()
            },
        )
        .unwrap_err();
        assert!(e.message.contains("bearer token"), "{}", e.message);
        let e = apply_options(&mut stdio, options("no equals sign")).unwrap_err();
        assert!(e.message.contains("KEY=VALUE"), "{}", e.message);
        let mut http = ServerConfig::http("t", "https://x.example/mcp");
        let e = apply_options(
            &mut http,
            McpServerOptions {
                cwd: Some("/data".into()),
                ..McpServerOptions::default()
            },
        )
        .unwrap_err();
        assert!(e.message.contains("folder"), "{}", e.message);
    }
}
