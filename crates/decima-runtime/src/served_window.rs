//! The window a provider's requests are fitted to: what its server serves, not what a preset or
//! a hopeful setting assumed. A local server says what it serves (llama.cpp's `/props`, Ollama's
//! `/api/show`, vLLM's `max_model_len`, LM Studio's loaded length); Decima asks on `provider add`,
//! on `provider test`, when a run or a chat starts (remembered for a few minutes per provider),
//! and again after the server refused a request for its length. A configured window larger than
//! the served one is clamped, with a warning that says both numbers. The window chosen and where
//! it came from are stored with the provider, so the meter, the compression policy and every
//! face read the same figure.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use decima_llm::discovery::ServerFamily;
use decima_llm::{LlmError, ProviderConfig, Served, presets};
use decima_store::{ProviderRecord, Store};
use tracing::{info, warn};

use crate::error::Result;
use crate::settings::{ProviderSettings, ResolvedProvider, WindowSource};

/// How long an answer is trusted before a run or a chat asks again: a server restarted with
/// another `n_ctx` is noticed within this long, and a working session asks a few times an hour.
pub const CACHE_FOR: Duration = Duration::from_secs(300);

/// The window a custom provider gets when neither the server nor the analyst says.
pub const DEFAULT_WINDOW: u32 = 128_000;

/// The window decided for a provider, and what the analyst should hear about it.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowCheck {
    /// The window requests are fitted to.
    pub window: u32,
    /// Where it comes from.
    pub source: WindowSource,
    /// What the server said, if it was asked and answered.
    pub served: Option<Served>,
    /// A configured window clamped to the served one, or a server that could not be asked.
    pub warning: Option<String>,
}

/// How much the caller wants a fresh answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// A run or a chat starts: an answer from the last few minutes will do.
    Cached,
    /// `provider add`, `provider test`, a refused request: ask the server now.
    Now,
}

/// Decides the window from the served one, the configured one and the preset's. Pure, so each
/// rule is tested on its own.
pub fn decide(
    served: Option<u32>,
    configured: Option<u32>,
    preset: u32,
    family: ServerFamily,
) -> (u32, WindowSource, Option<String>) {
    match (served, configured) {
        (Some(served), Some(configured)) if configured > served => (
            served,
            WindowSource::Served,
            Some(format!(
                "the window is set to {} tokens, but {} serves {} for this model; \
                 requests are fitted to {}",
                thousands(configured),
                family.label(),
                thousands(served),
                thousands(served)
            )),
        ),
        (_, Some(configured)) => (configured, WindowSource::Configured, None),
        (Some(served), None) => (served, WindowSource::Served, None),
        (None, None) => (preset, WindowSource::Preset, None),
    }
}

/// Which server a provider row is: its own setting, else its preset's, else a hosted API.
pub fn family_of(record: &ProviderRecord, settings: &ProviderSettings) -> ServerFamily {
    settings
        .server
        .or_else(|| {
            record
                .preset
                .as_deref()
                .and_then(presets::find)
                .map(|p| p.server)
        })
        .unwrap_or(ServerFamily::Hosted)
}

/// The preset's window for a row, or Decima's default for a custom one.
fn preset_window(record: &ProviderRecord) -> u32 {
    record
        .preset
        .as_deref()
        .and_then(presets::find)
        .map_or(DEFAULT_WINDOW, |p| p.context_window)
}

/// Asks the provider's server (or takes a recent answer), decides the window, stores it with its
/// source when it changed, and returns it. A server that cannot be asked keeps the stored
/// window, with a warning that says why; it never fails the caller.
pub async fn check(
    store: &Store,
    record: &ProviderRecord,
    config: &ProviderConfig,
    freshness: Freshness,
) -> Result<(WindowCheck, ProviderRecord)> {
    let mut settings = ProviderSettings::from_record(record)?;
    let family = family_of(record, &settings);
    // Rows from before the source was recorded: their window is what the analyst (or the
    // preset) set, so it is the configured one unless it is the preset's own.
    let configured = settings.configured_window.or_else(|| {
        (settings.window_source.is_none() && record.context_window != preset_window(record))
            .then_some(record.context_window)
    });
    let asked = ask(config, family, freshness).await;
    let (served, failure) = match asked {
        Ok(served) => (served, None),
        Err(e) => (None, Some(e)),
    };
    let (window, source, mut warning) = match (&served, &failure) {
        (_, Some(e)) => {
            warn!(provider = %record.name, error = %e, "could not read the served window");
            // Keep what is stored: the request will say soon enough if the server is gone.
            (
                record.context_window,
                settings.window_source.unwrap_or(WindowSource::Preset),
                Some(format!(
                    "could not read the window {} serves ({e}); keeping {} tokens",
                    family.label(),
                    thousands(record.context_window)
                )),
            )
        }
        // A server that does not say (a hosted API, a model not loaded) keeps what an earlier
        // answer or refusal taught.
        _ => decide(
            served.as_ref().map(|s| s.window).or(settings.served_window),
            configured,
            preset_window(record),
            family,
        ),
    };
    if let Some(s) = served.as_ref().filter(|s| s.floor) {
        let floor = format!(
            "{} has not loaded the model yet; its window of {} tokens is the least it loads \
             models with, and is read again once it has",
            family.label(),
            thousands(s.window)
        );
        warning = Some(warning.map_or(floor.clone(), |w| format!("{w}; {floor}")));
        forget(config);
    }
    let served_now = served.as_ref().map(|s| s.window);
    let changed = window != record.context_window
        || settings.window_source != Some(source)
        || settings.configured_window != configured
        || (served_now.is_some() && settings.served_window != served_now);
    let record = if changed {
        settings.configured_window = configured;
        settings.window_source = Some(source);
        if served_now.is_some() {
            settings.served_window = served_now;
        }
        info!(provider = %record.name, window, source = source.as_str(), "provider window set");
        store
            .providers()
            .update_window(&record.name, window, settings.to_value())
            .await?
    } else {
        record.clone()
    };
    Ok((
        WindowCheck {
            window,
            source,
            served,
            warning,
        },
        record,
    ))
}

/// Fits a resolved provider to the window its server serves, before a run or a chat sends
/// anything: the window and the settings are those of the row as checked. A provider from the
/// environment (no row) is left as it is.
pub async fn fit(
    store: &Store,
    resolved: &mut ResolvedProvider,
    freshness: Freshness,
) -> Result<Option<WindowCheck>> {
    let Ok(record) = store.providers().get_by_name(&resolved.config.name).await else {
        return Ok(None);
    };
    let (checked, record) = check(store, &record, &resolved.config, freshness).await?;
    resolved.config.context_window = checked.window;
    if resolved.config.num_ctx.is_some() {
        resolved.config.num_ctx = Some(checked.window);
    }
    resolved.settings = ProviderSettings::from_record(&record)?;
    Ok(Some(checked))
}

/// After the server refused a request for its length: reads the window again (the limit the
/// refusal names, and what the server says now), stores it as served when it is smaller than
/// the one the request was fitted to, and returns it. `None` when nothing smaller was learned:
/// the caller then does not try the same request again.
pub async fn after_refusal(
    store: &Store,
    config: &ProviderConfig,
    refusal: &LlmError,
) -> Result<Option<u32>> {
    refit(
        store,
        config,
        decima_llm::served_limit(&refusal.to_string()),
    )
    .await
}

/// After a server counted far fewer prompt tokens than were sent (it dropped part of the
/// prompt without a word): reads the window it serves again, and returns it when it is smaller
/// than the one the request was fitted to, so that the next request fits.
pub async fn after_truncation(store: &Store, config: &ProviderConfig) -> Result<Option<u32>> {
    refit(store, config, None).await
}

/// Reads the served window now; stores and returns it when it, or the limit a refusal
/// `named`, is smaller than the window the last request was fitted to. The analyst's
/// `compress` on an overflow calls it too, with the limit the failure recorded.
pub async fn refit(
    store: &Store,
    config: &ProviderConfig,
    named: Option<u32>,
) -> Result<Option<u32>> {
    forget(config);
    let Ok(record) = store.providers().get_by_name(&config.name).await else {
        return Ok(named.filter(|n| *n < config.context_window));
    };
    let (checked, record) = check(store, &record, config, Freshness::Now).await?;
    let told = checked
        .served
        .as_ref()
        .map(|s| s.window)
        .into_iter()
        .chain(named)
        .min();
    let Some(window) = told.filter(|w| *w < config.context_window) else {
        return Ok(None);
    };
    if window != record.context_window {
        let mut settings = ProviderSettings::from_record(&record)?;
        settings.served_window = Some(window);
        settings.window_source = Some(WindowSource::Served);
        store
            .providers()
            .update_window(&record.name, window, settings.to_value())
            .await?;
    }
    warn!(
        provider = %config.name,
        was = config.context_window,
        window,
        "the server does not take the window the request was fitted to; fitting to what it serves"
    );
    Ok(Some(window))
}

/// Asks the server, or takes the answer of the last [`CACHE_FOR`].
async fn ask(
    config: &ProviderConfig,
    family: ServerFamily,
    freshness: Freshness,
) -> Result<Option<Served>, LlmError> {
    if family == ServerFamily::Hosted {
        return Ok(None);
    }
    let key = cache_key(config);
    if freshness == Freshness::Cached
        && let Some((at, served)) = answers().get(&key)
        && at.elapsed() < CACHE_FOR
    {
        return Ok(served.clone());
    }
    let served = decima_llm::discover(config, family).await?;
    answers().insert(key, (Instant::now(), served.clone()));
    Ok(served)
}

/// Forgets the provider's remembered answer, so the next run or chat asks again.
pub fn forget(config: &ProviderConfig) {
    answers().remove(&cache_key(config));
}

fn cache_key(config: &ProviderConfig) -> String {
    format!("{}\n{}\n{}", config.name, config.base_url, config.model)
}

type Answers = HashMap<String, (Instant, Option<Served>)>;

fn answers() -> MutexGuard<'static, Answers> {
    static ANSWERS: OnceLock<Mutex<Answers>> = OnceLock::new();
    ANSWERS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A token count as a person reads it: 8,192.
pub fn thousands(n: u32) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_served_window_wins_over_a_larger_configured_one_and_the_warning_names_both() {
        let (window, source, warning) =
            decide(Some(8_192), Some(32_768), 32_768, ServerFamily::LlamaCpp);
        assert_eq!((window, source), (8_192, WindowSource::Served));
        let warning = warning.unwrap();
        assert!(
            warning.contains("32,768") && warning.contains("8,192"),
            "{warning}"
        );
        assert!(warning.contains("llama.cpp"), "{warning}");
    }

    #[test]
    fn a_smaller_configured_window_stands_and_without_one_the_served_or_the_presets_does() {
        assert_eq!(
            decide(Some(8_192), Some(4_096), 32_768, ServerFamily::Vllm),
            (4_096, WindowSource::Configured, None)
        );
        assert_eq!(
            decide(Some(8_192), None, 32_768, ServerFamily::Vllm),
            (8_192, WindowSource::Served, None)
        );
        assert_eq!(
            decide(None, None, 200_000, ServerFamily::Hosted),
            (200_000, WindowSource::Preset, None)
        );
        assert_eq!(
            decide(None, Some(64_000), 200_000, ServerFamily::Hosted),
            (64_000, WindowSource::Configured, None)
        );
    }

    #[test]
    fn counts_read_with_thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(8_192), "8,192");
        assert_eq!(thousands(1_047_576), "1,047,576");
    }
}
