//! `decima provider …`

use std::fmt::Write as _;
use std::io::BufRead as _;
use std::path::Path;

use decima_core::context::Thresholds;
use decima_llm::Protocol;
use decima_llm::secrets::SecretString;
use decima_runtime::providers::{self, ProviderDraft};
use decima_runtime::served_window;
use decima_runtime::settings::{ProviderSettings, WindowSource};
use decima_store::Store;
use serde::Serialize;

use crate::args::{KindArg, ProviderCommand};
use crate::error::CliError;
use crate::output;

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
            let draft = ProviderDraft {
                name,
                preset,
                protocol: kind.map(|k| match k {
                    KindArg::Openai => Protocol::OpenAi,
                    KindArg::Ollama => Protocol::Ollama,
                    KindArg::Anthropic => Protocol::Anthropic,
                }),
                base_url,
                model,
                context_window,
                api_key: read_key(api_key_env.as_deref(), api_key_stdin)?,
                tokenizer_json: tokenizer_json.map(|p| std::path::absolute(&p).unwrap_or(p)),
                thresholds: thresholds_from(thresholds.as_deref(), no_compression)?,
            };
            add(store, data_dir, draft).await
        }
        ProviderCommand::List { json } => list(store, data_dir, json).await,
        ProviderCommand::Remove { name } => Ok(providers::remove(store, data_dir, &name).await?),
        ProviderCommand::TenthMan { name, mode } => set_tenth_man(store, &name, &mode).await,
        ProviderCommand::Test { name } => test(store, data_dir, &name).await,
    }
}

/// Adds the provider and says what it added, with the window it found and any warning.
async fn add(store: &Store, data_dir: &Path, draft: ProviderDraft) -> Result<(), CliError> {
    let added = providers::add(store, data_dir, draft).await?;
    if let Some(warning) = added.warning {
        eprintln!("warning: {warning}");
    }
    if let Some(warning) = &added.window.warning {
        eprintln!("warning: {warning}");
    }
    let r = &added.record;
    eprintln!(
        "Added provider {} ({} · {} · {}); window {}.",
        r.name,
        r.kind,
        r.model,
        r.base_url,
        window_words(added.window.window, added.window.source)
    );
    Ok(())
}

/// Sets the tenth man's mode for runs that do not choose one; `default` clears it.
async fn set_tenth_man(store: &Store, name: &str, mode: &str) -> Result<(), CliError> {
    let chosen = match mode {
        "default" => None,
        other => Some(
            serde_json::from_value(serde_json::Value::String(other.to_owned())).map_err(|_| {
                CliError::Provider(format!(
                    "the tenth man's mode is off, tool_only, system_only, hybrid or default, not \
                     '{}'",
                    decima_core::names::echo_untrusted(other)
                ))
            })?,
        ),
    };
    providers::set_tenth_man(store, name, chosen).await?;
    output::print(&format!(
        "{name}: the tenth man is {mode} for runs that do not choose\n"
    ))
}

/// Asks the provider for a short answer and says how it went: the time, the usage, the window
/// and whether it holds answers to a JSON schema.
async fn test(store: &Store, data_dir: &Path, name: &str) -> Result<(), CliError> {
    let probe = providers::test(store, data_dir, name).await?;
    let usage = probe
        .usage
        .map(|u| {
            format!(
                "prompt {} tokens, completion {} tokens",
                u.prompt_tokens, u.completion_tokens
            )
        })
        .unwrap_or_else(|| "no usage reported".into());
    if let Some(warning) = &probe.window.warning {
        eprintln!("warning: {warning}");
    }
    let structured = match probe.structured_output {
        Some(true) => "answers held to a JSON schema",
        Some(false) => {
            "did NOT hold an answer to a JSON schema (reviews and summaries are parsed and \
             repaired)"
        }
        None => "no schema-constrained answers (reviews and summaries are parsed and repaired)",
    };
    output::print(&format!(
        "ok: {name} answered in {} ms; {usage}\nwindow: {}\nstructured output: {structured}\n",
        probe.elapsed.as_millis(),
        window_words(probe.window.window, probe.window.source)
    ))
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
    /// Where the window comes from: `served`, `preset` or `configured`.
    context_window_source: &'static str,
    /// The window the server said it serves, when it was last asked.
    served_window: Option<u32>,
    /// Whether the server held an answer to a JSON schema at the last `provider test`.
    structured_output: Option<bool>,
    has_api_key: bool,
}

/// "8,192 tokens, as the server reports".
fn window_words(window: u32, source: WindowSource) -> String {
    let tokens = served_window::thousands(window);
    match source {
        WindowSource::Served => format!("{tokens} tokens, as the server reports"),
        WindowSource::Preset => format!("{tokens} tokens, the preset's (the server does not say)"),
        WindowSource::Configured => format!("{tokens} tokens, as configured"),
    }
}

async fn list(store: &Store, data_dir: &Path, json: bool) -> Result<(), CliError> {
    let rows: Vec<ProviderJson> = providers::list(store, data_dir)
        .await?
        .into_iter()
        .map(|l| {
            let settings = ProviderSettings::from_record(&l.record).unwrap_or_default();
            ProviderJson {
                context_window_source: settings
                    .window_source
                    .unwrap_or(WindowSource::Configured)
                    .as_str(),
                served_window: settings.served_window,
                structured_output: settings.structured_output,
                has_api_key: l.has_api_key,
                name: l.record.name,
                kind: l.record.kind,
                preset: l.record.preset,
                base_url: l.record.base_url,
                model: l.record.model,
                context_window: l.record.context_window,
            }
        })
        .collect();
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
