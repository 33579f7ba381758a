//! A conversation's own run options, set beside its composer: the provider, the sandbox, the
//! step budget and the tenth man's mode. The rules live in
//! `decima_runtime::conversation_options`; these carry the request and the answer.

use decima_runtime::conversation_options::{self, ConversationOptions};
use decima_runtime::review::TenthManMode;
use tauri::State;

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
    view(&state, own).await
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
    let tenth_man = tenth_man
        .filter(|m| !m.trim().is_empty())
        .map(|m| {
            serde_json::from_value::<TenthManMode>(serde_json::Value::String(m.clone())).map_err(
                |_| {
                    AppError::invalid(format!(
                        "the tenth man's mode is hybrid, tool_only, system_only or off, not \
                         '{}'",
                        decima_core::names::echo_untrusted(&m)
                    ))
                },
            )
        })
        .transpose()?;
    let saved = conversation_options::save(
        &state.store,
        id,
        ConversationOptions {
            provider,
            sandbox: sandbox.filter(|s| !s.trim().is_empty()),
            max_steps,
            tenth_man,
        },
    )
    .await?;
    view(&state, saved).await
}

async fn view(state: &AppState, own: ConversationOptions) -> Result<RunOptionsView, AppError> {
    let settings = decima_runtime::preferences::load(&state.store).await?;
    let defaults = decima_runtime::agent::RunOptions::default();
    Ok(RunOptionsView {
        provider: own.provider,
        sandbox: own.sandbox,
        max_steps: own.max_steps,
        tenth_man: own.tenth_man.map(mode_name),
        settings_provider: settings.provider,
        settings_sandbox: settings.sandbox.as_str().to_owned(),
        default_max_steps: defaults.max_steps,
        default_tenth_man: mode_name(defaults.tenth_man),
    })
}

/// The mode as the window and the store name it.
fn mode_name(mode: TenthManMode) -> String {
    serde_json::to_value(mode)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}
