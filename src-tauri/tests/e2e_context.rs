//! The context meter and the compression dialog in the real app, in WebKit through
//! tauri-driver, against the wire-level test server and a real SQLite file: a conversation
//! seeded to about 60% of the window crosses 70% after one run and 85% after another (the
//! answers are long), then is compressed through the dialog (preview, confirm) and the
//! compression undone from the notice that is in sight right after confirming, then compressed
//! again and undone from its marker in the list (scrolled up to, as the list is virtualized),
//! with the file checked after each step.
//! Screenshots go to `target/e2e-artifacts/`.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use decima_core::{NewMessage, Role};
use decima_store::Store;
use decima_testkit::{LlmServer, Reply, Turn};
use fantoccini::{Client, Locator};
use serde_json::json;
use support::{
    Driver, attr, click, click_text, connect, count, on_screen, shot, text_of, wait_for_text,
    wait_until,
};

const WINDOW: u32 = 32_000;

fn say(text: String) -> Reply {
    Reply::Stream(Turn {
        text: vec![text],
        ..Turn::default()
    })
}

async fn usage(store: &Store, id: decima_core::ConversationId) -> f64 {
    let conversation = store.conversations().get(id).await.unwrap();
    let preset = decima_runtime::context::preset_of(store, &conversation)
        .await
        .unwrap();
    let window = decima_runtime::settings::window_settings(store, Some("local"))
        .await
        .unwrap();
    let scale = decima_runtime::settings::calibration_scale(store, Some("local"))
        .await
        .unwrap();
    decima_runtime::context::build(store, &conversation, &preset, &window, scale)
        .await
        .unwrap()
        .report
        .usage
}

async fn meter(client: &Client) -> (Option<f64>, Option<String>) {
    let css = "[role=meter][data-testid=context-usage]";
    (
        attr(client, css, "aria-valuenow")
            .await
            .and_then(|v| v.parse().ok()),
        attr(client, css, "data-state").await,
    )
}

/// How many rows the message list holds, rendered or not (it is virtualized).
async fn list_rows(client: &Client) -> Option<usize> {
    attr(client, "[data-testid=message-list]", "data-count")
        .await
        .and_then(|n| n.parse().ok())
}

async fn saved_settings(db: &std::path::Path) -> Option<serde_json::Value> {
    let saved: Vec<(String,)> =
        support::rows(db, "SELECT value FROM app_settings WHERE key = 'workbench'").await;
    saved
        .first()
        .map(|(text,)| serde_json::from_str(text).unwrap())
}

async fn compactions(db: &std::path::Path) -> Vec<(String, Option<i64>)> {
    support::rows(
        db,
        "SELECT id, undone_at FROM compactions ORDER BY created_at",
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_meter_crosses_70_and_85_percent_then_compression_is_previewed_confirmed_and_undone() {
    let _alone = support::one_at_a_time().await;
    let data = tempfile::tempdir().unwrap();
    let db = data.path().join("decima.db");
    let server = LlmServer::start().await;
    // Each run answers at once with a long text; reviews find nothing.
    server.respond_with(|request| {
        let system = request
            .json
            .as_ref()
            .and_then(|j| j["messages"][0]["content"].as_str().map(str::to_owned))
            .unwrap_or_default();
        if system.contains("You are the tenth man") {
            return say(
                json!({"risk_level": "none", "summary": "Nothing against it.", "findings": [], "open_questions": []})
                    .to_string(),
            );
        }
        let task = request
            .json
            .as_ref()
            .and_then(|j| j["messages"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .and_then(|m| m["content"].as_str().map(str::to_owned))
            .unwrap_or_default();
        let words = if task.contains("second") { 1_500 } else { 700 };
        // Numbered lines: a long answer, not one line said over and over (which Decima ends
        // early as a loop).
        let lines: String = (0..words).map(|n| format!("reconciled line {n} ")).collect();
        say(format!("Ledger notes: {lines}"))
    });

    // A conversation seeded to about 60% of what the prompt may use.
    let conversation = {
        let store = Store::open_in_dir(data.path(), decima_llm::tokens::store_counter())
            .await
            .unwrap();
        store
            .providers()
            .create(support::provider("local", server.openai_base_url(), WINDOW))
            .await
            .unwrap();
        // A second provider: with two, the window must be told which one runs use.
        store
            .providers()
            .create(support::provider(
                "spare",
                "http://127.0.0.1:9/v1".into(),
                4_000,
            ))
            .await
            .unwrap();
        let c = store
            .conversations()
            .create("Long notes 长笔记", None)
            .await
            .unwrap();
        let mut i = 0;
        while usage(&store, c.id).await < 0.60 {
            let batch: Vec<NewMessage> = (0..20)
                .map(|k| {
                    i += 1;
                    let role = if k % 2 == 0 { Role::User } else { Role::Assistant };
                    NewMessage::new(
                        role,
                        format!(
                            "Note {i}: region R-{} reconciles against the ledger; the totals match the bank statement for the quarter, line by line, with the refunds netted out.",
                            i % 53
                        ),
                    )
                })
                .collect();
            store.messages().append_many(c.id, &batch).await.unwrap();
        }
        let seeded = usage(&store, c.id).await;
        assert!(seeded < 0.70, "seeded at {seeded}");
        store.close().await;
        c.id
    };

    let driver = Driver::start();
    let client = connect(&driver, data.path()).await;
    click_text(&client, "[data-testid=conversation-item]", "Long notes").await;
    // Two providers and no choice yet: the meter cannot know the window, and says where to
    // choose, in its own place rather than in a banner.
    wait_for_text(
        &client,
        "[data-testid=context-no-provider]",
        "Choose a default provider in Settings",
    )
    .await;
    assert_eq!(
        support::count(&client, "[data-testid=error-banner]").await,
        0
    );
    click(&client, "[data-testid=settings-button]").await;
    click(&client, "[data-testid=settings-tab-runs]").await;
    let select = wait_for_text(&client, "[data-testid=run-provider]", "spare").await;
    select.select_by_value("local").await.unwrap();
    wait_for_text(&client, "[data-testid=run-settings-saved]", "Saved").await;
    shot(&client, "settings-run-provider.png").await;
    // About names this build: the release, the commit and the day, as `decima --version` does.
    let about = decima_desktop::AppAbout::current();
    wait_for_text(
        &client,
        "[data-testid=settings-about]",
        &format!(
            "Decima {}, commit {}, built {}",
            about.version, about.commit, about.built
        ),
    )
    .await;
    assert_eq!(about.version, env!("CARGO_PKG_VERSION"));
    click(&client, "[data-testid=settings-close]").await;
    assert_eq!(
        saved_settings(&db).await,
        Some(json!({"provider": "local", "reviewer_provider": null, "sandbox": "host"})),
        "the choice is in the SQLite file"
    );
    wait_until(
        &client,
        "the meter never showed the seeded usage",
        || async { meter(&client).await.1.as_deref() == Some("ok") },
    )
    .await;
    let (start, _) = meter(&client).await;
    assert!(start.unwrap() >= 55.0, "seeded near 60%: {start:?}");

    // A run whose long answer pushes the context over 70%.
    let run = |task: &'static str| {
        let client = &client;
        async move {
            client
                .find(Locator::Css("[data-testid=composer-input]"))
                .await
                .unwrap()
                .send_keys(task)
                .await
                .unwrap();
            click(client, "[data-testid=send]").await;
            wait_until(client, "the run did not end", || async {
                client
                    .find(Locator::Css("[data-testid=stop]"))
                    .await
                    .is_err()
                    && client
                        .find(Locator::Css("[data-testid=send]"))
                        .await
                        .is_ok()
            })
            .await;
        }
    };
    run("Write the first ledger notes").await;
    wait_until(&client, "the meter did not cross 70%", || async {
        meter(&client).await.1.as_deref() == Some("warn")
    })
    .await;
    let (warn, _) = meter(&client).await;
    assert!((70.0..85.0).contains(&warn.unwrap()), "{warn:?}");
    assert!(
        client
            .find(Locator::Css("[data-testid=context-warning]"))
            .await
            .is_ok(),
        "a warning at 70% offers compression"
    );
    shot(&client, "context-70.png").await;

    // Another pushes it over 85%; the answer is the run's last message, so nothing compressed
    // it before the next request.
    run("Write the second ledger notes").await;
    wait_until(&client, "the meter did not cross 85%", || async {
        matches!(
            meter(&client).await.1.as_deref(),
            Some("compress") | Some("deep")
        )
    })
    .await;
    let (high, _) = meter(&client).await;
    assert!(high.unwrap() >= 85.0, "{high:?}");
    shot(&client, "context-85.png").await;
    assert!(compactions(&db).await.is_empty(), "nothing compressed yet");

    // Preview: the dialog shows what compression keeps; nothing is stored.
    click(&client, "[data-testid=context-compress]").await;
    wait_until(&client, "the compression dialog never opened", || async {
        client
            .find(Locator::Css("[role=dialog][aria-label='Compress context']"))
            .await
            .is_ok()
    })
    .await;
    click(&client, "[data-testid=compress-preview]").await;
    wait_for_text(&client, "[data-testid=compress-tokens]", "→").await;
    assert!(
        !client
            .find_all(Locator::Css("[data-testid=compress-summary]"))
            .await
            .unwrap()
            .is_empty(),
        "the preview shows each summary's text"
    );
    shot(&client, "compress-preview.png").await;
    assert!(
        compactions(&db).await.is_empty(),
        "a preview stores nothing"
    );

    // Confirm: one compaction in force, a notice with Undo in sight at once (nothing is
    // scrolled to find it), a marker where its summary stands, the usage down.
    let rows_before = list_rows(&client).await.unwrap();
    click(&client, "[data-testid=compress-confirm]").await;
    let notice = "[data-testid=compaction-notice]";
    let notice_undo = "[data-testid=compaction-notice] [data-testid=compaction-notice-undo]";
    wait_until(
        &client,
        "no notice with Undo in sight after confirming",
        || async { on_screen(&client, notice).await && on_screen(&client, notice_undo).await },
    )
    .await;
    let said = text_of(&client, notice).await;
    assert!(
        said.contains("The context was compressed ("),
        "the notice says what was saved: {said:?}"
    );
    let stored = compactions(&db).await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].1, None, "in force");
    // The list gains one row, the marker, wherever the view is: the list is virtualized, so
    // the marker is in the page only near the view, and the reader scrolls up to it.
    wait_until(&client, "the list gained no marker row", || async {
        list_rows(&client).await == Some(rows_before + 1)
    })
    .await;
    let marker = "[data-testid=compaction-marker]";
    if !support::scroll_up_to(&client, marker).await {
        support::save_failure_artifacts(&client).await;
        panic!("no marker in the list above the view");
    }
    // It stands where its summary ends: after the last message it covers, before the first
    // it does not.
    let (end_seq,): (i64,) = support::rows(
        &db,
        &format!(
            "SELECT MAX(end_seq) FROM summaries WHERE compaction_id = '{}'",
            stored[0].0
        ),
    )
    .await[0];
    let around: serde_json::Value = client
        .execute(
            "const m = document.querySelector(arguments[0]);
             const at = Number(m.dataset.index);
             const seq = (i) => {
                 const li = document.querySelector(`[data-testid=message-list] > [data-index='${i}']`);
                 return li && li.dataset.seq ? Number(li.dataset.seq) : null;
             };
             return [seq(at - 1), seq(at + 1)];",
            vec![json!(marker)],
        )
        .await
        .unwrap();
    let (before, after) = (around[0].as_i64(), around[1].as_i64());
    assert!(
        before.is_some_and(|s| s <= end_seq) && after.is_some_and(|s| s > end_seq),
        "the marker of a summary ending at #{end_seq} stands between #{before:?} and #{after:?}"
    );
    wait_until(
        &client,
        "the meter did not fall after compression",
        || async { meter(&client).await.0.is_some_and(|v| v < high.unwrap()) },
    )
    .await;
    assert!(
        on_screen(&client, notice_undo).await,
        "the notice stays until it is answered"
    );
    shot(&client, "compressed.png").await;

    // Undo from the notice: the compaction is undone in the file, the notice and the marker
    // go, the usage is back.
    click(&client, notice_undo).await;
    wait_until(&client, "the notice stayed after its Undo", || async {
        count(&client, notice).await == 0
    })
    .await;
    wait_until(&client, "the marker stayed after undo", || async {
        list_rows(&client).await == Some(rows_before)
            && count(&client, "[data-testid=compaction-marker]").await == 0
    })
    .await;
    let undone = compactions(&db).await;
    assert!(undone[0].1.is_some(), "undone in the file: {undone:?}");
    wait_until(
        &client,
        "the usage did not come back after undo",
        || async { meter(&client).await.0 == high },
    )
    .await;

    // Again, undone this time from the marker in the list; its notice goes with it.
    click(&client, "[data-testid=context-compress]").await;
    click(&client, "[data-testid=compress-preview]").await;
    wait_for_text(&client, "[data-testid=compress-tokens]", "→").await;
    click(&client, "[data-testid=compress-confirm]").await;
    wait_until(
        &client,
        "no notice after the second compression",
        || async { on_screen(&client, notice_undo).await },
    )
    .await;
    wait_until(
        &client,
        "no marker after the second compression",
        || async { list_rows(&client).await == Some(rows_before + 1) },
    )
    .await;
    if !support::scroll_up_to(&client, marker).await {
        support::save_failure_artifacts(&client).await;
        panic!("no marker in the list above the view after the second compression");
    }
    click(&client, "[data-testid=compaction-undo]").await;
    wait_until(
        &client,
        "the marker or the notice stayed after undo from the marker",
        || async {
            list_rows(&client).await == Some(rows_before)
                && count(&client, marker).await == 0
                && count(&client, notice).await == 0
        },
    )
    .await;
    let undone = compactions(&db).await;
    assert_eq!(undone.len(), 2);
    assert!(
        undone.iter().all(|(_, at)| at.is_some()),
        "both undone in the file: {undone:?}"
    );
    wait_until(
        &client,
        "the usage did not come back after the second undo",
        || async { meter(&client).await.0 == high },
    )
    .await;
    let _ = conversation;
    client.close().await.unwrap();
    drop(driver);
}
