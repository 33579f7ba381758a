//! MCP calls approved in the real app: a run calls a tool of the reference `server-everything`
//! (run on the host, installed by scripts/test.sh), the run's view asks, "Allow in this
//! conversation" runs it and is remembered (the next call of that tool is not asked), and
//! "Deny" refuses another tool while the run goes on, and an image the server returns is shown
//! on its result (decoded by WebKit under the app's content policy). Checked in the window and
//! in the SQLite file; then the settings show the run's start of the server (ready, 13 tools),
//! and a check starts it again and lists them.
//!
//! Needs a display (scripts/test.sh runs it under `xvfb-run -a`); without one it fails.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::PathBuf;

use decima_core::{NewMessage, Role};
use decima_mcp::{Place, ServerConfig};
use decima_store::Store;
use decima_testkit::{LlmServer, Reply, ScriptedToolCall, Turn};
use fantoccini::Locator;
use serde_json::json;
use support::{Driver, click, connect, count, shot, text_of, wait_for_text, wait_until};

fn call(id: &str, name: &str, arguments: serde_json::Value) -> Reply {
    Reply::Stream(Turn {
        tool_calls: vec![ScriptedToolCall {
            id: id.into(),
            name: name.into(),
            argument_chunks: vec![arguments.to_string()],
        }],
        ..Turn::default()
    })
}

fn everything_script() -> PathBuf {
    decima_testkit::mcp_servers::reference_server("server-everything")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_view_asks_before_an_mcp_call_and_remembers_the_answer() {
    let _alone = support::one_at_a_time().await;
    let data = tempfile::tempdir().unwrap();
    let db = data.path().join("decima.db");
    let server = LlmServer::start().await;
    server.enqueue(call(
        "call_a",
        "mcp__everything__echo",
        json!({"message": "first"}),
    ));
    server.enqueue(call(
        "call_b",
        "mcp__everything__echo",
        json!({"message": "second"}),
    ));
    server.enqueue(call(
        "call_c",
        "mcp__everything__get-sum",
        json!({"a": 2, "b": 3}),
    ));
    server.enqueue(call("call_d", "mcp__everything__get-tiny-image", json!({})));
    server.enqueue(Reply::Stream(Turn {
        text: vec!["Echoed twice; the sum was refused.".into()],
        ..Turn::default()
    }));
    {
        let store = Store::open_in_dir(data.path(), decima_llm::tokens::store_counter())
            .await
            .unwrap();
        store
            .providers()
            .create(support::provider("local", server.openai_base_url(), 32_000))
            .await
            .unwrap();
        store
            .conversations()
            .import(
                "Tools",
                None,
                &[NewMessage::new(Role::User, "Use the everything server.")],
            )
            .await
            .unwrap();
        let config = ServerConfig::stdio(
            "everything",
            "node",
            vec![everything_script().display().to_string(), "stdio".into()],
        )
        .at(Place::Host);
        decima_runtime::mcp::servers::add(&store, data.path(), &[config])
            .await
            .unwrap();
        store.close().await;
    }

    let driver = Driver::start();
    let client = connect(&driver, data.path()).await;
    click(&client, "[data-testid=conversation-title-button]").await;
    wait_for_text(
        &client,
        "[data-testid=message]",
        "Use the everything server.",
    )
    .await;
    let input = client
        .find(Locator::Css("[data-testid=composer-input]"))
        .await
        .unwrap();
    input
        .send_keys("Echo twice, then add\u{E007}")
        .await
        .unwrap();

    // The first call waits in the run's view.
    let prompt = wait_for_text(
        &client,
        "[data-testid=approval-prompt]",
        "everything wants to run echo",
    )
    .await;
    let said = prompt
        .prop("textContent")
        .await
        .unwrap()
        .unwrap_or_default();
    assert!(
        said.contains("only reads"),
        "the server's hint is shown: {said}"
    );
    assert!(
        said.contains("\"first\""),
        "the arguments are shown: {said}"
    );
    shot(&client, "mcp-approval.png").await;
    click(&client, "[data-testid=approval-conversation]").await;

    // The second echo runs without asking; the sum asks, and is denied.
    wait_for_text(
        &client,
        "[data-testid=approval-prompt]",
        "everything wants to run get-sum",
    )
    .await;
    click(&client, "[data-testid=approval-deny]").await;
    wait_for_text(
        &client,
        "[data-testid=approval-prompt]",
        "everything wants to run get-tiny-image",
    )
    .await;
    click(&client, "[data-testid=approval-once]").await;
    wait_until(&client, "the run did not finish", || async {
        count(&client, "[data-testid=stop]").await == 0
            && text_of(&client, "[data-testid=message-list]")
                .await
                .contains("the sum was refused")
    })
    .await;
    assert_eq!(count(&client, "[data-testid=approval-prompt]").await, 0);
    // The image is on its result in the history, decoded: the content policy let it through.
    wait_until(&client, "the tool's image was not shown", || async {
        count(
            &client,
            "[data-testid=message-list] [data-testid=tool-image]",
        )
        .await
            == 1
    })
    .await;
    wait_until(&client, "the tool's image was not decoded", || async {
        client
            .execute(
                "const i = document.querySelector('[data-testid=tool-image]'); \
                 return i !== null && i.complete && i.naturalWidth > 0;",
                vec![],
            )
            .await
            .is_ok_and(|v| v == json!(true))
    })
    .await;
    shot(&client, "mcp-image.png").await;

    let results: Vec<(String,)> = support::rows(
        &db,
        "SELECT content FROM messages WHERE role = 'tool' ORDER BY seq",
    )
    .await;
    let results: Vec<String> = results.into_iter().map(|(c,)| c).collect();
    assert_eq!(results.len(), 4, "{results:?}");
    assert_eq!(results[0], "Echo: first");
    assert_eq!(
        results[1], "Echo: second",
        "approved for the conversation: not asked again"
    );
    assert!(results[2].contains("the analyst refused"), "{}", results[2]);
    assert!(results[3].contains("[image 1: image/png"), "{}", results[3]);
    let kept: Vec<(String,)> = support::rows(&db, "SELECT media_type FROM message_images").await;
    assert_eq!(kept, [("image/png".to_owned(),)]);
    let approvals: Vec<(String, String, Option<String>)> = support::rows(
        &db,
        "SELECT server, tool, conversation_id FROM mcp_approvals",
    )
    .await;
    assert_eq!(approvals.len(), 1, "{approvals:?}");
    assert_eq!(
        (approvals[0].0.as_str(), approvals[0].1.as_str()),
        ("everything", "echo")
    );
    assert!(
        approvals[0].2.is_some(),
        "for this conversation, not always"
    );

    // The settings say how the run's start of the server went, then check it again.
    click(&client, "[data-testid=settings-button]").await;
    click(&client, "[data-testid=settings-tab-mcp]").await;
    let last = wait_for_text(
        &client,
        "[data-testid=mcp-server][data-name=everything] [data-testid=mcp-last]",
        "13 tools",
    )
    .await;
    assert_eq!(
        last.attr("data-state").await.unwrap().as_deref(),
        Some("ready")
    );
    click(
        &client,
        "[data-testid=mcp-server][data-name=everything] [data-testid=mcp-check]",
    )
    .await;
    wait_for_text(
        &client,
        "[data-testid=mcp-server][data-name=everything] [data-testid=mcp-state][data-state=ready]",
        "Ready: 13 tools",
    )
    .await;
    client
        .execute(
            "document.querySelector('[data-testid=mcp-server][data-name=everything]')\
             .scrollIntoView();",
            vec![],
        )
        .await
        .unwrap();
    shot(&client, "mcp-settings-checked.png").await;
    client.close().await.unwrap();
}
