//! Regression tests for defects of the context pipeline found in review, each through the
//! public API: model-written summaries lost when folded (a), selection failing for good on a
//! pinned tool call whose result never arrived (d), and summary headers left uncounted.
//! Defects (b) and (c) are covered next to their code: `context::fold` and `prompt::macros`.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use decima_core::context::compress::PlanInput;
use decima_core::context::{
    CompressionLevel, HistoryBudget, Strategy, Summary, SummaryLevel, pinned_units, plan, select,
};
use decima_core::{EstimateCounter, Message, NewMessage, Role, TokenCounter, ToolCall};
use decima_testkit::stored;

fn prose(seq: i64) -> Message {
    let role = if seq % 2 == 0 {
        Role::User
    } else {
        Role::Assistant
    };
    stored(
        seq,
        NewMessage::new(
            role,
            format!(
                "Looking at region {seq} of the ledger; the totals still need a second pass before anyone signs off on them."
            ),
        ),
    )
}

fn counted(s: &Summary) -> u32 {
    EstimateCounter.count_text(&format!("{}\n{}", s.header(), s.text))
        + EstimateCounter.message_overhead()
}

const LLM_SUMMARY: &str = "## Goal\nReconcile the Q3 invoices of ACC-77 against the ledger.\n\n## Completed work\n- Loaded all 14 ledger files.\n- Matched 9,812 of 9,830 rows.\n\n## Current state\nEighteen rows differ by 0.01 EUR rounding.\n\n## Key decisions\n- Round half-even, as the ledger does.\n\n## Next step\nWrite the variance note for finance.\n\n## Constraints\n- Never edit the ledger export.\n";

/// Defect a: when segments outgrew their share, the fold parsed only the extract headings'
/// bullets of a model-written summary, ignored the new written text, and recorded `extract`.
#[test]
fn model_written_summaries_fold_with_their_content_and_strategy() {
    // Global 600, segments 1,800, recent 3,600 tokens.
    let budget = HistoryBudget::new(6_000);
    let mut old_text = String::from("## Earlier work\n");
    for i in 0..40 {
        old_text.push_str(&format!("- Reviewed batch {i} of the import log.\n"));
    }
    old_text.push_str(LLM_SUMMARY);
    let old = Summary {
        id: "llm-1".into(),
        level: SummaryLevel::Segment,
        start_seq: 1,
        end_seq: 50,
        tokens: 0,
        text: old_text,
        strategy: Strategy::Llm,
    };
    let old = Summary {
        tokens: counted(&old),
        ..old
    };
    let messages: Vec<Message> = (51..=350).map(prose).collect();
    let mut written = String::from("## Goal\nReconcile Q3.\n\n## Completed work\n");
    for i in 0..150 {
        written.push_str(&format!("- Checked region {i} against the FX table.\n"));
    }
    written.push_str("\n## Current state\nRegion totals agree.\n\n## Key decisions\n- Use the ECB reference rate.\n\n## Next step\nDraft the memo.\n\n## Constraints\n- Only EUR accounts.\n");
    for strategy in [Strategy::Llm, Strategy::Structured] {
        let summaries = vec![Summary {
            strategy,
            ..old.clone()
        }];
        let p = plan(PlanInput {
            messages: &messages,
            pinned: &[],
            summaries: &summaries,
            level: CompressionLevel::Standard,
            strategy,
            budget,
            counter: &EstimateCounter,
            written: Some(&written),
        })
        .unwrap();
        assert_eq!(
            p.superseded,
            vec!["llm-1".to_string()],
            "the old segment folds"
        );
        let global = p
            .new_summaries
            .iter()
            .find(|s| s.level == SummaryLevel::Global)
            .expect("a global summary");
        let segment = p
            .new_summaries
            .iter()
            .find(|s| s.level == SummaryLevel::Segment)
            .expect("a segment for the new range");
        assert_eq!(global.strategy, strategy, "folding keeps the strategy");
        assert_eq!(segment.strategy, strategy);
        for keep in [
            "Reconcile the Q3 invoices of ACC-77 against the ledger.",
            "Loaded all 14 ledger files.",
            "Matched 9,812 of 9,830 rows.",
            "Eighteen rows differ by 0.01 EUR rounding.",
            "Round half-even, as the ledger does.",
            "Write the variance note for finance.",
            "Never edit the ledger export.",
            "Reviewed batch 0 of the import log.",
        ] {
            assert!(
                global.text.contains(keep),
                "{keep} lost in\n{}",
                global.text
            );
        }
        assert!(
            segment.text.starts_with(&written),
            "the model's text is kept as written:\n{}",
            segment.text
        );
        assert!(global.tokens <= budget.global() && segment.tokens <= budget.segments());
        for s in [global, segment] {
            assert_eq!(s.tokens, counted(s), "header and text are counted");
        }
    }
}

/// Defect d: a pinned tool call whose result never arrived made select() fail forever once a
/// summary covered it.
#[test]
fn a_pinned_call_without_result_never_blocks_selection() {
    let mut drafts = vec![NewMessage::new(Role::User, "Goal: tally /data/q3.csv.")];
    drafts.push(NewMessage {
        pinned: true,
        tool_calls: vec![ToolCall {
            id: "call_lost".into(),
            name: "shell".into(),
            arguments: r#"{"cmd":"wc -l /data/q3.csv"}"#.into(),
            signature: None,
        }],
        ..NewMessage::new(Role::Assistant, "Counting rows first.")
    });
    let mut messages: Vec<Message> = drafts
        .into_iter()
        .enumerate()
        .map(|(i, d)| stored(i as i64 + 1, d))
        .collect();
    messages.extend((3..=80).map(prose));
    let pinned = pinned_units(&messages);
    assert_eq!(pinned.len(), 1, "the call alone: its result never arrived");
    let budget = HistoryBudget::new(1_500);
    let mut summaries: Vec<Summary> = Vec::new();
    for level in [
        CompressionLevel::Standard,
        CompressionLevel::Deep,
        CompressionLevel::Standard,
    ] {
        let p = plan(PlanInput {
            messages: &messages,
            pinned: &pinned,
            summaries: &summaries,
            level,
            strategy: Strategy::Extract,
            budget,
            counter: &EstimateCounter,
            written: None,
        })
        .expect("planning never fails on an unanswered call");
        summaries = p.apply(&summaries);
        let sel = select(&messages, &pinned, &summaries, &budget)
            .expect("selection never fails on an unanswered call");
        assert!(sel.frontier >= 2, "a summary covers the call");
        assert!(
            sel.pinned.is_empty(),
            "the call is not sent without a result"
        );
        assert_eq!(sel.unpaired.len(), 1);
        assert_eq!(sel.unpaired[0].seq, 2);
        assert!(!sel.compression_required());
    }
    let text: String = summaries.iter().map(|s| s.text.as_str()).collect();
    assert!(
        text.contains("wc -l /data/q3.csv"),
        "its digest is kept:\n{text}"
    );
}

/// The distinct constraints and decisions of the repeated-instructions session, as stated.
const REAL_CONSTRAINTS: [&str; 4] = [
    "Never send the raw export outside the analytics group.",
    "Only use accounts created after 2021-01-01.",
    "报告里不要出现第12号门店的名字。",
    "Please don't touch the prod schema before Friday.",
];
const REAL_DECISIONS: [&str; 3] = [
    "Let's use the 90-day window instead of 60.",
    "Agreed, fold the Legacy tier into Basic-3.",
    "OK, we'll bucket by signup month and flag week 7 separately.",
];

/// An analyst session where the user repeats the same instructions with a new batch number
/// every few messages, and the agent acknowledges each with the same decision.
fn repeated_instruction_session(len: usize) -> Vec<Message> {
    let mut drafts = vec![NewMessage::new(
        Role::User,
        "Goal: scan the Q3 batches for rows above the 0.8375 threshold.",
    )];
    for (i, c) in REAL_CONSTRAINTS.iter().enumerate() {
        drafts.push(NewMessage::new(Role::User, format!("Looks plausible. {c}")));
        drafts.push(NewMessage::new(
            Role::Assistant,
            format!("Understood. {}", REAL_DECISIONS[i % REAL_DECISIONS.len()]),
        ));
    }
    let mut i = 0;
    while drafts.len() < len {
        let n = (i / 4) % 97;
        let (role, text) = match i % 4 {
            0 => (
                Role::User,
                format!(
                    "Continue with batch {n}; keep notes of anything above the threshold. Only count rows of batch {n} that have a customer id."
                ),
            ),
            1 => (
                Role::Assistant,
                format!("OK, we'll rerun batch {n} after the schema check."),
            ),
            2 => (
                Role::Assistant,
                format!("Batch {n} scanned, the totals look stable so far."),
            ),
            _ => (Role::User, format!("第{n}批只统计超过阈值的行。")),
        };
        drafts.push(NewMessage::new(role, text));
        i += 1;
    }
    drafts
        .into_iter()
        .enumerate()
        .map(|(i, d)| stored(i as i64 + 1, d))
        .collect()
}

/// Defect: a user sentence repeated with a new number every few messages ("Continue with batch
/// N; …") filled the Constraints section with one line per number and ate the budget, as
/// repeated operations did before they were grouped. Sentences of one shape are now one line:
/// the newest verbatim, with how many variants it stands for; distinct constraints and
/// decisions stay verbatim, and plain instructions ("keep notes of …") are not constraints.
#[test]
fn repeated_instructions_are_grouped_by_shape_and_leave_room_for_the_rest() {
    let budget = HistoryBudget::new(16_000);
    let messages = repeated_instruction_session(4_000);
    let mut summaries: Vec<Summary> = Vec::new();
    for level in [CompressionLevel::Standard, CompressionLevel::Deep] {
        let p = plan(PlanInput {
            messages: &messages,
            pinned: &[],
            summaries: &summaries,
            level,
            strategy: Strategy::Extract,
            budget,
            counter: &EstimateCounter,
            written: None,
        })
        .unwrap();
        assert!(!p.is_empty(), "{level:?} must do something");
        summaries = p.apply(&summaries);
        let sel = select(&messages, &[], &summaries, &budget).unwrap();
        assert!(!sel.compression_required(), "{level:?}: still over budget");
        assert!(sel.global_tokens <= budget.global(), "{level:?}: global");
        assert!(
            sel.segment_tokens <= budget.segments(),
            "{level:?}: segments"
        );
        for s in &summaries {
            // The counter is not additive: header and text counted apart may cost one more.
            assert!(
                s.tokens >= counted(s),
                "{level:?}: header and text are counted"
            );
        }
        let text: String = summaries.iter().map(|s| format!("{}\n", s.text)).collect();
        let covered_to = summaries.iter().map(|s| s.end_seq).max().unwrap();
        let covered = &messages[..covered_to as usize];

        // (1) Each repeated shape is one line per summary, with its count.
        for (shape, prefix) in [
            ("Only count rows of batch", "Only count rows of batch "),
            ("we'll rerun batch", "OK, we'll rerun batch "),
            ("只统计超过阈值的行", "第"),
        ] {
            let lines: Vec<&str> = text.lines().filter(|l| l.contains(shape)).collect();
            assert!(
                !lines.is_empty() && lines.len() <= 2,
                "{level:?}: {shape} on {} lines:\n{text}",
                lines.len()
            );
            assert!(
                lines.iter().all(|l| l.contains(" variants)")),
                "{level:?}: {shape} has no count:\n{text}"
            );
            // (2) The newest variant the summaries cover is kept verbatim.
            let newest = covered
                .iter()
                .rev()
                .find_map(|m| {
                    m.content
                        .split_inclusive(['.', '。'])
                        .map(str::trim)
                        .find(|s| s.starts_with(prefix) && s.contains(shape))
                })
                .unwrap();
            assert!(
                text.contains(newest),
                "{level:?}: the newest variant {newest:?} is lost:\n{text}"
            );
        }
        assert!(
            text.contains("97 variants)"),
            "{level:?}: the count of variants:\n{text}"
        );
        // A plain instruction is not a constraint.
        let constraints = text
            .split("## Constraints\n")
            .skip(1)
            .flat_map(|s| s.split("\n## ").next())
            .collect::<String>();
        assert!(
            !constraints.contains("keep notes of anything"),
            "{level:?}: a plain instruction kept as a constraint:\n{text}"
        );
        // (3) Every distinct constraint and decision is still there, verbatim.
        for keep in REAL_CONSTRAINTS.iter().chain(REAL_DECISIONS.iter()) {
            assert!(text.contains(keep), "{level:?}: {keep} lost in\n{text}");
        }
        assert!(text.contains("0.8375"), "{level:?}: the threshold is lost");
    }
}

/// The same defect in the setting it was found in: a long analyst session from the independent
/// generator, where every 4th message the user also says "Continue with batch N; keep notes of
/// anything above the threshold." and "Only flag rows of batch N above the threshold.", and the
/// agent "OK, we'll rerun batch N." (N = 0..96, round and round). Compressed once standard and
/// once deep, and in rounds as the history grows: the planted facts all survive, each
/// repeated shape takes at most one line per summary (two in all), and the plain instruction
/// is no constraint.
#[test]
fn repeated_instructions_in_a_long_analyst_session() {
    use decima_testkit::analyst_conversation::{
        AnalystConversationBuilder, AnalystFactKind, Language,
    };
    let size = 100_000;
    let built = AnalystConversationBuilder::new(4_242, size, Language::English).build();
    let messages: Vec<Message> = built
        .messages
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, mut d)| {
            if i % 4 == 0 && i > 0 {
                let n = (i / 4) % 97;
                let extra = match d.role {
                    Role::User => format!(
                        "Continue with batch {n}; keep notes of anything above the threshold. Only flag rows of batch {n} above the threshold."
                    ),
                    Role::Assistant => format!("OK, we'll rerun batch {n}."),
                    _ => String::new(),
                };
                if !extra.is_empty() {
                    d.content = format!("{}\n{extra}", d.content).trim().to_string();
                }
            }
            stored(i as i64 + 1, d)
        })
        .collect();
    let budget = HistoryBudget::new(16_000);
    let compress = |summaries: &[Summary], level, upto: usize| {
        plan(PlanInput {
            messages: &messages[..upto],
            pinned: &[],
            summaries,
            level,
            strategy: Strategy::Extract,
            budget,
            counter: &EstimateCounter,
            written: None,
        })
        .unwrap()
        .apply(summaries)
    };
    let check = |summaries: &[Summary], upto: usize, what: &str| {
        let sel = select(&messages[..upto], &[], summaries, &budget).unwrap();
        assert!(!sel.compression_required(), "{what}: still over budget");
        assert!(sel.global_tokens <= budget.global(), "{what}: global");
        assert!(sel.segment_tokens <= budget.segments(), "{what}: segments");
        let text: String = summaries.iter().map(|s| format!("{}\n", s.text)).collect();
        for shape in ["Only flag rows of batch", "we'll rerun batch"] {
            let lines = text.lines().filter(|l| l.contains(shape)).count();
            assert!(lines <= 2, "{what}: {shape} on {lines} lines:\n{text}");
        }
        assert!(
            !text.contains("keep notes of anything"),
            "{what}: a plain instruction kept:\n{text}"
        );
        let mut context = text;
        for m in sel.recent.iter() {
            context.push_str(&m.content);
            for c in &m.tool_calls {
                context.push_str(&c.arguments);
            }
        }
        let (mut other, mut other_kept) = (0, 0);
        for f in built.facts.iter().filter(|f| f.position <= upto) {
            let kept = context.contains(&f.text);
            if f.kind == AnalystFactKind::Literal && !f.by_user {
                other += 1;
                other_kept += usize::from(kept);
            } else {
                assert!(kept, "{what}: {f:?} lost");
            }
        }
        assert!(
            other_kept * 100 >= other * 95,
            "{what}: {other_kept}/{other}"
        );
    };
    let mut summaries: Vec<Summary> = Vec::new();
    for level in [CompressionLevel::Standard, CompressionLevel::Deep] {
        summaries = compress(&summaries, level, size);
        check(&summaries, size, &format!("{level:?}"));
    }
    // Growing in rounds, so the global summary folds again and again.
    let mut summaries: Vec<Summary> = Vec::new();
    for round in 1..=8 {
        let upto = size * round / 8;
        for _ in 0..6 {
            let sel = select(&messages[..upto], &[], &summaries, &budget).unwrap();
            let usage = f64::from(sel.required_tokens()) / f64::from(budget.tokens);
            let level = if usage >= 0.90 || sel.compression_required() {
                CompressionLevel::Deep
            } else if usage >= 0.85 {
                CompressionLevel::Standard
            } else {
                break;
            };
            let after = compress(&summaries, level, upto);
            if after == summaries {
                break;
            }
            summaries = after;
        }
        check(&summaries, upto, &format!("round {round}"));
    }
}
