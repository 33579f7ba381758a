//! MCP servers, switches and approvals against a real SQLite file built from `migrations/`.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use decima_store::{McpServerRecord, StoreError};
use serde_json::json;

fn server(name: &str) -> McpServerRecord {
    McpServerRecord {
        name: name.into(),
        config: json!({"name": name, "transport": {"kind": "stdio", "command": "node",
                       "env": {"PGPASSWORD": ""}}}),
    }
}

#[tokio::test]
async fn servers_keep_their_order_and_a_taken_name_adds_nothing() {
    let (_dir, store) = common::temp_store().await;
    let repo = store.mcp_servers();
    repo.add(&[server("db"), server("files")]).await.unwrap();
    repo.add(&[server("tickets")]).await.unwrap();
    let names: Vec<String> = repo
        .list()
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["db", "files", "tickets"]);

    // One taken name in a batch: none of the batch is stored.
    let e = repo
        .add(&[server("notes"), server("db")])
        .await
        .unwrap_err();
    assert!(matches!(e, StoreError::Conflict(_)), "{e}");
    assert!(e.to_string().contains("\"db\" exists"), "{e}");
    assert_eq!(
        repo.list().await.unwrap().len(),
        3,
        "the batch left nothing"
    );

    assert!(repo.remove("files").await.unwrap());
    assert!(!repo.remove("files").await.unwrap());
    assert_eq!(repo.list().await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_configuration_holding_a_secret_value_is_refused() {
    let (_dir, store) = common::temp_store().await;
    let repo = store.mcp_servers();
    for config in [
        json!({"transport": {"kind": "stdio", "command": "x", "env": {"DB_URL": "postgres://u:pw@h/db"}}}),
        json!({"transport": {"kind": "http", "url": "http://h/mcp", "headers": {"X-Api": "k"}}}),
    ] {
        let e = store
            .mcp_servers()
            .add(&[McpServerRecord {
                name: "leaky".into(),
                config,
            }])
            .await
            .unwrap_err();
        assert!(e.to_string().contains("secret store"), "{e}");
    }
    assert!(repo.list().await.unwrap().is_empty());
}

#[tokio::test]
async fn switches_and_approvals_hold_per_conversation_or_always_and_go_with_the_server() {
    let (_dir, store) = common::temp_store().await;
    let a = store.conversations().create("A", None).await.unwrap();
    let b = store.conversations().create("B", None).await.unwrap();
    let repo = store.mcp_servers();
    repo.add(&[server("db")]).await.unwrap();

    repo.set_for_conversation(a.id, "db", false).await.unwrap();
    assert_eq!(repo.switched_off(a.id).await.unwrap(), ["db"]);
    assert!(repo.switched_off(b.id).await.unwrap().is_empty());
    repo.set_for_conversation(a.id, "db", true).await.unwrap();
    assert!(repo.switched_off(a.id).await.unwrap().is_empty());
    assert!(matches!(
        repo.set_for_conversation(a.id, "nope", false).await,
        Err(StoreError::NotFound { .. })
    ));

    assert!(!repo.approved("db", "query", a.id).await.unwrap());
    repo.approve("db", "query", Some(a.id)).await.unwrap();
    repo.approve("db", "query", Some(a.id)).await.unwrap();
    assert!(repo.approved("db", "query", a.id).await.unwrap());
    assert!(!repo.approved("db", "query", b.id).await.unwrap());
    repo.approve("db", "schema", None).await.unwrap();
    assert!(repo.approved("db", "schema", b.id).await.unwrap());

    repo.remove("db").await.unwrap();
    repo.add(&[server("db")]).await.unwrap();
    assert!(
        !repo.approved("db", "schema", b.id).await.unwrap(),
        "a server added again starts without the old approvals"
    );
}
