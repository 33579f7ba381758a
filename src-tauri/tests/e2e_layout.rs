//! The window at the sizes an analyst uses it, in both languages, in the real app: 720×600 (the
//! smallest the window allows is 720 wide), 900×700 and 1,280×800. Nothing scrolls sideways,
//! the header keeps its height, a long title ends in an ellipsis with the whole title in its
//! tooltip, and below 1,000 px the sidebar folds away behind a button. A screenshot of each size
//! and language lands in `target/e2e-artifacts/layout-*.png` for the person reviewing the run.
//!
//! Needs a display (scripts/test.sh runs it under `xvfb-run -a`); without one it fails.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use decima_core::{NewMessage, Role};
use decima_store::Store;
use support::{Driver, click, connect, shot, wait_for_text, wait_until};

const LONG_TITLE: &str = "Reconcile the Q3 supplier invoices against the general ledger and \
                          explain every difference above five hundred euros";

/// Measures the page as laid out now, in one script.
async fn measure(client: &fantoccini::Client) -> serde_json::Value {
    client
        .execute(
            "const d = document.documentElement;\
             const box = (s) => { const e = document.querySelector(s); if (!e) return null;\
               const r = e.getBoundingClientRect(); return { w: r.width, h: r.height,\
               left: r.left, right: r.right, visible: r.width > 0 && r.height > 0 }; };\
             const h = document.querySelector('[data-testid=conversation-title]');\
             const style = h ? getComputedStyle(h) : null;\
             return { innerWidth: window.innerWidth, innerHeight: window.innerHeight,\
               scrollWidth: Math.max(d.scrollWidth, document.body.scrollWidth),\
               clientWidth: d.clientWidth,\
               header: box('.conversation-header'), title: box('[data-testid=conversation-title]'),\
               titleLine: style ? parseFloat(style.lineHeight) || 24 : 0,\
               titleOverflow: style ? style.textOverflow : null,\
               titleTip: h ? h.getAttribute('title') : null,\
               sidebar: box('[data-testid=sidebar]'), toggle: box('[data-testid=sidebar-toggle]'),\
               composer: box('[data-testid=send]') };",
            vec![],
        )
        .await
        .unwrap()
}

/// Fails with `what` when the page scrolls sideways now: an opened view must fit the window.
async fn assert_not_sideways(client: &fantoccini::Client, what: &str) {
    let m = measure(client).await;
    assert!(
        m["scrollWidth"].as_f64().unwrap() <= m["clientWidth"].as_f64().unwrap() + 0.5,
        "{what} pushes the page sideways: {m}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_window_holds_at_720_900_and_1280_wide_in_english_and_chinese() {
    let _alone = support::one_at_a_time().await;
    let data = tempfile::tempdir().unwrap();
    let conversation = {
        let store = Store::open_in_dir(data.path(), decima_llm::tokens::store_counter())
            .await
            .unwrap();
        let messages = [
            NewMessage::new(Role::User, "Which invoices do not match the ledger?"),
            NewMessage::new(
                Role::Assistant,
                "Three do not match:\n\n```\nINV-2026-000123  supplier=Nordwind GmbH  amount=12,480.00 EUR  ledger=11,980.00 EUR  difference=500.00 EUR\n```\n\n| invoice | difference |\n| --- | --- |\n| INV-2026-000123 | 500.00 EUR |",
            ),
        ];
        let c = store
            .conversations()
            .import(LONG_TITLE, None, &messages)
            .await
            .unwrap();
        store
            .conversations()
            .import(
                "季度供应商发票与总账核对，逐项说明超过五百欧元的差异",
                None,
                &messages,
            )
            .await
            .unwrap();
        // A finished run with what its calls carried and cost, for the run history's row and the
        // meter's breakdown (the cache share, the cost).
        let run = store
            .executions()
            .start(
                decima_core::ExecutionId::new(),
                &decima_store::NewExecution {
                    conversation_id: c.id,
                    parent_id: None,
                    depth: 0,
                    task: "Reconcile the Q3 invoices against the ledger".into(),
                    sandbox: decima_store::SandboxKind::Host,
                    provider_id: None,
                    workspace: None,
                    options: serde_json::json!({}),
                },
            )
            .await
            .unwrap();
        for (tokens_in, read) in [(18_400, 0), (21_950, 18_300), (25_020, 21_900)] {
            let usage = decima_store::CallUsage {
                tokens_in,
                tokens_out: 420,
                cache_read_tokens: read,
                cache_write_tokens: 0,
            };
            store
                .executions()
                .add_model_call(run.id, Some(usage), Some(u64::from(tokens_in) * 2))
                .await
                .unwrap();
        }
        store
            .executions()
            .finish(
                run.id,
                decima_store::ExecutionStatus::Succeeded,
                Some("Three do not match."),
                None,
            )
            .await
            .unwrap();
        // A provider whose editor (prices, cache lifetime) the settings open below.
        store
            .providers()
            .create(decima_store::NewProvider {
                kind: "anthropic".into(),
                model: "claude-sonnet-4-5".into(),
                ..support::provider("claude", "https://api.anthropic.com".into(), 200_000)
            })
            .await
            .unwrap();
        // An MCP server on the host with a long command, for the settings' MCP section.
        let server = decima_mcp::ServerConfig::stdio(
            "warehouse-postgres",
            "/opt/analytics/bin/mcp-server-postgres",
            vec![
                "--connection-string-from-environment".into(),
                "--read-only".into(),
                "--schema=finance_reporting_2025".into(),
            ],
        )
        .at(decima_mcp::Place::Host);
        decima_runtime::mcp::servers::add(&store, data.path(), &[server])
            .await
            .unwrap();
        // A file the analyst added to the workspace, with a long name: the panel lists it.
        let place = decima_runtime::workspace::place(&store, data.path(), c.id)
            .await
            .unwrap();
        let source = tempfile::tempdir().unwrap();
        let csv = source
            .path()
            .join("supplier-invoices-q3-2026-reconciled-against-general-ledger.csv");
        std::fs::write(
            &csv,
            "invoice,difference
INV-2026-000123,500.00 EUR
",
        )
        .unwrap();
        decima_runtime::workspace::add_files(&store, &place, c.id, &[csv])
            .await
            .unwrap();
        // A command's output and an answer whose figures are linked to it, derived from it, and
        // held by nothing: the answer's figures are links, and one opens its source.
        let mut asked = NewMessage::new(Role::Assistant, "");
        asked.tool_calls.push(decima_core::ToolCall {
            id: "call_1".into(),
            name: "shell".into(),
            arguments: r#"{"command":"cat differences.csv"}"#.into(),
            signature: None,
        });
        store.messages().append(c.id, asked).await.unwrap();
        let mut output = NewMessage::new(
            Role::Tool,
            "invoice,difference\nINV-2026-000123,500.00\nINV-2026-000777,1250.00\n[exit code 0]",
        );
        output.tool_call_id = Some("call_1".into());
        output.name = Some("shell".into());
        store.messages().append(c.id, output).await.unwrap();
        let answer = store
            .messages()
            .append(
                c.id,
                NewMessage::new(
                    Role::Assistant,
                    "The largest difference is 1,250.00 EUR; with the other it comes to \
                     1,750.00 EUR. A third one of 320.00 EUR is still unexplained.",
                ),
            )
            .await
            .unwrap();
        store
            .answers()
            .record(
                c.id,
                answer.id,
                &decima_store::AnswerRecord {
                    ended: decima_store::AnswerEnd::Complete,
                    usage: None,
                    cost_microdollars: None,
                    prompt_truncated: false,
                    calls_from_text: None,
                },
            )
            .await
            .unwrap();
        // The tenth man recomputed the unexplained figure from the run's inputs and got
        // another value: the figure stays unlinked, and opens the receipt.
        let review = store
            .reviews()
            .insert(&decima_store::NewReview {
                conversation_id: c.id,
                execution_id: None,
                mode: "full_history".into(),
                mode_argument: None,
                review_type: "recompute".into(),
                focus: None,
                trigger: "user".into(),
                risk_level: "high".parse().unwrap(),
                summary: "Recomputed 1 figure: it differs.".into(),
                findings: vec![],
                open_questions: vec![],
                closes: vec![],
                reviewed_from_seq: 0,
                reviewed_through_seq: answer.seq,
                language: None,
                provider: None,
                model: None,
                input_tokens: 0,
                passes: vec![],
                cache_key: "recompute-e2e".into(),
            })
            .await
            .unwrap();
        let text = "320.00 EUR";
        store
            .figure_receipts()
            .record(
                c.id,
                &decima_store::FigureReceipt {
                    message_seq: answer.seq,
                    start: u32::try_from(answer.content.find(text).unwrap()).unwrap(),
                    review_id: review.id,
                    text: text.into(),
                    recomputed: Some("310.00".into()),
                    agrees: false,
                    derivation: "Summed the differences of the invoices no ledger line matches \
                                 in differences.csv, whose amounts are in euros."
                        .into(),
                    code: "$ python3 -c \"import csv; rows = list(csv.DictReader(open('differences.csv'))); \
                           print(sum(float(r['difference']) for r in rows if r['invoice'].startswith('INV-2026-0009')))\"\n\
                           310.0\n[exit code 0]"
                        .into(),
                    created_at: decima_core::Timestamp::now(),
                },
            )
            .await
            .unwrap();
        store.close().await;
        c.id
    };

    let driver = Driver::start();
    let client = connect(&driver, data.path()).await;
    let item = format!("[data-testid=conversation-item][data-conversation-id='{conversation}']");
    wait_for_text(&client, &item, "Reconcile the Q3").await;
    click(
        &client,
        &format!("{item} [data-testid=conversation-title-button]"),
    )
    .await;
    wait_for_text(
        &client,
        "[data-testid=conversation-title]",
        "Reconcile the Q3",
    )
    .await;

    for (lang, switch) in [("en", None), ("zh", Some("中文"))] {
        if let Some(label) = switch {
            support::click_text(&client, "[data-testid=language-switch] button", label).await;
            wait_until(&client, "the window switched to Chinese", || async {
                support::attr(&client, "html", "lang").await.as_deref() == Some("zh-CN")
            })
            .await;
        }
        // Curly quotes: drawn by a Latin font in English (narrow), by a CJK one in Chinese
        // (full-width, as Chinese text sets them).
        let quotes = client
            .execute(
                "const s = document.createElement('span'); s.textContent = '“”“”';\
                 document.body.appendChild(s); const w = s.getBoundingClientRect().width;\
                 const em = parseFloat(getComputedStyle(s).fontSize); s.remove(); return w / em;",
                vec![],
            )
            .await
            .unwrap()
            .as_f64()
            .unwrap();
        if lang == "en" {
            assert!(
                quotes < 2.5,
                "four curly quotes take {quotes:.2} em in English: a CJK font draws them"
            );
        } else {
            assert!(
                quotes > 3.0,
                "four curly quotes take {quotes:.2} em in Chinese"
            );
        }
        for (width, height) in [(1280u32, 800u32), (900, 700), (720, 600)] {
            client.set_window_size(width, height).await.unwrap();
            wait_until(
                &client,
                &format!("the window became {width} wide"),
                || async {
                    measure(&client).await["innerWidth"].as_u64() == Some(u64::from(width))
                },
            )
            .await;
            let m = measure(&client).await;
            shot(&client, &format!("layout-{lang}-{width}x{height}.png")).await;
            let at = format!("{lang} at {width}×{height}: {m}");
            assert!(
                m["scrollWidth"].as_f64().unwrap() <= m["clientWidth"].as_f64().unwrap() + 0.5,
                "the page scrolls sideways, {at}"
            );
            let header = &m["header"];
            assert!(
                header["h"].as_f64().unwrap() <= 140.0,
                "the conversation header grew too tall, {at}"
            );
            let title = &m["title"];
            assert!(
                title["h"].as_f64().unwrap() <= m["titleLine"].as_f64().unwrap() * 1.6,
                "the title wraps or stacks instead of ending in an ellipsis, {at}"
            );
            assert!(
                title["w"].as_f64().unwrap() >= 120.0,
                "the title is squeezed to nothing, {at}"
            );
            assert_eq!(m["titleOverflow"], "ellipsis", "{at}");
            assert_eq!(
                m["titleTip"], LONG_TITLE,
                "the tooltip holds the whole title, {at}"
            );
            assert!(
                m["composer"]["visible"].as_bool().unwrap(),
                "no Send button, {at}"
            );
            assert!(
                m["composer"]["right"].as_f64().unwrap() <= f64::from(width) + 0.5,
                "Send lies outside the window, {at}"
            );
            open_each_view(&client, lang, width).await;
            let sidebar_shown = m["sidebar"]["visible"].as_bool() == Some(true);
            assert!(
                m["toggle"]["visible"].as_bool().unwrap(),
                "no button to show or hide the conversations, {at}"
            );
            if width >= 1000 {
                assert!(
                    sidebar_shown,
                    "the sidebar is hidden on a wide window, {at}"
                );
            } else {
                assert!(
                    !sidebar_shown,
                    "the sidebar takes a narrow window's room, {at}"
                );
                // The button brings it back over the conversation, and opening one folds it.
                click(&client, "[data-testid=sidebar-toggle]").await;
                wait_until(&client, "the sidebar opened over the page", || async {
                    measure(&client).await["sidebar"]["visible"].as_bool() == Some(true)
                })
                .await;
                let m = measure(&client).await;
                assert!(
                    m["scrollWidth"].as_f64().unwrap() <= m["clientWidth"].as_f64().unwrap() + 0.5,
                    "the open sidebar pushes the page sideways, {lang} at {width}: {m}"
                );
                shot(
                    &client,
                    &format!("layout-{lang}-{width}x{height}-sidebar.png"),
                )
                .await;
                click(
                    &client,
                    &format!("{item} [data-testid=conversation-title-button]"),
                )
                .await;
                wait_until(&client, "the sidebar folded after opening", || async {
                    measure(&client).await["sidebar"]["visible"].as_bool() != Some(true)
                })
                .await;
            }
        }
    }
    client.close().await.unwrap();
}

/// Opens the views a conversation has besides its messages (the find bar, the run history, the
/// run options) and the settings one at a time, checks that none pushes the page sideways, and keeps a
/// screenshot of each for the person reviewing the run (`view-*.png`).
async fn open_each_view(client: &fantoccini::Client, lang: &str, width: u32) {
    for (button, view, close) in [
        ("find-button", "find-bar", "[data-testid=find-close]"),
        (
            "run-history-button",
            "run-history",
            "[data-testid=run-history-button]",
        ),
        (
            "run-options-button",
            "run-options",
            "[data-testid=run-options-button]",
        ),
        (
            "context-breakdown-toggle",
            "context-breakdown",
            "[data-testid=context-breakdown-toggle]",
        ),
        (
            "workspace-file-open",
            "workspace-preview",
            "[data-testid=workspace-preview-close]",
        ),
        // The export menu, its notebook item among the formats.
        (
            "export-button",
            "export-ipynb",
            "[data-testid=export-button]",
        ),
    ] {
        click(client, &format!("[data-testid={button}]")).await;
        wait_until(client, &format!("{view} did not open"), || async {
            support::count(client, &format!("[data-testid={view}]")).await == 1
        })
        .await;
        assert_not_sideways(client, &format!("{view}, {lang} at {width},")).await;
        shot(client, &format!("view-{lang}-{width}-{view}.png")).await;
        click(client, close).await;
        wait_until(client, &format!("{view} did not close"), || async {
            support::count(client, &format!("[data-testid={view}]")).await == 0
        })
        .await;
    }
    // The answer's figures: a linked one opens its output with the value marked, which stays
    // within the window; the unsupported one is marked.
    wait_until(client, "the answer's figures are not links", || async {
        support::count(client, "[data-testid=figure].figure-linked").await >= 1
            && support::count(client, "[data-testid=figure].figure-unlinked").await >= 1
    })
    .await;
    click(client, "[data-testid=figure].figure-linked").await;
    wait_until(client, "the figure's source is not marked", || async {
        support::count(client, "[data-testid=figure-source]").await == 1
    })
    .await;
    assert_not_sideways(client, &format!("a figure's source, {lang} at {width},")).await;
    shot(client, &format!("view-{lang}-{width}-figure-source.png")).await;
    // The unexplained figure, recomputed by the tenth man to another value: its receipt opens,
    // its code scrolls inside the dialog, and nothing sticks out of the window.
    client
        .execute(
            "[...document.querySelectorAll('[data-testid=figure]')]\
               .find((e) => e.textContent === '320.00 EUR').click();",
            vec![],
        )
        .await
        .unwrap();
    wait_until(client, "the receipt did not open", || async {
        support::count(client, "[data-testid=figure-receipt]").await == 1
    })
    .await;
    assert_not_sideways(client, &format!("the receipt, {lang} at {width},")).await;
    let fits = client
        .execute(
            "const d = document.querySelector('[data-testid=figure-receipt]').getBoundingClientRect();\
             return d.right <= window.innerWidth + 0.5 && d.bottom <= window.innerHeight + 0.5;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        fits, true,
        "the receipt is larger than the window, {lang} at {width}"
    );
    shot(client, &format!("view-{lang}-{width}-figure-receipt.png")).await;
    click(client, "[data-testid=figure-receipt-close]").await;
    wait_until(client, "the receipt did not close", || async {
        support::count(client, "[data-testid=figure-receipt]").await == 0
    })
    .await;
    // The review panel's recompute form lists the newest answer's figures, each with a box to
    // mark it; the list stays within the panel and the window.
    click(client, "[data-testid=tenth-man-review-button]").await;
    click(client, "[data-testid=review-new]").await;
    client
        .find(fantoccini::Locator::Css("[data-testid=review-type]"))
        .await
        .unwrap()
        .select_by_value("recompute")
        .await
        .unwrap();
    wait_until(
        client,
        "the answer's figures are not offered to mark",
        || async { support::count(client, "[data-testid=review-figure-mark]").await == 3 },
    )
    .await;
    assert_not_sideways(client, &format!("the figures to mark, {lang} at {width},")).await;
    let inside = client
        .execute(
            "const d = document.querySelector('[data-testid=tenth-man-review-dialog]').getBoundingClientRect();\
             const f = document.querySelector('[data-testid=review-figure-marks]').getBoundingClientRect();\
             return f.left >= d.left - 0.5 && f.right <= d.right + 0.5 && d.right <= window.innerWidth + 0.5;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        inside, true,
        "the figures to mark stick out of the panel, {lang} at {width}"
    );
    shot(
        client,
        &format!("view-{lang}-{width}-review-figure-marks.png"),
    )
    .await;
    click(
        client,
        "[data-testid=tenth-man-review-dialog] [data-testid=review-close]",
    )
    .await;
    wait_until(client, "the review panel did not close", || async {
        support::count(client, "[data-testid=tenth-man-review-dialog]").await == 0
    })
    .await;
    // The settings: the add-provider form's fields are one line high (a flex basis once made
    // each input 140 px tall), and nothing in the dialog is wider than the window.
    click(client, "[data-testid=settings-button]").await;
    wait_until(client, "the settings did not open", || async {
        support::count(client, "[data-testid=settings-dialog]").await == 1
    })
    .await;
    let fields = client
        .execute(
            "const d = document.querySelector('[data-testid=settings-dialog]');\
             const inputs = [...d.querySelectorAll('[data-testid=provider-form] input')];\
             return { count: inputs.length,\
               tallest: Math.max(...inputs.map((i) => i.getBoundingClientRect().height)),\
               right: d.getBoundingClientRect().right, innerWidth: window.innerWidth };",
            vec![],
        )
        .await
        .unwrap();
    assert!(
        fields["count"].as_u64().unwrap() >= 4,
        "the add-provider form is missing, {lang} at {width}: {fields}"
    );
    assert!(
        fields["tallest"].as_f64().unwrap() <= 40.0,
        "a settings field is taller than a line, {lang} at {width}: {fields}"
    );
    assert!(
        fields["right"].as_f64().unwrap() <= fields["innerWidth"].as_f64().unwrap() + 0.5,
        "the settings are wider than the window, {lang} at {width}: {fields}"
    );
    shot(client, &format!("view-{lang}-{width}-settings.png")).await;
    // The MCP servers: the seeded one is listed, and nothing in the section is wider than the
    // dialog, the add form's further options open.
    click(client, "[data-testid=settings-tab-mcp]").await;
    let mcp = client
        .execute(
            "const d = document.querySelector('[data-testid=settings-dialog]');\
             const s = d.querySelector('[data-testid=mcp-servers]');\
             s.querySelector('[data-testid=mcp-more]').open = true;\
             s.scrollIntoView();\
             const parts = [...s.querySelectorAll('*')];\
             return { servers: s.querySelectorAll('[data-testid=mcp-server]').length,\
               right: Math.max(...parts.map((p) => p.getBoundingClientRect().right)),\
               dialog: d.getBoundingClientRect().right };",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(mcp["servers"], 1, "{lang} at {width}: {mcp}");
    assert!(
        mcp["right"].as_f64().unwrap() <= mcp["dialog"].as_f64().unwrap() + 0.5,
        "the MCP section is wider than the settings, {lang} at {width}: {mcp}"
    );
    shot(client, &format!("view-{lang}-{width}-mcp.png")).await;
    // The sandbox section says where the python tool runs, on one line or wrapped, never wider
    // than the dialog.
    click(client, "[data-testid=settings-tab-sandbox]").await;
    let python = client
        .execute(
            "const d = document.querySelector('[data-testid=settings-dialog]');\
             const p = d.querySelector('[data-testid=python-kernel]');\
             p.scrollIntoView();\
             const r = p.getBoundingClientRect();\
             return { visible: r.width > 0 && r.height > 0, right: r.right,\
               dialog: d.getBoundingClientRect().right, text: p.textContent };",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(python["visible"], true, "{lang} at {width}: {python}");
    assert!(
        python["right"].as_f64().unwrap() <= python["dialog"].as_f64().unwrap() + 0.5,
        "the python tool's line is wider than the settings, {lang} at {width}: {python}"
    );
    shot(client, &format!("view-{lang}-{width}-sandbox.png")).await;
    // The provider's editor, with its four prices and the cache lifetime: one line each, and
    // nothing wider than the window.
    click(client, "[data-testid=settings-tab-models]").await;
    click(client, "[data-testid=provider-edit]").await;
    wait_until(client, "the provider editor did not open", || async {
        support::count(client, "[data-testid=edit-price-output]").await == 1
    })
    .await;
    let editor = client
        .execute(
            "const d = document.querySelector('[data-testid=settings-dialog]');\
             const e = d.querySelector('[data-testid=provider-editor]');\
             const fields = [...e.querySelectorAll('input, select')];\
             return { count: fields.length,\
               tallest: Math.max(...fields.map((i) => i.getBoundingClientRect().height)),\
               right: Math.max(...fields.map((i) => i.getBoundingClientRect().right)),\
               dialog: d.getBoundingClientRect().right, innerWidth: window.innerWidth };",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        editor["count"], 9,
        "address, model, window, 4 prices, lifetime, key: {editor}"
    );
    assert!(
        editor["tallest"].as_f64().unwrap() <= 40.0,
        "a provider field is taller than a line, {lang} at {width}: {editor}"
    );
    assert!(
        editor["right"].as_f64().unwrap() <= editor["dialog"].as_f64().unwrap() + 0.5
            && editor["dialog"].as_f64().unwrap() <= editor["innerWidth"].as_f64().unwrap() + 0.5,
        "the provider editor is wider than the settings, {lang} at {width}: {editor}"
    );
    shot(client, &format!("view-{lang}-{width}-provider-editor.png")).await;
    click(client, "[data-testid=provider-editor] button[type=button]").await;
    click(client, "[data-testid=settings-close]").await;
    wait_until(client, "the settings did not close", || async {
        support::count(client, "[data-testid=settings-dialog]").await == 0
    })
    .await;
}

/// A run that waits because its answer states figures no output holds: the recovery panel lists
/// each in its sentence with its own choices and a field for the right value, and holds at
/// 900×700 and 1,280×800 in both languages (`view-*-recovery-figures.png`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_unlinked_figures_panel_holds_at_two_sizes_in_both_languages() {
    let _alone = support::one_at_a_time().await;
    let data = tempfile::tempdir().unwrap();
    {
        let store = Store::open_in_dir(data.path(), decima_llm::tokens::store_counter())
            .await
            .unwrap();
        let answer = "West made 987,654 in 2024, and margins rose from 11.2% to 12.5% over the \
                      year while the supplier Nordwind GmbH invoiced 4,310 units.";
        let c = store
            .conversations()
            .import(
                "Regional revenue",
                None,
                &[
                    NewMessage::new(Role::User, "How did the regions do?"),
                    NewMessage::new(Role::Assistant, answer),
                ],
            )
            .await
            .unwrap();
        let run = store
            .executions()
            .start(
                decima_core::ExecutionId::new(),
                &decima_store::NewExecution {
                    conversation_id: c.id,
                    parent_id: None,
                    depth: 0,
                    task: "How did the regions do?".into(),
                    sandbox: decima_store::SandboxKind::Host,
                    provider_id: None,
                    workspace: None,
                    options: serde_json::json!({}),
                },
            )
            .await
            .unwrap();
        let figures: Vec<serde_json::Value> = ["987,654", "11.2%", "12.5%", "4,310"]
            .iter()
            .map(|text| {
                let start = answer.find(text).unwrap();
                let mut figure = serde_json::json!({"message_seq": 2, "start": start,
                    "end": start + text.len(), "text": text, "sentence": answer});
                // One of them is in a report the run wrote, and its row says which.
                if *text == "4,310" {
                    figure["path"] = serde_json::json!("reports/q3-regional-summary.md");
                }
                figure
            })
            .collect();
        store
            .failures()
            .record(&decima_store::NewFailure {
                execution_id: run.id,
                todo_id: None,
                class: decima_core::FailureClass::Unlinked,
                message: "4 figures of the answer are in no tool output: 987,654, 11.2%, 12.5%, \
                          4,310"
                    .into(),
                details: serde_json::json!({"trigger": "unlinked_figures", "figures": figures}),
                snapshot_id: None,
                rolled_back: serde_json::json!({}),
                suggested_actions: serde_json::json!([
                    "verify", "estimate", "correct", "accept", "abort"
                ]),
            })
            .await
            .unwrap();
        store
            .executions()
            .set_status(run.id, decima_store::ExecutionStatus::AwaitingUser)
            .await
            .unwrap();
        store.close().await;
    }

    let driver = Driver::start();
    let client = connect(&driver, data.path()).await;
    let item = "[data-testid=conversation-item]";
    wait_for_text(&client, item, "Regional revenue").await;
    click(
        &client,
        &format!("{item} [data-testid=conversation-title-button]"),
    )
    .await;
    for (lang, switch) in [("en", None), ("zh", Some("中文"))] {
        if let Some(label) = switch {
            // The panel is modal: Escape sets it aside, the switch is clicked, the bar brings
            // it back.
            client
                .active_element()
                .await
                .unwrap()
                .send_keys("\u{e00c}")
                .await
                .unwrap();
            support::click_text(&client, "[data-testid=language-switch] button", label).await;
            wait_until(&client, "the window switched to Chinese", || async {
                support::attr(&client, "html", "lang").await.as_deref() == Some("zh-CN")
            })
            .await;
            click(&client, "[data-testid=recovery-reopen]").await;
        }
        for (width, height) in [(1280u32, 800u32), (900, 700)] {
            client.set_window_size(width, height).await.unwrap();
            wait_until(&client, "the panel lists the four figures", || async {
                support::count(&client, "[data-testid=recovery-figure]").await == 4
            })
            .await;
            let panel = client
                .execute(
                    "const p = document.querySelector('[data-testid=failure-recovery]');\
                     const r = p.getBoundingClientRect();\
                     const parts = [...p.querySelectorAll('*')];\
                     return { right: Math.max(...parts.map((e) => e.getBoundingClientRect().right)),\
                       panelRight: r.right, innerWidth: window.innerWidth,\
                       fields: p.querySelectorAll('[data-testid=recovery-figure-value]').length,\
                       report: p.querySelector('[data-testid=recovery-figure-report]')?.textContent ?? null };",
                    vec![],
                )
                .await
                .unwrap();
            let at = format!("{lang} at {width}×{height}: {panel}");
            assert_eq!(panel["fields"], 4, "{at}");
            assert!(
                panel["report"]
                    .as_str()
                    .is_some_and(|r| r.contains("reports/q3-regional-summary.md")),
                "the report's figure names its report, {at}"
            );
            assert!(
                panel["panelRight"].as_f64().unwrap() <= f64::from(width) + 0.5,
                "the panel is wider than the window, {at}"
            );
            assert!(
                panel["right"].as_f64().unwrap() <= panel["panelRight"].as_f64().unwrap() + 0.5,
                "something in the panel sticks out of it, {at}"
            );
            shot(
                &client,
                &format!("view-{lang}-{width}-recovery-figures.png"),
            )
            .await;
        }
    }
    client.close().await.unwrap();
}
