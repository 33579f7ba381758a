//! What a call wrote to the workspace: a chart a `shell` command saved is kept with the call's
//! result (named in its text, stored with it for the window), and every file a call created
//! or changed is logged with the call's id.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::Fixture;
use decima_runtime::agent::RunOptions;
use decima_store::ExecutionStatus;
use serde_json::json;

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

#[tokio::test]
async fn a_chart_a_command_saved_is_kept_with_its_result_and_every_write_is_logged() {
    let f = Fixture::new().await;
    std::fs::write(f.workspace().join("before.txt"), "there already").unwrap();
    f.call(
        "shell",
        json!({"command": format!("mkdir -p out && printf '%s' '{PNG}' | base64 -d > out/chart.png && echo drawn")}),
    );
    f.call(
        "write_file",
        json!({"path": "notes.md", "content": "# Notes\n"}),
    );
    f.call("shell", json!({"command": "cat before.txt"}));
    f.say("Drawn.");
    let outcome = f.run("Chart it", RunOptions::default()).await;
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);

    let chart = f.last_tool_result(1);
    assert!(
        chart.starts_with("drawn") || chart.contains("drawn"),
        "{chart}"
    );
    assert!(
        chart.contains("[image 1: image/png, 70 bytes, written by this call as out/chart.png]"),
        "{chart}"
    );
    let notes = f.last_tool_result(2);
    assert!(!notes.contains("[image"), "{notes}");
    let read = f.last_tool_result(3);
    assert!(!read.contains("[image"), "{read}");

    // The step history keeps which call made which file; the read wrote nothing.
    let view = decima_runtime::agent::view(&f.store, outcome.execution.id)
        .await
        .unwrap();
    let supervision: Vec<&str> = view
        .steps
        .iter()
        .filter(|s| s.kind == "supervision")
        .map(|s| s.content.as_str())
        .collect();
    assert_eq!(
        &supervision[..3],
        [
            "shell exit 0, wrote out/chart.png",
            "write_file ok, wrote notes.md",
            "shell exit 0"
        ],
        "{supervision:?}"
    );

    // Kept with the result (an OpenAI-compatible model reads the text; the window shows it).
    let (_, kept) = f
        .result_with_images(&outcome, "written by this call as out/chart.png")
        .await;
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].media_type, "image/png");
    assert_eq!(&*kept[0].data, PNG);

    // Which call wrote which file: the chart by the first, the notes by the second; the
    // third wrote nothing, and the file that was there before is nobody's.
    let events = f
        .store
        .events()
        .execution_after(outcome.execution.id, 0, 1000)
        .await
        .unwrap();
    let changes: Vec<(String, Vec<String>)> = events
        .iter()
        .filter(|e| e.kind == "workspace.changed")
        .map(|e| {
            (
                e.payload["name"].as_str().unwrap().to_owned(),
                e.payload["files"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| f["path"].as_str().unwrap().to_owned())
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        changes,
        [
            ("shell".to_owned(), vec!["out/chart.png".to_owned()]),
            ("write_file".to_owned(), vec!["notes.md".to_owned()]),
        ]
    );
}

#[tokio::test]
async fn a_long_run_shows_an_anthropic_model_only_its_newest_twenty_images() {
    let f = Fixture::new().await;
    f.add_provider("claude", "anthropic", "claude-sonnet-4-5", 200_000)
        .await;
    // More charts than a request may show: one per step, 24 of them.
    for i in 0..24 {
        f.call(
            "shell",
            json!({"command": format!("printf '%s' '{PNG}' | base64 -d > chart-{i:02}.png")}),
        );
    }
    f.say("Drawn.");
    let outcome = decima_runtime::agent::run(
        &decima_runtime::agent::Session {
            provider: Some("claude"),
            ..f.session(&decima_runtime::agent::StopOnFailure)
        },
        decima_runtime::agent::RunRequest {
            conversation: None,
            workspace: Some(f.workspace()),
            task: "Chart every month".into(),
            sandbox: decima_store::SandboxKind::Host,
            options: RunOptions {
                tenth_man: decima_runtime::review::TenthManMode::Off,
                ..RunOptions::default()
            },
        },
    )
    .await
    .unwrap();
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    let requests = f.server.requests();
    let last = requests.last().unwrap().json.as_ref().unwrap();
    let results: Vec<&serde_json::Value> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
        .filter(|b| b["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 24);
    let shown: Vec<usize> = results
        .iter()
        .map(|r| {
            r["content"].as_array().map_or(0, |blocks| {
                blocks.iter().filter(|b| b["type"] == "image").count()
            })
        })
        .collect();
    // The four oldest results are text (naming their files); the newest twenty show theirs.
    assert_eq!(shown[..4], [0, 0, 0, 0], "{shown:?}");
    assert!(shown[4..].iter().all(|&n| n == 1), "{shown:?}");
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .contains("written by this call as chart-00.png"),
        "{}",
        results[0]
    );
    // A request earlier in the run, with fewer than twenty, shows every one it carries.
    let early = requests[3].json.as_ref().unwrap().to_string();
    assert_eq!(early.matches("\"type\":\"image\"").count(), 3);
}

/// A chart saved as SVG (matplotlib's `savefig("x.svg")`) is kept for the window's card, and
/// an Anthropic model, which takes no SVG, is not shown it: it reads the text naming the file.
#[tokio::test]
async fn an_svg_chart_is_kept_for_the_window_and_never_shown_to_a_model() {
    let f = Fixture::new().await;
    f.add_provider("claude", "anthropic", "claude-sonnet-4-5", 200_000)
        .await;
    let svg = r#"<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4"/></svg>"#;
    f.call("write_file", json!({"path": "chart.svg", "content": svg}));
    f.say("Drawn.");
    let outcome = f.run_with("claude", "Chart it").await;
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    let (result, kept) = f
        .result_with_images(&outcome, "written by this call as chart.svg")
        .await;
    assert!(
        result.content.contains("image/svg+xml"),
        "{}",
        result.content
    );
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].media_type, "image/svg+xml");
    assert_eq!(kept[0].tokens, 0, "not shown, so it costs nothing");
    let second = f.request_text(1);
    assert!(
        second.contains("written by this call as chart.svg"),
        "{second}"
    );
    assert!(!second.contains("image/svg+xml\",\"data\""), "{second}");
    assert!(!second.contains("\"type\":\"image\""), "{second}");
}
