//! One writer per conversation, through the runtime's entry points: while a run is active (or
//! waits for the analyst), a second run, a chat turn and a compression are refused before they
//! store anything, and the refusal names what holds the conversation; while a chat turn is
//! answering, a run waits its turn the same way. A preview, which only reads, is allowed.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::Fixture;
use decima_core::context::{CompressionLevel, Strategy};
use decima_runtime::agent::{self, RunOptions, RunRequest, StopOnFailure};
use decima_runtime::chat::{ChatTurn, chat_turn};
use decima_runtime::compression::{self, CompressContext, CompressRequest};
use decima_runtime::context::{Scale, preset_of};
use decima_runtime::settings::WindowSettings;
use decima_runtime::{CollectEvents, RuntimeError};
use decima_store::{ExecutionStatus, Holder, Resolution, StoreError};
use decima_testkit::{Reply, StreamOptions, Turn};
use serde_json::json;

fn busy_holder(result: Result<impl std::fmt::Debug, RuntimeError>) -> Holder {
    match result {
        Err(RuntimeError::Store(StoreError::Busy(busy))) => busy.holder,
        other => panic!("expected the conversation to be busy, got {other:?}"),
    }
}

async fn count(f: &Fixture, sql: &'static str) -> i64 {
    sqlx::query_scalar(sql)
        .fetch_one(f.store.sqlite_pool().expect("a SQLite store"))
        .await
        .unwrap()
}

/// Rows that any write into a conversation would add.
async fn written(f: &Fixture) -> [i64; 4] {
    [
        count(f, "SELECT COUNT(*) FROM messages").await,
        count(f, "SELECT COUNT(*) FROM executions").await,
        count(f, "SELECT COUNT(*) FROM compactions").await,
        count(f, "SELECT COUNT(*) FROM summaries").await,
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_run_refuses_a_second_run_a_chat_and_a_compression_before_storing_anything() {
    let f = Fixture::new().await;
    f.call("shell", json!({"command": "echo one"}));
    let waiting = f
        .run(
            "Echo",
            RunOptions {
                max_steps: 1,
                ..RunOptions::default()
            },
        )
        .await;
    assert_eq!(waiting.execution.status, ExecutionStatus::AwaitingUser);
    let conversation = waiting.execution.conversation_id;
    let before = written(&f).await;
    let requests = f.server.requests().len();

    // A second run.
    let second = agent::run(
        &f.session(&StopOnFailure),
        RunRequest {
            conversation: Some(conversation),
            workspace: Some(f.workspace()),
            task: "Another task".into(),
            ..RunRequest::default()
        },
    )
    .await;
    let holder = busy_holder(second);
    assert!(
        matches!(holder, Holder::Execution { id, status: ExecutionStatus::AwaitingUser, .. } if id == waiting.execution.id)
    );

    // A chat turn.
    let events = CollectEvents::default();
    let chat = chat_turn(ChatTurn {
        store: &f.store,
        data_dir: f.dir.path(),
        provider: Some("local"),
        conversation: Some(conversation),
        message: "And the totals?".into(),
        events: &events,
        cancel: tokio_util::sync::CancellationToken::new(),
    })
    .await;
    busy_holder(chat);

    // A compression; a preview only reads and is allowed.
    let c = f.store.conversations().get(conversation).await.unwrap();
    let preset = preset_of(&f.store, &c).await.unwrap();
    let window = WindowSettings::new(32_000);
    let ctx = CompressContext {
        store: &f.store,
        data_dir: f.dir.path(),
        conversation: &c,
        preset: &preset,
        window: &window,
        scale: Scale::ONE,
        provider: None,
        events: &events,
    };
    let request = |dry_run| CompressRequest {
        level: Some(CompressionLevel::Deep),
        strategy: Strategy::Extract,
        dry_run,
        written: None,
    };
    busy_holder(compression::compress(&ctx, request(false)).await);
    compression::compress(&ctx, request(true)).await.unwrap();

    assert_eq!(written(&f).await, before, "a refused use stored something");
    assert_eq!(
        f.server.requests().len(),
        requests,
        "a refused use sent a request"
    );

    // Once the run is answered (abort ends it), the conversation is free again.
    agent::recover(
        &f.session(&StopOnFailure),
        waiting.execution.id,
        Resolution::Abort,
    )
    .await
    .unwrap();
    f.say("The totals are in the report.");
    chat_turn(ChatTurn {
        store: &f.store,
        data_dir: f.dir.path(),
        provider: Some("local"),
        conversation: Some(conversation),
        message: "And the totals?".into(),
        events: &events,
        cancel: tokio_util::sync::CancellationToken::new(),
    })
    .await
    .unwrap();
    compression::compress(&ctx, request(false)).await.unwrap();
    assert_eq!(f.store.claims().busy(conversation).await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_on_a_conversation_whose_chat_turn_is_still_answering_is_refused() {
    let f = Fixture::new().await;
    let conversation = f
        .store
        .conversations()
        .create("chat", None)
        .await
        .unwrap()
        .id;
    f.server.enqueue(Reply::Stream(Turn {
        text: vec![
            "The ".into(),
            "answer ".into(),
            "is ".into(),
            "slow.".into(),
        ],
        options: StreamOptions {
            event_delay: Some(Duration::from_millis(300)),
            ..StreamOptions::default()
        },
        ..Turn::default()
    }));
    let store = f.store.clone();
    let dir = f.dir.path().to_path_buf();
    let chat = tokio::spawn(async move {
        let events = CollectEvents::default();
        chat_turn(ChatTurn {
            store: &store,
            data_dir: &dir,
            provider: Some("local"),
            conversation: Some(conversation),
            message: "Why?".into(),
            events: &events,
            cancel: tokio_util::sync::CancellationToken::new(),
        })
        .await
    });
    f.server.wait_for_requests(1, Duration::from_secs(10)).await;
    let run = agent::run(
        &f.session(&StopOnFailure),
        RunRequest {
            conversation: Some(conversation),
            workspace: Some(f.workspace()),
            task: "Do something else".into(),
            ..RunRequest::default()
        },
    )
    .await;
    assert!(matches!(
        busy_holder(run),
        Holder::Claim {
            kind: decima_store::ClaimKind::Chat,
            ..
        }
    ));
    let answered = chat.await.unwrap().unwrap();
    assert_eq!(answered.answer.content, "The answer is slow.");
    let messages = f.store.messages().all(conversation).await.unwrap();
    let roles: Vec<&str> = messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(
        roles,
        ["user", "assistant"],
        "nothing of the refused run was stored"
    );
    assert_eq!(
        f.store.claims().busy(conversation).await.unwrap(),
        None,
        "released"
    );
}
