//! What the run history and the sidebar's nesting read from the store: a run's model calls and
//! tokens, which survive reads and start at zero for runs an older Decima stored, and the
//! parent conversation of a subagent's conversation.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use decima_core::{ConversationId, ExecutionId};
use decima_store::{CallUsage, Execution, NewExecution, RunUsage, SandboxKind, Store};

async fn execution(
    store: &Store,
    conversation: ConversationId,
    parent: Option<ExecutionId>,
) -> Execution {
    store
        .executions()
        .create(&NewExecution {
            conversation_id: conversation,
            parent_id: parent,
            depth: u32::from(parent.is_some()),
            task: "reconcile".into(),
            sandbox: SandboxKind::Host,
            provider_id: None,
            workspace: None,
            options: serde_json::json!({}),
        })
        .await
        .unwrap()
}

#[tokio::test]
async fn a_runs_calls_tokens_and_cache_figures_add_up_and_a_call_without_usage_still_counts() {
    let (_dir, store) = common::temp_store().await;
    let c = store.conversations().create("usage", None).await.unwrap();
    let other = store.conversations().create("other", None).await.unwrap();
    let run = execution(&store, c.id, None).await;
    let second = execution(&store, c.id, None).await;
    let elsewhere = execution(&store, other.id, None).await;
    assert_eq!(run.usage, RunUsage::default());
    let executions = store.executions();
    let call = |tokens_in, tokens_out, cache_read_tokens, cache_write_tokens| {
        Some(CallUsage {
            tokens_in,
            tokens_out,
            cache_read_tokens,
            cache_write_tokens,
        })
    };
    executions
        .add_model_call(run.id, call(1_200, 30, 0, 1_000), Some(4_200))
        .await
        .unwrap();
    executions.add_model_call(run.id, None, None).await.unwrap();
    executions
        .add_model_call(run.id, call(1_500, 12, 1_000, 200), Some(1_530))
        .await
        .unwrap();
    // A run on a provider without prices has no estimate: not "free".
    executions
        .add_model_call(second.id, call(2_000, 5, 1_800, 0), None)
        .await
        .unwrap();
    executions
        .add_model_call(elsewhere.id, call(9_999, 9, 9_000, 0), Some(99))
        .await
        .unwrap();
    let read = executions.get(run.id).await.unwrap();
    assert_eq!(
        read.usage,
        RunUsage {
            model_calls: 3,
            tokens_in: 2_700,
            tokens_out: 42,
            cache_read_tokens: 1_000,
            cache_write_tokens: 1_200,
            cost_microdollars: Some(5_730),
        }
    );
    assert_eq!(
        executions
            .get(second.id)
            .await
            .unwrap()
            .usage
            .cost_microdollars,
        None
    );
    assert_eq!(read.usage.cached_percent(), 37);
    // Each call is kept as it was reported, in order; the one without usage says so.
    let calls = executions.model_calls(run.id).await.unwrap();
    assert_eq!(calls.iter().map(|c| c.n).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(calls[1].usage, None);
    assert_eq!(calls[2].usage, call(1_500, 12, 1_000, 200));
    // A conversation's runs, summed; another conversation's are not in it.
    let whole = executions.conversation_usage(c.id).await.unwrap();
    assert_eq!(
        (whole.model_calls, whole.tokens_in, whole.cache_read_tokens),
        (4, 4_700, 2_800)
    );
    assert_eq!(whole.cached_percent(), 59);
    assert_eq!(whole.cost_microdollars, Some(5_730), "the priced runs' sum");
    let missing = ExecutionId::new();
    assert!(
        executions
            .add_model_call(missing, call(1, 1, 0, 0), None)
            .await
            .is_err()
    );
    assert!(executions.model_calls(missing).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_subagents_conversation_names_its_parent_and_others_name_none() {
    let (_dir, store) = common::temp_store().await;
    let parent = store
        .conversations()
        .create("Q3 ledger", None)
        .await
        .unwrap();
    let child = store.conversations().create("March", None).await.unwrap();
    let lone = store.conversations().create("other", None).await.unwrap();
    let top = execution(&store, parent.id, None).await;
    execution(&store, child.id, Some(top.id)).await;
    let listed = store.conversations().list().await.unwrap();
    let parent_of = |id: ConversationId| listed.iter().find(|c| c.id == id).unwrap().parent_id;
    assert_eq!(parent_of(child.id), Some(parent.id));
    assert_eq!(parent_of(parent.id), None);
    assert_eq!(parent_of(lone.id), None);
    assert_eq!(
        store.conversations().get(child.id).await.unwrap().parent_id,
        Some(parent.id)
    );
}

#[tokio::test]
async fn runs_an_older_decima_stored_read_zero_usage_after_the_upgrade() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("decima.db");
    let pool = common::database_at(&path, 20261202000000).await;
    sqlx::raw_sql(
        "INSERT INTO conversations (id, title, created_at, updated_at) \
         VALUES ('0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5ac1', 'old', 1, 1); \
         INSERT INTO executions (id, conversation_id, task, status, created_at, updated_at) \
         VALUES ('0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a01', '0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5ac1', \
                 'old run', 'succeeded', 2, 3);",
    )
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    let store = common::open(&path).await;
    let id: ExecutionId = "0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a01".parse().unwrap();
    let run = store.executions().get(id).await.unwrap();
    assert_eq!(run.usage, RunUsage::default());
    assert_eq!(run.task, "old run");
}
