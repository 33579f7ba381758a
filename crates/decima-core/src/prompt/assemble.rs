//! Step 2 of the context pipeline: turn a preset and the selected context into the ordered
//! request messages, each tagged with its layer, and measure every layer against its budget.
//!
//! Rules, in the order they apply:
//! - The skeleton is walked in order. A fixed message is sent when enabled and not empty.
//! - Each anchor is expanded at its first occurrence (later duplicates are ignored):
//!   `chat_history` becomes the history, with the depth injections interleaved;
//!   `session_context` becomes one system message with the session text (nothing when empty);
//!   a placeholder becomes one system message with the caller's value, else the character's
//!   field for [`Anchor::CHARACTER_PLACEHOLDERS`], else nothing.
//! - A preset without `chat_history` gets it at the end; one without `session_context` gets it
//!   just before `chat_history` (this is what makes [`Preset::simple`] and old presets work).
//! - Injections `Before(a)` / `After(a)` surround the anchor's content, even when it is empty. An
//!   injection whose anchor is not in the skeleton goes just before the chat history instead, so
//!   nothing is dropped silently.
//! - Depths are resolved as the table in [`super::preset`] says. The instant context goes at
//!   `Depth(0)` after every other depth-0 injection.
//! - At one position, messages are sorted by ascending `order`; equal orders keep their source
//!   order: preset injections, then the character's depth prompt, then lorebook entries.
//! - `{{char}}` and `{{user}}` are substituted in preset text (skeleton, injections, placeholders,
//!   depth prompt, lorebook); never in the history, session or instant context, which are data.
//! - With `system_first`, every system message (preset or history) is hoisted and merged, in
//!   order, into one leading system message joined by blank lines. It is tagged with the layer of
//!   its first part.
//! - Tokens per layer are counted per part before merging, so the total may overestimate the
//!   merged request by a few framing tokens, never underestimate it.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::macros::{MacroValues, substitute};
use super::preset::{Anchor, Lorebook, Position, Preset, SkeletonEntry};
use crate::{NewMessage, Role, TokenCounter};

/// The four layers of context. The meter shows them separately and each has its own budget.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Layer {
    /// The preset's text: system prompt, character, lorebook, injections.
    SystemConstants,
    /// Goal, todo state, summaries and key decisions.
    SessionContext,
    /// The recent messages and tool results the window selected.
    WorkingContext,
    /// Reminders, checkpoint info and the last error, at the end of the history.
    InstantContext,
}

impl Layer {
    /// Every layer, in display order.
    pub const ALL: [Layer; 4] = [
        Layer::SystemConstants,
        Layer::SessionContext,
        Layer::WorkingContext,
        Layer::InstantContext,
    ];

    /// The snake_case name used by the CLI's JSON and the UI.
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// One value per layer: token counts, budgets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PerLayer<T> {
    /// For [`Layer::SystemConstants`].
    pub system_constants: T,
    /// For [`Layer::SessionContext`].
    pub session_context: T,
    /// For [`Layer::WorkingContext`].
    pub working_context: T,
    /// For [`Layer::InstantContext`].
    pub instant_context: T,
}

impl<T> PerLayer<T> {
    /// The value for a layer.
    pub fn get(&self, layer: Layer) -> &T {
        match layer {
            Layer::SystemConstants => &self.system_constants,
            Layer::SessionContext => &self.session_context,
            Layer::WorkingContext => &self.working_context,
            Layer::InstantContext => &self.instant_context,
        }
    }

    /// The value for a layer, to update it.
    pub fn get_mut(&mut self, layer: Layer) -> &mut T {
        match layer {
            Layer::SystemConstants => &mut self.system_constants,
            Layer::SessionContext => &mut self.session_context,
            Layer::WorkingContext => &mut self.working_context,
            Layer::InstantContext => &mut self.instant_context,
        }
    }
}

static NO_PLACEHOLDERS: BTreeMap<String, String> = BTreeMap::new();

/// Everything besides the preset that goes into one request.
#[derive(Debug, Clone, Copy)]
pub struct AssembleInput<'a> {
    /// The working context, as the window selected it. Never split or reordered. Shared, not
    /// copied: an agent step assembles the same thousand messages as the step before, and the
    /// request carries them on without copying a byte.
    pub history: &'a [Arc<NewMessage>],
    /// Cached token counts of `history`, one per message; counted afresh when absent or when the
    /// length differs.
    pub history_tokens: Option<&'a [u32]>,
    /// The rendered session context (goal, todos, summaries, decisions).
    pub session_context: &'a str,
    /// Its token count as a system message, when the caller knows it (an agent step counts
    /// its unchanged summaries once, not every step); counted afresh when absent.
    pub session_context_tokens: Option<u32>,
    /// The rendered instant context (reminders, checkpoint, last error), placed at depth 0.
    pub instant_context: &'a str,
    /// Values of user placeholders, by anchor name.
    pub placeholders: &'a BTreeMap<String, String>,
    /// What `{{user}}` becomes.
    pub user_name: &'a str,
    /// What `{{char}}` becomes; defaults to the preset character's name.
    pub char_name: Option<&'a str>,
    /// For providers that need every system message first.
    pub system_first: bool,
    /// Token budget per layer; `None` is unlimited.
    pub budgets: PerLayer<Option<u32>>,
}

impl<'a> AssembleInput<'a> {
    /// An input with only a history: no session or instant context, no budgets, user "User".
    pub fn new(history: &'a [Arc<NewMessage>]) -> Self {
        Self {
            history,
            history_tokens: None,
            session_context: "",
            session_context_tokens: None,
            instant_context: "",
            placeholders: &NO_PLACEHOLDERS,
            user_name: "User",
            char_name: None,
            system_first: false,
            budgets: PerLayer::default(),
        }
    }
}

/// One request message and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssembledMessage {
    /// The message to send; a history message is the caller's own, shared.
    pub message: Arc<NewMessage>,
    /// Its layer (for a merged system message, the layer of its first part).
    pub layer: Layer,
    /// The preset id, anchor name or `history` it came from, for the editor and debugging.
    pub source: Cow<'static, str>,
}

/// A layer that went over its budget. Reported, never fixed by dropping messages here: the
/// compression step decides what to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerOverflow {
    /// Which layer.
    pub layer: Layer,
    /// Its tokens.
    pub tokens: u32,
    /// Its budget.
    pub budget: u32,
}

/// The assembled request and its measurements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assembled {
    /// The request messages, in order.
    pub messages: Vec<AssembledMessage>,
    /// Tokens per layer.
    pub tokens: PerLayer<u32>,
    /// Sum of the layers.
    pub total: u32,
    /// Layers over their budget.
    pub overflows: Vec<LayerOverflow>,
    /// Tokens of system messages that came from the history (a conversation's own system
    /// prompt, an imported chat's): counted in `working_context` for its budget, and shown by
    /// the meter with the system layer, where a person looks for them.
    pub history_system: u32,
}

impl Assembled {
    /// The bare messages, for a provider request.
    pub fn request(&self) -> Vec<NewMessage> {
        self.messages.iter().map(|m| (*m.message).clone()).collect()
    }
}

/// A message waiting for its position.
struct Item {
    position: Position,
    order: i32,
    message: Arc<NewMessage>,
    layer: Layer,
    source: Cow<'static, str>,
}

struct Part {
    message: Arc<NewMessage>,
    layer: Layer,
    source: Cow<'static, str>,
    tokens: u32,
}

/// The insertion point of a depth in a history: how many history messages precede it. See the
/// table in [`super::preset`].
pub fn depth_point(depth: i32, history: &[Arc<NewMessage>]) -> usize {
    let len = history.len();
    let mut p = if depth > 0 {
        usize::try_from(depth).unwrap_or(usize::MAX).min(len)
    } else {
        len.saturating_sub(usize::try_from(depth.unsigned_abs()).unwrap_or(usize::MAX))
    };
    // Never between a tool call and its results: move before the assistant message.
    while p > 0 && p < len && history[p].role == Role::Tool {
        p -= 1;
    }
    p
}

/// Lorebook entries active for this history, as items, in entry order.
fn active_lore(book: &Lorebook, history: &[Arc<NewMessage>], macros: MacroValues<'_>) -> Vec<Item> {
    let start = history.len().saturating_sub(book.scan_depth);
    let mut hay = String::new();
    for m in &history[start..] {
        hay.push_str(&m.content);
        hay.push('\n');
    }
    let hay_lower = hay.to_lowercase();
    let found = |key: &str, case_sensitive: bool| {
        let key = key.trim();
        if key.is_empty() {
            false
        } else if case_sensitive {
            hay.contains(key)
        } else {
            hay_lower.contains(&key.to_lowercase())
        }
    };
    book.entries
        .iter()
        .filter(|e| e.enabled && !e.content.is_empty())
        .filter(|e| {
            e.constant
                || (e.keys.iter().any(|k| found(k, e.case_sensitive))
                    && (e.secondary_keys.is_empty()
                        || e.secondary_keys.iter().any(|k| found(k, e.case_sensitive))))
        })
        .map(|e| Item {
            position: e.position.clone(),
            order: e.order,
            message: Arc::new(NewMessage::new(e.role, substitute(&e.content, macros))),
            layer: Layer::SystemConstants,
            source: format!("lore:{}", e.id).into(),
        })
        .collect()
}

enum Slot<'p> {
    Message(&'p super::preset::PresetMessage),
    Anchor(Anchor),
}

/// Builds the request for `preset` and `input`, counting tokens with `counter`. Pure and total:
/// any preset and input give a result; problems with budgets are reported in `overflows`.
///
/// The steps are those of the module documentation: the skeleton with its built-in anchors
/// made present (`slots_of`), every injected message placed and ordered (`injected_items`),
/// the skeleton walked with each anchor expanded once (`Parts::expand`), then every layer
/// measured against its budget (`measure`) and, with `system_first`, the system messages
/// hoisted (`hoist_system`).
pub fn assemble(
    preset: &Preset,
    input: &AssembleInput<'_>,
    counter: &dyn TokenCounter,
) -> Assembled {
    let character = preset.character.as_ref();
    let macros = MacroValues {
        char_name: input
            .char_name
            .or(character.map(|c| c.name.as_str()))
            .unwrap_or(""),
        user_name: input.user_name,
    };
    let slots = slots_of(preset);
    let items = injected_items(preset, input, macros, &slots);

    let mut parts = Parts {
        counter,
        list: Vec::with_capacity(slots.len() + input.history.len() + items.len()),
    };
    let mut expanded: Vec<&Anchor> = Vec::new();
    for slot in &slots {
        match slot {
            Slot::Message(m) => {
                if m.enabled && !m.content.is_empty() {
                    let msg = Arc::new(NewMessage::new(m.role, substitute(&m.content, macros)));
                    parts.push(msg, Layer::SystemConstants, m.id.clone().into());
                }
            }
            Slot::Anchor(anchor) => {
                if expanded.contains(&anchor) {
                    continue;
                }
                expanded.push(anchor);
                parts.expand(anchor, &items, input, preset, macros);
            }
        }
    }

    let (tokens, total, overflows) = measure(&parts.list, &input.budgets);
    let history_system = parts
        .list
        .iter()
        .filter(|p| p.layer == Layer::WorkingContext && p.message.role == Role::System)
        .fold(0u32, |acc, p| acc.saturating_add(p.tokens));
    let messages = if input.system_first {
        hoist_system(parts.list)
    } else {
        parts
            .list
            .into_iter()
            .map(|p| AssembledMessage {
                message: p.message,
                layer: p.layer,
                source: p.source,
            })
            .collect()
    };
    Assembled {
        messages,
        tokens,
        total,
        overflows,
        history_system,
    }
}

/// The skeleton in order, with the two built-in anchors made present: `chat_history` at the
/// end when missing, `session_context` just before it when missing.
fn slots_of(preset: &Preset) -> Vec<Slot<'_>> {
    let mut slots: Vec<Slot<'_>> = preset
        .skeleton
        .iter()
        .map(|e| match e {
            SkeletonEntry::Message(m) => Slot::Message(m),
            SkeletonEntry::Anchor { name } => Slot::Anchor(name.clone()),
        })
        .collect();
    let is_anchor = |s: &Slot<'_>, a: &Anchor| matches!(s, Slot::Anchor(n) if n == a);
    if !slots.iter().any(|s| is_anchor(s, &Anchor::ChatHistory)) {
        slots.push(Slot::Anchor(Anchor::ChatHistory));
    }
    if !slots.iter().any(|s| is_anchor(s, &Anchor::SessionContext)) {
        let at = slots
            .iter()
            .position(|s| is_anchor(s, &Anchor::ChatHistory))
            .unwrap_or(slots.len());
        slots.insert(at, Slot::Anchor(Anchor::SessionContext));
    }
    slots
}

/// Every injected message (the preset's injections, the character's depth prompt, active
/// lorebook entries, the instant context last at depth 0), in source order and then stably
/// sorted by `order`. One anchored to an anchor that is not in the skeleton goes just before
/// the chat history, so nothing is dropped silently.
fn injected_items(
    preset: &Preset,
    input: &AssembleInput<'_>,
    macros: MacroValues<'_>,
    slots: &[Slot<'_>],
) -> Vec<Item> {
    let mut items: Vec<Item> = preset
        .injections
        .iter()
        .filter(|i| i.message.enabled && !i.message.content.is_empty())
        .map(|i| Item {
            position: i.position.clone(),
            order: i.order,
            message: Arc::new(NewMessage::new(
                i.message.role,
                substitute(&i.message.content, macros),
            )),
            layer: Layer::SystemConstants,
            source: i.message.id.clone().into(),
        })
        .collect();
    if let Some(dp) = preset
        .character
        .as_ref()
        .and_then(|c| c.depth_prompt.as_ref())
        && !dp.text.is_empty()
    {
        items.push(Item {
            position: Position::Depth(dp.depth),
            order: super::preset::DEFAULT_ORDER,
            message: Arc::new(NewMessage::new(dp.role, substitute(&dp.text, macros))),
            layer: Layer::SystemConstants,
            source: "depth_prompt".into(),
        });
    }
    if let Some(book) = &preset.lorebook {
        items.extend(active_lore(book, input.history, macros));
    }
    if !input.instant_context.is_empty() {
        items.push(Item {
            position: Position::Depth(0),
            order: i32::MAX,
            message: Arc::new(NewMessage::new(Role::System, input.instant_context)),
            layer: Layer::InstantContext,
            source: "instant_context".into(),
        });
    }
    let present = |a: &Anchor| slots.iter().any(|s| matches!(s, Slot::Anchor(n) if n == a));
    for item in &mut items {
        if let Position::Before(a) | Position::After(a) = &item.position
            && !present(a)
        {
            item.position = Position::Before(Anchor::ChatHistory);
        }
    }
    items.sort_by_key(|i| i.order);
    items
}

/// The request's messages as they are placed, each counted as it goes in.
struct Parts<'c> {
    counter: &'c dyn TokenCounter,
    list: Vec<Part>,
}

impl Parts<'_> {
    fn push(&mut self, message: Arc<NewMessage>, layer: Layer, source: Cow<'static, str>) {
        let tokens = self.counter.count_message(&message);
        self.list.push(Part {
            message,
            layer,
            source,
            tokens,
        });
    }

    fn push_item(&mut self, item: &Item) {
        self.push(item.message.clone(), item.layer, item.source.clone());
    }

    /// One anchor's content, surrounded by the items injected before and after it.
    fn expand(
        &mut self,
        anchor: &Anchor,
        items: &[Item],
        input: &AssembleInput<'_>,
        preset: &Preset,
        macros: MacroValues<'_>,
    ) {
        for item in items
            .iter()
            .filter(|i| matches!(&i.position, Position::Before(a) if a == anchor))
        {
            self.push_item(item);
        }
        match anchor {
            Anchor::ChatHistory => self.history_with_depths(items, input),
            Anchor::SessionContext => {
                if !input.session_context.is_empty() {
                    let message = Arc::new(NewMessage::new(Role::System, input.session_context));
                    let tokens = input
                        .session_context_tokens
                        .unwrap_or_else(|| self.counter.count_message(&message));
                    self.list.push(Part {
                        message,
                        layer: Layer::SessionContext,
                        source: Cow::Borrowed("session_context"),
                        tokens,
                    });
                }
            }
            Anchor::Placeholder(name) => {
                let value = input
                    .placeholders
                    .get(name)
                    .map(String::as_str)
                    .or_else(|| {
                        preset
                            .character
                            .as_ref()
                            .and_then(|c| character_field(c, name))
                    })
                    .unwrap_or("");
                if !value.is_empty() {
                    let msg = Arc::new(NewMessage::new(Role::System, substitute(value, macros)));
                    self.push(msg, Layer::SystemConstants, name.clone().into());
                }
            }
        }
        for item in items
            .iter()
            .filter(|i| matches!(&i.position, Position::After(a) if a == anchor))
        {
            self.push_item(item);
        }
    }

    /// The history, with each depth injection at its insertion point; the history's token
    /// counts come from the caller when it has them for exactly these messages.
    fn history_with_depths(&mut self, items: &[Item], input: &AssembleInput<'_>) {
        let history = input.history;
        let mut depth_items: Vec<(usize, &Item)> = items
            .iter()
            .filter_map(|i| match i.position {
                Position::Depth(d) => Some((depth_point(d, history), i)),
                _ => None,
            })
            .collect();
        depth_items.sort_by_key(|(p, _)| *p);
        let mut next = depth_items.iter().peekable();
        let cached = input.history_tokens.filter(|t| t.len() == history.len());
        for p in 0..=history.len() {
            while let Some((_, item)) = next.next_if(|(at, _)| *at == p) {
                self.push_item(item);
            }
            if let Some(m) = history.get(p) {
                let tokens = match cached {
                    Some(t) => t[p],
                    None => self.counter.count_message(m),
                };
                self.list.push(Part {
                    message: Arc::clone(m),
                    layer: Layer::WorkingContext,
                    source: Cow::Borrowed("history"),
                    tokens,
                });
            }
        }
    }
}

/// Tokens per layer, their total, and every layer over its budget.
fn measure(
    parts: &[Part],
    budgets: &PerLayer<Option<u32>>,
) -> (PerLayer<u32>, u32, Vec<LayerOverflow>) {
    let mut tokens = PerLayer::<u32>::default();
    for part in parts {
        let t = tokens.get_mut(part.layer);
        *t = t.saturating_add(part.tokens);
    }
    let total = Layer::ALL
        .iter()
        .fold(0u32, |acc, l| acc.saturating_add(*tokens.get(*l)));
    let overflows = Layer::ALL
        .iter()
        .filter_map(|&layer| {
            let budget = (*budgets.get(layer))?;
            let used = *tokens.get(layer);
            (used > budget).then_some(LayerOverflow {
                layer,
                tokens: used,
                budget,
            })
        })
        .collect();
    (tokens, total, overflows)
}

/// The character field a built-in placeholder stands for.
fn character_field<'c>(c: &'c super::preset::Character, name: &str) -> Option<&'c str> {
    match name {
        "char_description" => Some(&c.description),
        "char_personality" => Some(&c.personality),
        "scenario" => Some(&c.scenario),
        "dialogue_examples" => Some(&c.mes_example),
        _ => None,
    }
}

/// Merges every system message, in order, into one leading message.
fn hoist_system(parts: Vec<Part>) -> Vec<AssembledMessage> {
    let (system, rest): (Vec<Part>, Vec<Part>) = parts
        .into_iter()
        .partition(|p| p.message.role == Role::System);
    let mut out = Vec::with_capacity(rest.len() + 1);
    if let Some(first) = system.first() {
        let content = system
            .iter()
            .map(|p| p.message.content.as_str())
            .collect::<Vec<_>>()
            .join("\n\n");
        let source = if system.len() == 1 {
            first.source.clone()
        } else {
            "merged_system".into()
        };
        out.push(AssembledMessage {
            message: Arc::new(NewMessage::new(Role::System, content)),
            layer: first.layer,
            source,
        });
    }
    out.extend(rest.into_iter().map(|p| AssembledMessage {
        message: p.message,
        layer: p.layer,
        source: p.source,
    }));
    out
}

#[cfg(test)]
#[path = "assemble_tests.rs"]
mod tests;
