//! The real app in WebKit: built with the UI embedded, driven through tauri-driver and
//! WebKitWebDriver, checked against the SQLite file it writes.
//!
//! Needs a display (scripts/test.sh runs it under `xvfb-run -a`) and `tauri-driver` on PATH or in
//! ~/.cargo/bin. Without them it fails with a message saying so: it never skips.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::time::{Duration, Instant};

use decima_core::{NewMessage, Role, ToolCall};
use decima_store::Store;
use fantoccini::Locator;
use support::{
    Driver, WAIT, attr, click, click_text, connect, shot, titles_in_file, wait_for_text,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_rename_and_read_conversations_in_the_real_app() {
    let _alone = support::one_at_a_time().await;
    let data = tempfile::tempdir().unwrap();
    let db = data.path().join("decima.db");

    // A conversation written by the store before the app starts: the app must show it.
    let seeded = {
        let store = Store::open_in_dir(data.path(), decima_llm::tokens::store_counter())
            .await
            .unwrap();
        let messages = [
            NewMessage::new(Role::User, "Which files are in /data/q3?"),
            NewMessage {
                reasoning: Some("List the directory first.".into()),
                tool_calls: vec![ToolCall {
                    id: "call_e2e".into(),
                    name: "shell".into(),
                    arguments: "{\"cmd\":\"ls /data/q3\"}".into(),
                    signature: None,
                }],
                ..NewMessage::new(Role::Assistant, "")
            },
            NewMessage {
                tool_call_id: Some("call_e2e".into()),
                ..NewMessage::new(Role::Tool, "invoices.csv\nledger.csv")
            },
        ];
        let c = store
            .conversations()
            .import("Seeded 种子 conversation", None, &messages)
            .await
            .unwrap();
        store.close().await;
        c.id
    };

    let driver = Driver::start();
    let client = connect(&driver, data.path()).await;

    // The seeded conversation is listed, and opening it shows its messages read-only.
    let seeded_item = format!("[data-testid=conversation-item][data-conversation-id='{seeded}']");
    wait_for_text(&client, &seeded_item, "Seeded 种子 conversation").await;

    // A new data directory is a new profile: English, whatever another profile chose (the
    // workbench test switches its own to Chinese).
    assert_eq!(attr(&client, "html", "lang").await.as_deref(), Some("en"));

    // The app's own X window shows the page (the blue of "New conversation"): WebDriver's
    // screenshots are drawn by WebKit for the test, so they would not notice a window left blank.
    // Without a GPU the app process runs with no OpenGL at all (src-tauri/graphics.rs): Mesa's
    // software rasterizer, with its libLLVM, is mapped only where WebKit paints.
    let accent = [0x2f, 0x62, 0xd6];
    let started = Instant::now();
    while support::screen_pixels_of(accent) < 1_000 {
        assert!(
            started.elapsed() < WAIT,
            "the app's window never showed the page on the X screen"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Linux's GPU-less setup only (`graphics` is Linux's module).
    #[cfg(target_os = "linux")]
    if !decima_desktop::graphics::has_render_node() {
        let app = support::mapped_files(support::app_pid(data.path()));
        let mesa: Vec<_> = app
            .iter()
            .filter(|f| f.contains("libLLVM") || f.contains("_dri.so"))
            .collect();
        assert!(mesa.is_empty(), "the app process mapped Mesa: {mesa:?}");
    }
    click_text(&client, &seeded_item, "Seeded 种子 conversation").await;
    wait_for_text(&client, "[data-testid=message]", "invoices.csv").await;
    let messages = client
        .find_all(Locator::Css("[data-testid=message]"))
        .await
        .unwrap();
    // The question, and the answer whose call and result are one card.
    assert_eq!(messages.len(), 2);
    assert_eq!(
        support::count(&client, "[data-testid=message] [data-testid=tool-result]").await,
        1,
        "the tool result shows on its call's card"
    );
    let page = client.source().await.unwrap();
    assert!(page.contains("call_e2e"), "tool calls are shown");

    // Create one through the UI.
    let title = "E2E quarterly review 季度复盘";
    let input = client
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css("[data-testid=new-conversation-title]"))
        .await
        .unwrap();
    input.send_keys(title).await.unwrap();
    click(&client, "[data-testid=new-conversation-submit]").await;
    let created = wait_for_text(&client, "[data-testid=conversation-item]", title).await;
    let created_id = created
        .attr("data-conversation-id")
        .await
        .unwrap()
        .expect("item carries its id");

    shot(&client, "conversation-created.png").await;

    // It is in the SQLite file, written by the app process.
    let rows = titles_in_file(&db).await;
    assert!(
        rows.iter()
            .any(|(t, deleted)| t == title && deleted.is_none()),
        "{rows:?}"
    );

    // Rename it through the UI; the file follows.
    created
        .find(Locator::Css("[data-testid=rename-conversation]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let rename = client
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css("[data-testid=rename-input]"))
        .await
        .unwrap();
    rename.clear().await.unwrap();
    rename.send_keys("Renamed in WebKit\u{E007}").await.unwrap(); // U+E007 is WebDriver's Enter key
    wait_for_text(
        &client,
        "[data-testid=conversation-item]",
        "Renamed in WebKit",
    )
    .await;
    let rows = titles_in_file(&db).await;
    assert!(
        rows.iter().any(|(t, _)| t == "Renamed in WebKit"),
        "{rows:?}"
    );
    assert!(!rows.iter().any(|(t, _)| t == title), "{rows:?}");

    // Delete it; the row stays in the file, soft-deleted.
    wait_for_text(
        &client,
        "[data-testid=conversation-item]",
        "Renamed in WebKit",
    )
    .await;
    click(
        &client,
        &format!(
            "[data-testid=conversation-item][data-conversation-id='{created_id}'] \
             [data-testid=delete-conversation]"
        ),
    )
    .await;
    client
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css("[data-testid=undo-delete]"))
        .await
        .unwrap();
    let started = Instant::now();
    loop {
        let rows = titles_in_file(&db).await;
        if rows
            .iter()
            .any(|(t, deleted)| t == "Renamed in WebKit" && deleted.is_some())
        {
            break;
        }
        assert!(
            started.elapsed() < WAIT,
            "soft delete never reached the file: {rows:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        client
            .find(Locator::Css(&format!(
                "[data-conversation-id='{created_id}']"
            )))
            .await
            .is_err(),
        "the deleted conversation left the list"
    );
    shot(&client, "conversation-deleted.png").await;

    client.close().await.unwrap();
    drop(driver);
}
