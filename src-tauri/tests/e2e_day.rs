//! What an analyst meets through a working day, in the real app (WebKit through tauri-driver, a
//! real SQLite file): a primary button keeps its colour under the pointer in both themes; a
//! narrow window (900×700) keeps the workspace panel of a conversation that has no files yet;
//! an expanded tool call shows its command and its Python as highlighted code with real line
//! breaks. In English and Chinese, at 1280×800 and 900×700; screenshots go to
//! `target/e2e-artifacts/day-*.png`.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use decima_core::{NewMessage, Role, ToolCall};
use decima_store::Store;
use fantoccini::actions::{InputSource, MouseActions, PointerAction};
use fantoccini::{Client, Locator};
use support::{Driver, click, connect, count, on_screen, shot, wait_for_text, wait_until};

/// The computed background and text colour of the first element `css` matches.
async fn colours(client: &Client, css: &str) -> (String, String) {
    let v = client
        .execute(
            "const e = document.querySelector(arguments[0]); const s = getComputedStyle(e);\
             return [s.backgroundColor, s.color];",
            vec![serde_json::json!(css)],
        )
        .await
        .unwrap();
    (
        v[0].as_str().unwrap().to_owned(),
        v[1].as_str().unwrap().to_owned(),
    )
}

/// Moves the pointer onto the first element `css` matches, from elsewhere: a pointer the
/// driver already places there sends no move, and the engine would not hover it again.
async fn hover(client: &Client, css: &str) {
    let away = client
        .find(Locator::Css("[data-testid=conversation-title]"))
        .await
        .unwrap();
    let element = client.find(Locator::Css(css)).await.unwrap();
    let mouse = MouseActions::new("mouse".into())
        .then(PointerAction::MoveToElement {
            element: away,
            duration: None,
            x: 0.0,
            y: 0.0,
        })
        .then(PointerAction::MoveToElement {
            element,
            duration: None,
            x: 0.0,
            y: 0.0,
        });
    client.perform_actions(mouse).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
}

/// The relative luminance contrast of two `rgb(…)` colours (WCAG), to say "readable".
fn contrast(a: &str, b: &str) -> f64 {
    let channels = |c: &str| -> Vec<f64> {
        c.trim_start_matches("rgba(")
            .trim_start_matches("rgb(")
            .trim_end_matches(')')
            .split(',')
            .take(3)
            .map(|x| x.trim().parse::<f64>().unwrap() / 255.0)
            .collect()
    };
    let luminance = |c: &str| {
        let v: Vec<f64> = channels(c)
            .into_iter()
            .map(|x| {
                if x <= 0.03928 {
                    x / 12.92
                } else {
                    ((x + 0.055) / 1.055).powf(2.4)
                }
            })
            .collect();
        0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]
    };
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buttons_keep_their_colour_a_narrow_window_keeps_the_workspace_and_code_reads_as_code() {
    let _alone = support::one_at_a_time().await;
    let data = tempfile::tempdir().unwrap();
    let (quiet, coded) = {
        let store = Store::open_in_dir(data.path(), decima_llm::tokens::store_counter())
            .await
            .unwrap();
        store
            .providers()
            .create(support::provider(
                "local",
                "http://127.0.0.1:9/v1".into(),
                32_000,
            ))
            .await
            .unwrap();
        let quiet = store
            .conversations()
            .create("No files yet", None)
            .await
            .unwrap();
        let coded = store
            .conversations()
            .create("Ledger totals 账目合计", None)
            .await
            .unwrap();
        store
            .messages()
            .append(coded.id, NewMessage::new(Role::User, "Total the ledger."))
            .await
            .unwrap();
        let mut answer = NewMessage::new(Role::Assistant, "Let me look.");
        answer.tool_calls = vec![
            ToolCall {
                id: "call_0".into(),
                name: "shell".into(),
                arguments: serde_json::json!({"command": "cd data &&\nls -la | grep csv"})
                    .to_string(),
                signature: None,
            },
            ToolCall {
                id: "call_1".into(),
                name: "python".into(),
                arguments: serde_json::json!({
                    "code": "import pandas as pd\ndf = pd.read_csv(\"ledger.csv\")\nprint(df[\"amount\"].sum())"
                })
                .to_string(),
                signature: None,
            },
        ];
        store.messages().append(coded.id, answer).await.unwrap();
        store.close().await;
        (quiet.id, coded.id)
    };

    let driver = Driver::start();
    let client = connect(&driver, data.path()).await;
    client.set_window_size(1280, 800).await.unwrap();
    let open = |id: decima_core::ConversationId| {
        format!(
            "[data-testid=conversation-item][data-conversation-id='{id}'] \
             [data-testid=conversation-title-button]"
        )
    };

    // Send, hovered, in both themes: its own colour only darker, its text readable.
    wait_for_text(&client, "[data-testid=conversation-list]", "No files yet").await;
    click(&client, &open(quiet)).await;
    support::wait_until(&client, "the composer", || async {
        count(&client, "[data-testid=composer-input]").await == 1
    })
    .await;
    client
        .find(Locator::Css("[data-testid=composer-input]"))
        .await
        .unwrap()
        .send_keys("Chart the ledger")
        .await
        .unwrap();
    for theme in ["light", "dark"] {
        if theme == "dark" {
            click(&client, "[data-testid=settings-button]").await;
            // The dialog's lists load after it opens and move the theme buttons: the click is
            // made again until the theme took.
            click(&client, "[data-testid=settings-tab-appearance]").await;
            wait_until(&client, "the dark theme", || async {
                click(&client, "[data-theme-choice=dark]").await;
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                client
                    .execute("return document.documentElement.dataset.theme;", vec![])
                    .await
                    .unwrap()
                    == "dark"
            })
            .await;
            click(&client, "[data-testid=settings-close]").await;
            wait_until(&client, "Settings closed", || async {
                count(&client, "[data-testid=theme-switch]").await == 0
            })
            .await;
        }
        let (rest_bg, rest_fg) = colours(&client, "[data-testid=send]").await;
        let rest = contrast(&rest_bg, &rest_fg);
        assert!(
            rest >= 4.5,
            "{theme}: Send reads {rest_fg} on {rest_bg} (contrast {rest:.1})"
        );
        hover(&client, "[data-testid=send]").await;
        let (bg, fg) = colours(&client, "[data-testid=send]").await;
        assert_ne!(bg, rest_bg, "{theme}: hovering shows nothing");
        let ratio = contrast(&bg, &fg);
        assert!(
            ratio >= 4.5,
            "{theme}: Send hovered reads {fg} on {bg} (contrast {ratio:.1})"
        );
        shot(&client, &format!("day-send-hovered-{theme}.png")).await;
    }

    // A narrow window keeps the workspace of a conversation with no files: the way files get in.
    client.set_window_size(900, 700).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    assert!(
        on_screen(&client, "[data-testid=workspace-add]").await,
        "Add files… is gone at 900 wide"
    );
    shot(&client, "day-narrow-workspace.png").await;

    // A call's command and Python, expanded, read as highlighted code with line breaks.
    click(&client, "[data-testid=sidebar-toggle]").await;
    click(&client, &open(coded)).await;
    wait_for_text(&client, "[data-testid=message-list]", "Let me look.").await;
    for (lang, switch) in [("en", None), ("zh", Some("中文"))] {
        if let Some(label) = switch {
            support::click_text(&client, "[data-testid=language-switch] button", label).await;
        }
        for (width, height) in [(1280u32, 800u32), (900, 700)] {
            client.set_window_size(width, height).await.unwrap();
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            let opened = client
                .execute(
                    "document.querySelectorAll('[data-testid=tool-call]').forEach(d => d.open = true);\
                     return document.querySelectorAll('[data-testid=tool-call][open]').length;",
                    vec![],
                )
                .await
                .unwrap();
            assert_eq!(opened, 2);
            wait_until(&client, "the code blocks", || async {
                count(&client, "[data-testid=tool-call-code] pre code").await == 2
            })
            .await;
            let code = client
                .execute(
                    "return [...document.querySelectorAll('[data-testid=tool-call-code] pre code')]\
                       .map(c => [c.className, c.innerText, c.querySelectorAll('span[class^=hljs]').length]);",
                    vec![],
                )
                .await
                .unwrap();
            let shell = &code[0];
            assert!(
                shell[0].as_str().unwrap().contains("language-bash"),
                "{code}"
            );
            assert_eq!(
                shell[1].as_str().unwrap().trim_end(),
                "cd data &&\nls -la | grep csv"
            );
            let python = &code[1];
            assert!(
                python[1]
                    .as_str()
                    .unwrap()
                    .contains("\ndf = pd.read_csv(\"ledger.csv\")\n")
            );
            assert!(!python[1].as_str().unwrap().contains("\\n"), "{code}");
            assert!(python[2].as_u64().unwrap() >= 2, "not highlighted: {code}");
            // The theme is dark by now: code keeps the dark ground, not the highlighter's white.
            let (ground, ink) = colours(&client, "[data-testid=tool-call-code] pre code").await;
            assert_ne!(ground, "rgb(255, 255, 255)");
            assert!(contrast(&ground, &ink) >= 4.5, "{ink} on {ground}");
            shot(&client, &format!("day-code-{lang}-{width}x{height}.png")).await;
        }
    }
}
