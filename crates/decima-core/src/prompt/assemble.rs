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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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
        match self {
            Layer::SystemConstants => "system_constants",
            Layer::SessionContext => "session_context",
            Layer::WorkingContext => "working_context",
            Layer::InstantContext => "instant_context",
        }
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
    let history = input.history;

    // The skeleton, with the two built-in anchors made present.
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
    let present: Vec<&Anchor> = slots
        .iter()
        .filter_map(|s| match s {
            Slot::Anchor(a) => Some(a),
            Slot::Message(_) => None,
        })
        .collect();

    // Every injected message, in source order, then stably sorted by `order`.
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
    if let Some(dp) = character.and_then(|c| c.depth_prompt.as_ref())
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
        items.extend(active_lore(book, history, macros));
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
    for item in &mut items {
        if let Position::Before(a) | Position::After(a) = &item.position
            && !present.contains(&a)
        {
            item.position = Position::Before(Anchor::ChatHistory);
        }
    }
    items.sort_by_key(|i| i.order);

    let mut parts: Vec<Part> = Vec::with_capacity(slots.len() + history.len() + items.len());
    let push = |parts: &mut Vec<Part>,
                message: Arc<NewMessage>,
                layer: Layer,
                source: Cow<'static, str>| {
        let tokens = counter.count_message(&message);
        parts.push(Part {
            message,
            layer,
            source,
            tokens,
        });
    };
    let push_items = |parts: &mut Vec<Part>, items: &[Item], want: &dyn Fn(&Position) -> bool| {
        for i in items.iter().filter(|i| want(&i.position)) {
            push(parts, i.message.clone(), i.layer, i.source.clone());
        }
    };

    let mut expanded: Vec<&Anchor> = Vec::new();
    for slot in &slots {
        match slot {
            Slot::Message(m) => {
                if m.enabled && !m.content.is_empty() {
                    let msg = Arc::new(NewMessage::new(m.role, substitute(&m.content, macros)));
                    push(&mut parts, msg, Layer::SystemConstants, m.id.clone().into());
                }
            }
            Slot::Anchor(anchor) => {
                if expanded.contains(&anchor) {
                    continue;
                }
                expanded.push(anchor);
                push_items(
                    &mut parts,
                    &items,
                    &|p| matches!(p, Position::Before(a) if a == anchor),
                );
                match anchor {
                    Anchor::ChatHistory => {
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
                                push(
                                    &mut parts,
                                    item.message.clone(),
                                    item.layer,
                                    item.source.clone(),
                                );
                            }
                            if let Some(m) = history.get(p) {
                                let tokens = match cached {
                                    Some(t) => t[p],
                                    None => counter.count_message(m),
                                };
                                parts.push(Part {
                                    message: Arc::clone(m),
                                    layer: Layer::WorkingContext,
                                    source: Cow::Borrowed("history"),
                                    tokens,
                                });
                            }
                        }
                    }
                    Anchor::SessionContext => {
                        if !input.session_context.is_empty() {
                            let message =
                                Arc::new(NewMessage::new(Role::System, input.session_context));
                            let tokens = input
                                .session_context_tokens
                                .unwrap_or_else(|| counter.count_message(&message));
                            parts.push(Part {
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
                            .or_else(|| character.and_then(|c| character_field(c, name)))
                            .unwrap_or("");
                        if !value.is_empty() {
                            let msg =
                                Arc::new(NewMessage::new(Role::System, substitute(value, macros)));
                            push(&mut parts, msg, Layer::SystemConstants, name.clone().into());
                        }
                    }
                }
                push_items(
                    &mut parts,
                    &items,
                    &|p| matches!(p, Position::After(a) if a == anchor),
                );
            }
        }
    }

    let mut tokens = PerLayer::<u32>::default();
    for part in &parts {
        let t = tokens.get_mut(part.layer);
        *t = t.saturating_add(part.tokens);
    }
    let total = Layer::ALL
        .iter()
        .fold(0u32, |acc, l| acc.saturating_add(*tokens.get(*l)));
    let overflows = Layer::ALL
        .iter()
        .filter_map(|&layer| {
            let budget = (*input.budgets.get(layer))?;
            let used = *tokens.get(layer);
            (used > budget).then_some(LayerOverflow {
                layer,
                tokens: used,
                budget,
            })
        })
        .collect();

    let history_system = parts
        .iter()
        .filter(|p| p.layer == Layer::WorkingContext && p.message.role == Role::System)
        .fold(0u32, |acc, p| acc.saturating_add(p.tokens));
    let messages = if input.system_first {
        hoist_system(parts)
    } else {
        parts
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
mod tests {
    use super::*;
    use crate::prompt::preset::{
        Character, DepthPrompt, Injection, LoreEntry, Lorebook, PresetMessage,
    };
    use crate::{EstimateCounter, ToolCall};

    fn msg(role: Role, s: &str) -> NewMessage {
        NewMessage::new(role, s)
    }

    fn history(n: usize) -> Vec<NewMessage> {
        (0..n)
            .map(|i| {
                let role = if i % 2 == 0 {
                    Role::User
                } else {
                    Role::Assistant
                };
                msg(role, &format!("h{i}"))
            })
            .collect()
    }

    fn inject(id: &str, position: Position, order: i32) -> Injection {
        Injection {
            message: PresetMessage::new(id, Role::System, id.to_uppercase()),
            position,
            order,
        }
    }

    fn texts(out: &Assembled) -> Vec<String> {
        out.messages
            .iter()
            .map(|m| m.message.content.clone())
            .collect()
    }

    fn shared(history: &[NewMessage]) -> Vec<Arc<NewMessage>> {
        history.iter().cloned().map(Arc::new).collect()
    }

    fn run(preset: &Preset, history: &[NewMessage]) -> Vec<String> {
        texts(&assemble(
            preset,
            &AssembleInput::new(&shared(history)),
            &EstimateCounter,
        ))
    }

    #[test]
    fn a_known_session_count_is_taken_and_history_is_shared_not_copied() {
        let h = shared(&history(2));
        let mut input = AssembleInput::new(&h);
        input.session_context = "GOAL";
        input.session_context_tokens = Some(1234);
        let out = assemble(&Preset::simple("SYS"), &input, &EstimateCounter);
        assert_eq!(*out.tokens.get(Layer::SessionContext), 1234);
        // The history messages are the caller's own drafts.
        assert!(Arc::ptr_eq(&out.messages[2].message, &h[0]));
        assert!(Arc::ptr_eq(&out.messages[3].message, &h[1]));
        input.session_context_tokens = None;
        let counted = assemble(&Preset::simple("SYS"), &input, &EstimateCounter);
        assert_eq!(
            *counted.tokens.get(Layer::SessionContext),
            EstimateCounter.count_message(&NewMessage::new(Role::System, "GOAL"))
        );
    }

    #[test]
    fn simple_preset_is_system_then_session_then_history() {
        let h = history(2);
        let hs = shared(&h);
        let mut input = AssembleInput::new(&hs);
        input.session_context = "GOAL";
        let out = assemble(&Preset::simple("SYS"), &input, &EstimateCounter);
        assert_eq!(texts(&out), ["SYS", "GOAL", "h0", "h1"]);
        let layers: Vec<Layer> = out.messages.iter().map(|m| m.layer).collect();
        assert_eq!(
            layers,
            [
                Layer::SystemConstants,
                Layer::SessionContext,
                Layer::WorkingContext,
                Layer::WorkingContext
            ]
        );
        // An empty preset (e.g. an old row with no fields) is just the history.
        assert_eq!(run(&Preset::default(), &h), ["h0", "h1"]);
        assert_eq!(run(&Preset::simple(""), &h), ["h0", "h1"]);
    }

    #[test]
    fn before_and_after_every_anchor() {
        let mut p = Preset::simple("SYS");
        p.skeleton.insert(
            1,
            SkeletonEntry::Anchor {
                name: Anchor::named("persona"),
            },
        );
        for a in ["persona", "session_context", "chat_history"] {
            p.injections.push(inject(
                &format!("b-{a}"),
                Position::Before(Anchor::named(a)),
                0,
            ));
            p.injections.push(inject(
                &format!("a-{a}"),
                Position::After(Anchor::named(a)),
                0,
            ));
        }
        let h = history(1);
        let placeholders = BTreeMap::from([("persona".to_string(), "I am {{user}}".to_string())]);
        let hs = shared(&h);
        let mut input = AssembleInput::new(&hs);
        input.placeholders = &placeholders;
        input.user_name = "Bob";
        input.session_context = "GOAL";
        let out = assemble(&p, &input, &EstimateCounter);
        assert_eq!(
            texts(&out),
            [
                "SYS",
                "B-PERSONA",
                "I am Bob",
                "A-PERSONA",
                "B-SESSION_CONTEXT",
                "GOAL",
                "A-SESSION_CONTEXT",
                "B-CHAT_HISTORY",
                "h0",
                "A-CHAT_HISTORY"
            ]
        );
        // Empty anchors still hold their injections; a missing anchor falls back before history.
        let mut q = Preset::simple("SYS");
        q.injections
            .push(inject("lost", Position::After(Anchor::named("nowhere")), 0));
        q.injections
            .push(inject("s", Position::After(Anchor::SessionContext), 0));
        assert_eq!(run(&q, &h), ["SYS", "S", "LOST", "h0"]);
    }

    #[test]
    fn depths_count_from_both_ends_and_clamp() {
        let h = history(4);
        let case = |d: i32| {
            let mut p = Preset::simple("");
            p.injections.push(inject("x", Position::Depth(d), 0));
            run(&p, &h).iter().position(|t| t == "X").unwrap()
        };
        assert_eq!(case(0), 4, "depth 0 is after the last message");
        assert_eq!(case(-1), 3, "-1 is before the last message");
        assert_eq!(case(-3), 1);
        assert_eq!(case(-4), 0);
        assert_eq!(case(-99), 0, "clamped to the start");
        assert_eq!(case(1), 1, "after the first message");
        assert_eq!(case(3), 3);
        assert_eq!(case(99), 4, "clamped to the end");
        assert_eq!(case(i32::MIN), 0);
        assert_eq!(case(i32::MAX), 4);
        // An empty history still gets the injection.
        let mut p = Preset::simple("S");
        p.injections.push(inject("x", Position::Depth(-2), 0));
        assert_eq!(run(&p, &[]), ["S", "X"]);
    }

    #[test]
    fn depth_never_splits_a_tool_call_from_its_result() {
        let mut call = msg(Role::Assistant, "");
        call.tool_calls.push(ToolCall {
            id: "c1".into(),
            name: "shell".into(),
            arguments: "{}".into(),
            signature: None,
        });
        let mut result = msg(Role::Tool, "out");
        result.tool_call_id = Some("c1".into());
        let h = vec![msg(Role::User, "u"), call, result.clone(), result];
        let mut p = Preset::simple("");
        p.injections.push(inject("x", Position::Depth(-1), 0));
        assert_eq!(run(&p, &h), ["u", "X", "", "out", "out"]);
    }

    #[test]
    fn order_breaks_ties_stably_and_disabled_are_skipped() {
        let mut p = Preset::simple("SYS");
        p.injections.push(inject("c", Position::Depth(0), 5));
        p.injections.push(inject("a", Position::Depth(0), 1));
        p.injections.push(inject("b1", Position::Depth(0), 5));
        p.injections.push(inject("b2", Position::Depth(99), 5));
        let mut off = inject("off", Position::Depth(0), 0);
        off.message.enabled = false;
        p.injections.push(off);
        if let SkeletonEntry::Message(m) = &mut p.skeleton[0] {
            m.enabled = false;
        }
        let h = history(1);
        let hs = shared(&h);
        let mut input = AssembleInput::new(&hs);
        input.instant_context = "NOW";
        let out = assemble(&p, &input, &EstimateCounter);
        assert_eq!(texts(&out), ["h0", "A", "C", "B1", "B2", "NOW"]);
        assert_eq!(out.messages[5].layer, Layer::InstantContext);
    }

    #[test]
    fn macros_apply_to_preset_text_only() {
        let mut p = Preset::simple("{{char}} talks to {{User}} {{unknown}}");
        p.character = Some(Character {
            name: "Ada".into(),
            ..Character::default()
        });
        let h = vec![msg(Role::User, "literal {{char}}")];
        let hs = shared(&h);
        let mut input = AssembleInput::new(&hs);
        input.user_name = "Bob";
        input.session_context = "{{user}} goal";
        assert_eq!(
            texts(&assemble(&p, &input, &EstimateCounter)),
            [
                "Ada talks to Bob {{unknown}}",
                "{{user}} goal",
                "literal {{char}}"
            ]
        );
        input.char_name = Some("Override");
        assert_eq!(
            texts(&assemble(&p, &input, &EstimateCounter))[0],
            "Override talks to Bob {{unknown}}"
        );
    }

    #[test]
    fn system_first_hoists_and_merges_in_order() {
        let mut p = Preset::simple("SYS");
        p.injections.push(Injection {
            message: PresetMessage::new("u", Role::User, "U"),
            position: Position::Before(Anchor::SessionContext),
            order: 0,
        });
        p.injections.push(inject("d", Position::Depth(-1), 0));
        let h = history(2);
        let hs = shared(&h);
        let mut input = AssembleInput::new(&hs);
        input.session_context = "GOAL";
        input.instant_context = "NOW";
        input.system_first = true;
        let out = assemble(&p, &input, &EstimateCounter);
        assert_eq!(texts(&out), ["SYS\n\nGOAL\n\nD\n\nNOW", "U", "h0", "h1"]);
        assert_eq!(out.messages[0].message.role, Role::System);
        assert_eq!(out.messages[0].layer, Layer::SystemConstants);
        assert_eq!(out.messages[0].source, "merged_system");
        // Accounting is per layer, before merging.
        assert!(out.tokens.session_context > 0 && out.tokens.instant_context > 0);
        assert_eq!(
            out.history_system, 0,
            "no system message came from the history"
        );
    }

    #[test]
    fn a_system_message_from_the_history_is_counted_apart() {
        let p = Preset::simple("SYS");
        let h = vec![
            NewMessage::new(Role::System, "You are the ledger agent. Answer in EUR."),
            NewMessage::new(Role::User, "How many invoices?"),
        ];
        let hs = shared(&h);
        let input = AssembleInput::new(&hs);
        let out = assemble(&p, &input, &EstimateCounter);
        let system = EstimateCounter.count_message(&h[0]);
        assert_eq!(out.history_system, system);
        // Its budget is the history's: the layer counts stay as they were.
        assert!(out.tokens.working_context >= system);
    }

    #[test]
    fn character_placeholders_and_depth_prompt() {
        let mut p = Preset::simple("SYS");
        p.skeleton.insert(
            1,
            SkeletonEntry::Anchor {
                name: Anchor::named("char_description"),
            },
        );
        p.character = Some(Character {
            name: "Ada".into(),
            description: "{{char}} counts.".into(),
            depth_prompt: Some(DepthPrompt {
                text: "DP".into(),
                depth: -1,
                role: Role::User,
            }),
            ..Character::default()
        });
        let h = history(2);
        let out = assemble(&p, &AssembleInput::new(&shared(&h)), &EstimateCounter);
        assert_eq!(texts(&out), ["SYS", "Ada counts.", "h0", "DP", "h1"]);
        assert_eq!(out.messages[3].message.role, Role::User);
    }

    fn entry(id: &str, keys: &[&str]) -> LoreEntry {
        LoreEntry {
            id: id.into(),
            keys: keys.iter().map(|k| k.to_string()).collect(),
            secondary_keys: vec![],
            content: id.to_uppercase(),
            constant: false,
            enabled: true,
            case_sensitive: false,
            position: Position::Before(Anchor::ChatHistory),
            order: 100,
            role: Role::System,
        }
    }

    #[test]
    fn lorebook_activates_by_scan_depth_case_and_flags() {
        let mut cs = entry("cs", &["Dragon"]);
        cs.case_sensitive = true;
        let mut constant = entry("always", &[]);
        constant.constant = true;
        constant.order = 1;
        let mut off = entry("off", &["dragon"]);
        off.enabled = false;
        let mut second = entry("second", &["dragon"]);
        second.secondary_keys = vec!["castle".into()];
        let mut second_ok = entry("second_ok", &["dragon"]);
        second_ok.secondary_keys = vec!["SWORD".into()];
        let old = entry("old", &["ancient"]);
        let mut p = Preset::simple("");
        p.lorebook = Some(Lorebook {
            scan_depth: 2,
            entries: vec![
                entry("ci", &["DRAGON"]),
                cs,
                constant,
                off,
                second,
                second_ok,
                old,
            ],
        });
        let h = vec![
            msg(Role::User, "the ancient one"),
            msg(Role::Assistant, "a dragon appears"),
            msg(Role::User, "I draw my sword"),
        ];
        assert_eq!(
            run(&p, &h),
            [
                "ALWAYS",
                "CI",
                "SECOND_OK",
                "the ancient one",
                "a dragon appears",
                "I draw my sword"
            ]
        );
        // Deeper scanning reaches the older message.
        p.lorebook.as_mut().unwrap().scan_depth = 3;
        assert!(run(&p, &h).contains(&"OLD".to_string()));
        // Scan depth 0 scans nothing: only constants.
        p.lorebook.as_mut().unwrap().scan_depth = 0;
        assert_eq!(run(&p, &h)[0], "ALWAYS");
        assert_eq!(run(&p, &h).len(), 4);
    }

    #[test]
    fn layers_are_counted_and_budgets_reported() {
        let h = history(3);
        let cached = [10, 20, 30];
        let hs = shared(&h);
        let mut input = AssembleInput::new(&hs);
        input.history_tokens = Some(&cached);
        input.session_context = "twelve chars";
        input.instant_context = "abcd";
        input.budgets.working_context = Some(50);
        input.budgets.session_context = Some(100);
        let out = assemble(&Preset::simple("12345678"), &input, &EstimateCounter);
        let c = EstimateCounter;
        assert_eq!(out.tokens.working_context, 60, "cached counts are used");
        assert_eq!(out.tokens.system_constants, c.message_overhead() + 2);
        assert_eq!(out.tokens.session_context, c.message_overhead() + 3);
        assert_eq!(out.tokens.instant_context, c.message_overhead() + 1);
        assert_eq!(out.total, 60 + 3 * c.message_overhead() + 6);
        assert_eq!(
            out.overflows,
            [LayerOverflow {
                layer: Layer::WorkingContext,
                tokens: 60,
                budget: 50
            }]
        );
        assert_eq!(out.messages.len(), 6, "overflow drops nothing");
        // Wrong-length caches are ignored, not trusted.
        input.history_tokens = Some(&cached[..2]);
        let out = assemble(&Preset::simple(""), &input, &EstimateCounter);
        let expect: u32 = h.iter().map(|m| c.count_message(m)).sum();
        assert_eq!(out.tokens.working_context, expect);
        assert_eq!(out.request().len(), 5);
    }
}
