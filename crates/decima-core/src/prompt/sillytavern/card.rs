//! Character cards: V1 (flat), V2 (`chara_card_v2`) and V3 (`chara_card_v3`), as JSON or PNG.
//!
//! A card becomes a preset whose skeleton follows SillyTavern's default prompt order:
//!
//! 1. `main`: the card's `system_prompt`, or SillyTavern's default main prompt when it is empty;
//! 2. anchors `world_info_before`, `char_description`, `char_personality`, `scenario`,
//!    `world_info_after`, `dialogue_examples` (filled from the character and the lorebook);
//! 3. anchors `session_context` and `chat_history`;
//! 4. `post_history_instructions`, after the history.
//!
//! The depth prompt stays on the character (the assembler injects it); `first_mes` stays on the
//! character for the caller to seed a new conversation with.

use base64::Engine as _;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use serde_json::{Map, Value};

use super::{check_size, int, lorebook, parse_json, png, reject, role, st_depth, text};
use crate::CoreError;
use crate::Role;
use crate::names::echo_untrusted;
use crate::prompt::preset::{Anchor, Character, DepthPrompt, Preset, PresetMessage, SkeletonEntry};

const WHAT: &str = "character card";

/// SillyTavern's default main prompt, used when the card has no system prompt of its own.
pub const DEFAULT_MAIN_PROMPT: &str =
    "Write {{char}}'s next reply in a fictional chat between {{char}} and {{user}}.";

/// Imports a card from JSON or PNG bytes (detected by the PNG signature). In a PNG, `ccv3` is
/// preferred over `chara` when both are present.
pub fn import_card(bytes: &[u8]) -> Result<Preset, CoreError> {
    check_size(bytes, WHAT)?;
    if !png::is_png(bytes) {
        return from_value(&parse_json(bytes, WHAT)?);
    }
    let chunks = png::card_chunks(bytes)?;
    let (name, payload) = match (chunks.ccv3, chunks.chara) {
        (Some(v3), _) => ("ccv3", v3),
        (None, Some(v2)) => ("chara", v2),
        (None, None) => {
            return Err(reject(
                "PNG character card",
                "the image has no 'chara' or 'ccv3' text chunk, so it carries no character card",
            ));
        }
    };
    let json = decode_base64(payload).map_err(|e| {
        reject(
            "PNG character card",
            format!("the '{name}' chunk is not valid base64 ({e})"),
        )
    })?;
    from_value(&parse_json(&json, WHAT)?)
}

fn decode_base64(payload: &[u8]) -> Result<Vec<u8>, base64::DecodeError> {
    let engine = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    let cleaned: Vec<u8> = payload
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    engine.decode(cleaned)
}

/// Maps a parsed card (V1, V2 or V3) into a preset.
pub fn from_value(value: &Value) -> Result<Preset, CoreError> {
    let Some(obj) = value.as_object() else {
        return Err(reject(WHAT, "it is not a JSON object"));
    };
    let data = match obj.get("spec").and_then(Value::as_str) {
        Some("chara_card_v2" | "chara_card_v3") => obj
            .get("data")
            .and_then(Value::as_object)
            .ok_or_else(|| reject(WHAT, "the card has a 'spec' but no 'data' object"))?,
        Some(other) => {
            return Err(reject(
                WHAT,
                format!(
                    "unknown card spec '{}' (expected chara_card_v2 or chara_card_v3)",
                    echo_untrusted(other)
                ),
            ));
        }
        None if obj.get("name").is_some_and(Value::is_string) => obj,
        None => {
            return Err(reject(
                "file",
                "it is neither a character card (no 'spec' or 'name') nor a SillyTavern preset \
                 (no 'prompts')",
            ));
        }
    };
    from_data(data)
}

fn from_data(data: &Map<String, Value>) -> Result<Preset, CoreError> {
    let name = text(data, "name", WHAT)?;
    if name.trim().is_empty() {
        return Err(reject(WHAT, "the card has no character name"));
    }
    let empty = Map::new();
    let ext = data
        .get("extensions")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let depth_prompt = match ext.get("depth_prompt").and_then(Value::as_object) {
        Some(dp) => {
            let prompt = text(dp, "prompt", WHAT)?;
            (!prompt.trim().is_empty()).then(|| DepthPrompt {
                text: prompt,
                depth: st_depth(int(dp, "depth").unwrap_or(4)),
                role: role(dp.get("role")),
            })
        }
        None => None,
    };
    let character = Character {
        name: name.chars().take(256).collect(),
        description: text(data, "description", WHAT)?,
        personality: text(data, "personality", WHAT)?,
        scenario: text(data, "scenario", WHAT)?,
        first_mes: text(data, "first_mes", WHAT)?,
        mes_example: text(data, "mes_example", WHAT)?,
        system_prompt: text(data, "system_prompt", WHAT)?,
        post_history_instructions: text(data, "post_history_instructions", WHAT)?,
        depth_prompt,
    };
    let lorebook = match data.get("character_book") {
        Some(Value::Object(book)) => Some(lorebook::from_object(book)?),
        _ => None,
    };

    let main = if character.system_prompt.trim().is_empty() {
        DEFAULT_MAIN_PROMPT.to_owned()
    } else {
        character.system_prompt.clone()
    };
    let anchor = |name: &str| SkeletonEntry::Anchor {
        name: Anchor::named(name),
    };
    let mut skeleton = vec![
        SkeletonEntry::Message(PresetMessage::new("main", Role::System, main)),
        anchor(lorebook::WORLD_INFO_BEFORE),
        anchor("char_description"),
        anchor("char_personality"),
        anchor("scenario"),
        anchor(lorebook::WORLD_INFO_AFTER),
        anchor("dialogue_examples"),
        anchor("session_context"),
        anchor("chat_history"),
    ];
    if !character.post_history_instructions.trim().is_empty() {
        skeleton.push(SkeletonEntry::Message(PresetMessage::new(
            "post_history_instructions",
            Role::System,
            character.post_history_instructions.clone(),
        )));
    }
    Ok(Preset {
        name: character.name.clone(),
        skeleton,
        injections: Vec::new(),
        character: Some(character),
        lorebook,
    })
}
