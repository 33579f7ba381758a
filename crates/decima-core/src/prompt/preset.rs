//! The preset model: a skeleton of fixed messages and named anchors, plus messages injected
//! relative to those anchors or at a depth in the history.
//!
//! Presets are stored as JSON, so every field has a serde default: an older or hand-written preset
//! with fewer fields still loads.
//!
//! # Depth
//!
//! [`Position::Depth`] places a message at an insertion point inside the chat history (the
//! working-context messages the window selected). With `len` history messages, the point is the
//! number of history messages that come before the injected message:
//!
//! | Decima              | SillyTavern "in-chat @ depth" | Insertion point (clamped)           |
//! |---------------------|-------------------------------|-------------------------------------|
//! | `Depth(0)`          | depth 0                       | `len`: after the last message       |
//! | `Depth(-1)`         | depth 1                       | `len - 1`: before the last message  |
//! | `Depth(-n)`         | depth n                       | `len - n`: n messages before the end|
//! | `Depth(n)`, n > 0   | (none)                        | `n`: after the first n messages     |
//!
//! So a SillyTavern depth `n` is Decima's `Depth(-n)`, and positive depths count from the start.
//! The start of the history itself (before its first message) is `Before(chat_history)`.
//! Out-of-range depths are clamped: `Depth(-n)` with `n > len` goes before the first history
//! message, and `Depth(n)` with `n > len` goes after the last one. A point that would fall between
//! an assistant message's tool calls and their tool results is moved back to before that assistant
//! message, so a call is never separated from its result.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::Role;

/// The SillyTavern default for how many recent messages the lorebook scans.
pub const DEFAULT_SCAN_DEPTH: usize = 2;

/// The SillyTavern default `insertion_order` / `injection_order`.
pub const DEFAULT_ORDER: i32 = 100;

/// A named place in the skeleton. Two names are built in; any other name is a user placeholder
/// that the caller fills (or that is filled from the preset's character, see
/// [`Anchor::CHARACTER_PLACEHOLDERS`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum Anchor {
    /// Where the working context (the history the window selected) goes.
    ChatHistory,
    /// Where the session context (goal, todo state, summaries, decisions) goes.
    SessionContext,
    /// A user placeholder, filled by name from the caller's map or the character.
    Placeholder(String),
}

impl Anchor {
    /// Placeholders the assembler fills from the preset's character when the caller gives no
    /// value: the SillyTavern prompt-manager markers, in snake case.
    pub const CHARACTER_PLACEHOLDERS: [&'static str; 4] = [
        "char_description",
        "char_personality",
        "scenario",
        "dialogue_examples",
    ];

    /// The anchor of a name: the two built-ins, else a placeholder.
    pub fn named(name: &str) -> Self {
        match name {
            "chat_history" => Anchor::ChatHistory,
            "session_context" => Anchor::SessionContext,
            other => Anchor::Placeholder(other.to_owned()),
        }
    }

    /// The name as stored in JSON.
    pub fn name(&self) -> &str {
        match self {
            Anchor::ChatHistory => "chat_history",
            Anchor::SessionContext => "session_context",
            Anchor::Placeholder(name) => name,
        }
    }
}

impl From<String> for Anchor {
    fn from(s: String) -> Self {
        match s.as_str() {
            "chat_history" => Anchor::ChatHistory,
            "session_context" => Anchor::SessionContext,
            _ => Anchor::Placeholder(s),
        }
    }
}

impl From<Anchor> for String {
    fn from(a: Anchor) -> Self {
        match a {
            Anchor::Placeholder(name) => name,
            other => other.name().to_owned(),
        }
    }
}

impl fmt::Display for Anchor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn yes() -> bool {
    true
}

fn default_order() -> i32 {
    DEFAULT_ORDER
}

fn default_scan_depth() -> usize {
    DEFAULT_SCAN_DEPTH
}

fn system_role() -> Role {
    Role::System
}

/// A message written in the preset. `{{char}}` and `{{user}}` in its content are substituted at
/// assembly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PresetMessage {
    /// A stable id, so the preset editor and the assembled output can refer to it.
    #[serde(default)]
    pub id: String,
    /// Who says it.
    #[serde(default = "system_role")]
    pub role: Role,
    /// The text.
    #[serde(default)]
    pub content: String,
    /// Disabled messages are kept in the preset (the editor can switch them back on) but never sent.
    #[serde(default = "yes")]
    pub enabled: bool,
}

impl PresetMessage {
    /// An enabled message.
    pub fn new(id: impl Into<String>, role: Role, content: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            role,
            content: content.into(),
            enabled: true,
        }
    }
}

/// One entry of the skeleton, in the order the request is built.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SkeletonEntry {
    /// A fixed message.
    Message(PresetMessage),
    /// A named anchor: replaced by its content, with the injections placed around it.
    Anchor {
        /// Which anchor.
        name: Anchor,
    },
}

/// Where an injected message goes. See the module documentation for the depth table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Position {
    /// Just before an anchor's content.
    Before(Anchor),
    /// Just after an anchor's content.
    After(Anchor),
    /// Inside the history: positive counts from the start, zero and negative from the end.
    Depth(i32),
}

/// A message the preset injects at a position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Injection {
    /// The message.
    #[serde(flatten)]
    pub message: PresetMessage,
    /// Where it goes.
    pub position: Position,
    /// Ties at one position are broken by ascending `order`, then by declaration order.
    #[serde(default = "default_order")]
    pub order: i32,
}

/// The character's depth prompt (SillyTavern's `extensions.depth_prompt`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DepthPrompt {
    /// The text.
    #[serde(default)]
    pub text: String,
    /// Decima's depth (see the module table): SillyTavern's depth n is `-n` here.
    #[serde(default)]
    pub depth: i32,
    /// Who says it.
    #[serde(default = "system_role")]
    pub role: Role,
}

/// Character data, for the `{{char}}` macro, the character placeholders and the depth prompt.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Character {
    /// The name `{{char}}` stands for.
    pub name: String,
    /// Fills the `char_description` placeholder.
    pub description: String,
    /// Fills the `char_personality` placeholder.
    pub personality: String,
    /// Fills the `scenario` placeholder.
    pub scenario: String,
    /// The character's greeting: the caller seeds a new conversation with it.
    pub first_mes: String,
    /// Fills the `dialogue_examples` placeholder.
    pub mes_example: String,
    /// The card's own system prompt (the import puts it into the skeleton).
    pub system_prompt: String,
    /// The card's post-history instructions (the import puts them after the history).
    pub post_history_instructions: String,
    /// Injected at its depth when present and non-empty.
    pub depth_prompt: Option<DepthPrompt>,
}

/// One lorebook (SillyTavern world info / `character_book`) entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoreEntry {
    /// A stable id for the editor and the output.
    #[serde(default)]
    pub id: String,
    /// The entry activates when one of these appears in the scanned messages.
    #[serde(default)]
    pub keys: Vec<String>,
    /// When not empty, one of these must also appear (SillyTavern's "AND ANY" selective logic).
    #[serde(default)]
    pub secondary_keys: Vec<String>,
    /// The text injected when active.
    #[serde(default)]
    pub content: String,
    /// Constant entries are always active, whatever the keys.
    #[serde(default)]
    pub constant: bool,
    /// Disabled entries never activate.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Whether keys match case-sensitively.
    #[serde(default)]
    pub case_sensitive: bool,
    /// Where the content goes.
    pub position: Position,
    /// Ties at one position are broken by ascending `order`.
    #[serde(default = "default_order")]
    pub order: i32,
    /// Who says it.
    #[serde(default = "system_role")]
    pub role: Role,
}

/// A lorebook: entries and how far back to scan for their keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lorebook {
    /// How many of the most recent history messages are scanned for keys.
    #[serde(default = "default_scan_depth")]
    pub scan_depth: usize,
    /// The entries.
    #[serde(default)]
    pub entries: Vec<LoreEntry>,
}

impl Default for Lorebook {
    fn default() -> Self {
        Self {
            scan_depth: DEFAULT_SCAN_DEPTH,
            entries: Vec::new(),
        }
    }
}

/// A prompt preset: what surrounds the history in every request of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Preset {
    /// A name for lists.
    pub name: String,
    /// The skeleton, in request order. A missing `chat_history` anchor is treated as being at the
    /// end; a missing `session_context` anchor as being just before `chat_history`.
    pub skeleton: Vec<SkeletonEntry>,
    /// Messages placed relative to anchors or at a depth.
    pub injections: Vec<Injection>,
    /// Character data for macros, placeholders and the depth prompt.
    pub character: Option<Character>,
    /// The lorebook.
    pub lorebook: Option<Lorebook>,
}

impl Preset {
    /// The backward-compatible preset: one system prompt, then the session context, then the
    /// history. An empty prompt sends no system message.
    pub fn simple(system_prompt: impl Into<String>) -> Self {
        Self {
            name: "simple".into(),
            skeleton: vec![
                SkeletonEntry::Message(PresetMessage::new("system", Role::System, system_prompt)),
                SkeletonEntry::Anchor {
                    name: Anchor::SessionContext,
                },
                SkeletonEntry::Anchor {
                    name: Anchor::ChatHistory,
                },
            ],
            ..Self::default()
        }
    }

    /// Whether the skeleton contains this anchor.
    pub fn has_anchor(&self, anchor: &Anchor) -> bool {
        self.skeleton
            .iter()
            .any(|e| matches!(e, SkeletonEntry::Anchor { name } if name == anchor))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_round_trip_through_json() {
        let mut p = Preset::simple("be brief");
        p.injections.push(Injection {
            message: PresetMessage::new("note", Role::User, "hi"),
            position: Position::Before(Anchor::named("persona")),
            order: 3,
        });
        p.injections.push(Injection {
            message: PresetMessage::new("d", Role::System, "deep"),
            position: Position::Depth(-2),
            order: 100,
        });
        let json = serde_json::to_string(&p).unwrap();
        assert!(json.contains(r#""before":"persona""#), "{json}");
        assert!(
            json.contains(r#""kind":"anchor","name":"chat_history""#),
            "{json}"
        );
        let back: Preset = serde_json::from_str(&json).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn a_minimal_json_preset_gets_defaults() {
        let p: Preset = serde_json::from_str(
            r#"{"skeleton":[{"kind":"message","content":"x"}],
                "injections":[{"content":"y","position":{"depth":0}}]}"#,
        )
        .unwrap();
        let SkeletonEntry::Message(m) = &p.skeleton[0] else {
            panic!("not a message")
        };
        assert!(m.enabled);
        assert_eq!(m.role, Role::System);
        assert_eq!(p.injections[0].order, DEFAULT_ORDER);
    }
}
