//! A conversation's kept counters (its next seq, its live messages and tokens, its last
//! change) after bulk writes: an import, a batch, a rollback of many messages at once, a
//! restore behind the store's back. Checked as a state, against the rows themselves, on the
//! suite's backend. On PostgreSQL these counters are kept by statement triggers over whole
//! batches (see `migrations/postgres/…_statement_triggers.sql`), so a batch must count
//! exactly as many single writes would.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use decima_core::{ConversationId, NewMessage, Role};
use decima_store::Store;

fn message(i: usize) -> NewMessage {
    let role = if i.is_multiple_of(2) {
        Role::User
    } else {
        Role::Assistant
    };
    // Lengths that differ, so token sums tell rows apart.
    NewMessage::new(role, format!("message {i}: {}", "word ".repeat(i % 37)))
}

/// The stored counters, and what the live rows say they should be.
async fn counters_and_rows(store: &Store, c: ConversationId) -> ((u64, u64), (u64, u64)) {
    let conversation = store.conversations().get(c).await.unwrap();
    let live = store.messages().all(c).await.unwrap();
    let tokens: u64 = live.iter().map(|m| u64::from(m.tokens)).sum();
    (
        (conversation.message_count, conversation.tokens),
        (live.len() as u64, tokens),
    )
}

#[tokio::test]
async fn counters_follow_bulk_writes() {
    let (_dir, store) = common::temp_store().await;
    let history: Vec<NewMessage> = (0..700).map(message).collect();
    let c = store
        .conversations()
        .import("bulk", None, &history)
        .await
        .unwrap()
        .id;
    let (kept, rows) = counters_and_rows(&store, c).await;
    assert_eq!(kept, rows);
    assert_eq!(rows.0, 700);

    let batch: Vec<NewMessage> = (700..705).map(message).collect();
    let seqs = store.messages().append_many(c, &batch).await.unwrap();
    assert_eq!(seqs, 701..706);

    // A rollback of many messages in one statement.
    let before = store.conversations().get(c).await.unwrap().updated_at;
    assert_eq!(
        store.messages().soft_delete_after(c, 250).await.unwrap(),
        455
    );
    let (kept, rows) = counters_and_rows(&store, c).await;
    assert_eq!(kept, rows);
    assert_eq!(rows.0, 250);

    // Seqs go on after the highest ever written, not the highest live one.
    let next = store.messages().append(c, message(9)).await.unwrap();
    assert_eq!(next.seq, 706);
    assert!(store.conversations().get(c).await.unwrap().updated_at >= before);

    // A restore of many rows at once, as an undo would.
    common::execute(
        &store,
        "UPDATE messages SET deleted_at = NULL WHERE conversation_id = $1 AND seq <= 600",
        &[&c.to_string()],
    )
    .await;
    let (kept, rows) = counters_and_rows(&store, c).await;
    assert_eq!(kept, rows);
    assert_eq!(rows.0, 601);

    // Pinning (an update that changes no count) leaves the counts alone.
    store.messages().set_pinned(c, 3, true).await.unwrap();
    let (kept, rows) = counters_and_rows(&store, c).await;
    assert_eq!(kept, rows);
}

#[tokio::test]
async fn two_conversations_in_one_import_batch_keep_their_own_counts() {
    let (_dir, store) = common::temp_store().await;
    let a = store
        .conversations()
        .import("a", None, &(0..130).map(message).collect::<Vec<_>>())
        .await
        .unwrap()
        .id;
    let b = store
        .conversations()
        .import("b", None, &(0..3).map(message).collect::<Vec<_>>())
        .await
        .unwrap()
        .id;
    for c in [a, b] {
        let (kept, rows) = counters_and_rows(&store, c).await;
        assert_eq!(kept, rows);
    }
    assert_eq!(store.messages().append(b, message(1)).await.unwrap().seq, 4);
    assert_eq!(
        store.messages().append(a, message(1)).await.unwrap().seq,
        131
    );
}
