//! The workbench in the real app, in WebKit through tauri-driver, against the wire-level test
//! server and a real SQLite file: a run that streams and calls tools, the plan and the subagent
//! tree filling in live, a failure whose recovery panel's Skip continues the run (and whose wait,
//! with the window unfocused, shows a native notification on a real daemon), the flag of a
//! contested final review and its mark on the answer, guidance sent with a recovery choice, a
//! tenth-man review whose evidence click scrolls to the message, the
//! context meter, and the switch to Chinese. Each stage saves a screenshot to
//! `target/e2e-artifacts/`.
//!
//! Needs a display (scripts/test.sh runs it under `xvfb-run -a`) and `tauri-driver`. Without
//! them it fails with a message saying so: it never skips.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use decima_core::{NewMessage, Role};
use decima_store::Store;
use decima_testkit::{LlmServer, RecordedRequest, Reply, ScriptedToolCall, StreamOptions, Turn};
use fantoccini::Locator;
use serde_json::{Value, json};
use support::{
    Driver, Notifications, attr, click, click_text, connect, count, shot, shown_within, text_of,
    wait_for_text, wait_until,
};

const TASK: &str = "Count the Q3 invoices and check the ledger";
const CHILD_TASK: &str = "Check the ledger folder";
/// In words: the failure's rollback undoes the listing, so a "3" would be a figure no live
/// tool output holds, and the run would stop on it before the review this test is about.
const ANSWER: [&str; 4] = [
    "There are ",
    "three invoices; ",
    "the ledger could ",
    "not be checked.",
];
/// The seeded message the reviewer cites: far above the bottom of the list.
const EVIDENCE_SEQ: i64 = 3;
/// What the analyst types into the recovery panel before choosing Skip.
const GUIDANCE: &str = "Skip it, and say in the answer that the ledger was not checked";

fn call(id: &str, name: &str, arguments: Value) -> ScriptedToolCall {
    ScriptedToolCall {
        id: id.into(),
        name: name.into(),
        argument_chunks: vec![arguments.to_string()],
    }
}

fn calls(calls: Vec<ScriptedToolCall>) -> Reply {
    Reply::Stream(Turn {
        tool_calls: calls,
        ..Turn::default()
    })
}

fn say(text: &str) -> Reply {
    Reply::Stream(Turn {
        text: vec![text.into()],
        ..Turn::default()
    })
}

/// The texts of a request's messages with this role.
fn texts(request: &RecordedRequest, role: &str) -> Vec<String> {
    request
        .json
        .as_ref()
        .and_then(|j| j["messages"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter(|m| m["role"] == role)
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// The model's side of the session, decided from each request: the tenth man's reviews, the
/// subagent's answer, and the parent's steps in order.
fn script(server: &LlmServer) -> Arc<AtomicUsize> {
    let parent_steps = Arc::new(AtomicUsize::new(0));
    let steps = Arc::clone(&parent_steps);
    server.respond_with(move |request| {
        if texts(request, "system")
            .iter()
            .any(|s| s.contains("You are the tenth man"))
        {
            return say(
                &json!({
                    "risk_level": "high",
                    "summary": "The count ignores the ledger, which was never read.",
                    "findings": [{
                        "title": "The ledger was never checked",
                        "severity": "high",
                        "argument": "The early note says invoices must match the ledger, and the run skipped that step.",
                        "evidence_seqs": [EVIDENCE_SEQ],
                        "recommendation": "Restore the ledger and compare the totals."
                    }],
                    "open_questions": ["Where did the ledger go?"]
                })
                .to_string(),
            );
        }
        if texts(request, "user").iter().any(|t| t.contains(CHILD_TASK)) {
            return say("The ledger folder holds 2 files.");
        }
        match steps.fetch_add(1, Ordering::SeqCst) {
            0 => calls(vec![call(
                "call_plan",
                "todo_write",
                json!({"todos": [
                    {"id": "gather", "title": "Gather the invoices", "status": "in_progress", "phase": "Gather"},
                    {"id": "report", "title": "Report the count", "status": "pending", "phase": "Report", "checkpoint": true}
                ]}),
            )]),
            // Slow enough for the window to show the call running.
            1 => calls(vec![call(
                "call_list",
                "shell",
                json!({"command": "sleep 2; printf 'invoice-1\\ninvoice-2\\ninvoice-3\\n'"}),
            )]),
            2 => calls(vec![call(
                "call_child",
                "spawn_subagent",
                json!({"task": CHILD_TASK}),
            )]),
            // A missing file is a data failure: the todo's failure then rolls back and asks.
            3 => calls(vec![call(
                "call_ledger",
                "read_file",
                json!({"path": "ledger.csv"}),
            )]),
            4 => calls(vec![call(
                "call_fail",
                "todo_write",
                json!({"todos": [
                    {"id": "gather", "title": "Gather the invoices", "status": "failed", "phase": "Gather", "reason": "the ledger is missing"},
                    {"id": "report", "title": "Report the count", "status": "pending", "phase": "Report", "checkpoint": true}
                ]}),
            )]),
            // After Skip: the answer, streamed slowly enough to be seen growing.
            _ => Reply::Stream(Turn {
                text: ANSWER.iter().map(|s| (*s).to_owned()).collect(),
                options: StreamOptions {
                    event_delay: Some(Duration::from_millis(700)),
                    ..StreamOptions::default()
                },
                ..Turn::default()
            }),
        }
    });
    parent_steps
}

async fn seed(data: &std::path::Path, server: &LlmServer) -> String {
    let store = Store::open_in_dir(data, decima_llm::tokens::store_counter())
        .await
        .unwrap();
    store
        .providers()
        .create(support::provider("local", server.openai_base_url(), 32_000))
        .await
        .unwrap();
    // Enough earlier notes that the cited one is scrolled far out of view.
    let mut messages = Vec::new();
    for i in 1..=60 {
        let (role, text) = if i % 2 == 1 {
            (
                Role::User,
                format!(
                    "Note {i}: invoices must match the ledger before any count is reported. Region R-{i} is pending."
                ),
            )
        } else {
            (
                Role::Assistant,
                format!(
                    "Understood, note {i} recorded. I will reconcile region R-{} against the ledger.",
                    i - 1
                ),
            )
        };
        messages.push(NewMessage::new(role, text));
    }
    let c = store
        .conversations()
        .import("Invoice check 发票核对", None, &messages)
        .await
        .unwrap();
    store.close().await;
    c.id.to_string()
}

async fn db_row(db: &std::path::Path, sql: &str) -> Vec<(String, String)> {
    support::rows(db, sql).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_run_with_a_failure_a_subagent_and_a_tenth_man_review_in_the_real_app() {
    let _alone = support::one_at_a_time().await;
    let data = tempfile::tempdir().unwrap();
    let db = data.path().join("decima.db");
    let server = LlmServer::start().await;
    let parent_steps = script(&server);
    let conversation = seed(data.path(), &server).await;

    // A session bus with a real notification daemon: the app's notifications land there.
    let notifications = Notifications::start();
    let driver =
        Driver::start_with_env(&[("DBUS_SESSION_BUS_ADDRESS", notifications.bus_address())]);
    let client = connect(&driver, data.path()).await;
    click_text(&client, "[data-testid=conversation-item]", "Invoice check").await;
    wait_for_text(&client, "[data-testid=message]", "note 60 recorded").await;

    // The meter shows the open conversation's usage, in percent.
    let meter = "[role=meter][aria-label='Context usage']";
    wait_until(
        &client,
        "the context meter never showed a value",
        || async {
            attr(&client, meter, "aria-valuenow")
                .await
                .is_some_and(|v| v.parse::<f64>().is_ok())
        },
    )
    .await;
    assert_eq!(
        attr(&client, meter, "data-testid").await.as_deref(),
        Some("context-usage")
    );

    // Start a run from the composer.
    let input = client
        .find(Locator::Css("[data-testid=composer-input]"))
        .await
        .unwrap();
    input.send_keys(TASK).await.unwrap();
    click(&client, "[data-testid=send]").await;

    // The plan appears, then the slow shell call is shown while it runs, then its exit code.
    wait_for_text(&client, "[data-testid=todo]", "Gather the invoices").await;
    // The analyst turns to another application while the run works.
    support::unfocus_window();
    wait_for_text(&client, "[data-testid=live-tool-card]", "shell").await;
    // The card shows the command.
    wait_for_text(&client, "[data-testid=live-tool-card]", "sleep 2").await;
    assert!(
        count(&client, "[data-testid=stop]").await == 1,
        "a live run offers Stop"
    );
    shot(&client, "workbench-tool-running.png").await;

    // The subagent shows in the tree, at depth 1, with its task.
    wait_for_text(
        &client,
        "[data-testid=subagent][data-depth='1']",
        CHILD_TASK,
    )
    .await;

    // The model marks the todo failed after the ledger read failed: the run rolls back and
    // waits, and the recovery panel shows where, why and what to do.
    let panel = "[role=alertdialog][aria-label='Failure recovery']";
    wait_until(
        &client,
        "the failure recovery panel never appeared",
        || async { count(&client, panel).await == 1 },
    )
    .await;
    let report = text_of(&client, panel).await;
    assert!(report.contains("Gather the invoices"), "where: {report}");
    assert!(report.contains("the ledger is missing"), "why: {report}");
    // The panel offers exactly the choices the stored failure offers, in its order, and no
    // others: a data failure that rolled back offers replan, skip, retry and abort.
    let offered = db_row(&db, "SELECT id, suggested_actions FROM failures").await;
    assert_eq!(offered.len(), 1, "one failure: {offered:?}");
    let offered: Vec<String> = serde_json::from_str(&offered[0].1).unwrap();
    assert_eq!(offered, ["replan", "skip", "retry", "abort"]);
    let buttons = client
        .execute(
            "return [...document.querySelectorAll(arguments[0])].map((b) => b.textContent.trim());",
            vec![json!(format!(
                "{panel} [data-testid=recovery-choices] button"
            ))],
        )
        .await
        .unwrap();
    assert_eq!(
        buttons,
        json!(["Replan", "Skip", "Retry", "Abort"]),
        "the offered choices, as buttons"
    );
    for choice in &offered {
        assert_eq!(
            count(&client, &format!("{panel} [data-testid=recovery-{choice}]")).await,
            1,
            "a {choice} button"
        );
    }
    assert_eq!(
        count(&client, &format!("{panel} [data-testid=recovery-rollback]")).await,
        0,
        "no rollback: the failure rolled back on its own"
    );
    // The window has no focus under Xvfb (no window manager gives it any), so waiting for a
    // choice shows a native notification, which says what happened and nothing of the
    // conversation.
    let started = std::time::Instant::now();
    let shown = loop {
        let shown = notifications.shown();
        if !shown.is_empty() || started.elapsed() > support::WAIT {
            break shown;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(
        shown
            .iter()
            .any(|(summary, body)| summary.contains("waits for you")
                && body.contains("waits for your choice")),
        "a notification that the run waits: {shown:?}"
    );
    assert!(
        !shown
            .iter()
            .any(|(s, b)| s.contains("ledger") || b.contains("ledger") || b.contains(TASK)),
        "no conversation content in a notification: {shown:?}"
    );
    let waiting = db_row(
        &db,
        "SELECT id, status FROM executions WHERE parent_id IS NULL",
    )
    .await;
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0].1, "awaiting_user");
    shot(&client, "workbench-failure-recovery.png").await;

    // Guidance typed while the failure waits goes with the choice: Skip, with a word on how.
    let guidance = client
        .find(Locator::Css(&format!(
            "{panel} [data-testid=recovery-guidance]"
        )))
        .await
        .unwrap();
    guidance.send_keys(GUIDANCE).await.unwrap();
    // Skip: the panel closes, the run goes on and streams its answer.
    click(&client, "[data-testid=recovery-skip]").await;
    wait_until(
        &client,
        "the recovery panel stayed open after Skip",
        || async { count(&client, panel).await == 0 },
    )
    .await;
    // Streaming: part of the answer is on screen before all of it is.
    wait_until(&client, "the answer never streamed in part", || async {
        let live = text_of(&client, "[data-testid=live-text]").await;
        live.contains(ANSWER[0]) && !live.contains(ANSWER[3])
    })
    .await;
    shot(&client, "workbench-streaming.png").await;
    wait_for_text(&client, "[data-testid=message]", "not be checked.").await;
    wait_until(
        &client,
        "the contested final review was not flagged",
        || async { count(&client, "[data-testid=run-contested]").await == 1 },
    )
    .await;
    // Once the run has ended, the list still follows it: the final answer's row is in the
    // list's viewport, not below it.
    wait_until(&client, "the run did not end", || async {
        count(&client, "[data-testid=stop]").await == 0
            && count(&client, "[data-testid=send]").await == 1
    })
    .await;
    wait_until(
        &client,
        "the final answer was stored but is not in the list's viewport",
        || async {
            shown_within(
                &client,
                "[data-testid=message]",
                "not be checked.",
                "[data-testid=message-scroll]",
            )
            .await
        },
    )
    .await;
    assert_eq!(
        count(&client, "[data-testid=jump-to-latest]").await,
        0,
        "the list is at its end"
    );
    shot(&client, "workbench-run-ended.png").await;
    plan_titles_keep_their_lines(&client).await;
    let ended = db_row(
        &db,
        "SELECT e.status, f.resolution FROM executions e JOIN failures f ON f.execution_id = e.id \
         WHERE e.parent_id IS NULL",
    )
    .await;
    assert_eq!(ended, vec![("succeeded".to_owned(), "skip".to_owned())]);
    let todo = db_row(
        &db,
        "SELECT title, status FROM todos WHERE title = 'Gather the invoices'",
    )
    .await;
    assert_eq!(todo[0].1, "skipped");
    assert!(
        parent_steps.load(Ordering::SeqCst) >= 6,
        "every scripted step ran"
    );
    // The guidance is the analyst's message in the conversation, and the model read it on the
    // step after the choice.
    let said = db_row(
        &db,
        &format!(
            "SELECT role, content FROM messages WHERE content LIKE '%{}%'",
            GUIDANCE.replace('\'', "''")
        ),
    )
    .await;
    assert_eq!(said, vec![("user".to_owned(), GUIDANCE.to_owned())]);
    assert!(
        server
            .requests()
            .iter()
            .any(|r| texts(r, "user").iter().any(|t| t.contains(GUIDANCE))),
        "the model was sent the guidance"
    );
    wait_for_text(&client, "[data-testid=message]", GUIDANCE).await;

    // The contested final review leaves its mark on the answer it read, and its findings are a
    // click away.
    let answer = "[data-testid=message][data-role=assistant]:has([data-testid=review-mark])";
    wait_until(&client, "the reviewed answer has no mark", || async {
        text_of(&client, answer).await.contains("not be checked.")
    })
    .await;
    assert_eq!(
        attr(
            &client,
            &format!("{answer} [data-testid=review-mark]"),
            "data-risk"
        )
        .await
        .as_deref(),
        Some("high")
    );
    assert_eq!(
        count(&client, "[data-testid=review-mark]").await,
        1,
        "one mark: only the answer the review read"
    );
    shot(&client, "workbench-review-mark.png").await;
    click(&client, &format!("{answer} [data-testid=review-mark-open]")).await;
    let dialog = "[role=dialog][aria-label='Tenth man review']";
    wait_for_text(
        &client,
        &format!("{dialog} [data-testid=finding]"),
        "The ledger was never checked",
    )
    .await;
    click(
        &client,
        "[data-testid=tenth-man-review-dialog] [data-testid=review-close]",
    )
    .await;
    wait_until(&client, "the review dialog stayed open", || async {
        count(&client, dialog).await == 0
    })
    .await;

    // The tenth-man button: the review's finding cites an early message; clicking its evidence
    // scrolls that message into view and highlights it.
    click(&client, "[data-testid=tenth-man-review-button]").await;
    wait_until(&client, "the review dialog never opened", || async {
        count(&client, dialog).await == 1
    })
    .await;
    // It opens on the stored review, the run's contested final one, without asking again.
    wait_for_text(
        &client,
        "[data-testid=review-when]",
        "The run's automatic final review",
    )
    .await;
    shot(&client, "workbench-tenth-man-stored.png").await;
    let asked_before = db_row(
        &db,
        "SELECT CAST(COUNT(*) AS TEXT), '' FROM reviews WHERE trigger = 'user'",
    )
    .await;
    assert_eq!(
        asked_before[0].0, "0",
        "opening the panel asked for no review"
    );
    click(&client, "[data-testid=review-new]").await;
    click(&client, "[data-testid=review-start]").await;
    wait_for_text(
        &client,
        "[data-testid=review-when]",
        "Asked for in the window",
    )
    .await;
    wait_for_text(
        &client,
        "[data-testid=finding]",
        "The ledger was never checked",
    )
    .await;
    assert_eq!(
        attr(&client, "[data-testid=review-risk]", "data-risk")
            .await
            .as_deref(),
        Some("high")
    );
    let evidence = format!("[data-testid=finding-evidence][data-seq='{EVIDENCE_SEQ}']");
    click(&client, &evidence).await;
    // The cited message is a tool result: it shows on its call's card, which is the row marked.
    let cited = format!(
        "[data-testid=message][data-seq='{EVIDENCE_SEQ}'], \
         [data-testid=message][data-result-seqs~='{EVIDENCE_SEQ}']"
    );
    wait_until(&client, "the cited message was not highlighted", || async {
        attr(&client, &cited, "data-highlighted").await.as_deref() == Some("true")
    })
    .await;
    // The scroll is smooth: it lands within a moment.
    wait_until(
        &client,
        "the cited message was not scrolled into view",
        || async {
            let in_view = client
                .execute(
                    "const r = document.querySelector(arguments[0]).getBoundingClientRect();\
                 return r.bottom > 0 && r.top < window.innerHeight;",
                    vec![json!(cited)],
                )
                .await
                .unwrap();
            in_view == json!(true)
        },
    )
    .await;
    // Beside the sheet, not under it: the middle of the cited message is the message itself.
    wait_until(
        &client,
        "the cited message is covered by the review sheet",
        || async { support::on_screen(&client, &cited).await },
    )
    .await;
    shot(&client, "workbench-tenth-man.png").await;
    let reviews = db_row(
        &db,
        "SELECT trigger, risk_level FROM reviews ORDER BY created_at",
    )
    .await;
    assert!(
        reviews.iter().any(|(trigger, _)| trigger == "user"),
        "the button's review is stored: {reviews:?}"
    );
    click(
        &client,
        "[data-testid=tenth-man-review-dialog] [data-testid=review-close]",
    )
    .await;

    // Clicking the subagent opens its own conversation.
    click(&client, "[data-testid=subagent]").await;
    wait_for_text(
        &client,
        "[data-testid=message]",
        "The ledger folder holds 2 files.",
    )
    .await;
    assert_ne!(
        attr(
            &client,
            "[data-testid=conversation-view]",
            "data-conversation-id"
        )
        .await,
        Some(conversation.clone()),
        "the child's conversation is open"
    );

    // Chinese: the visible text and the accessible names change; the test ids do not.
    click_text(&client, "[data-testid=conversation-item]", "Invoice check").await;
    click(&client, "[data-testid=language-switch] [data-lang=zh]").await;
    wait_until(
        &client,
        "the meter's name did not follow the language",
        || async { count(&client, "[role=meter][aria-label='上下文用量']").await == 1 },
    )
    .await;
    let button = attr(
        &client,
        "[data-testid=tenth-man-review-button]",
        "aria-label",
    )
    .await;
    let button_text = text_of(&client, "[data-testid=tenth-man-review-button]").await;
    assert!(
        button.as_deref() == Some("第十人审查") || button_text.contains("第十人审查"),
        "the review button is named in Chinese: {button:?} / {button_text:?}"
    );
    assert!(
        text_of(&client, "[data-testid=send]")
            .await
            .contains("发送")
    );
    shot(&client, "workbench-chinese.png").await;
    // In a narrow window the plan's titles keep their words on a line or two; their badges wrap
    // below them rather than squeezing the title a word a line.
    client.set_window_size(900, 700).await.unwrap();
    plan_titles_keep_their_lines(&client).await;
    shot(&client, "workbench-chinese-900x700.png").await;
    client.set_window_size(1280, 800).await.unwrap();
    // The choice is saved in this data directory's own webview storage, not in the user's home,
    // where every profile (and every other test) would have shared it.
    let storage = data.path().join("webview").join("localstorage");
    let started = std::time::Instant::now();
    while !std::fs::read_dir(&storage).is_ok_and(|mut files| files.next().is_some()) {
        assert!(
            started.elapsed() < support::WAIT,
            "the language choice never reached {}",
            storage.display()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    client.close().await.unwrap();
    drop(driver);
}

/// Every plan title keeps its words on a line or two: its badges wrap below it rather than
/// squeezing it a word a line.
async fn plan_titles_keep_their_lines(client: &fantoccini::Client) {
    wait_until(client, "a plan title is broken a word a line", || async {
        let lines = client
            .execute(
                "return [...document.querySelectorAll('[data-testid=todo] .todo-title')]\
                   .map((t) => t.getBoundingClientRect().height / parseFloat(getComputedStyle(t).lineHeight));",
                vec![],
            )
            .await
            .unwrap();
        let lines: Vec<f64> = serde_json::from_value(lines).unwrap();
        !lines.is_empty() && lines.iter().all(|n| *n < 2.5)
    })
    .await;
}
