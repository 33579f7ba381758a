//! SillyTavern prompt-manager ("Chat Completion") presets.
//!
//! `prompt_order` gives the skeleton (the list for `character_id` 100001, SillyTavern's global
//! order, else the first list; without any, the `prompts` array order). For each entry:
//! - a marker becomes an anchor: `chatHistory` → `chat_history`; `worldInfoBefore`,
//!   `worldInfoAfter`, `charDescription`, `charPersonality`, `scenario`, `personaDescription`,
//!   `dialogueExamples` → the snake_case placeholders `world_info_before`, ...; other markers keep
//!   their identifier as placeholder name. Disabled markers are left out, except `chatHistory`,
//!   which is always kept so the history is never lost.
//! - a prompt with `injection_position` 1 becomes an injection at `Depth(-injection_depth)`
//!   (SillyTavern's in-chat depth, see the table in `prompt::preset`), ordered by
//!   `injection_order` (default 100);
//! - any other prompt is a fixed skeleton message. Disabled prompts are kept, disabled.
//!
//! Entries of `prompt_order` that name no prompt are skipped.

use serde_json::{Map, Value};

use super::{check_size, flag, int, list, parse_json, reject, role, st_depth, text};
use crate::CoreError;
use crate::prompt::preset::{
    Anchor, DEFAULT_ORDER, Injection, Position, Preset, PresetMessage, SkeletonEntry,
};

const WHAT: &str = "SillyTavern preset";

/// SillyTavern's id for the global prompt order.
pub const GLOBAL_CHARACTER_ID: i64 = 100_001;

/// Imports a prompt-manager preset from JSON bytes.
pub fn import_st_preset(bytes: &[u8]) -> Result<Preset, CoreError> {
    check_size(bytes, WHAT)?;
    from_value(&parse_json(bytes, WHAT)?)
}

/// The anchor a marker identifier stands for.
pub fn marker_anchor(identifier: &str) -> Anchor {
    match identifier {
        "chatHistory" => Anchor::ChatHistory,
        "worldInfoBefore" => Anchor::named("world_info_before"),
        "worldInfoAfter" => Anchor::named("world_info_after"),
        "charDescription" => Anchor::named("char_description"),
        "charPersonality" => Anchor::named("char_personality"),
        "scenario" => Anchor::named("scenario"),
        "personaDescription" => Anchor::named("persona_description"),
        "dialogueExamples" => Anchor::named("dialogue_examples"),
        other => Anchor::named(other),
    }
}

/// Maps a parsed prompt-manager preset into a preset.
pub fn from_value(value: &Value) -> Result<Preset, CoreError> {
    let Some(obj) = value.as_object() else {
        return Err(reject(WHAT, "it is not a JSON object"));
    };
    let prompts = list(obj, "prompts", WHAT)?;
    if prompts.is_empty() {
        return Err(reject(
            WHAT,
            "it has no 'prompts' list, or the list is empty",
        ));
    }
    let mut by_id: Vec<(String, &Map<String, Value>)> = Vec::with_capacity(prompts.len());
    for (i, p) in prompts.iter().enumerate() {
        let Some(p) = p.as_object() else {
            return Err(reject(WHAT, format!("prompt {} is not an object", i + 1)));
        };
        let id = p
            .get("identifier")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(|s| s.chars().take(128).collect())
            .unwrap_or_else(|| format!("prompt_{}", i + 1));
        by_id.push((id, p));
    }

    // The order: (identifier, enabled).
    let orders = list(obj, "prompt_order", WHAT)?;
    let chosen = orders
        .iter()
        .filter_map(Value::as_object)
        .find(|o| int(o, "character_id") == Some(GLOBAL_CHARACTER_ID))
        .or_else(|| orders.iter().find_map(Value::as_object));
    let order: Vec<(String, bool)> = match chosen {
        Some(o) => list(o, "order", WHAT)?
            .iter()
            .filter_map(Value::as_object)
            .filter_map(|e| {
                let id = e.get("identifier").and_then(Value::as_str)?;
                Some((id.chars().take(128).collect(), flag(e, "enabled", true)))
            })
            .collect(),
        None => by_id
            .iter()
            .map(|(id, p)| (id.clone(), flag(p, "enabled", true)))
            .collect(),
    };

    let mut skeleton = Vec::new();
    let mut injections = Vec::new();
    for (id, enabled) in order {
        let Some((_, p)) = by_id.iter().find(|(pid, _)| *pid == id) else {
            continue;
        };
        if flag(p, "marker", false) {
            let anchor = marker_anchor(&id);
            if enabled || anchor == Anchor::ChatHistory {
                skeleton.push(SkeletonEntry::Anchor { name: anchor });
            }
            continue;
        }
        let message = PresetMessage {
            id: id.clone(),
            role: role(p.get("role")),
            content: text(p, "content", WHAT)?,
            enabled,
        };
        if int(p, "injection_position") == Some(1) {
            injections.push(Injection {
                message,
                position: Position::Depth(st_depth(int(p, "injection_depth").unwrap_or(4))),
                order: int(p, "injection_order")
                    .and_then(|o| i32::try_from(o).ok())
                    .unwrap_or(DEFAULT_ORDER),
            });
        } else {
            skeleton.push(SkeletonEntry::Message(message));
        }
    }
    if skeleton.is_empty() && injections.is_empty() {
        return Err(reject(
            WHAT,
            "its prompt_order names none of its prompts, so it would send nothing",
        ));
    }
    Ok(Preset {
        name: "SillyTavern preset".into(),
        skeleton,
        injections,
        character: None,
        lorebook: None,
    })
}
