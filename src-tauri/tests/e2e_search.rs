//! Search in the real app: the sidebar finds a message deep in a 10,000-message conversation
//! through the store's index and opens the conversation there; find in the conversation counts
//! its matches; "go to" a message number and "Latest" jump without reading every page between.
//! Screenshots of the results, in English and Chinese, at 1,280 and 900 wide, land in
//! `target/e2e-artifacts/search-*.png`.
//!
//! Needs a display (scripts/test.sh runs it under `xvfb-run -a`); without one it fails.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use decima_core::{NewMessage, Role};
use decima_store::Store;
use decima_testkit::ConversationBuilder;
use fantoccini::Locator;
use support::{Driver, attr, click, connect, on_screen, shot, text_of, wait_for_text, wait_until};

const PLANTED: &str = "Pay the refund to IBAN DE44 5001 0517 5407 3249 31, not the old account.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_finds_a_message_deep_in_a_long_conversation_and_opens_it_there() {
    let _alone = support::one_at_a_time().await;
    let data = tempfile::tempdir().unwrap();
    let conversation = {
        let store = Store::open_in_dir(data.path(), decima_llm::tokens::store_counter())
            .await
            .unwrap();
        let mut messages = ConversationBuilder::new(11, 10_000).build().messages;
        messages[36] = NewMessage::new(Role::User, PLANTED);
        let c = store
            .conversations()
            .import("Ledger review", None, &messages)
            .await
            .unwrap();
        store
            .conversations()
            .import(
                "Vendor audit",
                None,
                &[NewMessage::new(
                    Role::User,
                    "Which vendors were paid twice?",
                )],
            )
            .await
            .unwrap();
        store.close().await;
        c.id
    };

    let driver = Driver::start();
    let client = connect(&driver, data.path()).await;
    wait_for_text(&client, "[data-testid=conversation-item]", "Ledger review").await;

    // The sidebar: no title holds the words, one message does, 9,964 messages up from the end.
    let search = client
        .find(Locator::Css("[data-testid=sidebar-search]"))
        .await
        .unwrap();
    search.send_keys("5407 3249").await.unwrap();
    let hit = wait_for_text(&client, "[data-testid=search-hit]", "Ledger review").await;
    let said = hit.prop("textContent").await.unwrap().unwrap_or_default();
    assert!(said.contains("#37") && said.contains("5407"), "{said}");
    assert_eq!(support::count(&client, "[data-testid=search-hit]").await, 1);
    assert_eq!(
        text_of(&client, "[data-testid=search-hit] mark").await,
        "5407",
        "the match is marked"
    );
    shot(&client, "search-sidebar-en-1280.png").await;
    hit.click().await.unwrap();

    let target = "[data-testid=message][data-seq='37']";
    wait_until(
        &client,
        "the hit's message was not brought into view",
        || async { on_screen(&client, target).await },
    )
    .await;
    assert_eq!(
        attr(&client, target, "data-highlighted").await.as_deref(),
        Some("true")
    );
    assert_eq!(
        attr(
            &client,
            "[data-testid=conversation-view]",
            "data-conversation-id"
        )
        .await,
        Some(conversation.to_string())
    );
    assert!(text_of(&client, target).await.contains("5407 3249 31"));
    // One page around it was read, not the 50 pages above the end.
    let loaded: usize = attr(&client, "[data-testid=message-list]", "data-count")
        .await
        .unwrap()
        .parse()
        .unwrap();
    assert!(loaded <= 400, "{loaded} messages loaded to show #37");
    shot(&client, "search-opened-en-1280.png").await;

    // Find in the conversation, through the index: one match.
    click(&client, "[data-testid=find-button]").await;
    let find = client
        .find(Locator::Css("[data-testid=find-input]"))
        .await
        .unwrap();
    find.send_keys("refund iban").await.unwrap();
    wait_for_text(&client, "[data-testid=find-count]", "1 of 1").await;

    // Go to the first message by its number, then to the latest.
    let go = client
        .find(Locator::Css("[data-testid=go-to-seq]"))
        .await
        .unwrap();
    go.send_keys("1\u{E007}").await.unwrap();
    wait_until(&client, "message #1 was not brought into view", || async {
        on_screen(&client, "[data-testid=message][data-seq='1']").await
    })
    .await;
    click(&client, "[data-testid=jump-to-end]").await;
    wait_until(
        &client,
        "the latest message was not brought into view",
        || async { on_screen(&client, "[data-testid=message-scroll] [data-seq='10000']").await },
    )
    .await;

    // A narrow window and the Chinese UI: the results still read.
    client.set_window_size(900, 700).await.unwrap();
    support::click_text(&client, "[data-testid=language-switch] button", "中文").await;
    wait_until(&client, "the UI did not switch to Chinese", || async {
        attr(&client, "html", "lang").await.as_deref() == Some("zh-CN")
    })
    .await;
    if attr(&client, ".app-body", "data-sidebar").await.as_deref() == Some("hidden") {
        click(&client, "[data-testid=sidebar-toggle]").await;
    }
    wait_for_text(&client, "[data-testid=search-hit]", "Ledger review").await;
    let scroll_width: i64 = client
        .execute(
            "return Math.max(document.documentElement.scrollWidth, document.body.scrollWidth) - window.innerWidth;",
            vec![],
        )
        .await
        .unwrap()
        .as_i64()
        .unwrap_or(1);
    assert!(
        scroll_width <= 0,
        "the page scrolls sideways by {scroll_width} px"
    );
    shot(&client, "search-sidebar-zh-900.png").await;
    client.close().await.unwrap();
}
