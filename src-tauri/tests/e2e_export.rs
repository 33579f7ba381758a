//! Exporting from a fresh data folder in the real app, through the system's save dialog: the
//! dialog opens in a folder that exists (the data folder's `exports/`, made for it, when the
//! desktop names no documents folder), proposes the title and the date as the name, and the
//! file it accepts is written there. The dialog is GTK's own, answered with a real key press
//! through the X server (xdotool), as a person would.
//!
//! Needs a display (scripts/test.sh runs it under `xvfb-run -a`) and xdotool; without them it
//! fails.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use decima_core::{NewMessage, Role};
use decima_store::Store;
use support::{Driver, click, connect, wait_for_text};

const TITLE: &str = "Q3 invoices: ledger check";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_data_folder_exports_through_the_save_dialogs_default_place() {
    let _alone = support::one_at_a_time().await;
    let data = tempfile::tempdir().unwrap();
    // No user-dirs.dirs: the desktop names no documents folder, so the dialog starts in the
    // data folder's exports/, which a fresh data folder does not have yet.
    let config = tempfile::tempdir().unwrap();
    let conversation = {
        let store = Store::open_in_dir(data.path(), decima_llm::tokens::store_counter())
            .await
            .unwrap();
        let messages = [
            NewMessage::new(Role::User, "Which invoices do not match the ledger?"),
            NewMessage::new(Role::Assistant, "INV-2026-000123 differs by 500.00 EUR."),
        ];
        let c = store
            .conversations()
            .import(TITLE, None, &messages)
            .await
            .unwrap();
        store.close().await;
        c.id
    };
    let exports = data.path().join("exports");
    assert!(!exports.exists(), "the data folder starts without exports/");

    let driver = Driver::start_with_env(&[("XDG_CONFIG_HOME", config.path().to_str().unwrap())]);
    let client = connect(&driver, data.path()).await;
    let item = format!("[data-testid=conversation-item][data-conversation-id='{conversation}']");
    wait_for_text(&client, &item, TITLE).await;
    click(
        &client,
        &format!("{item} [data-testid=conversation-title-button]"),
    )
    .await;
    wait_for_text(&client, "[data-testid=conversation-title]", TITLE).await;

    click(&client, "[data-testid=export-button]").await;
    click(&client, "[data-testid=export-md]").await;
    tokio::task::spawn_blocking(|| support::accept_save_dialog("Export the conversation"))
        .await
        .unwrap();

    let done = wait_for_text(
        &client,
        "[data-testid=export-done]",
        "2 messages written to",
    )
    .await;
    let said = done.text().await.unwrap();
    let written: Vec<_> = std::fs::read_dir(&exports)
        .expect("exports/ was made for the dialog")
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(written.len(), 1, "{written:?}");
    let file = &written[0];
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    // The title made safe for a file name, then the date: not the conversation's id.
    assert!(
        name.starts_with("Q3 invoices ledger check 20") && name.ends_with(".md"),
        "{name}"
    );
    assert!(!name.contains(&conversation.to_string()), "{name}");
    assert!(
        said.contains(&name),
        "the window names the file it wrote: {said}"
    );
    let text = std::fs::read_to_string(file).unwrap();
    // The answer's one figure is marked, and its footnote says no tool output holds it (the
    // invoice number is an id, not a figure).
    assert!(
        text.contains("INV-2026-000123 differs by 500.00 EUR[^f2-1]."),
        "{text}"
    );
    assert!(
        text.contains("[^f2-1]: 500.00 EUR — unlinked: no tool output before it holds this value"),
        "{text}"
    );
    assert!(!text.contains("[^f2-2]"), "{text}");
    // What to do with it next.
    wait_for_text(&client, "[data-testid=export-open]", "Open").await;
    wait_for_text(&client, "[data-testid=export-reveal]", "Show in folder").await;
    client.close().await.unwrap();
}
