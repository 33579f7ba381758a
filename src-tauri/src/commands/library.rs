//! Providers, presets and the sandbox: the settings and library side of the window. Every rule
//! lives in `decima-runtime`; these only carry the request and the answer.

use decima_llm::LlmError;
use decima_llm::secrets::SecretString;
use decima_runtime::RuntimeError;
use decima_runtime::providers::{self, ProviderDraft};
use tauri::State;

use crate::dto::{
    ImageBuildEvent, PresetView, PricesView, ProbeFailure, ProviderModels, ProviderName,
    ProviderPresetView, ProviderProbe, ProviderView, SandboxImageView, SandboxStatus,
};
use crate::{AppError, AppState};

/// The configured providers, with whether each has a key (never the key).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "provider_list"))]
pub async fn provider_list(state: State<'_, AppState>) -> Result<Vec<ProviderView>, AppError> {
    let listed = providers::list(&state.store, &state.data_dir).await?;
    Ok(listed.into_iter().map(ProviderView::of).collect())
}

/// The configured providers' names and models, read from the store alone: what the first
/// start and the run options need, without opening the keyring (which costs the app process
/// a D-Bus connection it otherwise does not need until Settings opens).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "provider_names"))]
pub async fn provider_names(state: State<'_, AppState>) -> Result<Vec<ProviderName>, AppError> {
    Ok(state
        .store
        .providers()
        .list()
        .await?
        .into_iter()
        .map(|p| ProviderName {
            name: p.name,
            model: p.model,
        })
        .collect())
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
    let started = std::time::Instant::now();
    let elapsed =
        |since: std::time::Instant| u32::try_from(since.elapsed().as_millis()).unwrap_or(u32::MAX);
    match providers::test(&state.store, &state.data_dir, &name).await {
        Ok(probe) => Ok(ProviderProbe {
            elapsed_ms: u32::try_from(probe.elapsed.as_millis()).unwrap_or(u32::MAX),
            prompt_tokens: probe.usage.map(|u| u.prompt_tokens),
            context_window: Some(probe.window.window),
            context_window_source: Some(probe.window.source.into()),
            window_warning: probe.window.warning,
            structured_output: probe.structured_output,
            failure: None,
        }),
        // The provider failed the test: that is the test's answer, not the command's failure.
        Err(RuntimeError::Llm(e)) => {
            let url = state
                .store
                .providers()
                .get_by_name(&name)
                .await
                .map(|p| p.base_url)
                .unwrap_or_default();
            Ok(ProviderProbe {
                elapsed_ms: elapsed(started),
                prompt_tokens: None,
                context_window: None,
                context_window_source: None,
                window_warning: None,
                structured_output: None,
                failure: Some(probe_failure(&e, url)),
            })
        }
        Err(e) => Err(e.into()),
    }
}

/// The provider presets, for the first-start setup's choice of server.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "provider_presets"))]
pub async fn provider_presets() -> Result<Vec<ProviderPresetView>, AppError> {
    Ok(decima_llm::presets::all()
        .iter()
        .map(|p| ProviderPresetView {
            name: p.name.clone(),
            label: p.label.clone(),
            kind: match p.protocol {
                decima_llm::Protocol::OpenAi => "openai",
                decima_llm::Protocol::Anthropic => "anthropic",
                decima_llm::Protocol::Ollama => "ollama",
            }
            .to_owned(),
            base_url: p.base_url.clone(),
            default_model: p.default_model.clone(),
            context_window: p.context_window,
            needs_api_key: p.needs_api_key,
        })
        .collect())
}

/// The models the server at `base_url` lists (`kind`: openai or anthropic), for the setup's
/// model picker. A server that does not answer is the answer's `failure`, in the provider
/// test's terms, not the command's error: the analyst can still type a model.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "provider_models"))]
pub async fn provider_models(
    kind: String,
    base_url: String,
    api_key: Option<String>,
) -> Result<ProviderModels, AppError> {
    let protocol = decima_runtime::settings::protocol(&kind)?;
    let base_url = base_url.trim().to_owned();
    let url = reqwest_like_check(&base_url)?;
    let mut config = decima_llm::ProviderConfig::new("the server", protocol, url, "");
    config.api_key = api_key
        .map(|k| k.trim().to_owned())
        .filter(|k| !k.is_empty())
        .map(SecretString::from);
    match decima_llm::models::list(&config).await {
        Ok(models) => Ok(ProviderModels {
            models,
            failure: None,
        }),
        Err(e) => Ok(ProviderModels {
            models: Vec::new(),
            failure: Some(probe_failure(&e, base_url)),
        }),
    }
}

/// The base URL, when it reads as one: http or https, with a host.
fn reqwest_like_check(base_url: &str) -> Result<String, AppError> {
    let ok = (base_url.starts_with("http://") || base_url.starts_with("https://"))
        && base_url
            .split("://")
            .nth(1)
            .is_some_and(|rest| !rest.is_empty());
    if ok {
        Ok(base_url.to_owned())
    } else {
        Err(AppError::invalid(
            "the base URL must start with http:// or https://, e.g. http://localhost:11434/v1",
        ))
    }
}

/// What kind of failure a provider test met, for the window's plain sentence.
fn probe_failure(error: &LlmError, url: String) -> ProbeFailure {
    let (kind, status) = match error {
        LlmError::Connect { .. } => ("unreachable", None),
        LlmError::Http { status, .. } => (
            match status {
                401 | 403 => "unauthorized",
                404 => "not_found",
                429 => "rate_limited",
                _ => "http",
            },
            Some(*status),
        ),
        LlmError::IdleTimeout { .. } | LlmError::TotalTimeout { .. } => ("timeout", None),
        _ => ("other", None),
    };
    ProbeFailure {
        kind: kind.to_owned(),
        url,
        status,
        detail: error.to_string(),
    }
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
    let (host_shell, host_shell_problem) = match decima_sandbox::HostShell::system() {
        Ok(shell) => (Some(shell.describe()), String::new()),
        Err(problem) => (None, problem),
    };
    let (docker_available, detail, image) =
        match decima_runtime::docker::engine(&state.data_dir).await {
            Ok(engine) => {
                let image = engine
                    .image_status(decima_sandbox::DockerConfig::DEFAULT_IMAGE)
                    .await
                    .ok()
                    .map(|status| SandboxImageView {
                        // Held, and not by this window's own build.
                        building_elsewhere: BUILDING.try_lock().is_ok()
                            && decima_sandbox::docker::image::build_running(
                                decima_sandbox::DockerConfig::DEFAULT_IMAGE,
                            ),
                        ..SandboxImageView::from(status)
                    });
                (true, String::new(), image)
            }
            Err(e) => (false, docker_detail(e), None),
        };
    Ok(SandboxStatus {
        docker_available,
        detail,
        image,
        host_shell,
        host_shell_problem,
    })
}

/// One image build at a time in this window.
static BUILDING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Builds the analyst's sandbox image from the recipe (minutes), reporting each step and each
/// package fetched and unpacked on `on_progress`; `force` builds it again even when it is
/// current. A second build while one runs is refused.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "sandbox_image_build"))]
pub async fn sandbox_image_build(
    state: State<'_, AppState>,
    force: bool,
    on_progress: tauri::ipc::Channel<ImageBuildEvent>,
) -> Result<SandboxImageView, AppError> {
    let Ok(_one) = BUILDING.try_lock() else {
        return Err(AppError::conflict(
            "the sandbox image is being built already",
        ));
    };
    let sandbox_error = |e| AppError::from(decima_runtime::RuntimeError::Sandbox(e));
    let engine = decima_runtime::docker::engine(&state.data_dir)
        .await
        .map_err(sandbox_error)?;
    let mirror = std::env::var("DECIMA_DEBIAN_MIRROR")
        .ok()
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| decima_sandbox::docker::image::DEFAULT_MIRROR.to_owned());
    let report = |event: decima_sandbox::docker::image::BuildEvent| {
        let event = match event {
            decima_sandbox::docker::image::BuildEvent::Step(text) => ImageBuildEvent::Step {
                text: text.to_owned(),
            },
            decima_sandbox::docker::image::BuildEvent::Progress(line) => {
                ImageBuildEvent::Progress { line }
            }
        };
        // A window closed mid-build stops listening; the build goes on.
        let _ = on_progress.send(event);
    };
    let status = engine
        .build_sandbox_image(
            decima_sandbox::DockerConfig::DEFAULT_IMAGE,
            &mirror,
            force,
            &report,
        )
        .await
        .map_err(sandbox_error)?;
    Ok(SandboxImageView::from(status))
}

/// What failed, for the settings screen: the cause alone where the engine did not answer, since
/// the full message tells a terminal user what to type (`--sandbox host`, `dockerd &`), and the
/// window says what to do in its own words.
fn docker_detail(e: decima_sandbox::SandboxError) -> String {
    match e {
        decima_sandbox::SandboxError::DockerUnavailable { detail }
        | decima_sandbox::SandboxError::EngineRefused { detail } => detail,
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_docker_status_names_the_cause_not_the_cli_s_advice() {
        let detail = docker_detail(decima_sandbox::SandboxError::DockerUnavailable {
            detail: "/var/run/docker.sock: connection refused".into(),
        });
        assert_eq!(detail, "/var/run/docker.sock: connection refused");
        let full =
            decima_sandbox::SandboxError::DockerUnavailable { detail: "x".into() }.to_string();
        assert!(
            full.contains("--sandbox host"),
            "the CLI's message changed: {full}"
        );
    }

    #[test]
    fn a_failed_test_is_named_by_what_went_wrong() {
        let url = "http://127.0.0.1:9/v1".to_owned();
        let connect = LlmError::Connect {
            provider: "local".into(),
            url: url.clone(),
            detail: "connection refused".into(),
        };
        let failure = probe_failure(&connect, url.clone());
        assert_eq!(failure.kind, "unreachable");
        assert_eq!(failure.url, url);
        assert!(failure.detail.contains("connection refused"));
        let http = |status| LlmError::Http {
            provider: "local".into(),
            status,
            message: "no".into(),
            retry_after: None,
            class: decima_core::FailureClass::Permission,
        };
        assert_eq!(probe_failure(&http(401), url.clone()).kind, "unauthorized");
        assert_eq!(probe_failure(&http(404), url.clone()).kind, "not_found");
        assert_eq!(probe_failure(&http(429), url.clone()).kind, "rate_limited");
        let other = probe_failure(&http(500), url);
        assert_eq!((other.kind.as_str(), other.status), ("http", Some(500)));
    }
}

/// A provider just saved, as the settings list shows it (with where its key is kept).
async fn saved_view(
    state: &AppState,
    record: &decima_store::ProviderRecord,
) -> Result<ProviderView, AppError> {
    let listed = providers::list(&state.store, &state.data_dir).await?;
    listed
        .into_iter()
        .find(|l| l.record.id == record.id)
        .map(ProviderView::of)
        .ok_or_else(|| AppError::not_found("the provider vanished while it was saved"))
}

/// Sets what a provider charges (`null` clears it: runs then show no cost) and, for Anthropic,
/// how long its prompt cache keeps a prefix (`5m` or `1h`).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "provider_pricing_save"))]
pub async fn provider_pricing_save(
    state: State<'_, AppState>,
    name: String,
    prices: Option<PricesView>,
    cache_ttl: String,
) -> Result<ProviderView, AppError> {
    let ttl = match cache_ttl.as_str() {
        "5m" => decima_llm::CacheTtl::FiveMinutes,
        "1h" => decima_llm::CacheTtl::OneHour,
        _ => {
            return Err(AppError::invalid(
                "the cache lifetime is 5 minutes or 1 hour".to_owned(),
            ));
        }
    };
    let record = providers::set_pricing(
        &state.store,
        &name,
        prices.map(decima_llm::Prices::from),
        Some(ttl),
    )
    .await?;
    saved_view(&state, &record).await
}

/// Changes a provider's base URL, model and window, and its key when a new one is given (blank
/// keeps the stored key).
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "provider_update"))]
pub async fn provider_update(
    state: State<'_, AppState>,
    name: String,
    base_url: String,
    model: String,
    context_window: u32,
    api_key: Option<String>,
) -> Result<ProviderView, AppError> {
    let record = providers::update(
        &state.store,
        &state.data_dir,
        &name,
        providers::ProviderEdit {
            base_url,
            model,
            context_window,
            api_key: api_key
                .map(|k| k.trim().to_owned())
                .filter(|k| !k.is_empty())
                .map(SecretString::from),
        },
    )
    .await?;
    saved_view(&state, &record).await
}
