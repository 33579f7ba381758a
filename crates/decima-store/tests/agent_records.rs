//! The agent loop's records against a real SQLite file: events, numbered steps, step records
//! written with their message or not at all, and the live state the loop reads each step.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::agent_state::*;
use crate::common;
use decima_core::{ConversationId, ExecutionId};
use decima_store::{StepKind, StoreError, TodoStatus};
use serde_json::json;

#[tokio::test]
async fn events_append_and_read_after_an_id() {
    let (_dir, store) = common::temp_store().await;
    let c = conversation(&store).await;
    let e = execution(&store, c).await;
    let other = execution(&store, c).await;
    let first = store
        .events()
        .append(
            Some(e.id),
            Some(c),
            "execution.started",
            &json!({"task": "x"}),
        )
        .await
        .unwrap();
    let second = store
        .events()
        .append(Some(other.id), Some(c), "todo.started", &json!({}))
        .await
        .unwrap();
    let third = store
        .events()
        .append(Some(e.id), None, "rollback.done", &json!({"to_seq": 3}))
        .await
        .unwrap();
    assert!(first < second && second < third);

    let all = store.events().after(0, 100).await.unwrap();
    assert_eq!(
        all.iter().map(|ev| ev.id).collect::<Vec<_>>(),
        [first, second, third]
    );
    assert_eq!(all[0].payload, json!({"task": "x"}));
    assert_eq!(all[0].kind, "execution.started");
    let mine = store
        .events()
        .execution_after(e.id, first, 100)
        .await
        .unwrap();
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0].id, third);
    assert_eq!(mine[0].conversation_id, None);
    let in_conversation = store.events().conversation_after(c, 0, 1).await.unwrap();
    assert_eq!(in_conversation.len(), 1, "the limit holds");
    assert!(store.events().after(third, 10).await.unwrap().is_empty());

    for hostile in hostile_ids()
        .into_iter()
        .chain(["".to_owned(), "Upper".to_owned()])
    {
        let err = store
            .events()
            .append(Some(e.id), Some(c), &hostile, &json!({}))
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::InvalidInput(_)), "{err}");
        assert_echoed_safely(&err);
    }
    assert!(matches!(
        store
            .events()
            .append(Some(ExecutionId::new()), None, "x", &json!({}))
            .await,
        Err(StoreError::NotFound { .. })
    ));
}

#[tokio::test]
async fn steps_are_numbered_per_execution_without_gaps() {
    let (_dir, store) = common::temp_store().await;
    let c = conversation(&store).await;
    let e = execution(&store, c).await;
    let other = execution(&store, c).await;
    let a = store
        .steps()
        .record(e.id, StepKind::Analysis, "look around")
        .await
        .unwrap();
    assert_eq!(a.seq, 1);
    assert!(a.tokens > 0);
    let o = store
        .steps()
        .record(other.id, StepKind::Action, "ls")
        .await
        .unwrap();
    assert_eq!(o.seq, 1, "seqs are per execution");

    // Concurrent writers on one pool still get distinct, gapless seqs.
    let writers = (0..12).map(|i| {
        let store = store.clone();
        tokio::spawn(async move {
            store
                .steps()
                .record(e.id, StepKind::Supervision, &format!("check {i}"))
                .await
                .unwrap()
                .seq
        })
    });
    let mut seqs = Vec::new();
    for writer in writers {
        seqs.push(writer.await.unwrap());
    }
    seqs.sort_unstable();
    assert_eq!(seqs, (2..=13).collect::<Vec<_>>());

    let listed = store.steps().list(e.id).await.unwrap();
    assert_eq!(listed.len(), 13);
    assert_eq!(listed[0].id, a.id);
    assert_eq!(listed[0].kind, "analysis");
    assert_eq!(listed[0].content, "look around");
    assert!(matches!(
        store
            .steps()
            .record(ExecutionId::new(), StepKind::Action, "x")
            .await,
        Err(StoreError::NotFound {
            entity: "execution",
            ..
        })
    ));
}

#[tokio::test]
async fn several_steps_are_recorded_together_in_order_or_not_at_all() {
    let (_dir, store) = common::temp_store().await;
    let c = conversation(&store).await;
    let e = execution(&store, c).await;
    store
        .steps()
        .record(e.id, StepKind::Supervision, "before")
        .await
        .unwrap();
    let both = store
        .steps()
        .record_all(
            e.id,
            &[(StepKind::Analysis, "think"), (StepKind::Action, "act")],
        )
        .await
        .unwrap();
    assert_eq!(both.iter().map(|s| s.seq).collect::<Vec<_>>(), [2, 3]);
    let kinds: Vec<String> = store
        .steps()
        .list(e.id)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.kind)
        .collect();
    assert_eq!(kinds, ["supervision", "analysis", "action"]);
    // An unknown execution writes nothing.
    assert!(
        store
            .steps()
            .record_all(ExecutionId::new(), &[(StepKind::Analysis, "x")])
            .await
            .is_err()
    );
}

#[tokio::test]
async fn live_state_counts_live_messages_and_lists_no_summaries_before_a_compaction() {
    let (_dir, store) = common::temp_store().await;
    let c = conversation(&store).await;
    let before = store.compactions().live_state(c).await.unwrap();
    for text in ["one", "two", "three"] {
        store
            .messages()
            .append(
                c,
                decima_core::NewMessage::new(decima_core::Role::User, text),
            )
            .await
            .unwrap();
    }
    let after = store.compactions().live_state(c).await.unwrap();
    assert_eq!(after.messages, before.messages + 3);
    assert!(after.tokens > before.tokens);
    assert!(after.summary_ids.is_empty());
    store.messages().soft_delete_after(c, 2).await.unwrap();
    assert_eq!(
        store.compactions().live_state(c).await.unwrap().messages,
        before.messages + 2
    );
    store.conversations().soft_delete(c).await.unwrap();
    assert!(matches!(
        store.compactions().live_state(c).await,
        Err(StoreError::NotFound { .. })
    ));
}

#[tokio::test]
async fn a_message_is_stored_with_its_step_records_and_call_marker_in_one_exchange() {
    let (_dir, store) = common::temp_store().await;
    let c = conversation(&store).await;
    let e = execution(&store, c).await;
    store
        .steps()
        .record(e.id, StepKind::Supervision, "before")
        .await
        .unwrap();
    let mut answer = decima_core::NewMessage::new(decima_core::Role::Assistant, "");
    answer.execution_id = Some(e.id);
    answer.tool_calls = vec![decima_core::ToolCall {
        id: "call_1".into(),
        name: "shell".into(),
        arguments: r#"{"command":"true"}"#.into(),
        signature: None,
    }];
    let (stored, steps) = store
        .messages()
        .append_noting(
            c,
            answer,
            decima_store::StepNotes {
                execution: e.id,
                records: &[(StepKind::Analysis, "think"), (StepKind::Action, "act")],
                started_call: Some(("call_1", "shell")),
            },
        )
        .await
        .unwrap();
    assert_eq!(stored.seq, 1);
    assert_eq!(stored.tool_calls.len(), 1);
    assert_eq!(steps.iter().map(|s| s.seq).collect::<Vec<_>>(), [2, 3]);
    let listed = store.steps().list(e.id).await.unwrap();
    let kinds: Vec<&str> = listed.iter().map(|s| s.kind.as_str()).collect();
    assert_eq!(kinds, ["supervision", "analysis", "action"]);
    assert_eq!(listed[1].content, "think");
    let events = store.events().execution_after(e.id, 0, 10).await.unwrap();
    let markers: Vec<_> = events
        .iter()
        .filter(|ev| ev.kind == "tool.started")
        .collect();
    assert_eq!(markers.len(), 1);
    assert_eq!(
        markers[0].payload,
        json!({"call_id": "call_1", "name": "shell"})
    );
    assert_eq!(
        store.messages().get(c, 1).await.unwrap().content,
        stored.content
    );

    // Without notes it is a plain append.
    let (plain, none) = store
        .messages()
        .append_noting(
            c,
            decima_core::NewMessage::new(decima_core::Role::User, "next"),
            decima_store::StepNotes {
                execution: e.id,
                records: &[],
                started_call: None,
            },
        )
        .await
        .unwrap();
    assert_eq!((plain.seq, none.len()), (2, 0));
}

#[tokio::test]
async fn notes_are_not_written_when_their_message_is_not() {
    let (_dir, store) = common::temp_store().await;
    let c = conversation(&store).await;
    let e = execution(&store, c).await;
    // A conversation that does not exist: no message, so no records and no marker either.
    let err = store
        .messages()
        .append_noting(
            ConversationId::new(),
            decima_core::NewMessage::new(decima_core::Role::User, "lost"),
            decima_store::StepNotes {
                execution: e.id,
                records: &[(StepKind::Analysis, "think")],
                started_call: Some(("call_1", "shell")),
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::NotFound {
                entity: "conversation",
                ..
            }
        ),
        "{err}"
    );
    assert!(store.steps().list(e.id).await.unwrap().is_empty());
    assert!(
        store
            .events()
            .execution_after(e.id, 0, 10)
            .await
            .unwrap()
            .iter()
            .all(|ev| ev.kind != "tool.started")
    );
    // An execution that does not exist: the message is stored (as a plain append would), the
    // records cannot be, and the caller is told.
    let err = store
        .messages()
        .append_noting(
            c,
            decima_core::NewMessage::new(decima_core::Role::User, "kept"),
            decima_store::StepNotes {
                execution: ExecutionId::new(),
                records: &[(StepKind::Analysis, "think")],
                started_call: None,
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::NotFound {
                entity: "execution",
                ..
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn live_state_carries_the_next_seq_and_the_pinned_todos() {
    let (_dir, store) = common::temp_store().await;
    let c = conversation(&store).await;
    let e = execution(&store, c).await;
    let mut pinned = todo("keep the plan", TodoStatus::InProgress);
    pinned.pinned = true;
    pinned.phase = Some("collect".into());
    store
        .todos()
        .replace_plan(e.id, &[pinned, todo("not pinned", TodoStatus::Pending)])
        .await
        .unwrap();
    store
        .messages()
        .append(
            c,
            decima_core::NewMessage::new(decima_core::Role::User, "one"),
        )
        .await
        .unwrap();
    let state = store.compactions().live_state(c).await.unwrap();
    assert_eq!(state.next_seq, 2);
    assert_eq!(
        state.pinned_todos,
        store.todos().pinned_in_conversation(c).await.unwrap()
    );
    assert_eq!(state.pinned_todos.len(), 1);
    assert_eq!(state.pinned_todos[0].phase.as_deref(), Some("collect"));
}
