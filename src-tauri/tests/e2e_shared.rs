//! The real app on a team's shared PostgreSQL database (the tests' own cluster): it opens the
//! database `DECIMA_DATABASE_URL` names, Settings says which store is open and that the
//! environment chose it, and messages another desktop stores in the open conversation appear
//! as the database announces them, each well within the window's own 4 s re-read. Screenshots
//! of Settings, in English and Chinese at 1,280 and 900 wide, land in
//! `target/e2e-artifacts/shared-settings-*.png`.
//!
//! Needs a display (scripts/test.sh runs it under `xvfb-run -a`) and the tests' PostgreSQL
//! (`DECIMA_TEST_POSTGRES_URL`, which scripts/test.sh starts); without them it fails.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::time::{Duration, Instant};

use decima_core::{NewMessage, Role};
use decima_store::{Store, StoreLocation};
use support::{Driver, click, connect, shot, wait_for_text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_window_opens_the_shared_database_and_shows_another_desktops_messages_as_they_land() {
    let _alone = support::one_at_a_time().await;
    let url = decima_testkit::postgres::fresh_database("e2e_shared").await;
    let location = StoreLocation::parse(&url).unwrap();
    Store::migrate(&location).await.unwrap();
    let other_desk = Store::connect(&location, decima_llm::tokens::store_counter())
        .await
        .unwrap();
    let conversation = other_desk
        .conversations()
        .import(
            "Team ledger",
            None,
            &[NewMessage::new(Role::User, "Reconcile the Q3 ledger")],
        )
        .await
        .unwrap()
        .id;

    let data = tempfile::tempdir().unwrap();
    let driver = Driver::start_with_env(&[("DECIMA_DATABASE_URL", url.as_str())]);
    let client = connect(&driver, data.path()).await;
    wait_for_text(&client, "[data-testid=conversation-item]", "Team ledger").await;
    assert!(
        !data.path().join("decima.db").exists(),
        "the window did not open a local file"
    );

    // Settings names the open database, and that the environment chose it. Seen at two sizes
    // and in both languages: the section fits the dialog without sideways scrolling.
    for (lang, switch, open_text) in [
        (
            "en",
            None,
            "This window uses the shared database postgres://",
        ),
        ("zh", Some("中文"), "此窗口使用共享数据库 postgres://"),
    ] {
        if let Some(label) = switch {
            support::click_text(&client, "[data-testid=language-switch] button", label).await;
        }
        click(&client, "[data-testid=settings-button]").await;
        click(&client, "[data-testid=settings-tab-store]").await;
        wait_for_text(&client, "[data-testid=shared-database-open]", open_text).await;
        wait_for_text(
            &client,
            "[data-testid=shared-database-env]",
            "DECIMA_DATABASE_URL=",
        )
        .await;
        for (width, height) in [(1280u32, 800u32), (900, 700)] {
            client.set_window_size(width, height).await.unwrap();
            tokio::time::sleep(Duration::from_millis(300)).await;
            let overflow = client
                .execute(
                    "const s = document.querySelector('[data-testid=shared-database]');\
                     s.scrollIntoView({block: 'center'});\
                     const d = s.closest('[role=dialog]') || document.body;\
                     return d.scrollWidth - d.clientWidth;",
                    vec![],
                )
                .await
                .unwrap()
                .as_f64()
                .unwrap();
            assert!(
                overflow <= 0.5,
                "Settings scrolls sideways by {overflow} px, {lang} at {width}"
            );
            shot(&client, &format!("shared-settings-{lang}-{width}.png")).await;
        }
        click(&client, "[data-testid=settings-close]").await;
    }
    support::click_text(&client, "[data-testid=language-switch] button", "EN").await;
    // Wide again: at 900 the sidebar folds away.
    client.set_window_size(1280, 800).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;

    click(&client, "[data-testid=conversation-item]").await;
    wait_for_text(&client, "[data-testid=message]", "Reconcile the Q3 ledger").await;

    // Three messages from the other desk, one at a time: each must be on screen well within
    // the 4 s the window would take to notice it by re-reading on its own. By chance alone,
    // the re-read would land that soon after all three about one time in twenty.
    let mut latencies = Vec::new();
    for i in 1..=3 {
        let text = format!("From Bea's desk, note {i}: the FX rate is 1.0842");
        let started = Instant::now();
        other_desk
            .messages()
            .append(conversation, NewMessage::new(Role::User, text.clone()))
            .await
            .unwrap();
        wait_for_text(&client, "[data-testid=message]", &text).await;
        latencies.push(started.elapsed());
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
    eprintln!("another desktop's message on screen after {latencies:?}");
    for latency in &latencies {
        assert!(
            *latency < Duration::from_millis(1_500),
            "a message took {latency:?} to appear: {latencies:?}"
        );
    }

    client.close().await.unwrap();
    other_desk.close().await;
}
