//! Text that comes from the network, made safe and readable for errors and logs: API keys
//! redacted, providers' error messages taken out of their bodies, `Retry-After` read.

use std::time::Duration;

use crate::provider::ProviderConfig;

/// Removes the API key from text that came from the network or from reqwest.
pub(crate) fn redact(config: &ProviderConfig, text: &str) -> String {
    redact_key(text, config.api_key.as_ref().map(|k| k.expose()))
}

/// Replaces every occurrence of the key with `***`.
pub(crate) fn redact_key(text: &str, key: Option<&str>) -> String {
    match key {
        Some(key) if key.len() >= 4 => text.replace(key, "***"),
        _ => text.to_string(),
    }
}

/// reqwest's error with its causes, which carry the useful part ("connection refused").
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// The provider's message from an OpenAI (`{"error":{"message"}}`) or Anthropic
/// (`{"type":"error","error":{"message"}}`) error body, else the body's text, shortened.
pub(crate) fn error_message(body: &[u8]) -> String {
    if let Ok(json) = serde_json::from_slice::<serde_json::Value>(body) {
        // Gemini's OpenAI-compatible endpoint wraps its Google error in an array.
        let json = match json {
            serde_json::Value::Array(errors) => errors.into_iter().next().unwrap_or_default(),
            json => json,
        };
        let error = json.get("error").unwrap_or(&json);
        let message = error
            .get("message")
            .and_then(|m| m.as_str())
            .or_else(|| error.as_str());
        if let Some(message) = message {
            let code = error
                .get("code")
                .and_then(|c| c.as_str())
                .or_else(|| error.get("status").and_then(|s| s.as_str()));
            return match code {
                Some(code) if !message.contains(code) => format!("{message} ({code})"),
                _ => message.to_string(),
            };
        }
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return "(no message)".into();
    }
    let short: String = text.chars().take(300).collect();
    short.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `Retry-After` as seconds (an integer, or the decimal some servers send) or as an HTTP-date.
/// Never panics, whatever a server or proxy writes there: a wait too large for a `Duration`
/// (`1e20`, `inf`, a date in the year 9999) becomes `Duration::MAX`, which the retry policy
/// reports instead of waiting; a negative, NaN or unreadable value is ignored, so the backoff
/// applies.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    if let Ok(seconds) = value.parse::<f64>() {
        if seconds.is_nan() || seconds < 0.0 {
            return None;
        }
        return Some(Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(
        at.duration_since(std::time::SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}
