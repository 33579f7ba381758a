//! The everyday actions of a working day, in the real app (WebKit through tauri-driver, a real
//! SQLite file, the real Docker engine, the wire-level model server): a call and its result read
//! as one card and a plan's change in words; a table saved as CSV and a report exported through
//! GTK's save dialog; switching a conversation to Docker copies its files into the container;
//! Settings in sections at 1280×800 and 900×700, in English and Chinese; a quick chat sends no
//! tools and the model then titles the conversation. Screenshots go to
//! `target/e2e-artifacts/actions-*.png`.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use decima_core::{NewMessage, Role, ToolCall};
use decima_store::Store;
use decima_testkit::LlmServer;
use fantoccini::{Client, Locator};
use support::{Driver, click, connect, count, shot, text_of, wait_for_text, wait_until};

/// The busybox image the Docker tests use (scripts/lib.sh builds it).
const TEST_IMAGE: &str = "decima-test:busybox";

fn call(id: &str, name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.to_string(),
        signature: None,
    }
}

/// A conversation whose two calls are both `call_0` (a server that numbers calls per
/// response), whose answer holds a table, and whose host folder holds a ledger.
async fn seed(data: &std::path::Path, server: &LlmServer) -> decima_core::ConversationId {
    let store = Store::open_in_dir(data, decima_llm::tokens::store_counter())
        .await
        .unwrap();
    store
        .providers()
        .create(support::provider("local", server.openai_base_url(), 32_000))
        .await
        .unwrap();
    let c = store
        .conversations()
        .create("Ledger 账目", None)
        .await
        .unwrap();
    store
        .conversations()
        .set_sandbox_config(c.id, Some(&serde_json::json!({"image": TEST_IMAGE})))
        .await
        .unwrap();
    let mut plan = NewMessage::new(Role::Assistant, "");
    plan.tool_calls = vec![call(
        "call_0",
        "todo_write",
        serde_json::json!({"todos": [{"id": "t1", "title": "Load the ledger", "status": "in_progress"}]}),
    )];
    let mut planned = NewMessage::new(Role::Tool, "Plan updated: 1 todo (1 in progress)");
    planned.tool_call_id = Some("call_0".into());
    planned.name = Some("todo_write".into());
    let mut shell = NewMessage::new(Role::Assistant, "");
    shell.tool_calls = vec![call(
        "call_0",
        "shell",
        serde_json::json!({"command": "python total.py"}),
    )];
    let mut totalled = NewMessage::new(Role::Tool, "total 1200.50");
    totalled.tool_call_id = Some("call_0".into());
    totalled.name = Some("shell".into());
    for message in [
        NewMessage::new(Role::User, "Total the ledger by region."),
        plan,
        planned,
        shell,
        totalled,
        NewMessage::new(
            Role::Assistant,
            "By region:\n\n| region | net |\n|---|---:|\n| North | 1200.50 |\n| South | 800 |\n",
        ),
    ] {
        store.messages().append(c.id, message).await.unwrap();
    }
    // A conversation whose folder holds a 200 MB CSV and one 10,000 columns wide.
    let big = store
        .conversations()
        .create("Big files", None)
        .await
        .unwrap();
    store.close().await;
    let folder = data.join("workspaces").join(big.id.to_string());
    std::fs::create_dir_all(&folder).unwrap();
    {
        use std::io::Write as _;
        let mut out =
            std::io::BufWriter::new(std::fs::File::create(folder.join("big.csv")).unwrap());
        writeln!(out, "id,region,net").unwrap();
        let mut i = 0u64;
        while out.get_ref().metadata().unwrap().len() < 200 * 1024 * 1024 {
            for _ in 0..10_000 {
                i += 1;
                writeln!(out, "{i},R-{},{}.50", i % 97, i * 7).unwrap();
            }
            out.flush().unwrap();
        }
    }
    let header: Vec<String> = (0..10_000).map(|i| format!("c{i}")).collect();
    let row: Vec<String> = (0..10_000).map(|i| i.to_string()).collect();
    std::fs::write(
        folder.join("wide.csv"),
        format!(
            "{}\n{}\n{}\n",
            header.join(","),
            row.join(","),
            row.join(",")
        ),
    )
    .unwrap();
    let folder = data.join("workspaces").join(c.id.to_string());
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("ledger.csv"), "account,amount\nrent,1200.50\n").unwrap();
    c.id
}

/// The one file GTK's save dialog wrote into `folder` whose name ends with `suffix`.
fn saved_in(folder: &std::path::Path, suffix: &str) -> std::path::PathBuf {
    let found: Vec<_> = std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found[0].clone()
}

/// Whether every element of the open settings section fits inside the dialog.
async fn settings_fit(client: &Client) -> serde_json::Value {
    client
        .execute(
            "const d = document.querySelector('[data-testid=settings-dialog]');\
             const p = d.querySelector('[role=tabpanel]:not([hidden])');\
             const parts = [...p.querySelectorAll('*')].filter(e => e.getBoundingClientRect().width > 0);\
             return { panel: p.getAttribute('data-testid'), height: p.getBoundingClientRect().height,\
               right: Math.max(0, ...parts.map(e => e.getBoundingClientRect().right)),\
               dialog: d.getBoundingClientRect().right };",
            vec![],
        )
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everyday_actions_work_in_the_window() {
    let _alone = support::one_at_a_time().await;
    let data = tempfile::tempdir().unwrap();
    // No user-dirs.dirs: save dialogs start in the data folder's exports/.
    let config = tempfile::tempdir().unwrap();
    let server = LlmServer::start().await;
    let ledger = seed(data.path(), &server).await;
    let exports = data.path().join("exports");

    let driver = Driver::start_with_env(&[("XDG_CONFIG_HOME", config.path().to_str().unwrap())]);
    let client = connect(&driver, data.path()).await;
    client.set_window_size(1280, 800).await.unwrap();
    let item = format!("[data-testid=conversation-item][data-conversation-id='{ledger}']");
    wait_for_text(&client, &item, "Ledger").await;
    click(
        &client,
        &format!("{item} [data-testid=conversation-title-button]"),
    )
    .await;
    wait_for_text(&client, "[data-testid=message-list]", "By region").await;

    // A call and its result are one card, though both calls are call_0; the plan's change
    // reads in words. In both languages and at both sizes.
    assert_eq!(
        count(&client, "[data-testid=message] [data-testid=tool-result]").await,
        2
    );
    assert_eq!(
        count(&client, "[data-testid=message][data-role=tool]").await,
        0,
        "no result stands alone"
    );
    wait_for_text(&client, "[data-testid=plan-change]", "Load the ledger").await;
    let shell_card = text_of(&client, "[data-testid=message][data-result-seqs~='5']").await;
    assert!(shell_card.contains("total 1200.50"), "{shell_card}");
    for (lang, switch) in [("en", None), ("zh", Some("中文"))] {
        if let Some(label) = switch {
            support::click_text(&client, "[data-testid=language-switch] button", label).await;
        }
        for (width, height) in [(1280u32, 800u32), (900, 700)] {
            client.set_window_size(width, height).await.unwrap();
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            shot(&client, &format!("actions-transcript-{lang}-{width}.png")).await;
        }
    }
    support::click_text(&client, "[data-testid=language-switch] button", "EN").await;
    client.set_window_size(1280, 800).await.unwrap();

    // Pin the answer: it says so, and stays pinned when the conversation is opened again.
    click(
        &client,
        "[data-testid=message][data-seq='6'] [data-testid=message-pin]",
    )
    .await;
    wait_for_text(
        &client,
        "[data-testid=message][data-seq='6'] [data-testid=pinned-marker]",
        "Pinned",
    )
    .await;
    // A search's words are marked in the message it opens, and the list comes back.
    client
        .find(Locator::Css("#sidebar-search"))
        .await
        .unwrap()
        .send_keys("region")
        .await
        .unwrap();
    click(&client, "[data-testid=search-hit]").await;
    wait_until(&client, "the search's words are marked", || async {
        count(&client, "[data-testid=message-list] mark.search-mark").await >= 1
    })
    .await;
    shot(&client, "actions-search-marks.png").await;
    click(&client, "[data-testid=search-back]").await;
    wait_for_text(&client, &item, "Ledger").await;
    click(
        &client,
        &format!("{item} [data-testid=conversation-title-button]"),
    )
    .await;
    wait_for_text(
        &client,
        "[data-testid=message][data-seq='6'] [data-testid=pinned-marker]",
        "Pinned",
    )
    .await;

    // The answer's table, saved as CSV through the save dialog.
    click(&client, "[data-testid=table-save-csv]").await;
    tokio::task::spawn_blocking(|| support::accept_save_dialog("Save the table as CSV"))
        .await
        .unwrap();
    wait_for_text(&client, "[data-testid=table-saved]", "Saved to").await;
    let csv = saved_in(&exports, ".csv");
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap(),
        "region,net\r\nNorth,1200.50\r\nSouth,800\r\n"
    );

    // A report of the answer as one HTML file.
    click(&client, "[data-testid=export-button]").await;
    click(&client, "[data-testid=export-report-html]").await;
    tokio::task::spawn_blocking(|| support::accept_save_dialog("Export a report"))
        .await
        .unwrap();
    wait_for_text(&client, "[data-testid=report-done]", "Report written to").await;
    let html = std::fs::read_to_string(saved_in(&exports, " report.html")).unwrap();
    assert!(html.contains("Total the ledger by region."), "{html}");
    assert!(html.contains(">North</td>"), "{html}");
    click(&client, "[data-testid=export-dismiss]").await;

    // Switching to Docker says what stays on the host and copies it into the container.
    wait_for_text(&client, "[data-testid=workspace-location]", "workspaces").await;
    click(&client, "[data-testid=run-options-button]").await;
    client
        .find(Locator::Css("[data-testid=run-options-sandbox]"))
        .await
        .unwrap()
        .select_by_value("docker")
        .await
        .unwrap();
    wait_for_text(&client, "[data-testid=sandbox-switch]", "on this computer").await;
    shot(&client, "actions-sandbox-switch.png").await;
    click(&client, "[data-testid=sandbox-switch-copy]").await;
    wait_for_text(
        &client,
        "[data-testid=sandbox-switch-done]",
        "Copied 1 file",
    )
    .await;
    wait_for_text(
        &client,
        "[data-testid=workspace-location]",
        "Docker container's /workspace",
    )
    .await;
    let engine = decima_runtime::docker::engine(data.path()).await.unwrap();
    let copied = decima_runtime::workspace::place(
        &Store::open_in_dir(data.path(), decima_llm::tokens::store_counter())
            .await
            .unwrap(),
        data.path(),
        ledger,
    )
    .await
    .unwrap()
    .sandbox
    .read_bytes("ledger.csv".into(), 1000)
    .await
    .unwrap();
    assert_eq!(copied, b"account,amount\nrent,1200.50\n");
    let _ = engine.remove_conversation(&ledger.to_string(), true).await;
    click(&client, "[data-testid=run-options-button]").await;

    // Bad input: a 200 MB CSV previews its first rows, a 10,000-column one its first 50
    // columns (and copies them), and a title of 5,000 characters is refused in words with
    // nothing typed lost.
    support::click_text(&client, "[data-testid=conversation-item]", "Big files").await;
    wait_for_text(&client, "[data-testid=conversation-title]", "Big files").await;
    click(&client, "[data-testid=workspace-all]").await;
    wait_for_text(&client, "[data-testid=workspace-files]", "big.csv").await;
    let opened = std::time::Instant::now();
    click(
        &client,
        "[data-testid=workspace-file][data-path='big.csv'] [data-testid=workspace-file-open]",
    )
    .await;
    wait_for_text(&client, "[data-testid=table-count]", "the first").await;
    println!(
        "a 200 MB CSV previewed in {} ms",
        opened.elapsed().as_millis()
    );
    assert_eq!(
        count(&client, "[data-testid=workspace-preview-table] tbody tr").await,
        199,
        "its first rows, the cut last row of the head left out"
    );
    shot(&client, "actions-big-csv.png").await;
    click(&client, "[data-testid=workspace-preview-close]").await;
    click(
        &client,
        "[data-testid=workspace-file][data-path='wide.csv'] [data-testid=workspace-file-open]",
    )
    .await;
    wait_for_text(
        &client,
        "[data-testid=workspace-preview-columns]",
        "The first 50 of its 10,000 columns",
    )
    .await;
    click(&client, "[data-testid=table-copy-tsv]").await;
    wait_until(&client, "the wide table was not copied", || async {
        support::attr(&client, "[data-testid=table-copy-tsv]", "data-state")
            .await
            .as_deref()
            == Some("copied")
    })
    .await;
    shot(&client, "actions-wide-csv.png").await;
    click(&client, "[data-testid=workspace-preview-close]").await;
    let long = "Q3 ".repeat(1_667);
    client
        .execute(
            "const input = document.querySelector('[data-testid=new-conversation-title]');\
             Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(input, arguments[0]);\
             input.dispatchEvent(new Event('input', {bubbles: true}));",
            vec![serde_json::json!(long)],
        )
        .await
        .unwrap();
    click(&client, "[data-testid=new-conversation-submit]").await;
    wait_for_text(
        &client,
        "[data-testid=new-conversation-error]",
        "at most 500 characters",
    )
    .await;
    let kept = client
        .execute(
            "return document.querySelector('[data-testid=new-conversation-title]').value.length;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        kept.as_u64(),
        Some(long.len() as u64),
        "the typed title is kept"
    );
    client
        .execute(
            "const input = document.querySelector('[data-testid=new-conversation-title]');\
             Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(input, '');\
             input.dispatchEvent(new Event('input', {bubbles: true}));",
            vec![],
        )
        .await
        .unwrap();
    support::click_text(&client, "[data-testid=conversation-item]", "Ledger").await;
    wait_for_text(&client, "[data-testid=conversation-title]", "Ledger").await;

    // Settings in sections: each one fits the dialog, at both sizes and in both languages.
    click(&client, "[data-testid=settings-button]").await;
    for (lang, switch) in [("en", None), ("zh", Some("中文"))] {
        if let Some(label) = switch {
            click(&client, "[data-testid=settings-tab-appearance]").await;
            support::click_text(
                &client,
                "[data-testid=settings-dialog] [data-testid=language-switch] button",
                label,
            )
            .await;
        }
        for (width, height) in [(1280u32, 800u32), (900, 700)] {
            client.set_window_size(width, height).await.unwrap();
            for tab in ["models", "runs", "sandbox", "mcp", "store", "appearance"] {
                click(&client, &format!("[data-testid=settings-tab-{tab}]")).await;
                let fit = settings_fit(&client).await;
                assert_eq!(fit["panel"], format!("settings-panel-{tab}"), "{fit}");
                assert!(
                    fit["height"].as_f64().unwrap() > 0.0,
                    "{lang} {width} {tab}: {fit}"
                );
                assert!(
                    fit["right"].as_f64().unwrap() <= fit["dialog"].as_f64().unwrap() + 0.5,
                    "{lang} at {width}: the {tab} section is wider than the dialog: {fit}"
                );
                if matches!(tab, "models" | "sandbox") {
                    shot(
                        &client,
                        &format!("actions-settings-{tab}-{lang}-{width}.png"),
                    )
                    .await;
                }
            }
        }
    }
    click(&client, "[data-testid=settings-tab-appearance]").await;
    support::click_text(
        &client,
        "[data-testid=settings-dialog] [data-testid=language-switch] button",
        "EN",
    )
    .await;
    click(&client, "[data-testid=settings-close]").await;
    client.set_window_size(1280, 800).await.unwrap();

    // A quick chat: no tool offered, no review; then the model titles the new conversation.
    for text in ["Four.", "Small arithmetic"] {
        server.enqueue(decima_testkit::Reply::Stream(decima_testkit::Turn {
            text: vec![text.into()],
            ..decima_testkit::Turn::default()
        }));
    }
    let before = server.requests().len();
    click(&client, "[data-testid=new-conversation-submit]").await;
    wait_until(&client, "the new conversation", || async {
        count(&client, "[data-testid=no-messages]").await == 1
    })
    .await;
    click(&client, "[data-testid=quick-chat-toggle]").await;
    shot(&client, "actions-quick-chat.png").await;
    client
        .find(Locator::Css("[data-testid=composer-input]"))
        .await
        .unwrap()
        .send_keys("what is 2 + 2")
        .await
        .unwrap();
    click(&client, "[data-testid=send]").await;
    wait_for_text(&client, "[data-testid=message-list]", "Four.").await;
    wait_for_text(
        &client,
        "[data-testid=conversation-title]",
        "Small arithmetic",
    )
    .await;
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        before + 2,
        "the answer and the title, no review"
    );
    let asked = requests[before].json.as_ref().unwrap();
    assert!(
        asked["tools"].as_array().is_none_or(Vec::is_empty),
        "a quick chat offers no tool: {asked}"
    );
    assert!(
        support::attr(&client, "[data-testid=quick-chat-toggle]", "checked")
            .await
            .is_some(),
        "quick chat stays on for this conversation"
    );
}

/// A scripted turn: these tool calls, streamed.
fn turn_calls(name: &str, arguments: serde_json::Value) -> decima_testkit::Reply {
    decima_testkit::Reply::Stream(decima_testkit::Turn {
        tool_calls: vec![decima_testkit::ScriptedToolCall {
            id: "call_0".into(),
            name: name.into(),
            argument_chunks: vec![arguments.to_string()],
        }],
        ..decima_testkit::Turn::default()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_system_language_at_first_start_and_a_rollback_from_the_plan() {
    let _alone = support::one_at_a_time().await;
    let data = tempfile::tempdir().unwrap();
    let server = LlmServer::start().await;
    let conversation = {
        let store = Store::open_in_dir(data.path(), decima_llm::tokens::store_counter())
            .await
            .unwrap();
        let mut provider = support::provider("local", server.openai_base_url(), 32_000);
        // This provider's runs have no tenth man: the script answers the run alone.
        provider.settings = serde_json::json!({"tenth_man": "off"});
        store.providers().create(provider).await.unwrap();
        let c = store
            .conversations()
            .create("Plan 计划", None)
            .await
            .unwrap();
        store.close().await;
        c.id
    };
    // A Chinese desktop: GLib, and so WebKit's navigator.language, follow LANGUAGE and LANG.
    let chinese = [("LANG", "zh_CN.UTF-8"), ("LANGUAGE", "zh_CN:zh")];
    {
        let driver = Driver::start_with_env(&chinese);
        let client = connect(&driver, data.path()).await;
        wait_for_text(&client, "[data-testid=settings-button]", "设置").await;
        shot(&client, "actions-system-language-zh.png").await;
        // The analyst's choice is saved and wins at the next start.
        support::click_text(&client, "[data-testid=language-switch] button", "EN").await;
        wait_for_text(&client, "[data-testid=settings-button]", "Settings").await;
        client.close().await.unwrap();
    }
    let driver = Driver::start_with_env(&chinese);
    let client = connect(&driver, data.path()).await;
    client.set_window_size(1280, 800).await.unwrap();
    wait_for_text(&client, "[data-testid=settings-button]", "Settings").await;

    // A run whose one todo writes a chart; then, from the Plan panel, back to where the todo
    // started, with a preview, and undone.
    for reply in [
        turn_calls(
            "todo_write",
            serde_json::json!({"todos": [{"title": "Chart the ledger", "status": "in_progress"}]}),
        ),
        turn_calls(
            "shell",
            serde_json::json!({"command": "printf png > chart.png"}),
        ),
        turn_calls(
            "todo_write",
            serde_json::json!({"todos": [{"title": "Chart the ledger", "status": "completed"}]}),
        ),
        decima_testkit::Reply::Stream(decima_testkit::Turn {
            text: vec!["Charted.".into()],
            ..decima_testkit::Turn::default()
        }),
    ] {
        server.enqueue(reply);
    }
    let item = format!("[data-testid=conversation-item][data-conversation-id='{conversation}']");
    click(
        &client,
        &format!("{item} [data-testid=conversation-title-button]"),
    )
    .await;
    client
        .find(Locator::Css("[data-testid=composer-input]"))
        .await
        .unwrap()
        .send_keys("Chart the ledger")
        .await
        .unwrap();
    click(&client, "[data-testid=send]").await;
    wait_for_text(&client, "[data-testid=message-list]", "Charted.").await;
    let chart = data
        .path()
        .join("workspaces")
        .join(conversation.to_string())
        .join("chart.png");
    assert!(chart.is_file());
    wait_for_text(&client, "[data-testid=plan-owner]", "Chart the ledger").await;
    wait_until(
        &client,
        "the plan offers its rollback once the run ended",
        || async { count(&client, "button[data-testid=todo-snapshot]").await == 1 },
    )
    .await;
    click(&client, "button[data-testid=todo-snapshot]").await;
    wait_for_text(
        &client,
        "[data-testid=todo-changes-summary]",
        "1 file created",
    )
    .await;
    shot(&client, "actions-plan-rollback-preview.png").await;
    click(&client, "[data-testid=plan-rollback-confirm]").await;
    wait_for_text(&client, "[data-testid=plan-rolled-back]", "Rolled back").await;
    assert!(!chart.exists(), "the todo's chart is gone");
    wait_until(&client, "the answer was set aside", || async {
        !text_of(&client, "[data-testid=message-list]")
            .await
            .contains("Charted.")
    })
    .await;
    click(&client, "[data-testid=plan-rollback-undo]").await;
    wait_for_text(&client, "[data-testid=plan-rolled-back]", "was undone").await;
    assert_eq!(std::fs::read(&chart).unwrap(), b"png");
    wait_for_text(&client, "[data-testid=message-list]", "Charted.").await;
    shot(&client, "actions-plan-rollback-undone.png").await;
}
