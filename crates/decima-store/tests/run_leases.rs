//! Run leases on a shared PostgreSQL store: one holder at a time, a lapsed lease taken over
//! with a higher epoch, and a runner whose lease was taken over refused at its next write,
//! whatever the write, with nothing stored. The server's own clock and trigger decide, so these
//! run against a real server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use decima_core::{EstimateCounter, ExecutionId, NewMessage, Role};
use decima_store::{NewExecution, Store, StoreError, StoreLocation, TodoInput, TodoStatus};

async fn shared() -> (StoreLocation, Store) {
    let url = decima_testkit::postgres::fresh_database("run_leases").await;
    let location = StoreLocation::parse(&url).unwrap();
    Store::migrate(&location).await.unwrap();
    let store = Store::connect(&location, Arc::new(EstimateCounter))
        .await
        .unwrap();
    (location, store)
}

const LONG: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_holder_at_a_time_and_epochs_only_grow() {
    let (_location, store) = shared().await;
    let leases = store.leases();
    let id = ExecutionId::new();

    let first = leases.claim(id, "a@one", LONG).await.unwrap().unwrap();
    assert_eq!(first.epoch, 1);
    assert_eq!(leases.claim(id, "b@two", LONG).await.unwrap(), None);
    let holder = leases.holder(id).await.unwrap().unwrap();
    assert_eq!(holder.owner, "a@one");
    assert!(holder.lapses_in > Duration::from_secs(50), "{holder:?}");
    assert!(leases.renew(&first, LONG).await.unwrap());

    // Released: free at once, and the next claim gets a new epoch, never the old one again.
    leases.release(&first).await.unwrap();
    assert_eq!(leases.holder(id).await.unwrap(), None);
    let second = leases.claim(id, "b@two", LONG).await.unwrap().unwrap();
    assert_eq!(second.epoch, 2);
    assert!(
        !leases.renew(&first, LONG).await.unwrap(),
        "an old claim renews nothing"
    );
    // Releasing the old claim leaves the new holder alone.
    leases.release(&first).await.unwrap();
    assert_eq!(leases.holder(id).await.unwrap().unwrap().owner, "b@two");

    // A lease that is not renewed lapses by the server's clock and is taken over.
    leases.release(&second).await.unwrap();
    let short = leases
        .claim(id, "c@three", Duration::from_millis(300))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(leases.claim(id, "d@four", LONG).await.unwrap(), None);
    tokio::time::sleep(Duration::from_millis(450)).await;
    let taken = leases.claim(id, "d@four", LONG).await.unwrap().unwrap();
    assert_eq!(taken.epoch, short.epoch + 1);
    assert!(!leases.renew(&short, LONG).await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runner_whose_lease_was_taken_over_cannot_write() {
    let (_location, store) = shared().await;
    let conversation = store.conversations().create("leased", None).await.unwrap();
    let id = ExecutionId::new();
    let claim = store
        .leases()
        .claim(id, "old@laptop", Duration::from_millis(300))
        .await
        .unwrap()
        .unwrap();
    let old = store.fenced(&claim).await.unwrap();
    old.executions()
        .start(
            id,
            &NewExecution {
                conversation_id: conversation.id,
                parent_id: None,
                depth: 0,
                task: "leased work".into(),
                sandbox: Default::default(),
                provider_id: None,
                workspace: None,
                options: serde_json::json!({}),
            },
        )
        .await
        .unwrap();
    let mut first = NewMessage::new(Role::User, "written while holding the lease");
    first.execution_id = Some(id);
    old.messages().append(conversation.id, first).await.unwrap();

    // The old runner pauses past its lease; another process takes the run over.
    tokio::time::sleep(Duration::from_millis(450)).await;
    let new_claim = store
        .leases()
        .claim(id, "new@server", LONG)
        .await
        .unwrap()
        .unwrap();
    let new = store.fenced(&new_claim).await.unwrap();
    let mut resumed = NewMessage::new(Role::Assistant, "written by the new holder");
    resumed.execution_id = Some(id);
    new.messages()
        .append(conversation.id, resumed)
        .await
        .unwrap();

    // Every kind of write from the old runner is refused: an append, a batch, a status
    // change, a todo, an event. Each says the lease was taken over.
    let mut late = NewMessage::new(Role::Assistant, "a late write from the paused runner");
    late.execution_id = Some(id);
    let refusals = [
        old.messages()
            .append(conversation.id, late.clone())
            .await
            .map(|_| ()),
        old.messages()
            .append_many(conversation.id, std::slice::from_ref(&late))
            .await
            .map(|_| ()),
        old.executions()
            .finish(
                id,
                decima_store::ExecutionStatus::Failed,
                None,
                Some("gave up"),
            )
            .await
            .map(|_| ()),
        old.todos()
            .replace_plan(
                id,
                &[TodoInput {
                    id: None,
                    title: "a todo from the past".into(),
                    status: TodoStatus::Pending,
                    phase: None,
                    checkpoint: false,
                    pinned: false,
                    reason: None,
                }],
            )
            .await
            .map(|_| ()),
    ];
    for (i, refused) in refusals.into_iter().enumerate() {
        match refused {
            Err(StoreError::LeaseLost(detail)) => {
                assert!(detail.contains(&id.to_string()), "{detail}");
            }
            other => panic!("write {i} of the old runner: {other:?}"),
        }
    }
    let error = StoreError::LeaseLost("x".into()).to_string();
    assert!(error.contains("stopped writing"), "{error}");

    // Nothing of the old runner's late writes is stored; the new holder's are.
    let texts: Vec<String> = store
        .messages()
        .all(conversation.id)
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert_eq!(
        texts,
        [
            "written while holding the lease",
            "written by the new holder"
        ]
    );
    let execution = store.executions().get(id).await.unwrap();
    assert_eq!(execution.status, decima_store::ExecutionStatus::Running);
    assert!(store.todos().plan(id).await.unwrap().is_empty());
    // The new holder keeps writing; an unfenced handle (a window) is not affected.
    new.executions()
        .finish(
            id,
            decima_store::ExecutionStatus::Succeeded,
            Some("done"),
            None,
        )
        .await
        .unwrap();
    store
        .conversations()
        .rename(conversation.id, "renamed by a window")
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leases_are_refused_on_sqlite_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("d.db"), Arc::new(EstimateCounter))
        .await
        .unwrap();
    let err = store
        .leases()
        .claim(ExecutionId::new(), "me", LONG)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("lock file"), "{err}");
}

/// A subagent's store is fenced from its parent's fenced store: by its own lease, not by its
/// parent's as well (a fence replaces the one it was made from).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fence_made_from_a_fenced_store_is_its_own() {
    let (_location, store) = shared().await;
    let conversation = store.conversations().create("parent", None).await.unwrap();
    let parent = ExecutionId::new();
    let parent_claim = store
        .leases()
        .claim(parent, "p", Duration::from_millis(300))
        .await
        .unwrap()
        .unwrap();
    let parent_store = store.fenced(&parent_claim).await.unwrap();
    let child = ExecutionId::new();
    let child_claim = parent_store
        .leases()
        .claim(child, "c", LONG)
        .await
        .unwrap()
        .unwrap();
    let child_store = parent_store.fenced(&child_claim).await.unwrap();

    tokio::time::sleep(Duration::from_millis(450)).await;
    store
        .leases()
        .claim(parent, "other", LONG)
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(
        parent_store
            .messages()
            .append(conversation.id, NewMessage::new(Role::User, "parent"))
            .await,
        Err(StoreError::LeaseLost(_))
    ));
    child_store
        .messages()
        .append(conversation.id, NewMessage::new(Role::User, "child"))
        .await
        .unwrap();
}
