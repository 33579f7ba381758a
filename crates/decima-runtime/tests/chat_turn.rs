//! A chat turn through the runtime against the wire-level test server.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use decima_core::Role;
use decima_runtime::chat::{ChatTurn, chat_turn};
use decima_runtime::{CollectEvents, Event, RuntimeError};
use decima_store::{NewProvider, Store};
use decima_testkit::{LlmServer, Reply, Turn};

async fn setup(server: &LlmServer, dir: &std::path::Path) -> Store {
    let store = Store::open(&dir.join("decima.db"), decima_llm::tokens::store_counter())
        .await
        .unwrap();
    store
        .providers()
        .create(NewProvider {
            name: "local".into(),
            kind: "openai".into(),
            preset: None,
            base_url: server.openai_base_url(),
            model: "qwen3".into(),
            context_window: 32_000,
            settings: serde_json::json!({}),
        })
        .await
        .unwrap();
    store
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_answer_is_reported_and_never_stored() {
    // SAFETY of the environment: the secret store falls back to a file in this test's dir.
    let server = LlmServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let store = setup(&server, dir.path()).await;
    server.enqueue(Reply::Stream(Turn::default()));
    let events = CollectEvents::default();
    let result = chat_turn(ChatTurn {
        store: &store,
        data_dir: dir.path(),
        provider: Some("local"),
        conversation: None,
        message: "How many rows?".into(),
        events: &events,
        cancel: tokio_util::sync::CancellationToken::new(),
    })
    .await;
    assert!(
        matches!(result, Err(RuntimeError::EmptyAnswer { .. })),
        "{result:?}"
    );
    let id = events
        .take()
        .into_iter()
        .find_map(|e| match e {
            Event::TurnStarted { conversation_id } => Some(conversation_id),
            _ => None,
        })
        .unwrap();
    let stored = store.messages().all(id).await.unwrap();
    assert_eq!(stored.len(), 1, "only the user's message is stored");
    assert_eq!(stored[0].role, Role::User);

    // The next turn works: nothing poisoned the conversation.
    server.enqueue(Reply::Stream(Turn {
        text: vec!["42".into()],
        ..Turn::default()
    }));
    let outcome = chat_turn(ChatTurn {
        store: &store,
        data_dir: dir.path(),
        provider: Some("local"),
        conversation: Some(id),
        message: "And now?".into(),
        events: &events,
        cancel: tokio_util::sync::CancellationToken::new(),
    })
    .await
    .unwrap();
    assert_eq!(outcome.answer.content, "42");
    let texts: Vec<Event> = events.take();
    assert!(texts.contains(&Event::TextDelta { text: "42".into() }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cut_off_by_the_output_limit_is_never_run_or_stored() {
    let server = LlmServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let store = setup(&server, dir.path()).await;
    server.enqueue(Reply::Stream(Turn {
        tool_calls: vec![decima_testkit::ScriptedToolCall {
            id: "call_1".into(),
            name: "write_file".into(),
            argument_chunks: vec![r##"{"path":"report.md","content":"# Q3 recon"##.into()],
        }],
        finish: Some("length".into()),
        ..Turn::default()
    }));
    let events = CollectEvents::default();
    let result = chat_turn(ChatTurn {
        store: &store,
        data_dir: dir.path(),
        provider: Some("local"),
        conversation: None,
        message: "Write the report".into(),
        events: &events,
        cancel: tokio_util::sync::CancellationToken::new(),
    })
    .await;
    let err = result.unwrap_err();
    assert!(matches!(err, RuntimeError::CutOff { .. }), "{err:?}");
    assert!(err.to_string().contains("write_file"), "{err}");
    let id = events
        .take()
        .into_iter()
        .find_map(|e| match e {
            Event::TurnStarted { conversation_id } => Some(conversation_id),
            _ => None,
        })
        .unwrap();
    let stored = store.messages().all(id).await.unwrap();
    assert_eq!(stored.len(), 1, "only the user's message: {stored:?}");
}
