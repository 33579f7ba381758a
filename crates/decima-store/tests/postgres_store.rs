//! The store on a shared PostgreSQL database: what only a server shows. Writers on separate
//! connection pools (as separate desktops are) append to one conversation at once, and the
//! text PostgreSQL cannot hold is refused whole.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use decima_core::{ConversationId, EstimateCounter, NewMessage, Role};
use decima_store::{Change, Store, StoreError, StoreLocation};

async fn shared_database() -> StoreLocation {
    let url = decima_testkit::postgres::fresh_database("postgres_store").await;
    let location = StoreLocation::parse(&url).unwrap();
    Store::migrate(&location).await.unwrap();
    location
}

async fn desktop(location: &StoreLocation) -> Store {
    Store::connect(location, Arc::new(EstimateCounter))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writers_on_separate_pools_get_gapless_unique_seqs() {
    const WRITERS: usize = 8;
    const EACH: usize = 30;
    let location = shared_database().await;
    let first = desktop(&location).await;
    let conversation = first.conversations().create("shared", None).await.unwrap();

    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        let store = desktop(&location).await;
        tasks.push(tokio::spawn(async move {
            let mut acknowledged = Vec::new();
            let mut i = 0;
            while i < EACH {
                if i % 5 == 3 && i + 1 < EACH {
                    // A batch of two among single appends.
                    let batch = [
                        NewMessage::new(Role::User, format!("w{w} m{i}")),
                        NewMessage::new(Role::User, format!("w{w} m{}", i + 1)),
                    ];
                    let seqs = store
                        .messages()
                        .append_many(conversation.id, &batch)
                        .await
                        .unwrap();
                    assert_eq!(seqs.end - seqs.start, 2);
                    acknowledged.extend(
                        seqs.clone()
                            .map(|s| (s, format!("w{w} m{}", i + (s - seqs.start) as usize))),
                    );
                    i += 2;
                } else {
                    let m = store
                        .messages()
                        .append(
                            conversation.id,
                            NewMessage::new(Role::User, format!("w{w} m{i}")),
                        )
                        .await
                        .unwrap();
                    acknowledged.push((m.seq, m.content));
                    i += 1;
                }
            }
            store.close().await;
            acknowledged
        }));
    }
    let mut acknowledged = Vec::new();
    for t in tasks {
        acknowledged.extend(t.await.unwrap());
    }

    let stored = first.messages().all(conversation.id).await.unwrap();
    let total = WRITERS * EACH;
    assert_eq!(stored.len(), total);
    let seqs: Vec<i64> = stored.iter().map(|m| m.seq).collect();
    assert_eq!(
        seqs,
        (1..=total as i64).collect::<Vec<_>>(),
        "gapless and unique"
    );
    // Every acknowledged message is stored under the seq it was told.
    for (seq, content) in &acknowledged {
        assert_eq!(&stored[(*seq - 1) as usize].content, content);
    }
    // Each writer's messages keep its own order.
    for w in 0..WRITERS {
        let mine: Vec<&str> = stored
            .iter()
            .filter(|m| m.content.starts_with(&format!("w{w} ")))
            .map(|m| m.content.as_str())
            .collect();
        let expected: Vec<String> = (0..EACH).map(|i| format!("w{w} m{i}")).collect();
        assert_eq!(mine, expected);
    }
    let after = first.conversations().get(conversation.id).await.unwrap();
    assert_eq!(after.message_count, total as u64, "the live count follows");
    // The next append continues the sequence.
    let next = first
        .messages()
        .append(conversation.id, NewMessage::new(Role::User, "last"))
        .await
        .unwrap();
    assert_eq!(next.seq, total as i64 + 1);
}

#[tokio::test]
async fn a_nul_character_is_refused_whole_and_nothing_is_stored() {
    let location = shared_database().await;
    let store = desktop(&location).await;
    let c = store.conversations().create("nul", None).await.unwrap();
    let err = store
        .messages()
        .append(c.id, NewMessage::new(Role::User, "binary\0output"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidInput(_)), "{err:?}");
    assert!(err.to_string().contains("U+0000"), "{err}");
    let batch = [
        NewMessage::new(Role::User, "fine"),
        NewMessage::new(Role::User, "not\0fine"),
    ];
    assert!(store.messages().append_many(c.id, &batch).await.is_err());
    let imported = store.conversations().import("import", None, &batch).await;
    assert!(imported.is_err());
    assert!(store.messages().all(c.id).await.unwrap().is_empty());
    assert_eq!(
        store.conversations().list().await.unwrap().len(),
        1,
        "no half import"
    );
    // The conversation still takes messages, from seq 1.
    let m = store
        .messages()
        .append(c.id, NewMessage::new(Role::User, "after"))
        .await
        .unwrap();
    assert_eq!(m.seq, 1);
}

/// The next change that concerns `conversation` (others' tests share the channel), within 5 s.
async fn next_for(feed: &mut decima_store::ChangeFeed, conversation: ConversationId) -> Change {
    loop {
        let change = tokio::time::timeout(Duration::from_secs(5), feed.next())
            .await
            .expect("a change within 5 s")
            .unwrap();
        let mine = match &change {
            Change::Message {
                conversation: c, ..
            }
            | Change::Review { conversation: c } => *c == conversation,
            Change::Event {
                conversation: c, ..
            } => *c == Some(conversation),
            Change::Reconnected => true,
        };
        if mine {
            return change;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_desktops_writes_reach_a_listener_and_a_reconnect_is_said() {
    let location = shared_database().await;
    let watcher = desktop(&location).await;
    let writer = desktop(&location).await;
    assert!(
        common::temp_sqlite_store()
            .await
            .1
            .changes()
            .await
            .unwrap()
            .is_none(),
        "SQLite has no feed"
    );
    let mut feed = watcher
        .changes()
        .await
        .unwrap()
        .expect("a feed on PostgreSQL");
    let c = writer
        .conversations()
        .create("watched", None)
        .await
        .unwrap();

    let m = writer
        .messages()
        .append(
            c.id,
            NewMessage::new(Role::User, "hello from the other desk"),
        )
        .await
        .unwrap();
    assert_eq!(
        next_for(&mut feed, c.id).await,
        Change::Message {
            conversation: c.id,
            seq: m.seq
        }
    );
    let ids = writer
        .events()
        .append(None, Some(c.id), "note", &serde_json::json!({}))
        .await
        .unwrap();
    assert_eq!(
        next_for(&mut feed, c.id).await,
        Change::Event {
            conversation: Some(c.id),
            id: ids
        }
    );
    // A pin is a change to a message too.
    writer
        .messages()
        .set_pinned(c.id, m.seq, true)
        .await
        .unwrap();
    assert!(matches!(next_for(&mut feed, c.id).await, Change::Message { seq, .. } if seq == m.seq));

    // The server ends the feed's connection: the feed says so, then carries on.
    let pid = feed.server_pid().await.unwrap();
    let ended: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1)")
        .bind(pid)
        .fetch_one(writer.postgres_pool().unwrap())
        .await
        .unwrap();
    assert!(ended);
    assert_eq!(next_for(&mut feed, c.id).await, Change::Reconnected);
    let later = writer
        .messages()
        .append(c.id, NewMessage::new(Role::User, "after the reconnect"))
        .await
        .unwrap();
    assert_eq!(
        next_for(&mut feed, c.id).await,
        Change::Message {
            conversation: c.id,
            seq: later.seq
        }
    );
}
