//! A conversation's own run options, set beside its composer: the provider, the sandbox, the
//! step budget and the tenth man's mode. The rules live in
//! `decima_runtime::conversation_options`; these carry the request and the answer.

use decima_core::ConversationId;
use decima_runtime::conversation_options::{self, ConversationOptions};
use decima_runtime::review::TenthManMode;
use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt;
use tauri_plugin_opener::OpenerExt;

use super::dialogs::{answered_path, dialog_title_or};
use crate::dto::RunOptionsView;
use crate::{AppError, AppState};

/// The conversation's run options, and what each unset one follows.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "run_options_get"))]
pub async fn run_options_get(
    state: State<'_, AppState>,
    conversation_id: String,
) -> Result<RunOptionsView, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    let own = conversation_options::load(&state.store, id).await?;
    view(&state, id, own).await
}

/// Saves the conversation's run options; `null` (or blank) follows the settings. Runs started
/// afterwards use them.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "run_options_save"))]
pub async fn run_options_save(
    state: State<'_, AppState>,
    conversation_id: String,
    provider: Option<String>,
    sandbox: Option<String>,
    max_steps: Option<u32>,
    tenth_man: Option<String>,
) -> Result<RunOptionsView, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    // The folder is kept as it is: only the folder dialog sets it, never a path the page names.
    let own = conversation_options::load(&state.store, id).await?;
    let tenth_man = tenth_man
        .filter(|m| !m.trim().is_empty())
        .map(|m| parse_mode(&m))
        .transpose()?;
    let saved = conversation_options::save(
        &state.store,
        id,
        ConversationOptions {
            provider,
            sandbox: sandbox.filter(|s| !s.trim().is_empty()),
            max_steps,
            tenth_man,
            workspace: own.workspace,
            quick: own.quick,
        },
    )
    .await?;
    view(&state, id, saved).await
}

/// Makes the conversation's next messages quick chats (no tools, plan or review), or full
/// runs again: the toggle beside Send.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "run_options_set_quick"))]
pub async fn run_options_set_quick(
    state: State<'_, AppState>,
    conversation_id: String,
    quick: bool,
) -> Result<RunOptionsView, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    let own = conversation_options::load(&state.store, id).await?;
    let saved =
        conversation_options::save(&state.store, id, ConversationOptions { quick, ..own }).await?;
    view(&state, id, saved).await
}

/// Sets where the tenth man runs for a provider's runs, unless a conversation chose; `null`
/// (or blank) follows the runtime's default.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "provider_tenth_man_save"))]
pub async fn provider_tenth_man_save(
    state: State<'_, AppState>,
    name: String,
    mode: Option<String>,
) -> Result<(), AppError> {
    let mode = mode
        .filter(|m| !m.trim().is_empty())
        .map(|m| parse_mode(&m))
        .transpose()?;
    decima_runtime::providers::set_tenth_man(&state.store, &name, mode).await?;
    Ok(())
}

/// Asks for the folder this conversation's host runs work in (the system's folder dialog), and
/// keeps it. `None` when the dialog was cancelled.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "workspace_choose"))]
pub async fn workspace_choose(
    app: AppHandle,
    state: State<'_, AppState>,
    conversation_id: String,
    dialog_title: String,
) -> Result<Option<RunOptionsView>, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    let own = conversation_options::load(&state.store, id).await?;
    let dialog = app.dialog().file().set_title(dialog_title_or(
        &dialog_title,
        "Choose the conversation's workspace folder",
    ));
    let Some(folder) = answered_path(
        |answer| dialog.pick_folder(answer),
        "folder",
        "that is not a folder on this computer",
    )
    .await?
    else {
        return Ok(None);
    };
    let saved = conversation_options::save(
        &state.store,
        id,
        ConversationOptions {
            workspace: Some(folder.display().to_string()),
            ..own
        },
    )
    .await?;
    Ok(Some(view(&state, id, saved).await?))
}

/// Goes back to the data folder's own workspace for this conversation.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "workspace_use_default"))]
pub async fn workspace_use_default(
    state: State<'_, AppState>,
    conversation_id: String,
) -> Result<RunOptionsView, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    let own = conversation_options::load(&state.store, id).await?;
    let saved = conversation_options::save(
        &state.store,
        id,
        ConversationOptions {
            workspace: None,
            ..own
        },
    )
    .await?;
    view(&state, id, saved).await
}

/// Opens the conversation's workspace in the file manager: the folder its next run works in
/// (a subagent's conversation works in its parent's; the settings' default folder counts), made
/// first when no run has made it yet, so files can be put there before the first run. A
/// workspace in a Docker container has no folder here: the error says how to get its files.
/// Where no file manager opens it (none installed), the folder's path comes back instead of an
/// error, for the window to give the analyst to paste; `None` when it opened.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "workspace_open"))]
pub async fn workspace_open(
    app: AppHandle,
    state: State<'_, AppState>,
    conversation_id: String,
) -> Result<Option<String>, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    let place = decima_runtime::workspace::place(&state.store, &state.data_dir, id).await?;
    let Some(folder) = place.host_dir else {
        return Err(AppError::invalid(
            "this conversation works in a Docker container, which has no folder on this \
             computer: use Save as in the workspace panel to copy a file out",
        ));
    };
    match app
        .opener()
        .open_path(folder.to_string_lossy(), None::<&str>)
    {
        Ok(()) => Ok(None),
        Err(e) => {
            tracing::warn!(error = %e, "no file manager opened the workspace");
            Ok(Some(folder.display().to_string()))
        }
    }
}

async fn view(
    state: &AppState,
    id: ConversationId,
    own: ConversationOptions,
) -> Result<RunOptionsView, AppError> {
    let settings = decima_runtime::preferences::load(&state.store).await?;
    let defaults = decima_runtime::agent::RunOptions::default();
    // What an unset tenth man follows: the in-force provider's default, else the runtime's.
    let in_force = match &own.provider {
        Some(p) => Some(p.clone()),
        None => settings
            .provider_in_force(&state.store)
            .await
            .ok()
            .flatten(),
    };
    let provider_tenth_man =
        match decima_runtime::providers::tenth_man_of(&state.store, in_force.as_deref()).await {
            Ok(mode) => mode.map(mode_name),
            Err(_) => None,
        };
    Ok(RunOptionsView {
        quick: own.quick,
        provider_in_force: in_force,
        provider_tenth_man: provider_tenth_man.clone(),
        provider: own.provider,
        sandbox: own.sandbox,
        max_steps: own.max_steps,
        tenth_man: own.tenth_man.map(mode_name),
        settings_provider: settings.provider,
        settings_sandbox: settings.sandbox.as_str().to_owned(),
        default_max_steps: defaults.max_steps,
        default_tenth_man: provider_tenth_man.unwrap_or_else(|| mode_name(defaults.tenth_man)),
        default_workspace: decima_runtime::agent::default_workspace(&state.data_dir, id)
            .display()
            .to_string(),
        workspace: own.workspace,
    })
}

/// A tenth man's mode as the window names it.
fn parse_mode(text: &str) -> Result<TenthManMode, AppError> {
    serde_json::from_value::<TenthManMode>(serde_json::Value::String(text.to_owned())).map_err(
        |_| {
            AppError::invalid(format!(
                "the tenth man's mode is hybrid, tool_only, system_only or off, not '{}'",
                decima_core::names::echo_untrusted(text)
            ))
        },
    )
}

/// The mode as the window and the store name it.
fn mode_name(mode: TenthManMode) -> String {
    serde_json::to_value(mode)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}
