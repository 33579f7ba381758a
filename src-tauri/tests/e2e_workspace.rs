//! The workspace in the real app, in WebKit: a CSV dropped on the conversation (a real XDND
//! drop from a GTK drag source, through the X server, as from a file manager) lands in its
//! workspace and is named to the agent with the next message; the chart the run's `shell`
//! call saves is shown on its tool card and in the workspace panel with the call that wrote
//! it; "save as" (GTK's own dialog, answered with a key press) writes the same bytes.
//!
//! Needs a display (scripts/test.sh runs it under `xvfb-run -a`), xdotool and python3-gi
//! (scripts/lib.sh installs them); without them it fails.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use decima_core::{NewMessage, Role};
use decima_store::Store;
use decima_testkit::{LlmServer, Reply, ScriptedToolCall, Turn};
use fantoccini::Locator;
use serde_json::json;
use support::{Driver, WAIT, click, connect, count, shot, text_of, wait_for_text, wait_until};

/// A 2×2 PNG: what the run's command saves as its chart.
const CHART_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==";

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

/// Drags `file` from a GTK window onto the screen point (`x`, `y`) with the mouse, through
/// the X server: the app sees the drop as from any file manager.
fn drop_file_at(file: &std::path::Path, x: i64, y: i64) {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/drag_source.py");
    // Debian's Python, which has GTK's bindings (python3-gi), whatever else is on PATH.
    let mut source = Command::new("/usr/bin/python3")
        .arg(&script)
        .arg(file)
        .args(["1080", "780"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3-gi is needed for the drag source (scripts/lib.sh installs it)");
    let mut line = String::new();
    BufReader::new(source.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let mut parts = line.split_whitespace().skip(1);
    let (sx, sy): (i64, i64) = (
        parts
            .next()
            .expect("the drag source never showed")
            .parse()
            .unwrap(),
        parts.next().unwrap().parse().unwrap(),
    );
    let xdotool = |args: &[String]| {
        let ok = Command::new("xdotool")
            .args(args)
            .status()
            .unwrap()
            .success();
        assert!(ok, "xdotool {args:?} failed");
    };
    xdotool(&["mousemove".into(), sx.to_string(), sy.to_string()]);
    std::thread::sleep(Duration::from_millis(300));
    xdotool(&["mousedown".into(), "1".into()]);
    // GTK starts a drag after the pointer moves past its threshold with the button held.
    for step in 1..=20 {
        let px = sx + (x - sx) * step / 20;
        let py = sy + (y - sy) * step / 20;
        xdotool(&["mousemove".into(), px.to_string(), py.to_string()]);
        std::thread::sleep(Duration::from_millis(60));
    }
    std::thread::sleep(Duration::from_millis(500));
    xdotool(&["mouseup".into(), "1".into()]);
    let started = Instant::now();
    while source.try_wait().unwrap().is_none() {
        if started.elapsed() > WAIT {
            let _ = source.kill();
            panic!("the drag never ended");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_csv_is_announced_and_the_chart_a_run_saves_is_shown_and_saved_as_the_same_bytes()
{
    let _alone = support::one_at_a_time().await;
    let data = tempfile::tempdir().unwrap();
    // No user-dirs.dirs: "save as" proposes the data folder's exports/.
    let config = tempfile::tempdir().unwrap();
    let db = data.path().join("decima.db");
    let server = LlmServer::start().await;
    let command = format!(
        "wc -l < 'q3 sales.csv' && printf '%s' '{CHART_PNG}' | base64 -d > chart.png && echo saved"
    );
    server.enqueue(call("call_chart", "shell", json!({ "command": command })));
    server.enqueue(Reply::Stream(Turn {
        text: vec!["Three regions; the chart is chart.png.".into()],
        ..Turn::default()
    }));
    let conversation = {
        let store = Store::open_in_dir(data.path(), decima_llm::tokens::store_counter())
            .await
            .unwrap();
        store
            .providers()
            .create(support::provider("local", server.openai_base_url(), 32_000))
            .await
            .unwrap();
        let c = store
            .conversations()
            .import(
                "Q3 regions",
                None,
                &[NewMessage::new(Role::User, "I will send the sales.")],
            )
            .await
            .unwrap();
        store.close().await;
        c.id
    };
    let outside = tempfile::tempdir().unwrap();
    let csv = outside.path().join("q3 sales.csv");
    let csv_bytes = "region,net\nNorth,1200.50\nSouth,800\nEast,950\n";
    std::fs::write(&csv, csv_bytes).unwrap();

    let driver = Driver::start_with_env(&[("XDG_CONFIG_HOME", config.path().to_str().unwrap())]);
    let client = connect(&driver, data.path()).await;
    click(&client, "[data-testid=conversation-title-button]").await;
    wait_for_text(&client, "[data-testid=message]", "I will send the sales.").await;
    wait_for_text(
        &client,
        "[data-testid=workspace-empty]",
        "No files written yet",
    )
    .await;

    // Drop the CSV on the conversation: where on the screen is its view?
    let at = client
        .execute(
            "const r = document.querySelector('[data-testid=message-list]').getBoundingClientRect(); \
             return [Math.round(window.screenX + r.left + r.width / 2), \
                     Math.round(window.screenY + r.top + r.height / 2)];",
            vec![],
        )
        .await
        .unwrap();
    let (x, y) = (at[0].as_i64().unwrap(), at[1].as_i64().unwrap());
    tokio::task::spawn_blocking(move || drop_file_at(&csv, x, y))
        .await
        .unwrap();
    wait_for_text(
        &client,
        "[data-testid=workspace-added]",
        "Added q3 sales.csv",
    )
    .await;
    wait_for_text(
        &client,
        "[data-testid=workspace-file][data-path='q3 sales.csv'] [data-testid=workspace-writer]",
        "added by you",
    )
    .await;
    let workspace = data
        .path()
        .join("workspaces")
        .join(conversation.to_string());
    assert_eq!(
        std::fs::read_to_string(workspace.join("q3 sales.csv")).unwrap(),
        csv_bytes
    );
    assert_eq!(count(&client, "[data-testid=drop-overlay]").await, 0);
    shot(&client, "workspace-dropped.png").await;

    // The next message names it; the run's call reads it and saves a chart.
    let input = client
        .find(Locator::Css("[data-testid=composer-input]"))
        .await
        .unwrap();
    input
        .send_keys("Chart net by region\u{E007}")
        .await
        .unwrap();
    wait_until(&client, "the run did not finish", || async {
        count(&client, "[data-testid=stop]").await == 0
            && text_of(&client, "[data-testid=message-list]")
                .await
                .contains("the chart is chart.png")
    })
    .await;
    // The notice went with the message that named the file.
    assert_eq!(count(&client, "[data-testid=workspace-added]").await, 0);
    let sent: Vec<(String,)> = support::rows(
        &db,
        "SELECT content FROM messages WHERE role = 'user' ORDER BY seq DESC LIMIT 1",
    )
    .await;
    assert_eq!(
        sent[0].0,
        "Chart net by region\n\n[Files I added to the workspace:\n- q3 sales.csv (44 bytes)]"
    );
    assert!(
        server
            .requests()
            .iter()
            .any(|r| String::from_utf8_lossy(&r.body).contains("- q3 sales.csv (44 bytes)")),
        "the model was told of the file"
    );
    let results: Vec<(String,)> =
        support::rows(&db, "SELECT content FROM messages WHERE role = 'tool'").await;
    assert!(results[0].0.contains("4\nsaved"), "{}", results[0].0);
    assert!(
        results[0].0.contains("written by this call as chart.png"),
        "{}",
        results[0].0
    );

    // The chart on its tool card, decoded.
    wait_until(&client, "the chart was not shown on its card", || async {
        client
            .execute(
                "const i = document.querySelector('[data-testid=message-list] [data-testid=tool-image]'); \
                 return i !== null && i.complete && i.naturalWidth === 2;",
                vec![],
            )
            .await
            .is_ok_and(|v| v == json!(true))
    })
    .await;
    // And in the panel, with the call that wrote it; its preview is the image.
    let row = "[data-testid=workspace-file][data-path='chart.png']";
    wait_for_text(
        &client,
        &format!("{row} [data-testid=workspace-writer]"),
        "written by shell",
    )
    .await;
    let writer = client
        .find(Locator::Css(&format!(
            "{row} [data-testid=workspace-writer]"
        )))
        .await
        .unwrap();
    assert_eq!(
        writer.attr("data-call-id").await.unwrap().as_deref(),
        Some("call_chart")
    );
    // Its writer brings the call's result into view, marked.
    click(&client, &format!("{row} [data-testid=workspace-writer]")).await;
    wait_for_text(
        &client,
        "[data-testid=message][data-highlighted=true]",
        "saved",
    )
    .await;
    click(&client, &format!("{row} [data-testid=workspace-file-open]")).await;
    wait_until(&client, "the chart's preview was not decoded", || async {
        client
            .execute(
                "const i = document.querySelector('[data-testid=workspace-preview-image]'); \
                 return i !== null && i.complete && i.naturalWidth === 2;",
                vec![],
            )
            .await
            .is_ok_and(|v| v == json!(true))
    })
    .await;
    shot(&client, "workspace-chart.png").await;

    // Save as: GTK's dialog proposes exports/chart.png; the copy is the same bytes.
    click(&client, "[data-testid=workspace-save-as]").await;
    tokio::task::spawn_blocking(|| support::accept_save_dialog("Save a copy of the file"))
        .await
        .unwrap();
    wait_for_text(&client, "[data-testid=workspace-saved]", "chart.png").await;
    let saved = std::fs::read(data.path().join("exports/chart.png")).unwrap();
    assert_eq!(saved, std::fs::read(workspace.join("chart.png")).unwrap());
    assert_eq!(
        saved,
        base64::engine::general_purpose::STANDARD
            .decode(CHART_PNG)
            .unwrap()
    );
    drop(driver);
}
