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
use decima_core::{
    ConversationId, EstimateCounter, Message, MessageId, NewMessage, Role, Timestamp, TokenCounter,
    ToolCall,
};

fn to_message(seq: i64, draft: NewMessage) -> Message {
    let tokens = EstimateCounter.count_message(&draft);
    Message {
        id: MessageId::new(),
        conversation_id: ConversationId::new(),
        execution_id: draft.execution_id,
        seq,
        role: draft.role,
        name: draft.name,
        content: draft.content,
        reasoning: draft.reasoning,
        reasoning_signature: draft.reasoning_signature,
        tool_calls: draft.tool_calls,
        tool_call_id: draft.tool_call_id,
        tokens,
        pinned: draft.pinned,
        created_at: Timestamp(0),
        deleted_at: None,
    }
}

fn prose(seq: i64) -> Message {
    let role = if seq % 2 == 0 {
        Role::User
    } else {
        Role::Assistant
    };
    to_message(
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
        }],
        ..NewMessage::new(Role::Assistant, "Counting rows first.")
    });
    let mut messages: Vec<Message> = drafts
        .into_iter()
        .enumerate()
        .map(|(i, d)| to_message(i as i64 + 1, d))
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
