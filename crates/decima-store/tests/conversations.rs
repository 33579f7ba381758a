//! Conversation repository behaviour against a real SQLite file.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use decima_core::{ConversationId, NewMessage, Role};
use decima_store::StoreError;

#[tokio::test]
async fn create_list_rename_delete_restore() {
    let (_dir, store) = common::temp_store().await;
    let repo = store.conversations();
    let a = repo.create("  Q3 invoices  ", None).await.unwrap();
    assert_eq!(a.title, "Q3 invoices", "titles are trimmed");
    let b = repo.create("库存分析", None).await.unwrap();
    let listed: Vec<_> = repo
        .list()
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(listed.len(), 2);
    assert!(listed.contains(&a.id) && listed.contains(&b.id));

    // Times are in milliseconds, and two updates within one millisecond tie (the newer id
    // wins): let the clock move on, so the rename is the latest update, as it is for a person.
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let renamed = repo.rename(a.id, "Q3 invoices (final)").await.unwrap();
    assert_eq!(renamed.title, "Q3 invoices (final)");
    assert!(renamed.updated_at >= a.updated_at);
    assert_eq!(
        repo.list().await.unwrap()[0].id,
        a.id,
        "most recently updated first"
    );

    repo.soft_delete(a.id).await.unwrap();
    assert_eq!(repo.list().await.unwrap().len(), 1);
    assert!(matches!(
        repo.get(a.id).await,
        Err(StoreError::NotFound { .. })
    ));
    assert_eq!(repo.list_deleted().await.unwrap()[0].id, a.id);
    assert!(
        repo.find(a.id).await.unwrap().unwrap().deleted_at.is_some(),
        "the row stays"
    );

    let restored = repo.restore(a.id).await.unwrap();
    assert_eq!(restored.title, "Q3 invoices (final)");
    assert_eq!(repo.list().await.unwrap().len(), 2);
}

#[tokio::test]
async fn counts_messages_and_tokens() {
    let (_dir, store) = common::temp_store().await;
    let c = store.conversations().create("counts", None).await.unwrap();
    assert_eq!((c.message_count, c.tokens), (0, 0));
    store
        .messages()
        .append(c.id, NewMessage::new(Role::User, "abcdefgh"))
        .await
        .unwrap();
    store
        .messages()
        .append(c.id, NewMessage::new(Role::Assistant, "你好"))
        .await
        .unwrap();
    let c = store.conversations().get(c.id).await.unwrap();
    assert_eq!(c.message_count, 2);
    // 4 framing + 2 for eight ASCII chars, 4 framing + 2 for two CJK chars.
    assert_eq!(c.tokens, 12);
}

#[tokio::test]
async fn unknown_and_deleted_ids_are_not_found() {
    let (_dir, store) = common::temp_store().await;
    let repo = store.conversations();
    let ghost = ConversationId::new();
    assert!(matches!(
        repo.rename(ghost, "x").await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        repo.soft_delete(ghost).await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        repo.restore(ghost).await,
        Err(StoreError::NotFound { .. })
    ));
    let c = repo.create("live", None).await.unwrap();
    assert!(
        matches!(repo.restore(c.id).await, Err(StoreError::NotFound { .. })),
        "not in the trash"
    );
    repo.soft_delete(c.id).await.unwrap();
    assert!(matches!(
        repo.soft_delete(c.id).await,
        Err(StoreError::NotFound { .. })
    ));
    let err = store
        .messages()
        .append(c.id, NewMessage::new(Role::User, "x"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not found"), "{err}");
}

#[tokio::test]
async fn bad_titles_are_refused_and_nothing_changes() {
    let (_dir, store) = common::temp_store().await;
    let repo = store.conversations();
    for bad in ["", "   ", "two\nlines", &"x".repeat(501)] {
        let err = repo.create(bad, None).await.unwrap_err();
        assert!(matches!(err, StoreError::InvalidInput(_)), "{bad:?}: {err}");
    }
    assert!(repo.list().await.unwrap().is_empty());
    let c = repo.create("keep me", None).await.unwrap();
    assert!(repo.rename(c.id, "").await.is_err());
    assert_eq!(repo.get(c.id).await.unwrap().title, "keep me");
}

#[tokio::test]
async fn import_is_all_or_nothing() {
    let (_dir, store) = common::temp_store().await;
    let good = NewMessage::new(Role::User, "fine");
    let bad = NewMessage::new(Role::Tool, "no call id");
    let err = store
        .conversations()
        .import("t", None, &[good.clone(), bad])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("tool_call_id"), "{err}");
    assert!(store.conversations().list().await.unwrap().is_empty());

    let err = store
        .conversations()
        .import("t", Some("no-such-preset"), &[good])
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("preset no-such-preset was not found"),
        "{err}"
    );
    assert!(store.conversations().list().await.unwrap().is_empty());
}
