//! Provider settings as one typed struct, and turning a stored provider (or the `DECIMA_*`
//! environment) into a ready [`ProviderConfig`]. The CLI's `provider add` and the desktop
//! settings screen write the same struct, so neither has to know the JSON's keys.

use std::path::{Path, PathBuf};

use decima_core::context::Thresholds;
use decima_llm::discovery::ServerFamily;
use decima_llm::secrets::{SecretStore, SecretString};
use decima_llm::{CacheTtl, Prices, Protocol, ProviderConfig, ReasoningField};
use decima_store::{ProviderRecord, Store};
use serde::{Deserialize, Serialize};

use crate::context::Scale;
use crate::error::{Result, RuntimeError};

/// What a provider row keeps beside its columns. Never a key: the store refuses secret-looking
/// keys, and API keys live in the secret store.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ProviderSettings {
    /// Send earlier reasoning back on assistant turns (DeepSeek and Qwen reasoning models want it).
    pub reasoning_echo: bool,
    /// Which field carries reasoning on the wire; `None` is `reasoning_content`.
    pub reasoning_field: Option<ReasoningField>,
    /// The provider accepts `response_format: {type: json_schema}`.
    pub supports_json_schema: bool,
    /// The model's own `tokenizer.json`, for exact counts of non-OpenAI models.
    pub tokenizer_json: Option<PathBuf>,
    /// Where the meter warns and compression starts; `None` is the defaults.
    pub thresholds: Option<Thresholds>,
    /// Tokens kept free for the answer; `None` is a quarter of the window, at most 8,192.
    pub output_reserve: Option<u32>,
    /// The server takes OpenAI's `prompt_cache_key`.
    pub prompt_cache_key: bool,
    /// How long Anthropic keeps a cached prefix; `None` is five minutes.
    pub cache_ttl: Option<CacheTtl>,
    /// What the provider charges, for the cost a run and a conversation show; `None` when the
    /// user has not set any (the cost is then not estimated).
    pub prices: Option<Prices>,
    /// Which server it is, so Decima can ask it the window it serves; `None` is a hosted API
    /// (or a custom server Decima does not know how to ask).
    pub server: Option<ServerFamily>,
    /// The window the analyst set, if any: a server that serves less clamps it.
    pub configured_window: Option<u32>,
    /// Where the row's window comes from; `None` for rows from before it was recorded.
    pub window_source: Option<WindowSource>,
    /// The window the server said it serves, when it was last asked.
    pub served_window: Option<u32>,
    /// The output cap goes as `max_completion_tokens` (OpenAI's current name).
    pub max_completion_tokens: bool,
    /// Whether the server held an answer to a JSON schema when `provider test` checked it;
    /// `None` before any check.
    pub structured_output: Option<bool>,
    /// Where the tenth man runs for this provider's runs, unless a conversation chose: off for
    /// a small local model a question should not turn into a reviewed run on; `None` follows
    /// the runtime's default.
    pub tenth_man: Option<crate::review::TenthManMode>,
}

/// Where a provider's window comes from: what `provider list --json` and Settings show beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum WindowSource {
    /// The server said it serves this window.
    Served,
    /// The preset's (or Decima's default), since the server does not say.
    Preset,
    /// The analyst set it (and the server serves at least as much, or does not say).
    Configured,
}

impl WindowSource {
    /// The name `provider list --json` prints.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl ProviderSettings {
    /// Reads a row's settings. Rows written before a field existed get its default; a row that
    /// cannot be read at all is reported, not silently replaced by defaults.
    pub fn from_record(record: &ProviderRecord) -> Result<Self> {
        let settings: Self = serde_json::from_value(record.settings.clone()).map_err(|e| {
            RuntimeError::Config(format!(
                "the settings of provider {} cannot be read: {e}; remove and add it again",
                record.name
            ))
        })?;
        Ok(settings)
    }

    /// The JSON the store keeps.
    pub fn to_value(&self) -> serde_json::Value {
        // Serialising plain data to a Value cannot fail.
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// The thresholds in force: the configured ones when valid, else the defaults.
    pub fn thresholds(&self) -> Thresholds {
        self.thresholds
            .filter(|t| t.validate().is_ok())
            .unwrap_or_default()
    }
}

/// Parses `openai` / `anthropic` / `ollama`.
pub fn protocol(kind: &str) -> Result<Protocol> {
    kind.parse().map_err(|_| {
        RuntimeError::Config(format!(
            "unknown provider kind '{}' (expected openai, anthropic or ollama)",
            decima_core::names::echo_untrusted(kind)
        ))
    })
}

/// A provider ready to use: the client config (key included) and the settings the context
/// pipeline reads.
#[derive(Debug, Clone)]
pub struct ResolvedProvider {
    /// What the HTTP client needs.
    pub config: ProviderConfig,
    /// Thresholds and the output reserve.
    pub settings: ProviderSettings,
}

/// The config for a stored provider, with its key if one is stored. The secret store may talk
/// to a keyring daemon over D-Bus, so it runs on a blocking thread, never on an async worker.
pub async fn from_record(record: &ProviderRecord, data_dir: &Path) -> Result<ResolvedProvider> {
    let settings = ProviderSettings::from_record(record)?;
    let mut config = ProviderConfig::new(
        &record.name,
        protocol(&record.kind)?,
        &record.base_url,
        &record.model,
    );
    config.context_window = record.context_window;
    if config.protocol == Protocol::Ollama {
        // Ollama loads the model with the window each request names.
        config.num_ctx = Some(record.context_window);
    }
    config.grammar_decoding = crate::served_window::family_of(record, &settings).is_local();
    config.api_key = read_key(data_dir, &record.name).await?;
    config.reasoning_echo = settings.reasoning_echo;
    config.supports_json_schema = settings.supports_json_schema;
    if let Some(field) = settings.reasoning_field {
        config.reasoning_field = field;
    }
    config.tokenizer_json = settings.tokenizer_json.clone();
    config.prompt_cache_key = settings.prompt_cache_key;
    // Rows added before the setting existed take it from their preset.
    config.max_completion_tokens = settings.max_completion_tokens
        || record
            .preset
            .as_deref()
            .and_then(decima_llm::presets::find)
            .is_some_and(|p| p.max_completion_tokens);
    config.cache_ttl = settings.cache_ttl.unwrap_or_default();
    Ok(ResolvedProvider { config, settings })
}

/// Reads one provider's key. The keyring is reached on tokio's blocking pool, and a keyring
/// failure keeps its failure class (permission, system) rather than becoming a config error.
pub async fn read_key(data_dir: &Path, name: &str) -> Result<Option<SecretString>> {
    let (secrets, _warning) = SecretStore::open_async(data_dir).await?;
    Ok(secrets.get_async(name).await?)
}

/// The provider a step uses: the named one; with none configured, one defined by `DECIMA_*`
/// variables; with exactly one configured, that one.
pub async fn resolve(
    store: &Store,
    data_dir: &Path,
    name: Option<&str>,
) -> Result<ResolvedProvider> {
    if let Some(name) = name {
        let record = store.providers().get_by_name(name).await?;
        return from_record(&record, data_dir).await;
    }
    let records = store.providers().list().await?;
    match records.as_slice() {
        [] => from_env(),
        [only] => from_record(only, data_dir).await,
        many => Err(RuntimeError::Config(format!(
            "several providers are configured; choose the one to use (Settings > Runs in the \
             window, --provider on the command line): {}",
            many.iter()
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The window a conversation is measured against, without needing a key: `decima context` and
/// `compress --dry-run` work with no secret store at all.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowSettings {
    /// The model's context window.
    pub window: u32,
    /// Where the meter warns and compression starts.
    pub thresholds: Thresholds,
    /// Tokens kept free for the answer.
    pub output_reserve: u32,
}

impl WindowSettings {
    /// A window with the default thresholds and reserve.
    pub fn new(window: u32) -> Self {
        Self {
            window,
            thresholds: Thresholds::default(),
            output_reserve: default_output_reserve(window),
        }
    }

    /// The settings of a provider row.
    pub fn of(window: u32, settings: &ProviderSettings) -> Self {
        Self {
            window,
            thresholds: settings.thresholds(),
            output_reserve: settings
                .output_reserve
                .unwrap_or_else(|| default_output_reserve(window))
                .min(window / 2),
        }
    }
}

/// How the model in use counts relative to the store: its learned calibration factor, or one
/// when it was never calibrated. The same provider choice as [`window_settings`], so the meter
/// and the compression policy measure what the chat will send.
pub async fn calibration_scale(store: &Store, name: Option<&str>) -> Result<Scale> {
    let model = match name {
        Some(name) => Some(store.providers().get_by_name(name).await?.model),
        None => match store.providers().list().await?.as_slice() {
            [only] => Some(only.model.clone()),
            [] => env_var("DECIMA_MODEL"),
            _ => None,
        },
    };
    let Some(model) = model else {
        return Ok(Scale::ONE);
    };
    Ok(match store.calibrations().get(&model).await? {
        Some((factor, _samples)) => Scale::new(factor),
        None => Scale::ONE,
    })
}

/// Tokens kept free for the answer by default: a quarter of the window, at most 8,192.
pub fn default_output_reserve(window: u32) -> u32 {
    (window / 4).min(8_192)
}

/// The window to budget against: the named provider's; else `DECIMA_CONTEXT_WINDOW` with the
/// default settings; else the provider `DECIMA_*` defines, or the only configured one.
pub async fn window_settings(store: &Store, name: Option<&str>) -> Result<WindowSettings> {
    if let Some(name) = name {
        let record = store.providers().get_by_name(name).await?;
        let settings = ProviderSettings::from_record(&record)?;
        return Ok(WindowSettings::of(record.context_window, &settings));
    }
    if let Some(window) = env_window()? {
        return Ok(WindowSettings::new(window));
    }
    match store.providers().list().await?.as_slice() {
        [only] => {
            let settings = ProviderSettings::from_record(only)?;
            Ok(WindowSettings::of(only.context_window, &settings))
        }
        [] if env_var("DECIMA_PROVIDER_KIND").is_some() => Ok(WindowSettings::new(
            ProviderConfig::new("env", Protocol::OpenAi, "", "").context_window,
        )),
        _ => Err(RuntimeError::Config(
            "no provider to take a context window from: add one (Settings in the window, \
             `provider add` on the command line) or set DECIMA_CONTEXT_WINDOW"
                .into(),
        )),
    }
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// `DECIMA_CONTEXT_WINDOW`, checked: unset is `None`, a malformed value an error.
pub(crate) fn env_window() -> Result<Option<u32>> {
    let Some(window) = env_var("DECIMA_CONTEXT_WINDOW") else {
        return Ok(None);
    };
    window
        .trim()
        .parse()
        .ok()
        .filter(|w| *w > 0)
        .map(Some)
        .ok_or_else(|| {
            RuntimeError::Config(format!(
                "DECIMA_CONTEXT_WINDOW must be a positive number, not '{}'",
                decima_core::names::echo_untrusted(&window)
            ))
        })
}

/// A provider defined entirely by environment variables, for scripts and CI.
fn from_env() -> Result<ResolvedProvider> {
    let Some(kind) = env_var("DECIMA_PROVIDER_KIND") else {
        return Err(RuntimeError::Config(
            "no provider configured: run `decima provider add NAME --preset P` or set DECIMA_PROVIDER_KIND, \
             DECIMA_BASE_URL and DECIMA_MODEL"
                .into(),
        ));
    };
    let protocol = protocol(&kind)?;
    let base_url = env_var("DECIMA_BASE_URL")
        .ok_or_else(|| RuntimeError::Config("DECIMA_BASE_URL is not set".into()))?;
    let model = env_var("DECIMA_MODEL")
        .ok_or_else(|| RuntimeError::Config("DECIMA_MODEL is not set".into()))?;
    let mut config = ProviderConfig::new("env", protocol, base_url, model);
    config.api_key = env_var("DECIMA_API_KEY").map(SecretString::new);
    if let Some(window) = env_window()? {
        config.context_window = window;
    }
    Ok(ResolvedProvider {
        config,
        settings: ProviderSettings::default(),
    })
}
