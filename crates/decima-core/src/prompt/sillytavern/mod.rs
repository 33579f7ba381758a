//! SillyTavern import: character cards (V1, V2, V3; JSON or PNG) and prompt-manager presets,
//! mapped into Decima's [`Preset`] model.
//!
//! Everything here treats its input as hostile: the size is capped, every length is checked
//! before use, strings and lists are bounded, and every failure is a [`CoreError::ImportRejected`]
//! that says what is wrong. Nothing panics (a cargo-fuzz target in `crates/decima-core/fuzz`
//! checks that).

pub mod card;
pub mod lorebook;
pub mod png;
pub mod preset;

use serde_json::{Map, Value};

use super::preset::Preset;
use crate::CoreError;
use crate::names::echo_untrusted;

pub use card::import_card;
pub use preset::import_st_preset;

/// Largest file accepted: real cards with an embedded image stay well below this.
pub const MAX_INPUT_BYTES: usize = 32 * 1024 * 1024;

/// Longest single text field (description, prompt content, lore entry...).
pub const MAX_FIELD_BYTES: usize = 4 * 1024 * 1024;

/// Most entries in one list (lorebook entries, preset prompts, keys of one entry).
pub const MAX_LIST_LEN: usize = 10_000;

/// Imports a card or a preset, whichever the bytes are: PNG is a card; JSON with `prompts` or
/// `prompt_order` is a prompt-manager preset; other JSON is a card.
pub fn import(bytes: &[u8]) -> Result<Preset, CoreError> {
    import_detected(bytes).map(|(_, preset)| preset)
}

/// What an imported file was, so the store can record where a preset came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportKind {
    /// A character card (JSON or PNG).
    Card,
    /// A prompt-manager preset.
    Preset,
}

/// Like [`import`], also saying whether the file was a card or a preset.
pub fn import_detected(bytes: &[u8]) -> Result<(ImportKind, Preset), CoreError> {
    check_size(bytes, "file")?;
    if png::is_png(bytes) {
        return Ok((ImportKind::Card, import_card(bytes)?));
    }
    let value = parse_json(bytes, "file")?;
    if is_st_preset(&value) {
        Ok((ImportKind::Preset, preset::from_value(&value)?))
    } else {
        Ok((ImportKind::Card, card::from_value(&value)?))
    }
}

fn is_st_preset(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|o| o.contains_key("prompts") || o.contains_key("prompt_order"))
}

pub(crate) fn reject(what: &'static str, reason: impl Into<String>) -> CoreError {
    CoreError::ImportRejected {
        what,
        reason: reason.into(),
    }
}

pub(crate) fn check_size(bytes: &[u8], what: &'static str) -> Result<(), CoreError> {
    if bytes.is_empty() {
        return Err(reject(what, "it is empty"));
    }
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(reject(
            what,
            format!(
                "it is {} bytes, more than the {} MiB limit",
                bytes.len(),
                MAX_INPUT_BYTES / (1024 * 1024)
            ),
        ));
    }
    Ok(())
}

pub(crate) fn parse_json(bytes: &[u8], what: &'static str) -> Result<Value, CoreError> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    serde_json::from_slice(bytes).map_err(|e| {
        reject(
            what,
            format!(
                "it is not valid JSON ({}); expected a SillyTavern character card or preset",
                echo_untrusted(&e.to_string())
            ),
        )
    })
}

/// A text field: missing, null or a non-string value reads as empty (cards in the wild are
/// sloppy); an oversized string is an error.
pub(crate) fn text(
    obj: &Map<String, Value>,
    key: &str,
    what: &'static str,
) -> Result<String, CoreError> {
    match obj.get(key) {
        Some(Value::String(s)) => {
            if s.len() > MAX_FIELD_BYTES {
                Err(reject(
                    what,
                    format!(
                        "field '{}' is {} bytes, more than the {} MiB limit",
                        echo_untrusted(key),
                        s.len(),
                        MAX_FIELD_BYTES / (1024 * 1024)
                    ),
                ))
            } else {
                Ok(s.clone())
            }
        }
        _ => Ok(String::new()),
    }
}

/// A boolean field, with a default for missing or non-boolean values.
pub(crate) fn flag(obj: &Map<String, Value>, key: &str, default: bool) -> bool {
    obj.get(key).and_then(Value::as_bool).unwrap_or(default)
}

/// An integer field: a JSON number (fractions truncated) or a numeric string, clamped to ±1e6.
pub(crate) fn int(obj: &Map<String, Value>, key: &str) -> Option<i64> {
    let v = match obj.get(key)? {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.is_finite()).map(|f| f as i64))?,
        Value::String(s) => s.trim().parse::<i64>().ok()?,
        _ => return None,
    };
    Some(v.clamp(-1_000_000, 1_000_000))
}

/// An array field, bounded in length. Missing or non-array reads as empty.
pub(crate) fn list<'v>(
    obj: &'v Map<String, Value>,
    key: &str,
    what: &'static str,
) -> Result<&'v [Value], CoreError> {
    match obj.get(key) {
        Some(Value::Array(items)) => {
            if items.len() > MAX_LIST_LEN {
                Err(reject(
                    what,
                    format!(
                        "'{}' has {} items, more than the limit of {MAX_LIST_LEN}",
                        echo_untrusted(key),
                        items.len()
                    ),
                ))
            } else {
                Ok(items)
            }
        }
        _ => Ok(&[]),
    }
}

/// A role name as SillyTavern writes it: a name or 0/1/2 (system/user/assistant).
pub(crate) fn role(value: Option<&Value>) -> crate::Role {
    use crate::Role;
    match value {
        Some(Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            _ => Role::System,
        },
        Some(Value::Number(n)) => match n.as_i64() {
            Some(1) => Role::User,
            Some(2) => Role::Assistant,
            _ => Role::System,
        },
        _ => Role::System,
    }
}

/// SillyTavern's "depth n from the end" as Decima's `Depth` (see the table in `prompt::preset`).
pub(crate) fn st_depth(n: i64) -> i32 {
    let n = i32::try_from(n.clamp(0, 100_000)).unwrap_or(0);
    -n
}

#[cfg(test)]
mod tests;
