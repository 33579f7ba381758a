//! The report of a conversation's newest answer: its question and answer, the charts and CSVs
//! the answering run wrote (not the analyst's files, nor an earlier run's), and its review's
//! findings, as a folder and as one self-contained HTML file.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::Fixture;
use decima_core::ConversationId;
use decima_runtime::agent;
use decima_runtime::report::{ReportFormat, export_report};
use decima_runtime::workspace;
use decima_store::{NewFinding, NewReview, SandboxKind};
use serde_json::json;

/// A PNG's first bytes: enough for the report to carry it as an image.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\nchart";

async fn run(f: &Fixture, conversation: ConversationId, task: &str) -> agent::RunOutcome {
    f.run_here(conversation, task, SandboxKind::Host).await
}

#[tokio::test]
async fn a_report_holds_the_answer_its_runs_files_and_its_review_as_a_folder_and_as_html() {
    let f = Fixture::new().await;
    let c = f
        .store
        .conversations()
        .create("Q3 <revenue>", None)
        .await
        .unwrap();
    let dir = workspace::place(&f.store, f.dir.path(), c.id)
        .await
        .unwrap()
        .host_dir
        .unwrap();
    // An earlier run's file and the analyst's own are not the answer's.
    f.call("shell", json!({"command": "printf 'old\\n1\\n' > old.csv"}));
    f.say("First pass.");
    run(&f, c.id, "First look").await;
    let outside = tempfile::tempdir().unwrap();
    let mine = outside.path().join("mine.csv");
    std::fs::write(&mine, "a\n1\n").unwrap();
    let place = workspace::place(&f.store, f.dir.path(), c.id)
        .await
        .unwrap();
    workspace::add_files(&f.store, &place, c.id, &[mine])
        .await
        .unwrap();

    std::fs::write(outside.path().join("chart.png"), PNG).unwrap();
    f.call(
        "shell",
        json!({"command": format!(
            "mkdir -p out && cp '{}' out/chart.png && printf 'region,net\\nNorth,1200.50\\n' > out/q3.csv",
            outside.path().join("chart.png").display()
        )}),
    );
    f.say("North led with **1,200.50**.\n\n<script>alert(1)</script>");
    let answered = run(&f, c.id, "Chart Q3 revenue by region").await;
    f.store
        .reviews()
        .insert(&NewReview {
            conversation_id: c.id,
            execution_id: Some(answered.execution.id),
            mode: "full_history".into(),
            mode_argument: None,
            review_type: "full".into(),
            focus: None,
            trigger: "system".into(),
            risk_level: "medium".parse().unwrap(),
            summary: "The total leaves out refunds.".into(),
            findings: vec![NewFinding {
                title: "Refunds <missing>".into(),
                severity: "medium".parse().unwrap(),
                argument: "Refunds are not netted.".into(),
                evidence_seqs: vec![5],
                recommendation: "Net the refunds.".into(),
            }],
            open_questions: vec![],
            closes: vec![],
            reviewed_from_seq: 0,
            reviewed_through_seq: 8,
            language: None,
            provider: None,
            model: None,
            input_tokens: 100,
            passes: vec![],
            cache_key: "k".into(),
        })
        .await
        .unwrap();

    let out = tempfile::tempdir().unwrap();
    let folder = out.path().join("Q3 report");
    let made = export_report(&f.store, f.dir.path(), c.id, ReportFormat::Folder, &folder)
        .await
        .unwrap();
    assert_eq!((made.charts, made.tables, made.findings), (1, 1, 1));
    let md = std::fs::read_to_string(folder.join("report.md")).unwrap();
    assert!(
        md.contains("## The question\n\nChart Q3 revenue by region"),
        "{md}"
    );
    assert!(md.contains("North led with **1,200.50**."), "{md}");
    assert!(
        md.contains("![out/chart.png](charts/out_chart.png)"),
        "{md}"
    );
    assert!(md.contains("- [out/q3.csv](data/out_q3.csv)"), "{md}");
    assert!(
        md.contains("risk medium") && md.contains("Net the refunds."),
        "{md}"
    );
    assert!(!md.contains("old.csv") && !md.contains("mine.csv"), "{md}");
    assert_eq!(
        std::fs::read(folder.join("charts/out_chart.png")).unwrap(),
        PNG
    );
    assert_eq!(
        std::fs::read_to_string(folder.join("data/out_q3.csv")).unwrap(),
        "region,net\nNorth,1200.50\n"
    );
    // A folder already there is not written into.
    let again = export_report(&f.store, f.dir.path(), c.id, ReportFormat::Folder, &folder)
        .await
        .unwrap_err();
    assert!(again.to_string().contains("cannot create"), "{again}");

    let page = out.path().join("q3.html");
    export_report(&f.store, f.dir.path(), c.id, ReportFormat::Html, &page)
        .await
        .unwrap();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<title>Q3 &lt;revenue&gt;</title>"), "{html}");
    assert!(html.contains("<strong>1,200.50</strong>"));
    assert!(!html.contains("<script>"), "an answer's HTML stays text");
    assert!(html.contains("src=\"data:image/png;base64,"));
    assert!(html.contains("<td>North</td><td>1200.50</td>"));
    assert!(html.contains("Refunds &lt;missing&gt;"));
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "nothing is fetched"
    );
    assert!(
        dir.join("out/q3.csv").is_file(),
        "the workspace is left as it was"
    );
}

#[tokio::test]
async fn a_conversation_with_no_answer_has_no_report_and_says_why() {
    let f = Fixture::new().await;
    let c = f.store.conversations().create("Empty", None).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let err = export_report(
        &f.store,
        f.dir.path(),
        c.id,
        ReportFormat::Html,
        &out.path().join("r.html"),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("no answer yet"), "{err}");
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);
}
