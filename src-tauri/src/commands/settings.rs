//! The workbench settings: the provider runs use, the reviewer's provider, the sandbox, and a
//! provider's thresholds. The rules (names must exist, thresholds must increase) live in
//! `decima-runtime`; these carry the request and the answer.

use decima_runtime::preferences::{self, Preferences};
use decima_store::SandboxKind;
use tauri::State;

use crate::dto::{ProviderView, ThresholdsView, WorkbenchSettings};
use crate::{AppError, AppState};

/// What the settings say now.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "settings_get"))]
pub async fn settings_get(state: State<'_, AppState>) -> Result<WorkbenchSettings, AppError> {
    Ok(preferences::load(&state.store).await?.into())
}

/// Saves the run's provider, the reviewer's and the sandbox; `null` or blank is "no choice".
/// Runs started afterwards use them; a run already going keeps what it started with.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "settings_save"))]
pub async fn settings_save(
    state: State<'_, AppState>,
    provider: Option<String>,
    reviewer_provider: Option<String>,
    sandbox: String,
) -> Result<WorkbenchSettings, AppError> {
    let sandbox: SandboxKind = sandbox.parse()?;
    let saved = preferences::save(
        &state.store,
        Preferences {
            provider,
            reviewer_provider,
            sandbox,
        },
    )
    .await?;
    Ok(saved.into())
}

/// Sets where a provider's meter warns and compression starts, and whether it compresses on
/// its own.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "provider_thresholds_save"))]
pub async fn provider_thresholds_save(
    state: State<'_, AppState>,
    name: String,
    thresholds: ThresholdsView,
) -> Result<ProviderView, AppError> {
    let record =
        decima_runtime::providers::set_thresholds(&state.store, &name, thresholds.into()).await?;
    let listed = decima_runtime::providers::list(&state.store, &state.data_dir).await?;
    listed
        .into_iter()
        .find(|l| l.record.id == record.id)
        .map(ProviderView::of)
        .ok_or_else(|| AppError::not_found("the provider vanished while its thresholds were saved"))
}

/// The provider the window's meter and compression use for a conversation: its own choice,
/// else the one chosen in the settings.
pub(crate) async fn provider_in_force(
    state: &AppState,
    conversation: decima_core::ConversationId,
) -> Result<Option<String>, AppError> {
    let chosen = preferences::load(&state.store).await?;
    let own = decima_runtime::conversation_options::load(&state.store, conversation).await?;
    // Several providers and no choice anywhere: said in the window's words, where the meter is.
    if own.provider.is_none()
        && chosen.provider.is_none()
        && state.store.providers().list().await?.len() > 1
    {
        return Err(AppError::no_provider(true));
    }
    Ok(own.in_force(&state.store, &chosen).await?.provider)
}
