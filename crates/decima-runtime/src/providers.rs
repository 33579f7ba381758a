//! Adding, listing, removing and testing providers: the rules a settings screen and the CLI
//! share. Keys go to the secret store, never to the database; a provider is never left without
//! the key the person meant it to have.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use decima_core::Role;
use decima_core::context::Thresholds;
use decima_llm::secrets::{SecretBackend, SecretStore, SecretString};
use decima_llm::{
    ChatMessage, ChatRequest, HttpProvider, Protocol, Provider, ProviderConfig, Usage, collect,
    presets,
};
use decima_store::{NewProvider, ProviderRecord, Store};
use tracing::info;

use crate::error::{Result, RuntimeError};
use crate::settings::{self, ProviderSettings};

use crate::served_window::{self, DEFAULT_WINDOW, Freshness, WindowCheck};
use crate::settings::WindowSource;

/// What the person asks for when adding a provider: a preset with overrides, or a custom one.
#[derive(Debug, Clone, Default)]
pub struct ProviderDraft {
    /// 1 to 64 characters of `[A-Za-z0-9._-]`.
    pub name: String,
    /// A preset name from `decima_llm::presets`.
    pub preset: Option<String>,
    /// The protocol of a custom provider (required without a preset).
    pub protocol: Option<Protocol>,
    /// Overrides the preset's URL; required for a custom provider.
    pub base_url: Option<String>,
    /// Overrides the preset's model; required for a custom provider.
    pub model: Option<String>,
    /// Overrides the preset's window.
    pub context_window: Option<u32>,
    /// The key, stored in the secret store.
    pub api_key: Option<SecretString>,
    /// The model's own `tokenizer.json`, checked now rather than at the first chat.
    pub tokenizer_json: Option<PathBuf>,
    /// Thresholds; `None` keeps the defaults.
    pub thresholds: Option<Thresholds>,
}

/// A provider that was added, and the secret store's one-time warning if keys fell back to a file.
#[derive(Debug, Clone)]
pub struct Added {
    /// The stored row.
    pub record: ProviderRecord,
    /// Set when the key went to the 0600 file because no keyring service runs.
    pub warning: Option<String>,
    /// The window decided from what the server serves, with its source and any warning (a
    /// configured window clamped, a server that could not be asked).
    pub window: WindowCheck,
}

/// Validates and stores a provider, then its key. A key that cannot be stored removes the row
/// again, so no half-configured provider remains.
pub async fn add(store: &Store, data_dir: &Path, draft: ProviderDraft) -> Result<Added> {
    if let Some(path) = &draft.tokenizer_json {
        decima_llm::tokens::HfCounter::from_file(path)?;
    }
    let mut new = new_provider(&draft)?;
    let mut typed: ProviderSettings =
        serde_json::from_value(new.settings.clone()).unwrap_or_default();
    typed.tokenizer_json = draft.tokenizer_json.clone();
    typed.thresholds = draft.thresholds;
    typed.server = draft
        .preset
        .as_deref()
        .and_then(presets::find)
        .map(|p| p.server)
        .filter(|s| *s != decima_llm::ServerFamily::Hosted);
    typed.configured_window = draft.context_window;
    typed.window_source = Some(if draft.context_window.is_some() {
        WindowSource::Configured
    } else {
        WindowSource::Preset
    });
    new.settings = typed.to_value();
    // Validate the endpoint before anything is stored.
    let mut probe = ProviderConfig::new(
        &new.name,
        settings::protocol(&new.kind)?,
        &new.base_url,
        &new.model,
    );
    probe.context_window = new.context_window;
    HttpProvider::new(probe)?;
    let record = store.providers().create(new).await?;
    let mut warning = None;
    if let Some(key) = &draft.api_key {
        let (secrets, fallback) = SecretStore::open_async(data_dir).await?;
        if let Err(e) = secrets.set_async(&record.name, key).await {
            // Leave no provider without the key the user meant it to have.
            let _ = store.providers().remove(&record.name).await;
            return Err(e.into());
        }
        warning = fallback;
    }
    info!(provider = %record.name, kind = %record.kind, "provider added");
    // Ask the server what it serves now, so the first run is fitted to it.
    let config = settings::from_record(&record, data_dir).await?.config;
    let (window, record) = served_window::check(store, &record, &config, Freshness::Now).await?;
    Ok(Added {
        record,
        warning,
        window,
    })
}

/// The row a draft makes: from its preset with the draft's overrides, or a custom one.
fn new_provider(draft: &ProviderDraft) -> Result<NewProvider> {
    let new = match &draft.preset {
        Some(preset_name) => {
            let preset = presets::find(preset_name).ok_or_else(|| {
                RuntimeError::Config(format!(
                    "unknown preset '{}' (one of: {})",
                    decima_core::names::echo_untrusted(preset_name),
                    presets::all()
                        .iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
            if preset.needs_api_key && draft.api_key.is_none() {
                return Err(RuntimeError::Config(format!(
                    "the {} preset needs an API key",
                    preset.label
                )));
            }
            NewProvider {
                name: draft.name.clone(),
                kind: preset.protocol.as_str().into(),
                preset: Some(preset.name.clone()),
                base_url: draft
                    .base_url
                    .clone()
                    .unwrap_or_else(|| preset.base_url.clone()),
                model: draft
                    .model
                    .clone()
                    .unwrap_or_else(|| preset.default_model.clone()),
                context_window: draft.context_window.unwrap_or(preset.context_window),
                settings: ProviderSettings {
                    reasoning_echo: preset.reasoning_echo,
                    reasoning_field: preset.reasoning_field,
                    supports_json_schema: preset.supports_json_schema,
                    prompt_cache_key: preset.prompt_cache_key,
                    max_completion_tokens: preset.max_completion_tokens,
                    prices: preset.prices,
                    ..ProviderSettings::default()
                }
                .to_value(),
            }
        }
        None => {
            let Some(protocol) = draft.protocol else {
                return Err(RuntimeError::Config(
                    "choose a preset, or give the kind of server (openai or anthropic) and its base URL"
                        .into(),
                ));
            };
            NewProvider {
                name: draft.name.clone(),
                kind: protocol.as_str().into(),
                preset: None,
                base_url: draft.base_url.clone().unwrap_or_default(),
                model: draft.model.clone().ok_or_else(|| {
                    RuntimeError::Config(
                        "a provider without a preset needs its model's name".into(),
                    )
                })?,
                context_window: draft.context_window.unwrap_or(DEFAULT_WINDOW),
                settings: ProviderSettings::default().to_value(),
            }
        }
    };
    Ok(new)
}

/// A provider as a settings list shows it.
#[derive(Debug, Clone)]
pub struct Listed {
    /// The stored row.
    pub record: ProviderRecord,
    /// Whether the secret store holds a key for it.
    pub has_api_key: bool,
    /// Where that key is: the keyring, or the 0600 file (with its path).
    pub key_place: Option<SecretBackend>,
}

/// Every live provider, with whether a key is stored.
pub async fn list(store: &Store, data_dir: &Path) -> Result<Vec<Listed>> {
    let records = store.providers().list().await?;
    let (secrets, _warning) = SecretStore::open_async(data_dir).await?;
    let mut rows = Vec::with_capacity(records.len());
    for record in records {
        let key_place = secrets.locate_async(&record.name).await?;
        rows.push(Listed {
            record,
            has_api_key: key_place.is_some(),
            key_place,
        });
    }
    Ok(rows)
}

/// What the window's settings change on a provider: its address, model and window, and its
/// key when a new one is given (`None` keeps the stored key).
#[derive(Debug)]
pub struct ProviderEdit {
    /// The base URL.
    pub base_url: String,
    /// The model.
    pub model: String,
    /// The context window, in tokens.
    pub context_window: u32,
    /// A new key, replacing the stored one.
    pub api_key: Option<SecretString>,
}

/// Changes a provider's endpoint (checked as `add` checks it) and, when given, its key.
pub async fn update(
    store: &Store,
    data_dir: &Path,
    name: &str,
    edit: ProviderEdit,
) -> Result<ProviderRecord> {
    let current = store.providers().get_by_name(name).await?;
    let mut settings = ProviderSettings::from_record(&current)?;
    if edit.base_url.trim() != current.base_url || edit.model.trim() != current.model {
        // Another server or model: whether it holds answers to a schema is checked again.
        settings.structured_output = None;
    }
    if edit.context_window != current.context_window {
        // The analyst set another window: it is theirs now (and a server serving less clamps
        // it at the next check).
        settings.configured_window = Some(edit.context_window);
        settings.window_source = Some(WindowSource::Configured);
    }
    let mut probe = ProviderConfig::new(
        name,
        settings::protocol(&current.kind)?,
        edit.base_url.trim(),
        edit.model.trim(),
    );
    probe.context_window = edit.context_window;
    HttpProvider::new(probe.clone())?;
    store
        .providers()
        .update_endpoint(name, &edit.base_url, &edit.model, edit.context_window)
        .await?;
    let record = store
        .providers()
        .update_settings(name, settings.to_value())
        .await?;
    served_window::forget(&probe);
    if let Some(key) = &edit.api_key {
        let (secrets, _fallback) = SecretStore::open_async(data_dir).await?;
        secrets.set_async(name, key).await?;
    }
    info!(provider = %name, "provider edited");
    Ok(record)
}

/// Removes a provider and its key.
pub async fn remove(store: &Store, data_dir: &Path, name: &str) -> Result<()> {
    store.providers().remove(name).await?;
    let (secrets, _warning) = SecretStore::open_async(data_dir).await?;
    secrets.delete_async(name).await?;
    info!(provider = %name, "provider removed");
    Ok(())
}

/// Sets where a provider's meter warns and compression starts, and whether compression runs on
/// its own; returns the updated row. Thresholds that are not increasing fractions are refused,
/// so a typo cannot switch compression off by accident; the rest of the settings are kept.
pub async fn set_thresholds(
    store: &Store,
    name: &str,
    thresholds: Thresholds,
) -> Result<ProviderRecord> {
    thresholds.validate()?;
    if thresholds.deep > 1.0 {
        return Err(RuntimeError::Config(format!(
            "deep compression at {:.0}% of the window would start only after the window is full; \
             use at most 100%",
            thresholds.deep * 100.0
        )));
    }
    let record = store.providers().get_by_name(name).await?;
    let mut settings = ProviderSettings::from_record(&record)?;
    settings.thresholds = Some(thresholds);
    let updated = store
        .providers()
        .update_settings(name, settings.to_value())
        .await?;
    info!(provider = %name, warn = thresholds.warn, compress = thresholds.compress,
          deep = thresholds.deep, enabled = thresholds.enabled, "thresholds set");
    Ok(updated)
}

/// Sets what a provider charges (`None` clears it: no cost is estimated) and how long Anthropic
/// keeps its cached prefix; returns the updated row. Negative or non-finite prices are refused.
pub async fn set_pricing(
    store: &Store,
    name: &str,
    prices: Option<decima_llm::Prices>,
    cache_ttl: Option<decima_llm::CacheTtl>,
) -> Result<ProviderRecord> {
    if let Some(prices) = &prices {
        prices.validate().map_err(RuntimeError::Config)?;
    }
    let record = store.providers().get_by_name(name).await?;
    let mut settings = ProviderSettings::from_record(&record)?;
    settings.prices = prices;
    settings.cache_ttl = cache_ttl;
    let updated = store
        .providers()
        .update_settings(name, settings.to_value())
        .await?;
    info!(provider = %name, priced = prices.is_some(), "pricing set");
    Ok(updated)
}

/// Sets where the tenth man runs for a provider's runs unless a conversation chose (`None`
/// follows the runtime's default); returns the updated row.
pub async fn set_tenth_man(
    store: &Store,
    name: &str,
    mode: Option<crate::review::TenthManMode>,
) -> Result<ProviderRecord> {
    let record = store.providers().get_by_name(name).await?;
    let mut settings = ProviderSettings::from_record(&record)?;
    settings.tenth_man = mode;
    let updated = store
        .providers()
        .update_settings(name, settings.to_value())
        .await?;
    info!(provider = %name, ?mode, "tenth man default set");
    Ok(updated)
}

/// The tenth man's mode a run with `provider` (by name; `None`: the only configured one)
/// starts with when its conversation did not choose: the provider's default, else the
/// runtime's.
pub async fn tenth_man_default(
    store: &Store,
    provider: Option<&str>,
) -> Result<crate::review::TenthManMode> {
    Ok(tenth_man_of(store, provider).await?.unwrap_or_default())
}

/// The tenth man's mode `provider` (by name; `None`: the only configured one) set for its
/// runs, if it set one.
pub async fn tenth_man_of(
    store: &Store,
    provider: Option<&str>,
) -> Result<Option<crate::review::TenthManMode>> {
    let record = match provider {
        Some(name) => Some(store.providers().get_by_name(name).await?),
        None => match store.providers().list().await?.as_slice() {
            [only] => Some(only.clone()),
            _ => None,
        },
    };
    Ok(match record {
        Some(record) => ProviderSettings::from_record(&record)?.tenth_man,
        None => None,
    })
}

/// What a connection test measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    /// From sending to the end of the answer.
    pub elapsed: Duration,
    /// Usage, if the provider reported it.
    pub usage: Option<Usage>,
    /// The window as the server reports it (or the preset's, or the analyst's), with its
    /// source and any warning.
    pub window: WindowCheck,
    /// Whether the server held an answer to a JSON schema; `None` where the preset says it
    /// cannot, so nothing was asked (Decima parses and repairs those answers instead).
    pub structured_output: Option<bool>,
}

/// Sends a tiny request, so a settings screen's "test" button and `provider test` prove the URL,
/// the model and the key work together; reads the window the server serves; and, where the
/// preset says the server can hold an answer to a JSON schema, checks that it does and records
/// the result.
pub async fn test(store: &Store, data_dir: &Path, name: &str) -> Result<Probe> {
    let record = store.providers().get_by_name(name).await?;
    let config = settings::from_record(&record, data_dir).await?.config;
    let (window, record) = served_window::check(store, &record, &config, Freshness::Now).await?;
    let model = config.model.clone();
    let provider = HttpProvider::new(config.clone())?;
    let request = ChatRequest {
        model,
        messages: vec![ChatMessage::new(Role::User, "Reply with the single word: pong").into()],
        max_tokens: Some(16),
        ..ChatRequest::default()
    };
    let started = Instant::now();
    let completion = collect((&provider as &dyn Provider).stream(&request)).await?;
    let elapsed = started.elapsed();
    let structured_output = structured_check(store, &record, &config, &provider).await?;
    Ok(Probe {
        elapsed,
        usage: completion.usage,
        window,
        structured_output,
    })
}

/// Asks for a small answer held to a JSON schema, where the server is said to hold answers to
/// one, and records whether it did.
async fn structured_check(
    store: &Store,
    record: &ProviderRecord,
    config: &ProviderConfig,
    provider: &HttpProvider,
) -> Result<Option<bool>> {
    let mut settings = ProviderSettings::from_record(record)?;
    let able = config.supports_json_schema
        || matches!(config.protocol, Protocol::Anthropic | Protocol::Ollama);
    if !able {
        return Ok(None);
    }
    // Checked once per endpoint and model (an edit of either forgets it).
    if settings.structured_output.is_some() {
        return Ok(settings.structured_output);
    }
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "answer": { "type": "string", "enum": ["pong"] },
            "count": { "type": "integer" }
        },
        "required": ["answer", "count"],
        "additionalProperties": false
    });
    let request = ChatRequest {
        model: config.model.clone(),
        messages: vec![
            ChatMessage::new(
                Role::User,
                "Answer with a JSON object: answer is the word pong, count is 3.",
            )
            .into(),
        ],
        max_tokens: Some(64),
        temperature: Some(0.0),
        response_format: Some(decima_llm::JsonSchemaFormat {
            name: "connection_check".into(),
            schema,
            strict: true,
        }),
        ..ChatRequest::default()
    };
    let completion = collect((provider as &dyn Provider).stream(&request)).await?;
    let held = serde_json::from_str::<serde_json::Value>(completion.text.trim())
        .ok()
        .is_some_and(|v| v["answer"] == "pong" && v["count"].is_i64());
    settings.structured_output = Some(held);
    store
        .providers()
        .update_settings(&record.name, settings.to_value())
        .await?;
    info!(provider = %record.name, held, "structured output checked");
    Ok(Some(held))
}
