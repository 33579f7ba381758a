//! Importing a conversation from the window in the real app, through the system's open dialog:
//! a JSONL history (as `decima export --format jsonl` writes it) becomes a conversation titled
//! by the file's name and opens; a file with a broken line is refused beside the button, with
//! its line, and stores nothing. The dialog is GTK's own, answered through the X server
//! (xdotool): Ctrl+L, the file's path, Enter, as a person would type it.
//!
//! Needs a display (scripts/test.sh runs it under `xvfb-run -a`) and xdotool; without them it
//! fails.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use decima_testkit::ConversationBuilder;
use support::{Driver, WAIT, click, connect, rows, wait_for_text};

/// Finds the open dialog's X window by its title, gives it the keyboard, and types `file`
/// into its location field.
fn pick_in_open_dialog(file: &Path) {
    let started = Instant::now();
    let window = loop {
        // Visible windows only: GTK creates the dialog's window before it maps it, and an
        // unmapped window cannot take the keyboard.
        let found = Command::new("xdotool")
            .args(["search", "--onlyvisible", "--name", "Import a conversation"])
            .output()
            .expect("xdotool is needed to answer the open dialog (scripts/lib.sh installs it)");
        let ids = String::from_utf8_lossy(&found.stdout).trim().to_owned();
        if let Some(id) = ids.lines().last().filter(|id| !id.is_empty()) {
            break id.to_owned();
        }
        assert!(started.elapsed() < WAIT, "the open dialog never opened");
        std::thread::sleep(Duration::from_millis(200));
    };
    std::thread::sleep(Duration::from_millis(800));
    let xdotool = |args: &[&str]| {
        let ok = Command::new("xdotool").args(args).status().unwrap();
        assert!(ok.success(), "xdotool {args:?} failed");
    };
    // The window may still be settling: focus it until it takes the keyboard.
    let focused = (0..20).any(|_| {
        let ok = Command::new("xdotool")
            .args(["windowfocus", "--sync", &window])
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            std::thread::sleep(Duration::from_millis(200));
        }
        ok
    });
    assert!(focused, "cannot focus the open dialog");
    xdotool(&["key", "--clearmodifiers", "ctrl+l"]);
    std::thread::sleep(Duration::from_millis(300));
    xdotool(&[
        "type",
        "--clearmodifiers",
        "--delay",
        "20",
        file.to_str().unwrap(),
    ]);
    std::thread::sleep(Duration::from_millis(300));
    xdotool(&["key", "--clearmodifiers", "Return"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jsonl_history_picked_in_the_open_dialog_becomes_a_conversation_and_a_bad_one_does_not() {
    let _alone = support::one_at_a_time().await;
    let data = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let good = files.path().join("Q3 ledger review.jsonl");
    let built = ConversationBuilder::new(5, 300).build();
    std::fs::write(&good, built.to_jsonl()).unwrap();
    let bad = files.path().join("broken.jsonl");
    std::fs::write(
        &bad,
        "{\"role\":\"user\",\"content\":\"fine\"}\n{\"role\":\"user\",\"content\":\"cut off\n",
    )
    .unwrap();
    let config = tempfile::tempdir().unwrap();

    let driver = Driver::start_with_env(&[("XDG_CONFIG_HOME", config.path().to_str().unwrap())]);
    let client = connect(&driver, data.path()).await;
    wait_for_text(
        &client,
        "[data-testid=import-button]",
        "Import a conversation",
    )
    .await;

    click(&client, "[data-testid=import-button]").await;
    let picking = good.clone();
    tokio::task::spawn_blocking(move || pick_in_open_dialog(&picking))
        .await
        .unwrap();
    wait_for_text(
        &client,
        "[data-testid=conversation-title]",
        "Q3 ledger review",
    )
    .await;
    wait_for_text(
        &client,
        "[data-testid=conversation-item]",
        "Q3 ledger review",
    )
    .await;
    let db = data.path().join("decima.db");
    let stored: Vec<(String, i64)> = rows(
        &db,
        "SELECT c.title, COUNT(m.id) FROM conversations c JOIN messages m ON m.conversation_id = c.id \
         GROUP BY c.id",
    )
    .await;
    assert_eq!(stored, [("Q3 ledger review".to_owned(), 300)]);

    // A broken line: refused beside the button, with the file and the line; nothing stored.
    click(&client, "[data-testid=import-button]").await;
    let picking = bad.clone();
    tokio::task::spawn_blocking(move || pick_in_open_dialog(&picking))
        .await
        .unwrap();
    let notice = wait_for_text(&client, "[data-testid=import-notice]", "line 2").await;
    let said = notice.text().await.unwrap();
    assert!(said.contains("broken.jsonl"), "{said}");
    let count: Vec<(i64,)> = rows(&db, "SELECT COUNT(*) FROM conversations").await;
    assert_eq!(count, [(1,)]);
    support::shot(&client, "import-refused.png").await;
    client.close().await.unwrap();
}
