//! Providers, presets and the sandbox: the settings and library side of the window. Every rule
//! lives in `decima-runtime`; these only carry the request and the answer.

use decima_llm::secrets::SecretString;
use decima_runtime::providers::{self, ProviderDraft};
use tauri::State;

use crate::dto::{PresetView, ProviderProbe, ProviderView, SandboxStatus};
use crate::{AppError, AppState};

/// The configured providers, with whether each has a key (never the key).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "provider_list"))]
pub async fn provider_list(state: State<'_, AppState>) -> Result<Vec<ProviderView>, AppError> {
    let listed = providers::list(&state.store, &state.data_dir).await?;
    Ok(listed.into_iter().map(ProviderView::of).collect())
}

/// Adds a provider from a preset (with overrides) or a custom endpoint. The key goes to the
/// keyring (or the 0600 file where no keyring runs), never to the database.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "provider_add"))]
#[allow(clippy::too_many_arguments)]
pub async fn provider_add(
    state: State<'_, AppState>,
    name: String,
    preset: Option<String>,
    protocol: Option<String>,
    base_url: Option<String>,
    model: Option<String>,
    context_window: Option<u32>,
    api_key: Option<String>,
) -> Result<ProviderView, AppError> {
    let protocol = protocol
        .filter(|p| !p.is_empty())
        .map(|p| decima_runtime::settings::protocol(&p))
        .transpose()?;
    let nonempty = |v: Option<String>| v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
    let added = providers::add(
        &state.store,
        &state.data_dir,
        ProviderDraft {
            name: name.trim().to_owned(),
            preset: nonempty(preset),
            protocol,
            base_url: nonempty(base_url),
            model: nonempty(model),
            context_window,
            api_key: nonempty(api_key).map(SecretString::from),
            tokenizer_json: None,
            thresholds: None,
        },
    )
    .await?;
    if let Some(warning) = &added.warning {
        tracing::warn!(%warning, "provider key storage");
    }
    let listed = providers::list(&state.store, &state.data_dir).await?;
    listed
        .into_iter()
        .find(|l| l.record.id == added.record.id)
        .map(ProviderView::of)
        .ok_or_else(|| AppError::not_found("the provider vanished right after it was added"))
}

/// Removes a provider and its key.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "provider_remove"))]
pub async fn provider_remove(state: State<'_, AppState>, name: String) -> Result<(), AppError> {
    providers::remove(&state.store, &state.data_dir, &name).await?;
    Ok(())
}

/// Sends a tiny request through the provider: proves the URL, the model and the key together.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "provider_test"))]
pub async fn provider_test(
    state: State<'_, AppState>,
    name: String,
) -> Result<ProviderProbe, AppError> {
    let probe = providers::test(&state.store, &state.data_dir, &name).await?;
    Ok(ProviderProbe {
        elapsed_ms: u32::try_from(probe.elapsed.as_millis()).unwrap_or(u32::MAX),
        prompt_tokens: probe.usage.map(|u| u.prompt_tokens),
    })
}

/// The preset library.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "preset_list"))]
pub async fn preset_list(state: State<'_, AppState>) -> Result<Vec<PresetView>, AppError> {
    let presets = state.store.presets().list().await?;
    Ok(presets.iter().map(PresetView::from).collect())
}

/// Imports a SillyTavern card (JSON or PNG) or prompt preset dropped on or picked in the window.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "preset_import"))]
pub async fn preset_import(
    state: State<'_, AppState>,
    file_name: String,
    bytes: Vec<u8>,
) -> Result<PresetView, AppError> {
    let name = std::path::Path::new(&file_name)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    let record = decima_runtime::presets::import(&state.store, name.as_deref(), &bytes).await?;
    Ok(PresetView::from(&record))
}

/// Whether the Docker engine answers, so the settings screen can offer the Docker sandbox or
/// say why not. Runs on the host need nothing.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "sandbox_status"))]
pub async fn sandbox_status(state: State<'_, AppState>) -> Result<SandboxStatus, AppError> {
    Ok(
        match decima_runtime::agent::docker::engine(&state.data_dir).await {
            Ok(_) => SandboxStatus {
                docker_available: true,
                detail: String::new(),
            },
            Err(e) => SandboxStatus {
                docker_available: false,
                detail: e.to_string(),
            },
        },
    )
}
