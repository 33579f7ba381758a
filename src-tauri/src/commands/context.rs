//! Context commands: what the next request of a conversation would hold, for the context meter.
//! The window, thresholds and budget come from `decima-runtime`, exactly as for a chat turn.

use tauri::State;

use crate::{AppError, AppState, ContextUsage};

/// How full the conversation's context is, per layer, against the window of the provider chosen
/// in the settings (else the only configured one, or `DECIMA_CONTEXT_WINDOW`).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "context_usage"))]
pub async fn context_usage(
    state: State<'_, AppState>,
    conversation_id: String,
) -> Result<ContextUsage, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    let store = &state.store;
    let conversation = store.conversations().get(id).await?;
    let preset = decima_runtime::context::preset_of(store, &conversation).await?;
    let provider = super::settings::provider_in_force(&state, id).await?;
    let window = match decima_runtime::settings::window_settings(store, provider.as_deref()).await {
        Ok(window) => window,
        // The runtime's wording is the CLI's (flags, variables): the window names its own way.
        Err(decima_runtime::RuntimeError::Config(_)) if provider.is_none() => {
            let set_up = store.providers().list().await?.len();
            return Err(AppError::no_provider(set_up > 0));
        }
        Err(e) => return Err(e.into()),
    };
    let scale = decima_runtime::settings::calibration_scale(store, provider.as_deref()).await?;
    let built =
        decima_runtime::context::build(store, &conversation, &preset, &window, scale).await?;
    let runs = store.executions().conversation_usage(id).await?;
    let chat = store.answers().chat_totals(id).await?;
    Ok(ContextUsage {
        cached_percent: (runs.tokens_in > 0).then(|| runs.cached_percent()),
        cost_usd: runs.cost_usd(),
        chat_cost_usd: chat.cost_microdollars.map(|c| c as f64 / 1_000_000.0),
        ..ContextUsage::from(&built)
    })
}
