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
