//! Compactions against a real SQLite file: apply, the summaries in force, undo newest first.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use decima_core::context::compress::PlanInput;
use decima_core::context::{
    CompactionPlan, CompressionLevel, HistoryBudget, Strategy, pinned_units, plan,
};
use decima_core::{ConversationId, EstimateCounter};
use decima_store::{CompactionTrigger, Store, StoreError};
use decima_testkit::ConversationBuilder;

async fn plan_for(
    store: &Store,
    id: ConversationId,
    level: CompressionLevel,
    budget: u32,
) -> CompactionPlan {
    let messages = store.messages().all(id).await.unwrap();
    let pinned = pinned_units(&messages);
    let summaries = store.compactions().live_summaries(id).await.unwrap();
    plan(PlanInput {
        messages: &messages,
        pinned: &pinned,
        summaries: &summaries,
        level,
        strategy: Strategy::Extract,
        budget: HistoryBudget::new(budget),
        counter: &EstimateCounter,
        written: None,
    })
    .unwrap()
}

#[tokio::test]
async fn apply_then_undo_newest_first_restores_each_state() {
    let (_dir, store) = common::temp_store().await;
    let built = ConversationBuilder::new(21, 600).build();
    let c = store
        .conversations()
        .import("long", None, &built.messages)
        .await
        .unwrap();
    let total: u32 = store
        .messages()
        .all(c.id)
        .await
        .unwrap()
        .iter()
        .map(|m| m.tokens)
        .sum();
    let messages_before = store.messages().all(c.id).await.unwrap();

    let first = plan_for(&store, c.id, CompressionLevel::Standard, total / 2).await;
    assert!(
        !first.new_summaries.is_empty(),
        "the plan compresses something"
    );
    let first_id = store
        .compactions()
        .apply(c.id, &first, CompactionTrigger::Manual)
        .await
        .unwrap();
    let live = store.compactions().live_summaries(c.id).await.unwrap();
    assert_eq!(
        live,
        first.apply(&[]),
        "the stored summaries are the plan's"
    );

    let second = plan_for(&store, c.id, CompressionLevel::Deep, total / 4).await;
    assert!(!second.is_empty());
    let second_id = store
        .compactions()
        .apply(c.id, &second, CompactionTrigger::Auto)
        .await
        .unwrap();
    let after_second = store.compactions().live_summaries(c.id).await.unwrap();
    let mut expected = second.apply(&live);
    expected.sort_by_key(|s| (s.level.as_str() != "global", s.start_seq));
    assert_eq!(after_second, expected);

    // Both are in force, oldest first, each with the seqs its summaries cover.
    let in_force = store.compactions().in_force(c.id).await.unwrap();
    let ids: Vec<&str> = in_force.iter().map(|(r, _)| r.id.as_str()).collect();
    assert_eq!(ids, [first_id.as_str(), second_id.as_str()]);
    let covered = |plan: &decima_core::context::CompactionPlan| {
        let start = plan
            .new_summaries
            .iter()
            .map(|s| s.start_seq)
            .min()
            .unwrap();
        let end = plan.new_summaries.iter().map(|s| s.end_seq).max().unwrap();
        Some((start, end))
    };
    assert_eq!(in_force[0].1, covered(&first));
    assert_eq!(in_force[1].1, covered(&second));

    let err = store.compactions().undo(&first_id).await.unwrap_err();
    assert!(err.to_string().contains("undo it first"), "{err}");

    let undone = store.compactions().undo(&second_id).await.unwrap();
    assert!(undone.undone_at.is_some());
    let in_force = store.compactions().in_force(c.id).await.unwrap();
    assert_eq!(
        in_force.len(),
        1,
        "an undone compaction is no longer in force"
    );
    assert_eq!(in_force[0].0.id, first_id);
    assert_eq!(
        store.compactions().live_summaries(c.id).await.unwrap(),
        live,
        "back to after the first"
    );
    store.compactions().undo(&first_id).await.unwrap();
    assert!(
        store
            .compactions()
            .live_summaries(c.id)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .compactions()
            .undo(&first_id)
            .await
            .unwrap_err()
            .to_string()
            .contains("already undone")
    );

    assert_eq!(
        store.messages().all(c.id).await.unwrap(),
        messages_before,
        "messages are never touched"
    );
    let record = store.compactions().get(&first_id).await.unwrap();
    assert_eq!(
        (
            record.level.as_str(),
            record.trigger.as_str(),
            record.strategy.as_str()
        ),
        ("standard", "manual", "extract")
    );
    assert_eq!(record.tokens_before, first.tokens_before);
}

/// A different id of the same shape.
fn uuid_like(id: &str) -> String {
    let mut chars: Vec<char> = id.chars().collect();
    if let Some(last) = chars.last_mut() {
        *last = if *last == '0' { '1' } else { '0' };
    }
    chars.into_iter().collect()
}

#[tokio::test]
async fn stale_plans_and_bad_input_change_nothing() {
    let (_dir, store) = common::temp_store().await;
    let built = ConversationBuilder::new(22, 400).build();
    let c = store
        .conversations()
        .import("stale", None, &built.messages)
        .await
        .unwrap();
    let total: u32 = store
        .messages()
        .all(c.id)
        .await
        .unwrap()
        .iter()
        .map(|m| m.tokens)
        .sum();
    let first = plan_for(&store, c.id, CompressionLevel::Standard, total / 2).await;
    store
        .compactions()
        .apply(c.id, &first, CompactionTrigger::Manual)
        .await
        .unwrap();
    let deeper = plan_for(&store, c.id, CompressionLevel::Deep, total / 8).await;
    assert!(
        !deeper.superseded.is_empty(),
        "a deep plan folds the earlier summaries"
    );
    store
        .compactions()
        .apply(c.id, &deeper, CompactionTrigger::Manual)
        .await
        .unwrap();
    let live = store.compactions().live_summaries(c.id).await.unwrap();

    // The same plan again: nothing may change.
    let err = store
        .compactions()
        .apply(c.id, &deeper, CompactionTrigger::Manual)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("already applied"), "{err}");
    // A plan made from a stale view (its summaries superseded since) is refused too.
    let mut stale = deeper.clone();
    for s in &mut stale.new_summaries {
        s.id = uuid_like(&s.id);
    }
    let err = store
        .compactions()
        .apply(c.id, &stale, CompactionTrigger::Manual)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no longer live"), "{err}");
    assert_eq!(
        store.compactions().live_summaries(c.id).await.unwrap(),
        live
    );

    assert!(matches!(
        store
            .compactions()
            .apply(ConversationId::new(), &first, CompactionTrigger::Manual)
            .await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.compactions().undo("../x").await,
        Err(StoreError::NotFound { .. })
    ));
    assert_eq!(
        store.compactions().live_summaries(c.id).await.unwrap(),
        live
    );
}

/// A rollback soft-deletes messages after a seq; the summaries that cover any of them must stop
/// reaching the model in the same transaction, and no undo may bring them back.
#[tokio::test]
async fn a_rollback_retires_the_summaries_that_cover_rolled_back_messages() {
    let (_dir, store) = common::temp_store().await;
    let built = ConversationBuilder::new(23, 600).build();
    let c = store
        .conversations()
        .import("long", None, &built.messages)
        .await
        .unwrap();
    let total: u32 = store
        .messages()
        .all(c.id)
        .await
        .unwrap()
        .iter()
        .map(|m| m.tokens)
        .sum();
    let first = plan_for(&store, c.id, CompressionLevel::Standard, total / 2).await;
    let first_id = store
        .compactions()
        .apply(c.id, &first, CompactionTrigger::Manual)
        .await
        .unwrap();
    let second = plan_for(&store, c.id, CompressionLevel::Deep, total / 6).await;
    store
        .compactions()
        .apply(c.id, &second, CompactionTrigger::Manual)
        .await
        .unwrap();
    let live = store.compactions().live_summaries(c.id).await.unwrap();
    let frontier = live.iter().map(|s| s.end_seq).max().unwrap();
    assert!(frontier > 100, "{frontier}");

    let cut = frontier / 2;
    store.messages().soft_delete_after(c.id, cut).await.unwrap();
    let live = store.compactions().live_summaries(c.id).await.unwrap();
    assert!(
        live.iter().all(|s| s.end_seq <= cut),
        "a live summary still covers rolled-back messages: {:?}",
        live.iter()
            .map(|s| (s.start_seq, s.end_seq))
            .collect::<Vec<_>>()
    );
    // Undoing the newest compaction revives what it superseded, unless that is rolled back.
    let newest = common::text(
        &store,
        "SELECT id FROM compactions WHERE conversation_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1",
        &[&c.id.to_string()],
    )
    .await;
    store.compactions().undo(&newest).await.unwrap();
    store.compactions().undo(&first_id).await.ok();
    let live = store.compactions().live_summaries(c.id).await.unwrap();
    assert!(live.iter().all(|s| s.end_seq <= cut));
    assert_eq!(store.integrity_check().await.unwrap(), "ok");
}
