//! Turning stored provider rows, presets and the `DECIMA_*` environment into a ready
//! [`ProviderConfig`], with the key fetched from the secret store.

use std::path::Path;

use decima_core::context::Thresholds;
use decima_llm::secrets::{SecretStore, SecretString};
use decima_llm::{Protocol, ProviderConfig, ReasoningField};
use decima_store::{ProviderRecord, Store};
use serde_json::{Value, json};

use crate::error::CliError;

/// The settings a provider row keeps beside its columns (never a key).
pub fn settings_for(
    reasoning_echo: bool,
    reasoning_field: Option<ReasoningField>,
    supports_json_schema: bool,
) -> Value {
    json!({
        "reasoning_echo": reasoning_echo,
        "reasoning_field": reasoning_field.map(|f| f.as_str()),
        "supports_json_schema": supports_json_schema,
    })
}

/// Parses `openai` / `anthropic`.
pub fn protocol(kind: &str) -> Result<Protocol, CliError> {
    match kind {
        "openai" => Ok(Protocol::OpenAi),
        "anthropic" => Ok(Protocol::Anthropic),
        other => Err(CliError::Provider(format!(
            "unknown provider kind '{other}' (expected openai or anthropic)"
        ))),
    }
}

/// The config for a stored provider, with its key if one is stored.
pub fn from_record(
    record: &ProviderRecord,
    secrets: &SecretStore,
) -> Result<ProviderConfig, CliError> {
    let mut config = ProviderConfig::new(
        &record.name,
        protocol(&record.kind)?,
        &record.base_url,
        &record.model,
    );
    config.context_window = record.context_window;
    config.api_key = secrets.get(&record.name)?;
    let settings = &record.settings;
    config.reasoning_echo = settings
        .get("reasoning_echo")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    config.supports_json_schema = settings
        .get("supports_json_schema")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if settings.get("reasoning_field").and_then(Value::as_str) == Some("reasoning") {
        config.reasoning_field = ReasoningField::Reasoning;
    }
    config.tokenizer_json = settings
        .get("tokenizer_json")
        .and_then(Value::as_str)
        .map(Into::into);
    Ok(config)
}

/// The provider `chat` uses: the named one; with none configured, one defined by `DECIMA_*`
/// variables; with exactly one configured, that one.
pub async fn resolve(
    store: &Store,
    data_dir: &Path,
    name: Option<&str>,
) -> Result<ProviderConfig, CliError> {
    if let Some(name) = name {
        let record = store.providers().get_by_name(name).await?;
        return from_record(&record, &open_secrets(data_dir)?);
    }
    let records = store.providers().list().await?;
    match records.as_slice() {
        [] => from_env(),
        [only] => from_record(only, &open_secrets(data_dir)?),
        many => Err(CliError::Provider(format!(
            "several providers are configured; pass --provider with one of: {}",
            many.iter()
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The context window to budget against and where compression starts: the named provider's,
/// else `DECIMA_CONTEXT_WINDOW` with the default thresholds, else the only configured provider's.
pub async fn context_window(
    store: &Store,
    data_dir: &Path,
    name: Option<&str>,
) -> Result<(u32, Thresholds), CliError> {
    if name.is_none()
        && let Some(window) = std::env::var("DECIMA_CONTEXT_WINDOW")
            .ok()
            .filter(|v| !v.trim().is_empty())
    {
        let window = window
            .trim()
            .parse()
            .ok()
            .filter(|w| *w > 0)
            .ok_or_else(|| {
                CliError::Provider(format!(
                    "DECIMA_CONTEXT_WINDOW must be a positive number, not '{window}'"
                ))
            })?;
        return Ok((window, Thresholds::default()));
    }
    let thresholds = match name {
        Some(name) => thresholds_of(&store.providers().get_by_name(name).await?.settings),
        None => match store.providers().list().await?.as_slice() {
            [only] => thresholds_of(&only.settings),
            _ => Thresholds::default(),
        },
    };
    match resolve(store, data_dir, name).await {
        Ok(config) => Ok((config.context_window, thresholds)),
        Err(CliError::Provider(_)) if name.is_none() => Err(CliError::Provider(
            "no context window: pass --provider NAME or set DECIMA_CONTEXT_WINDOW".into(),
        )),
        Err(e) => Err(e),
    }
}

/// A provider's thresholds from its settings, or the defaults.
fn thresholds_of(settings: &Value) -> Thresholds {
    settings
        .get("thresholds")
        .and_then(|t| serde_json::from_value::<Thresholds>(t.clone()).ok())
        .filter(|t| t.validate().is_ok())
        .unwrap_or_default()
}

/// The secret store; its fallback warning is printed where keys are written, not on every read.
pub fn open_secrets(data_dir: &Path) -> Result<SecretStore, CliError> {
    let (secrets, _warning) = SecretStore::open(data_dir)?;
    Ok(secrets)
}

/// A provider defined entirely by environment variables, for scripts and CI.
fn from_env() -> Result<ProviderConfig, CliError> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let Some(kind) = var("DECIMA_PROVIDER_KIND") else {
        return Err(CliError::Provider(
            "no provider configured: run `decima provider add NAME --preset P` or set DECIMA_PROVIDER_KIND, \
             DECIMA_BASE_URL and DECIMA_MODEL"
                .into(),
        ));
    };
    let protocol = protocol(&kind)?;
    let base_url = var("DECIMA_BASE_URL")
        .ok_or_else(|| CliError::Provider("DECIMA_BASE_URL is not set".into()))?;
    let model =
        var("DECIMA_MODEL").ok_or_else(|| CliError::Provider("DECIMA_MODEL is not set".into()))?;
    let mut config = ProviderConfig::new("env", protocol, base_url, model);
    config.api_key = var("DECIMA_API_KEY").map(SecretString::new);
    if let Some(window) = var("DECIMA_CONTEXT_WINDOW") {
        config.context_window = window.parse().ok().filter(|w| *w > 0).ok_or_else(|| {
            CliError::Provider(format!(
                "DECIMA_CONTEXT_WINDOW must be a positive number, not '{window}'"
            ))
        })?;
    }
    Ok(config)
}
