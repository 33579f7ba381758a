//! The agent loop's state against a real SQLite file: executions and their status machine,
//! plans, snapshots, failures, events and steps.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use decima_core::{ConversationId, ExecutionId, FailureClass};
use decima_store::{
    Execution, ExecutionStatus, NewExecution, NewFailure, NewSnapshot, Resolution, SandboxKind,
    SnapshotReason, Store, StoreError, TodoInput, TodoStatus,
};
use serde_json::json;

/// Ids a model or a hand-edited file could send: traversal, SQL, control characters, floods.
pub(super) fn hostile_ids() -> Vec<String> {
    vec![
        "../../etc/passwd".into(),
        "1'; DROP TABLE failures; --".into(),
        "line\nbreak\u{1b}[31m".into(),
        "x".repeat(10_000),
    ]
}

pub(super) fn assert_echoed_safely(err: &StoreError) {
    let text = err.to_string();
    assert!(!text.contains('\n'), "one line: {text:?}");
    assert!(!text.contains('\u{1b}'), "no escapes: {text:?}");
    assert!(text.len() < 400, "bounded: {}", text.len());
}

pub(super) async fn conversation(store: &Store) -> ConversationId {
    store
        .conversations()
        .create("agent", None)
        .await
        .unwrap()
        .id
}

pub(super) async fn execution(store: &Store, conversation: ConversationId) -> Execution {
    store
        .executions()
        .create(&NewExecution {
            conversation_id: conversation,
            parent_id: None,
            depth: 0,
            task: "build the thing".into(),
            sandbox: SandboxKind::Host,
            provider_id: None,
            workspace: None,
            options: serde_json::json!({}),
        })
        .await
        .unwrap()
}

pub(super) fn todo(title: &str, status: TodoStatus) -> TodoInput {
    TodoInput {
        id: None,
        title: title.into(),
        status,
        phase: None,
        checkpoint: false,
        pinned: false,
        reason: None,
    }
}

#[tokio::test]
async fn executions_create_get_and_list_with_subagents() {
    let (_dir, store) = common::temp_store().await;
    let c = conversation(&store).await;
    let top = execution(&store, c).await;
    assert_eq!(top.status, ExecutionStatus::Queued);
    assert_eq!(top.depth, 0);
    assert_eq!(store.executions().get(top.id).await.unwrap(), top);

    let sub = store
        .executions()
        .create(&NewExecution {
            conversation_id: c,
            parent_id: Some(top.id),
            depth: 1,
            task: "look it up".into(),
            sandbox: SandboxKind::Docker,
            provider_id: None,
            workspace: None,
            options: serde_json::json!({}),
        })
        .await
        .unwrap();
    assert_eq!(sub.parent_id, Some(top.id));
    assert_eq!(sub.sandbox, SandboxKind::Docker);
    let listed = store.executions().list_by_conversation(c).await.unwrap();
    assert_eq!(listed, vec![top.clone(), sub]);

    let wrong_depth = NewExecution {
        conversation_id: c,
        parent_id: Some(top.id),
        depth: 5,
        task: "deep".into(),
        sandbox: SandboxKind::Host,
        provider_id: None,
        workspace: None,
        options: serde_json::json!({}),
    };
    assert!(matches!(
        store.executions().create(&wrong_depth).await,
        Err(StoreError::InvalidInput(_))
    ));
    let orphan = NewExecution {
        conversation_id: ConversationId::new(),
        parent_id: None,
        depth: 0,
        task: "nowhere".into(),
        sandbox: SandboxKind::Host,
        provider_id: None,
        workspace: None,
        options: serde_json::json!({}),
    };
    assert!(matches!(
        store.executions().create(&orphan).await,
        Err(StoreError::NotFound {
            entity: "conversation",
            ..
        })
    ));
    let unknown_provider = NewExecution {
        provider_id: Some("../../x\n".into()),
        ..wrong_depth
    };
    let unknown_provider = NewExecution {
        parent_id: None,
        depth: 0,
        ..unknown_provider
    };
    let err = store
        .executions()
        .create(&unknown_provider)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::NotFound {
                entity: "provider",
                ..
            }
        ),
        "{err}"
    );
    assert_echoed_safely(&err);
    assert!(matches!(
        store.executions().get(ExecutionId::new()).await,
        Err(StoreError::NotFound {
            entity: "execution",
            ..
        })
    ));
}

#[tokio::test]
async fn status_moves_along_allowed_transitions_and_refuses_the_rest() {
    let (_dir, store) = common::temp_store().await;
    let c = conversation(&store).await;
    let e = execution(&store, c).await;
    let executions = store.executions();

    let running = executions
        .set_status(e.id, ExecutionStatus::Running)
        .await
        .unwrap();
    assert!(running.started_at.is_some());
    let waiting = executions
        .set_status(e.id, ExecutionStatus::AwaitingUser)
        .await
        .unwrap();
    assert_eq!(waiting.status, ExecutionStatus::AwaitingUser);
    let resumed = executions
        .set_status(e.id, ExecutionStatus::Running)
        .await
        .unwrap();
    assert_eq!(
        resumed.started_at, running.started_at,
        "first start is kept"
    );
    let done = executions
        .finish(e.id, ExecutionStatus::Succeeded, Some("all built"), None)
        .await
        .unwrap();
    assert_eq!(done.result.as_deref(), Some("all built"));
    assert!(done.finished_at.is_some());

    let err = executions
        .set_status(e.id, ExecutionStatus::Running)
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("succeeded") && text.contains("running"),
        "{text}"
    );
    assert_eq!(
        executions.get(e.id).await.unwrap(),
        done,
        "a refused transition changes nothing"
    );

    let queued = execution(&store, c).await;
    for refused in [
        ExecutionStatus::Succeeded,
        ExecutionStatus::AwaitingUser,
        ExecutionStatus::Interrupted,
        ExecutionStatus::Queued,
    ] {
        assert!(
            matches!(
                executions.set_status(queued.id, refused).await,
                Err(StoreError::Conflict(_))
            ),
            "queued → {refused}"
        );
    }
    assert!(matches!(
        executions
            .finish(queued.id, ExecutionStatus::Running, None, None)
            .await,
        Err(StoreError::InvalidInput(_))
    ));
    assert!(matches!(
        executions
            .set_status(ExecutionId::new(), ExecutionStatus::Running)
            .await,
        Err(StoreError::NotFound { .. })
    ));
    for status in ExecutionStatus::ALL {
        assert_eq!(status.as_str().parse::<ExecutionStatus>().unwrap(), status);
    }
    for hostile in hostile_ids() {
        let err = hostile.parse::<ExecutionStatus>().unwrap_err();
        assert_echoed_safely(&err);
    }
}

#[tokio::test]
async fn interrupt_running_marks_only_running_executions() {
    let (_dir, store) = common::temp_store().await;
    let executions = store.executions();
    // One conversation each: a conversation has one active execution at most.
    let a = execution(&store, conversation(&store).await).await;
    let b = execution(&store, conversation(&store).await).await;
    let waiting = execution(&store, conversation(&store).await).await;
    let queued = execution(&store, conversation(&store).await).await;
    for id in [a.id, b.id, waiting.id] {
        executions
            .set_status(id, ExecutionStatus::Running)
            .await
            .unwrap();
    }
    executions
        .set_status(waiting.id, ExecutionStatus::AwaitingUser)
        .await
        .unwrap();

    assert_eq!(executions.interrupt_running().await.unwrap(), 2);
    assert_eq!(executions.interrupt_running().await.unwrap(), 0);
    for (id, status) in [
        (a.id, ExecutionStatus::Interrupted),
        (b.id, ExecutionStatus::Interrupted),
        (waiting.id, ExecutionStatus::AwaitingUser),
        (queued.id, ExecutionStatus::Queued),
    ] {
        assert_eq!(executions.get(id).await.unwrap().status, status);
    }
    // An interrupted run can resume.
    executions
        .set_status(a.id, ExecutionStatus::Running)
        .await
        .unwrap();
}

#[tokio::test]
async fn plan_replacement_keeps_ids_updates_and_soft_deletes() {
    let (_dir, store) = common::temp_store().await;
    let c = conversation(&store).await;
    let e = execution(&store, c).await;
    let first = store
        .plan()
        .replace_plan(
            e.id,
            &[
                TodoInput {
                    phase: Some("setup".into()),
                    pinned: true,
                    ..todo("read the code", TodoStatus::Pending)
                },
                todo("write the code", TodoStatus::Pending),
                todo("test it", TodoStatus::Pending),
            ],
        )
        .await
        .unwrap();
    assert_eq!(first.len(), 3);
    assert_eq!(
        first.iter().map(|t| t.position).collect::<Vec<_>>(),
        [0, 1, 2]
    );

    let second = store
        .todos()
        .replace_plan(
            e.id,
            &[
                TodoInput {
                    id: Some(first[2].id.clone()),
                    checkpoint: true,
                    ..todo("test it well", TodoStatus::InProgress)
                },
                TodoInput {
                    id: Some(first[0].id.clone()),
                    reason: Some("no access".into()),
                    ..todo("read the code", TodoStatus::Failed)
                },
                todo("ship it", TodoStatus::Pending),
            ],
        )
        .await
        .unwrap();
    assert_eq!(second[0].id, first[2].id);
    assert_eq!(second[0].title, "test it well");
    assert_eq!(second[0].status, TodoStatus::InProgress);
    assert!(second[0].checkpoint);
    assert_eq!(second[1].id, first[0].id);
    assert_eq!(second[1].reason.as_deref(), Some("no access"));
    assert!(!second[1].pinned, "the plan sent is the whole truth");
    assert_eq!(second[2].title, "ship it");
    assert_eq!(store.todos().plan(e.id).await.unwrap(), second);
    // The dropped todo is soft-deleted: the row remains for snapshots and failures.
    let rows: i64 = common::scalar(
        &store,
        "SELECT COUNT(*) FROM todos WHERE execution_id = $1",
        &[&e.id.to_string()],
    )
    .await;
    assert_eq!(rows, 4);

    // A reason on a todo that did not fail is refused.
    assert!(matches!(
        store
            .plan()
            .replace_plan(
                e.id,
                &[TodoInput {
                    reason: Some("why".into()),
                    ..todo("x", TodoStatus::Completed)
                }]
            )
            .await,
        Err(StoreError::InvalidInput(_))
    ));
    // An empty plan clears it.
    assert!(
        store
            .plan()
            .replace_plan(e.id, &[])
            .await
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        store.plan().replace_plan(ExecutionId::new(), &[]).await,
        Err(StoreError::NotFound {
            entity: "execution",
            ..
        })
    ));
}

#[tokio::test]
async fn a_refused_row_leaves_the_old_plan_untouched() {
    let (_dir, store) = common::temp_store().await;
    let c = conversation(&store).await;
    let e = execution(&store, c).await;
    let other = execution(&store, c).await;
    let old = store
        .plan()
        .replace_plan(
            e.id,
            &[
                todo("a", TodoStatus::Completed),
                todo("b", TodoStatus::Pending),
            ],
        )
        .await
        .unwrap();
    let foreign = store
        .plan()
        .replace_plan(other.id, &[todo("theirs", TodoStatus::Pending)])
        .await
        .unwrap();

    let mut bad_ids = hostile_ids();
    bad_ids.push(foreign[0].id.clone());
    for bad in bad_ids {
        // The first entries are written before the bad one is reached: all must roll back.
        let err = store
            .plan()
            .replace_plan(
                e.id,
                &[
                    TodoInput {
                        id: Some(old[0].id.clone()),
                        ..todo("a renamed", TodoStatus::Failed)
                    },
                    todo("new", TodoStatus::Pending),
                    TodoInput {
                        id: Some(bad.clone()),
                        ..todo("hijack", TodoStatus::Pending)
                    },
                ],
            )
            .await
            .unwrap_err();
        assert!(
            matches!(err, StoreError::NotFound { entity: "todo", .. }),
            "{err}"
        );
        assert_echoed_safely(&err);
        assert_eq!(store.plan().plan(e.id).await.unwrap(), old);
    }
    assert_eq!(store.plan().plan(other.id).await.unwrap(), foreign);

    let duplicate = store
        .plan()
        .replace_plan(
            e.id,
            &[
                TodoInput {
                    id: Some(old[0].id.clone()),
                    ..todo("a", TodoStatus::Completed)
                },
                TodoInput {
                    id: Some(old[0].id.clone()),
                    ..todo("a again", TodoStatus::Completed)
                },
            ],
        )
        .await;
    assert!(matches!(duplicate, Err(StoreError::InvalidInput(_))));
    assert_eq!(store.plan().plan(e.id).await.unwrap(), old);
}

#[tokio::test]
async fn snapshots_record_list_and_find_the_latest_for_a_todo() {
    let (_dir, store) = common::temp_store().await;
    let c = conversation(&store).await;
    let e = execution(&store, c).await;
    let other = execution(&store, c).await;
    let plan = store
        .plan()
        .replace_plan(
            e.id,
            &[
                todo("one", TodoStatus::InProgress),
                todo("two", TodoStatus::Pending),
            ],
        )
        .await
        .unwrap();
    let snap = |todo: Option<&str>, seq: i64, archive: Option<&str>| NewSnapshot {
        execution_id: e.id,
        todo_id: todo.map(str::to_owned),
        reason: SnapshotReason::TodoStart,
        message_seq: seq,
        todo_state: json!([{"title": "one", "status": "pending"}]),
        workspace_archive: archive.map(str::to_owned),
    };
    let s1 = store
        .snapshots()
        .record(&snap(Some(&plan[0].id), 3, Some("archive-1")))
        .await
        .unwrap();
    assert_eq!(s1.workspace_archive.as_deref(), Some("archive-1"));
    assert_eq!(
        s1.todo_state,
        json!([{"title": "one", "status": "pending"}])
    );
    let s2 = store
        .snapshots()
        .record(&snap(Some(&plan[0].id), 9, None))
        .await
        .unwrap();
    let manual = store
        .snapshots()
        .record(&NewSnapshot {
            reason: SnapshotReason::Manual,
            ..snap(None, 9, None)
        })
        .await
        .unwrap();

    assert_eq!(store.snapshots().get(&s1.id).await.unwrap(), s1);
    assert_eq!(
        store.snapshots().list_for_todo(&plan[0].id).await.unwrap(),
        vec![s1.clone(), s2.clone()]
    );
    assert_eq!(
        store
            .snapshots()
            .latest_for_todo(&plan[0].id)
            .await
            .unwrap(),
        Some(s2.clone())
    );
    assert_eq!(
        store
            .snapshots()
            .latest_for_todo(&plan[1].id)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store.snapshots().list(e.id).await.unwrap(),
        vec![s1, s2, manual]
    );

    // A todo of another execution, hostile todo ids and unknown executions are refused.
    let mut foreign = snap(Some(&plan[0].id), 1, None);
    foreign.execution_id = other.id;
    assert!(matches!(
        store.snapshots().record(&foreign).await,
        Err(StoreError::NotFound { entity: "todo", .. })
    ));
    for hostile in hostile_ids() {
        let err = store
            .snapshots()
            .record(&snap(Some(&hostile), 1, None))
            .await
            .unwrap_err();
        assert_echoed_safely(&err);
        let err = store.snapshots().get(&hostile).await.unwrap_err();
        assert!(matches!(err, StoreError::NotFound { .. }));
        assert_echoed_safely(&err);
        assert!(
            store
                .snapshots()
                .list_for_todo(&hostile)
                .await
                .unwrap()
                .is_empty()
        );
    }
    let mut unknown = snap(None, 1, None);
    unknown.execution_id = ExecutionId::new();
    assert!(matches!(
        store.snapshots().record(&unknown).await,
        Err(StoreError::NotFound {
            entity: "execution",
            ..
        })
    ));
    assert!(matches!(
        store.snapshots().record(&snap(None, -1, None)).await,
        Err(StoreError::InvalidInput(_))
    ));
}

#[tokio::test]
async fn failures_are_recorded_and_resolved_exactly_once() {
    let (_dir, store) = common::temp_store().await;
    let c = conversation(&store).await;
    let e = execution(&store, c).await;
    let plan = store
        .plan()
        .replace_plan(e.id, &[todo("one", TodoStatus::InProgress)])
        .await
        .unwrap();
    let snapshot = store
        .snapshots()
        .record(&NewSnapshot {
            execution_id: e.id,
            todo_id: Some(plan[0].id.clone()),
            reason: SnapshotReason::TodoStart,
            message_seq: 0,
            todo_state: json!([]),
            workspace_archive: None,
        })
        .await
        .unwrap();
    let new = NewFailure {
        execution_id: e.id,
        todo_id: Some(plan[0].id.clone()),
        class: FailureClass::Logic,
        message: "the tool arguments stayed invalid".into(),
        details: json!({"attempts": 3}),
        snapshot_id: Some(snapshot.id.clone()),
        rolled_back: json!({"messages": 4, "files": ["a.rs"]}),
        suggested_actions: json!(["retry", "replan"]),
    };
    let failure = store.failures().record(&new).await.unwrap();
    assert_eq!(failure.class, FailureClass::Logic);
    assert_eq!(failure.rolled_back, new.rolled_back);
    assert_eq!(failure.suggested_actions, json!(["retry", "replan"]));
    assert_eq!(failure.resolution, None);
    assert_eq!(
        store.failures().list(e.id).await.unwrap(),
        vec![failure.clone()]
    );

    let resolved = store
        .failures()
        .resolve(&failure.id, Resolution::Replan)
        .await
        .unwrap();
    assert_eq!(resolved.resolution, Some(Resolution::Replan));
    assert_eq!(
        resolved.resolved_by,
        Some(decima_store::ResolvedBy::Analyst)
    );
    assert!(resolved.resolved_at.is_some());
    // The run's own answer is refused alike once the analyst answered, and changes nothing.
    let again = store
        .failures()
        .resolve_automatically(&failure.id, Resolution::Replan)
        .await
        .unwrap_err();
    assert!(matches!(again, StoreError::Conflict(_)), "{again}");
    let again = store
        .failures()
        .resolve(&failure.id, Resolution::Abort)
        .await
        .unwrap_err();
    assert!(matches!(again, StoreError::Conflict(_)), "{again}");
    assert!(again.to_string().contains("replan"), "{again}");
    assert_eq!(store.failures().get(&failure.id).await.unwrap(), resolved);

    for hostile in hostile_ids() {
        let err = store
            .failures()
            .resolve(&hostile, Resolution::Retry)
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::NotFound {
                    entity: "failure",
                    ..
                }
            ),
            "{err}"
        );
        assert_echoed_safely(&err);
        let err = store
            .failures()
            .record(&NewFailure {
                snapshot_id: Some(hostile.clone()),
                ..new.clone()
            })
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::NotFound {
                    entity: "snapshot",
                    ..
                }
            ),
            "{err}"
        );
        assert_echoed_safely(&err);
        let err = Resolution::parse(&hostile).unwrap_err();
        assert_echoed_safely(&err);
    }
    assert!(matches!(
        store
            .failures()
            .record(&NewFailure {
                suggested_actions: json!({"not": "a list"}),
                ..new.clone()
            })
            .await,
        Err(StoreError::InvalidInput(_))
    ));
    assert_eq!(store.failures().list(e.id).await.unwrap().len(), 1);
}
