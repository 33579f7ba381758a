//! The context pipeline end to end: fidelity of extract compression on long generated
//! conversations, property tests of Select and planning, and the cost of the walk.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use decima_core::context::compress::PlanInput;
use decima_core::context::{
    CompactionPlan, CompressionLevel, HistoryBudget, Strategy as SummaryStrategy, Summary,
    pinned_units, plan, select,
};
use decima_core::{EstimateCounter, Message, NewMessage, Role, ToolCall};
use decima_testkit::stored;
use decima_testkit::{ConversationBuilder, FactKind};
use proptest::prelude::*;

fn compress(
    messages: &[Message],
    pinned: &[Message],
    summaries: &[Summary],
    level: CompressionLevel,
    budget: HistoryBudget,
) -> CompactionPlan {
    plan(PlanInput {
        messages,
        pinned,
        summaries,
        level,
        strategy: SummaryStrategy::Extract,
        budget,
        counter: &EstimateCounter,
        written: None,
    })
    .unwrap()
}

/// Everything the model would see from the history: summary texts and verbatim messages.
fn assembled(
    messages: &[Message],
    pinned: &[Message],
    summaries: &[Summary],
    b: HistoryBudget,
) -> String {
    let sel = select(messages, pinned, summaries, &b).unwrap();
    let mut out = String::new();
    for s in sel.global.iter().chain(sel.segments.iter()) {
        out.push_str(&s.text);
        out.push('\n');
    }
    for m in sel.pinned.iter().copied().chain(sel.recent.iter()) {
        out.push_str(&m.content);
        for c in &m.tool_calls {
            out.push_str(&c.arguments);
        }
        out.push('\n');
    }
    out
}

#[test]
fn fidelity_after_standard_and_deep_extract_compression() {
    for seed in [1u64, 2, 3] {
        let built = ConversationBuilder::new(seed, 600).build();
        let messages: Vec<Message> = built
            .messages
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, d)| stored(i as i64 + 1, d))
            .collect();
        let pinned = pinned_units(&messages);
        let total: u32 = messages.iter().map(|m| m.tokens).sum();
        let budget = HistoryBudget::new(total / 2);
        let before = select(&messages, &pinned, &[], &budget).unwrap();
        assert!(
            before.compression_required(),
            "the history must outgrow the budget"
        );

        let mut summaries: Vec<Summary> = Vec::new();
        for level in [CompressionLevel::Standard, CompressionLevel::Deep] {
            let p = compress(&messages, &pinned, &summaries, level, budget);
            assert!(!p.is_empty(), "{level:?} must do something");
            assert!(p.tokens_after < p.tokens_before);
            summaries = p.apply(&summaries);
            let sel = select(&messages, &pinned, &summaries, &budget).unwrap();
            assert!(!sel.compression_required(), "{level:?}: still over budget");
            assert!(
                sel.frontier as usize > messages.len() / 2,
                "{level:?}: most history is summarised"
            );
            assert!(
                sel.global_tokens <= budget.global(),
                "{level:?}: global {}",
                sel.global_tokens
            );
            assert!(
                sel.segment_tokens <= budget.segments(),
                "{level:?}: segments {}",
                sel.segment_tokens
            );
            assert!(
                sel.pinned_tokens + sel.recent_tokens <= budget.recent(),
                "{level:?}: recent {}",
                sel.pinned_tokens + sel.recent_tokens
            );
            assert!(sel.selected_tokens() <= budget.tokens);

            let context = assembled(&messages, &pinned, &summaries, budget);
            let mut literal_total = 0;
            let mut literal_kept = 0;
            for fact in &built.facts {
                let kept = context.contains(&fact.text);
                match fact.kind {
                    FactKind::PinnedTodo | FactKind::Goal => {
                        assert!(kept, "seed {seed} {level:?}: pinned fact lost: {fact:?}")
                    }
                    _ => {
                        literal_total += 1;
                        literal_kept += usize::from(kept);
                    }
                }
            }
            assert!(
                literal_kept * 100 >= literal_total * 95,
                "seed {seed} {level:?}: kept {literal_kept}/{literal_total} literals"
            );
        }
    }
}

#[test]
fn selection_cost_depends_on_the_window_not_the_history() {
    let mut visits = Vec::new();
    for n in [1_000i64, 100_000] {
        let messages: Vec<Message> = (1..=n)
            .map(|seq| stored(seq, NewMessage::new(Role::User, "x".repeat(40))))
            .collect();
        let summaries = vec![Summary {
            id: "g".into(),
            level: decima_core::context::SummaryLevel::Global,
            start_seq: 1,
            end_seq: n - 200,
            text: "## Goal\n".into(),
            tokens: 10,
            strategy: SummaryStrategy::Extract,
        }];
        let sel = select(&messages, &[], &summaries, &HistoryBudget::new(1_000_000)).unwrap();
        assert_eq!(sel.recent.len(), 200);
        visits.push(sel.visited);
    }
    assert_eq!(visits, vec![200, 200]);
}

/// A random history made of units: plain messages and tool calls with one or two results.
fn arb_history() -> impl Strategy<Value = Vec<Message>> {
    prop::collection::vec((0u8..4, 1u32..60, prop::bool::weighted(0.08)), 1..80).prop_map(|units| {
        let mut out = Vec::new();
        let mut seq = 0i64;
        for (i, (kind, tokens, pinned)) in units.into_iter().enumerate() {
            let mut push = |d: NewMessage| {
                seq += 1;
                let mut m = stored(seq, d);
                m.tokens = tokens;
                out.push(m);
            };
            match kind {
                0 | 1 => push(NewMessage {
                    pinned,
                    ..NewMessage::new(
                        if kind == 0 {
                            Role::User
                        } else {
                            Role::Assistant
                        },
                        format!("Decision: step {i} uses /data/f-{i}.csv"),
                    )
                }),
                _ => {
                    let calls: Vec<ToolCall> = (0..kind - 1)
                        .map(|k| ToolCall {
                            id: format!("c{i}_{k}"),
                            name: "shell".into(),
                            arguments: format!("{{\"cmd\":\"cat /d/{i}.txt\"}}"),
                            signature: None,
                        })
                        .collect();
                    let ids: Vec<String> = calls.iter().map(|c| c.id.clone()).collect();
                    push(NewMessage {
                        tool_calls: calls,
                        pinned,
                        ..NewMessage::new(Role::Assistant, "")
                    });
                    for id in ids {
                        push(NewMessage {
                            tool_call_id: Some(id),
                            ..NewMessage::new(Role::Tool, "exit_code=0\nok")
                        });
                    }
                }
            }
        }
        out
    })
}

fn arb_level() -> impl Strategy<Value = CompressionLevel> {
    prop_oneof![
        Just(CompressionLevel::Standard),
        Just(CompressionLevel::Deep),
        Just(CompressionLevel::Phase),
        Just(CompressionLevel::Checkpoint),
    ]
}

fn assert_units_whole(sent: &[&Message]) {
    for (i, m) in sent.iter().enumerate() {
        for c in &m.tool_calls {
            assert!(
                sent[i + 1..]
                    .iter()
                    .any(|r| r.tool_call_id.as_deref() == Some(c.id.as_str())),
                "call {} sent without its result",
                c.id
            );
        }
        if let Some(id) = &m.tool_call_id {
            assert!(
                sent[..i]
                    .iter()
                    .any(|a| a.tool_calls.iter().any(|c| &c.id == id)),
                "result {id} sent without its call"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn plans_keep_pairs_budgets_and_undo(
        messages in arb_history(),
        budget in 100u32..3000,
        levels in prop::collection::vec(arb_level(), 1..4),
    ) {
        let pinned = pinned_units(&messages);
        let budget = HistoryBudget::new(budget);
        let mut summaries: Vec<Summary> = Vec::new();
        let mut stored: Vec<Summary> = Vec::new();
        for level in levels {
            let before = select(&messages, &pinned, &summaries, &budget).unwrap();
            // Tool pairs never split, in what is sent and at the coverage frontier.
            let sent: Vec<&Message> = before.pinned.iter().copied().chain(before.recent.iter()).collect();
            assert_units_whole(&sent);
            if let Some(first) = before.recent.first().or(before.pending.first()) {
                prop_assert!(first.role != Role::Tool, "frontier splits a tool pair at {}", first.seq);
            }
            // The selected total never exceeds the budget unless the summaries and pinned
            // messages alone do, and then nothing else is selected.
            let fixed = before.global_tokens + before.segment_tokens + before.pinned_tokens;
            if fixed <= budget.tokens {
                prop_assert!(before.selected_tokens() <= budget.tokens);
            } else {
                prop_assert!(before.recent.is_empty() && before.compression_required());
            }

            let p = compress(&messages, &pinned, &summaries, level, budget);
            prop_assert!(p.tokens_after <= p.tokens_before || level == CompressionLevel::Phase);
            stored.extend(summaries.iter().cloned());
            let after = p.apply(&summaries);
            let restored = p.revert(&after, &stored);
            let again = select(&messages, &pinned, &restored, &budget).unwrap();
            prop_assert_eq!(&again, &before, "undo must restore the exact previous selection");
            // Pinned messages stay verbatim after the plan.
            let sel_after = select(&messages, &pinned, &after, &budget).unwrap();
            for m in messages.iter().filter(|m| m.pinned) {
                prop_assert!(p.kept_verbatim.contains(&m.seq));
                prop_assert!(sel_after.verbatim_seqs().contains(&m.seq) || sel_after.pending.iter().any(|x| x.seq == m.seq));
            }
            summaries = after;
        }
    }
}

#[test]
fn the_newest_message_is_never_summarised_away() {
    let mut drafts: Vec<NewMessage> = (0..20)
        .map(|i| NewMessage::new(Role::User, format!("message {i}")))
        .collect();
    drafts.push(NewMessage::new(
        Role::User,
        "a very long request ".repeat(500),
    ));
    let messages: Vec<Message> = drafts
        .into_iter()
        .enumerate()
        .map(|(i, d)| stored(i as i64 + 1, d))
        .collect();
    // Even with nothing to keep, and a newest message larger than any budget, it stays uncovered.
    let range = decima_core::context::choose_range(&messages, 0, 0).unwrap();
    assert_eq!(range, 0..20, "everything but the newest message");
    assert_eq!(
        decima_core::context::choose_range(&messages[20..], 0, 0),
        None
    );
}
