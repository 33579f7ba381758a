//! Message repository behaviour against a real SQLite file.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeSet;

use decima_core::{NewMessage, Role, ToolCall};
use decima_testkit::ConversationBuilder;

#[tokio::test]
async fn seqs_start_at_one_and_survive_rollbacks() {
    let (_dir, store) = common::temp_store().await;
    let c = store.conversations().create("seq", None).await.unwrap();
    let msgs = store.messages();
    for i in 1..=5 {
        let m = msgs
            .append(c.id, NewMessage::new(Role::User, format!("m{i}")))
            .await
            .unwrap();
        assert_eq!(m.seq, i);
    }
    assert_eq!(msgs.soft_delete_after(c.id, 3).await.unwrap(), 2);
    assert_eq!(
        msgs.soft_delete_after(c.id, 3).await.unwrap(),
        0,
        "idempotent"
    );
    let live: Vec<i64> = msgs
        .all(c.id)
        .await
        .unwrap()
        .iter()
        .map(|m| m.seq)
        .collect();
    assert_eq!(live, [1, 2, 3]);
    let next = msgs
        .append(c.id, NewMessage::new(Role::User, "after"))
        .await
        .unwrap();
    assert_eq!(next.seq, 6, "seqs are never reused");
    // The deleted rows are still in the file.
    let rows: i64 = common::scalar(&store, "SELECT COUNT(*) FROM messages", &[]).await;
    assert_eq!(rows, 6);
}

#[tokio::test]
async fn ranges_pins_and_every_field_round_trip() {
    let (_dir, store) = common::temp_store().await;
    let c = store.conversations().create("fields", None).await.unwrap();
    let draft = NewMessage {
        name: Some("agent".into()),
        reasoning: Some("思考：先看数据".into()),
        reasoning_signature: Some("sig==".into()),
        tool_calls: vec![ToolCall {
            id: "call_1".into(),
            name: "shell".into(),
            arguments: "{\"cmd\":\"ls\"}".into(),
            signature: None,
        }],
        ..NewMessage::new(Role::Assistant, "")
    };
    let stored = store.messages().append(c.id, draft.clone()).await.unwrap();
    assert_eq!(stored.name, draft.name);
    assert_eq!(stored.reasoning, draft.reasoning);
    assert_eq!(stored.reasoning_signature, draft.reasoning_signature);
    assert_eq!(stored.tool_calls, draft.tool_calls);
    assert!(stored.tokens > 0);
    let result = NewMessage {
        tool_call_id: Some("call_1".into()),
        ..NewMessage::new(Role::Tool, "a.csv")
    };
    store.messages().append(c.id, result).await.unwrap();
    store
        .messages()
        .append(c.id, NewMessage::new(Role::User, "3"))
        .await
        .unwrap();

    let middle = store.messages().range(c.id, 2, 2).await.unwrap();
    assert_eq!(middle.len(), 1);
    assert_eq!(middle[0].tool_call_id.as_deref(), Some("call_1"));

    let pinned = store.messages().set_pinned(c.id, 2, true).await.unwrap();
    assert!(pinned.pinned);
    assert!(
        !store
            .messages()
            .set_pinned(c.id, 2, false)
            .await
            .unwrap()
            .pinned
    );
    assert!(store.messages().set_pinned(c.id, 99, true).await.is_err());
}

#[tokio::test]
async fn ten_megabyte_message_round_trips() {
    let (_dir, store) = common::temp_store().await;
    let c = store.conversations().create("big", None).await.unwrap();
    let mut content = String::with_capacity(10 * 1024 * 1024 + 8);
    while content.len() < 10 * 1024 * 1024 {
        content.push_str("row,amount,描述\n");
    }
    let m = store
        .messages()
        .append(
            c.id,
            NewMessage::new(Role::Tool, content.clone()).with_call("call_big"),
        )
        .await
        .unwrap();
    let back = store.messages().get(c.id, m.seq).await.unwrap();
    assert_eq!(back.content.len(), content.len());
    assert!(back.content == content);
    assert!(back.tokens > 1_000_000);
}

trait WithCall {
    fn with_call(self, id: &str) -> Self;
}

impl WithCall for NewMessage {
    fn with_call(mut self, id: &str) -> Self {
        self.tool_call_id = Some(id.into());
        self
    }
}

#[tokio::test]
async fn any_unicode_survives() {
    let (_dir, store) = common::temp_store().await;
    let c = store
        .conversations()
        .create("unicode ✓ 中文", None)
        .await
        .unwrap();
    let samples = [
        "中文：季度发票核对",
        "日本語とかな",
        "emoji 👩‍💻🧪 and ZWJ sequences",
        "right-to-left: مرحبا بالعالم",
        "combining: e\u{301} vs é",
        "nul inside: a\u{0}b",
        "surrogate-range neighbours: \u{d7ff}\u{e000}\u{10ffff}",
    ];
    // PostgreSQL's text cannot hold U+0000: there the message is refused whole, with a reason.
    let nul_refused = common::on_postgres();
    for s in samples {
        let stored = store
            .messages()
            .append(c.id, NewMessage::new(Role::User, s))
            .await;
        if nul_refused && s.contains('\0') {
            let err = stored.unwrap_err().to_string();
            assert!(err.contains("U+0000"), "{err}");
        } else {
            stored.unwrap();
        }
    }
    let back: Vec<String> = store
        .messages()
        .all(c.id)
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.content)
        .collect();
    let expected: Vec<&str> = samples
        .iter()
        .copied()
        .filter(|s| !(nul_refused && s.contains('\0')))
        .collect();
    assert_eq!(back, expected);
    assert_eq!(
        store.conversations().get(c.id).await.unwrap().title,
        "unicode ✓ 中文"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_concurrent_writers_get_unique_gapless_seqs() {
    let (_dir, store) = common::temp_store().await;
    let c = store.conversations().create("race", None).await.unwrap();
    const PER_TASK: usize = 60;
    let mut tasks = Vec::new();
    for task in 0..8 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let mut seqs = Vec::new();
            for i in 0..PER_TASK {
                // Mix single appends and small batches.
                if i % 10 == 0 {
                    let batch = vec![NewMessage::new(Role::User, format!("t{task} b{i}")); 3];
                    seqs.extend(store.messages().append_many(c.id, &batch).await.unwrap());
                } else {
                    let m = store
                        .messages()
                        .append(c.id, NewMessage::new(Role::User, format!("t{task} m{i}")))
                        .await
                        .unwrap();
                    seqs.push(m.seq);
                }
            }
            seqs
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    let expected = 8 * (PER_TASK + PER_TASK / 10 * 2);
    let unique: BTreeSet<i64> = all.iter().copied().collect();
    assert_eq!(all.len(), expected);
    assert_eq!(unique.len(), expected, "no seq handed out twice");
    assert_eq!(
        unique.into_iter().collect::<Vec<_>>(),
        (1..=expected as i64).collect::<Vec<_>>(),
        "gapless"
    );
    let stored: Vec<i64> = store
        .messages()
        .all(c.id)
        .await
        .unwrap()
        .iter()
        .map(|m| m.seq)
        .collect();
    assert_eq!(stored, (1..=expected as i64).collect::<Vec<_>>());
}

#[tokio::test]
async fn long_generated_conversation_imports_in_order() {
    let (_dir, store) = common::temp_store().await;
    let built = ConversationBuilder::new(11, 1_000).build();
    let c = store
        .conversations()
        .import("long", None, &built.messages)
        .await
        .unwrap();
    assert_eq!(c.message_count, 1_000);
    let back = store.messages().all(c.id).await.unwrap();
    for (i, (stored, draft)) in back.iter().zip(&built.messages).enumerate() {
        assert_eq!(stored.seq, i as i64 + 1);
        assert_eq!(stored.content, draft.content);
        assert_eq!(stored.tool_calls, draft.tool_calls);
        assert_eq!(stored.pinned, draft.pinned);
    }
}

/// The conversation's live count and tokens are kept by triggers; reading a conversation does not
/// aggregate its history, and the figures follow appends and rollbacks exactly.
#[tokio::test]
async fn live_counts_follow_appends_and_rollbacks() {
    let (_dir, store) = common::temp_store().await;
    let built = decima_testkit::ConversationBuilder::new(5, 120).build();
    let c = store
        .conversations()
        .import("counts", None, &built.messages)
        .await
        .unwrap();
    store
        .messages()
        .append(
            c.id,
            decima_core::NewMessage::new(decima_core::Role::User, "one more"),
        )
        .await
        .unwrap();
    let check = |label: &'static str| {
        let store = &store;
        async move {
            let all = store.messages().all(c.id).await.unwrap();
            let got = store.conversations().get(c.id).await.unwrap();
            assert_eq!(got.message_count, all.len() as u64, "{label}");
            assert_eq!(
                got.tokens,
                all.iter().map(|m| u64::from(m.tokens)).sum::<u64>(),
                "{label}"
            );
        }
    };
    check("after import and append").await;
    store.messages().soft_delete_after(c.id, 40).await.unwrap();
    check("after a rollback").await;
    assert_eq!(
        store.conversations().get(c.id).await.unwrap().message_count,
        40
    );
}

/// The one-statement pinned-unit query returns exactly what expanding the whole history would:
/// every pinned message with its tool call and all of that call's results.
#[tokio::test]
async fn pinned_units_come_whole_from_one_query() {
    let (_dir, store) = common::temp_store().await;
    let built = decima_testkit::ConversationBuilder::new(8, 900)
        .pin_every(7)
        .build();
    let c = store
        .conversations()
        .import("pins", None, &built.messages)
        .await
        .unwrap();
    // Pin tool results and calls too, from both ends of their units.
    let before = store.messages().all(c.id).await.unwrap();
    for (i, m) in before.iter().enumerate() {
        let pin = (m.role == Role::Tool && i % 5 == 0) || (!m.tool_calls.is_empty() && i % 11 == 0);
        if pin {
            store
                .messages()
                .set_pinned(c.id, m.seq, true)
                .await
                .unwrap();
        }
    }
    let all = store.messages().all(c.id).await.unwrap();
    let expected = decima_core::context::pinned_units(&all);
    assert!(expected.len() > 40, "{}", expected.len());
    assert!(
        expected.iter().any(|m| m.role == Role::Tool),
        "the fixture pins tool units"
    );
    let got = store
        .messages()
        .pinned_units_through(c.id, i64::MAX)
        .await
        .unwrap();
    let seqs = |v: &[decima_core::Message]| v.iter().map(|m| m.seq).collect::<Vec<_>>();
    assert_eq!(seqs(&got), seqs(&expected));
    let cut = all[all.len() / 2].seq;
    let half = store
        .messages()
        .pinned_units_through(c.id, cut)
        .await
        .unwrap();
    let expected_half: Vec<i64> = decima_core::context::pinned_units(&all)
        .iter()
        .map(|m| m.seq)
        .collect();
    assert!(half.iter().all(|m| expected_half.contains(&m.seq)));
    assert!(half.iter().any(|m| m.seq <= cut));
}

#[tokio::test]
async fn pages_read_upwards_from_the_end_and_skip_deleted_messages() {
    let (_dir, store) = common::temp_store().await;
    let c = store.conversations().create("pages", None).await.unwrap();
    let msgs = store.messages();
    let drafts: Vec<NewMessage> = (1..=25)
        .map(|i| NewMessage::new(Role::User, format!("m{i}")))
        .collect();
    msgs.append_many(c.id, &drafts).await.unwrap();
    // A rollback removes 21..=25, and new messages take seqs 26 and 27.
    msgs.soft_delete_after(c.id, 20).await.unwrap();
    for text in ["n26", "n27"] {
        msgs.append(c.id, NewMessage::new(Role::User, text))
            .await
            .unwrap();
    }
    let seqs = |page: &[decima_core::Message]| page.iter().map(|m| m.seq).collect::<Vec<_>>();

    let last = msgs.page_before(c.id, 0, i64::MAX, 5).await.unwrap();
    assert_eq!(seqs(&last), [18, 19, 20, 26, 27]);
    let above = msgs.page_before(c.id, 0, 18, 5).await.unwrap();
    assert_eq!(seqs(&above), [13, 14, 15, 16, 17]);
    let top = msgs.page_before(c.id, 0, 3, 5).await.unwrap();
    assert_eq!(
        seqs(&top),
        [1, 2],
        "the first page is short, nothing above it"
    );
    assert!(msgs.page_before(c.id, 0, 1, 5).await.unwrap().is_empty());
    // A page of another (or a missing) conversation is empty, not an error.
    let other = decima_core::ConversationId::new();
    assert!(
        msgs.page_before(other, 0, i64::MAX, 5)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn the_last_message_of_a_role_and_a_runs_first_message_skip_rolled_back_ones() {
    let (_dir, store) = common::temp_store().await;
    let c = store.conversations().create("rerun", None).await.unwrap();
    let msgs = store.messages();
    for (role, text) in [
        (Role::User, "count"),
        (Role::Assistant, "12"),
        (Role::User, "only unpaid"),
        (Role::Assistant, "3"),
    ] {
        msgs.append(c.id, NewMessage::new(role, text))
            .await
            .unwrap();
    }
    assert_eq!(
        msgs.last_live_of_role(c.id, Role::User).await.unwrap(),
        Some(3)
    );
    assert_eq!(
        msgs.last_live_of_role(c.id, Role::Tool).await.unwrap(),
        None
    );
    msgs.soft_delete_after(c.id, 2).await.unwrap();
    assert_eq!(
        msgs.last_live_of_role(c.id, Role::User).await.unwrap(),
        Some(1)
    );
    assert_eq!(
        msgs.last_live_of_role(c.id, Role::Assistant).await.unwrap(),
        Some(2)
    );
}

#[tokio::test]
async fn what_happened_at_a_time_stands_after_the_last_live_message_stored_by_then() {
    use decima_core::Timestamp;
    let (_dir, store) = common::temp_store().await;
    let c = store.conversations().create("when", None).await.unwrap();
    let msgs = store.messages();
    assert_eq!(
        msgs.last_live_seq_at(c.id, Timestamp::now()).await.unwrap(),
        0
    );
    msgs.append(c.id, NewMessage::new(Role::User, "a"))
        .await
        .unwrap();
    msgs.append(c.id, NewMessage::new(Role::Assistant, "b"))
        .await
        .unwrap();
    let between = Timestamp::now();
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    msgs.append(c.id, NewMessage::new(Role::User, "c"))
        .await
        .unwrap();
    assert_eq!(msgs.last_live_seq_at(c.id, between).await.unwrap(), 2);
    // A rolled-back message no longer counts.
    msgs.soft_delete_after(c.id, 1).await.unwrap();
    assert_eq!(msgs.last_live_seq_at(c.id, between).await.unwrap(), 1);
}
