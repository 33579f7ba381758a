//! `decima provider …`

use std::fmt::Write as _;
use std::io::BufRead as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use decima_core::Role;
use decima_core::context::Thresholds;
use decima_llm::secrets::{SecretStore, SecretString};
use decima_llm::{ChatMessage, ChatRequest, HttpProvider, Provider, collect, presets};
use decima_store::{NewProvider, Store};
use serde::Serialize;

use crate::args::{KindArg, ProviderCommand};
use crate::error::CliError;
use crate::output;
use decima_runtime::settings::{self, ProviderSettings};

pub async fn run(store: &Store, data_dir: &Path, command: ProviderCommand) -> Result<(), CliError> {
    match command {
        ProviderCommand::Add {
            name,
            preset,
            kind,
            base_url,
            model,
            context_window,
            api_key_env,
            api_key_stdin,
            tokenizer_json,
            thresholds,
            no_compression,
        } => {
            let thresholds = thresholds_from(thresholds.as_deref(), no_compression)?;
            let key = read_key(api_key_env.as_deref(), api_key_stdin)?;
            let tokenizer = tokenizer_json.map(|p| std::path::absolute(&p).unwrap_or(p));
            if let Some(path) = &tokenizer {
                // Refuse a file that cannot be loaded now, not at the first chat.
                decima_llm::tokens::HfCounter::from_file(path)?;
            }
            let mut new = match preset {
                Some(preset_name) => {
                    let preset = presets::find(&preset_name).ok_or_else(|| {
                        CliError::Provider(format!(
                            "unknown preset '{preset_name}' (one of: {})",
                            presets::all()
                                .iter()
                                .map(|p| p.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                    })?;
                    if preset.needs_api_key && key.is_none() {
                        return Err(CliError::Provider(format!(
                            "the {} preset needs an API key: pass --api-key-env VAR or --api-key-stdin",
                            preset.label
                        )));
                    }
                    NewProvider {
                        name: name.clone(),
                        kind: preset.protocol.as_str().into(),
                        preset: Some(preset.name.clone()),
                        base_url: base_url.unwrap_or_else(|| preset.base_url.clone()),
                        model: model.unwrap_or_else(|| preset.default_model.clone()),
                        context_window: context_window.unwrap_or(preset.context_window),
                        settings: ProviderSettings {
                            reasoning_echo: preset.reasoning_echo,
                            reasoning_field: preset.reasoning_field,
                            supports_json_schema: preset.supports_json_schema,
                            ..ProviderSettings::default()
                        }
                        .to_value(),
                    }
                }
                None => {
                    let kind = match kind {
                        Some(KindArg::Openai) => "openai",
                        Some(KindArg::Anthropic) => "anthropic",
                        None => {
                            return Err(CliError::Provider(
                                "pass --preset P, or --kind and --base-url".into(),
                            ));
                        }
                    };
                    NewProvider {
                        name: name.clone(),
                        kind: kind.into(),
                        preset: None,
                        base_url: base_url.unwrap_or_default(),
                        model: model.ok_or_else(|| {
                            CliError::Provider("a custom provider needs --model".into())
                        })?,
                        context_window: context_window.unwrap_or(128_000),
                        settings: ProviderSettings::default().to_value(),
                    }
                }
            };
            let mut typed: ProviderSettings =
                serde_json::from_value(new.settings.clone()).unwrap_or_default();
            typed.tokenizer_json = tokenizer.clone();
            typed.thresholds = thresholds;
            new.settings = typed.to_value();
            // Validate the endpoint before anything is stored.
            let mut probe = decima_llm::ProviderConfig::new(
                &new.name,
                settings::protocol(&new.kind)?,
                &new.base_url,
                &new.model,
            );
            probe.context_window = new.context_window;
            HttpProvider::new(probe)?;
            let record = store.providers().create(new).await?;
            if let Some(key) = key {
                let (secrets, warning) = SecretStore::open_async(data_dir).await?;
                if let Err(e) = secrets.set_async(&record.name, &key).await {
                    // Leave no provider without the key the user meant it to have.
                    let _ = store.providers().remove(&record.name).await;
                    return Err(e.into());
                }
                if let Some(warning) = warning {
                    eprintln!("warning: {warning}");
                }
            }
            eprintln!(
                "Added provider {} ({} · {} · {}).",
                record.name, record.kind, record.model, record.base_url
            );
            Ok(())
        }
        ProviderCommand::List { json } => list(store, data_dir, json).await,
        ProviderCommand::Remove { name } => {
            store.providers().remove(&name).await?;
            open_secrets(data_dir).await?.delete_async(&name).await?;
            Ok(())
        }
        ProviderCommand::Test { name } => test(store, data_dir, &name).await,
    }
}

/// Thresholds given on the command line, checked; `None` keeps the defaults.
fn thresholds_from(values: Option<&[f64]>, off: bool) -> Result<Option<Thresholds>, CliError> {
    if values.is_none() && !off {
        return Ok(None);
    }
    let mut thresholds = Thresholds::default();
    match values {
        Some([warn, compress, deep]) => {
            thresholds.warn = *warn;
            thresholds.compress = *compress;
            thresholds.deep = *deep;
        }
        Some(_) => {
            return Err(CliError::Provider(
                "--thresholds takes three fractions: WARN,COMPRESS,DEEP (e.g. 0.7,0.85,0.9)".into(),
            ));
        }
        None => {}
    }
    thresholds.enabled = !off;
    thresholds.validate()?;
    Ok(Some(thresholds))
}

/// The key from an environment variable or stdin; never from argv, where `ps` would show it.
fn read_key(env: Option<&str>, stdin: bool) -> Result<Option<SecretString>, CliError> {
    if let Some(var) = env {
        let value = std::env::var(var)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .ok_or_else(|| {
                CliError::Provider(format!("the environment variable {var} is not set"))
            })?;
        return Ok(Some(SecretString::new(value.trim())));
    }
    if stdin {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|e| CliError::Provider(format!("cannot read the API key from stdin: {e}")))?;
        let key = line.trim();
        if key.is_empty() {
            return Err(CliError::Provider("no API key on stdin".into()));
        }
        return Ok(Some(SecretString::new(key)));
    }
    Ok(None)
}

#[derive(Serialize)]
struct ProviderJson {
    name: String,
    kind: String,
    preset: Option<String>,
    base_url: String,
    model: String,
    context_window: u32,
    has_api_key: bool,
}

async fn list(store: &Store, data_dir: &Path, json: bool) -> Result<(), CliError> {
    let records = store.providers().list().await?;
    let secrets = open_secrets(data_dir).await?;
    let mut rows = Vec::with_capacity(records.len());
    for r in records {
        rows.push(ProviderJson {
            has_api_key: secrets.get_async(&r.name).await?.is_some(),
            name: r.name,
            kind: r.kind,
            preset: r.preset,
            base_url: r.base_url,
            model: r.model,
            context_window: r.context_window,
        });
    }
    if json {
        return output::print_json(&rows);
    }
    let mut text = format!(
        "{:<16}  {:<9}  {:<28}  {:>9}  BASE URL\n",
        "NAME", "KIND", "MODEL", "WINDOW"
    );
    for r in &rows {
        let _ = writeln!(
            text,
            "{:<16}  {:<9}  {:<28}  {:>9}  {}",
            r.name, r.kind, r.model, r.context_window, r.base_url
        );
    }
    output::print(&text)
}

async fn test(store: &Store, data_dir: &Path, name: &str) -> Result<(), CliError> {
    let record = store.providers().get_by_name(name).await?;
    let config = settings::from_record(&record, data_dir).await?.config;
    let model = config.model.clone();
    let provider: Arc<dyn Provider> = Arc::new(HttpProvider::new(config)?);
    let request = ChatRequest {
        model,
        messages: vec![ChatMessage::new(
            Role::User,
            "Reply with the single word: pong",
        )],
        max_tokens: Some(16),
        ..ChatRequest::default()
    };
    let started = Instant::now();
    let completion = collect(provider.stream(&request)).await?;
    let elapsed = started.elapsed();
    let usage = completion
        .usage
        .map(|u| {
            format!(
                "prompt {} tokens, completion {} tokens",
                u.prompt_tokens, u.completion_tokens
            )
        })
        .unwrap_or_else(|| "no usage reported".into());
    output::print(&format!(
        "ok: {name} answered in {} ms; {usage}\n",
        elapsed.as_millis()
    ))
}

/// The secret store; its fallback warning is printed where keys are written, not on every read.
async fn open_secrets(data_dir: &Path) -> Result<SecretStore, CliError> {
    let (secrets, _warning) = SecretStore::open_async(data_dir).await?;
    Ok(secrets)
}
