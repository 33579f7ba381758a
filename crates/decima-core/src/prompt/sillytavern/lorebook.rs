//! A card's `character_book` as a Decima [`Lorebook`].
//!
//! Positions map as follows (SillyTavern's `extensions.position` wins over the card-spec
//! `position` string when both are present):
//!
//! | SillyTavern                                | Decima                                  |
//! |--------------------------------------------|-----------------------------------------|
//! | `"before_char"`, 0 (before character defs) | `After(world_info_before)`              |
//! | `"after_char"`, 1 (after character defs)   | `After(world_info_after)`               |
//! | 2, 3 (author's note top / bottom)          | `After(world_info_after)` (approximate) |
//! | 4 (@ depth n, with `extensions.role`)      | `Depth(-n)`                             |
//! | 5, 6 (before / after example messages)     | `Before` / `After(dialogue_examples)`   |
//!
//! Keys are matched as plain substrings (SillyTavern's `/regex/` keys are matched literally).

use serde_json::{Map, Value};

use super::{flag, int, list, reject, role, st_depth, text};
use crate::CoreError;
use crate::prompt::preset::{
    Anchor, DEFAULT_ORDER, DEFAULT_SCAN_DEPTH, LoreEntry, Lorebook, Position,
};

const WHAT: &str = "character book";

/// The anchor world-info "before" entries go after.
pub const WORLD_INFO_BEFORE: &str = "world_info_before";
/// The anchor world-info "after" entries go after.
pub const WORLD_INFO_AFTER: &str = "world_info_after";

/// Reads a `character_book` object.
pub fn from_object(book: &Map<String, Value>) -> Result<Lorebook, CoreError> {
    let scan_depth = int(book, "scan_depth")
        .and_then(|d| usize::try_from(d).ok())
        .map(|d| d.min(1000))
        .unwrap_or(DEFAULT_SCAN_DEPTH);
    let mut entries = Vec::new();
    for (i, entry) in list(book, "entries", WHAT)?.iter().enumerate() {
        let Some(entry) = entry.as_object() else {
            return Err(reject(WHAT, format!("entry {} is not an object", i + 1)));
        };
        entries.push(entry_from(entry, i)?);
    }
    Ok(Lorebook {
        scan_depth,
        entries,
    })
}

fn keys(obj: &Map<String, Value>, key: &str) -> Result<Vec<String>, CoreError> {
    if let Some(Value::String(s)) = obj.get(key) {
        // Some exporters write keys as one comma-separated string.
        return Ok(s
            .split(',')
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .take(super::MAX_LIST_LEN)
            .map(|k| k.chars().take(1000).collect())
            .collect());
    }
    Ok(list(obj, key, WHAT)?
        .iter()
        .filter_map(Value::as_str)
        .filter(|k| !k.trim().is_empty())
        .map(|k| k.chars().take(1000).collect())
        .collect())
}

fn entry_from(obj: &Map<String, Value>, index: usize) -> Result<LoreEntry, CoreError> {
    let empty = Map::new();
    let ext = obj
        .get("extensions")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let id = match obj.get("id") {
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) => s.chars().take(64).collect(),
        _ => index.to_string(),
    };
    let st_position = int(ext, "position").or_else(|| match obj.get("position") {
        Some(Value::String(s)) if s == "after_char" => Some(1),
        Some(Value::String(_)) => Some(0),
        Some(Value::Number(_)) => int(obj, "position"),
        _ => None,
    });
    let position = match st_position {
        Some(1..=3) => Position::After(Anchor::named(WORLD_INFO_AFTER)),
        Some(4) => Position::Depth(st_depth(int(ext, "depth").unwrap_or(4))),
        Some(5) => Position::Before(Anchor::named("dialogue_examples")),
        Some(6) => Position::After(Anchor::named("dialogue_examples")),
        _ => Position::After(Anchor::named(WORLD_INFO_BEFORE)),
    };
    let order = int(obj, "insertion_order")
        .or_else(|| int(obj, "order"))
        .and_then(|o| i32::try_from(o).ok())
        .unwrap_or(DEFAULT_ORDER);
    Ok(LoreEntry {
        id,
        keys: keys(obj, "keys")?,
        secondary_keys: if flag(obj, "selective", true) {
            keys(obj, "secondary_keys")?
        } else {
            Vec::new()
        },
        content: text(obj, "content", WHAT)?,
        constant: flag(obj, "constant", false),
        enabled: flag(obj, "enabled", true),
        case_sensitive: flag(obj, "case_sensitive", false) || flag(ext, "case_sensitive", false),
        position,
        order,
        role: role(ext.get("role")),
    })
}
