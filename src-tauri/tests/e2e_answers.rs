//! Answers that are not whole and the window a server serves, in the real app (WebKit through
//! tauri-driver, a real SQLite file, the wire-level test server): a conversation whose earlier
//! answer was cut by the output limit and whose last one was stopped shows each mark, the
//! prompt a server cut is said, Continue under the newest answer starts a run that continues
//! it; Settings says a provider's window "as the server reports"; in English and Chinese, at
//! 1280×800 and 900×700. Screenshots go to `target/e2e-artifacts/answers-*.png`.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use decima_core::{NewMessage, Role};
use decima_store::{AnswerEnd, AnswerRecord, CallUsage, Store};
use decima_testkit::{LlmServer, Reply, Turn};
use serde_json::json;
use support::{Driver, click, connect, count, shot, text_of, wait_for_text, wait_until};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cut_and_stopped_answers_are_marked_continued_and_the_served_window_is_shown() {
    let _alone = support::one_at_a_time().await;
    let data = tempfile::tempdir().unwrap();
    let db = data.path().join("decima.db");
    let server = LlmServer::start().await;
    server.respond_with(|_| {
        Reply::Stream(Turn {
            text: vec!["…and the South region closed at 980 EUR.".into()],
            ..Turn::default()
        })
    });
    let conversation = {
        let store = Store::open_in_dir(data.path(), decima_llm::tokens::store_counter())
            .await
            .unwrap();
        let mut provider = support::provider("local", server.openai_base_url(), 8_192);
        provider.settings = json!({
            "window_source": "served",
            "served_window": 8192,
            "structured_output": true,
        });
        store.providers().create(provider).await.unwrap();
        let c = store
            .conversations()
            .create("Regional totals 区域合计", None)
            .await
            .unwrap();
        let say = |role, text: &str| NewMessage::new(role, text);
        store
            .messages()
            .append(c.id, say(Role::User, "List the regional totals."))
            .await
            .unwrap();
        let cut = store
            .messages()
            .append(
                c.id,
                say(Role::Assistant, "North 1,204 EUR, East 2,310 EUR, West"),
            )
            .await
            .unwrap();
        let usage = CallUsage {
            tokens_in: 900,
            tokens_out: 512,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
        };
        store
            .answers()
            .record(
                c.id,
                cut.id,
                &AnswerRecord {
                    ended: AnswerEnd::Cut,
                    usage: Some(usage),
                    prompt_truncated: true,
                    ..AnswerRecord::default()
                },
            )
            .await
            .unwrap();
        store
            .messages()
            .append(c.id, say(Role::User, "And the South?"))
            .await
            .unwrap();
        let stopped = store
            .messages()
            .append(c.id, say(Role::Assistant, "The South region"))
            .await
            .unwrap();
        store
            .answers()
            .record(
                c.id,
                stopped.id,
                &AnswerRecord {
                    ended: AnswerEnd::Stopped,
                    ..AnswerRecord::default()
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
    wait_for_text(&client, &item, "Regional totals").await;
    click(
        &client,
        &format!("{item} [data-testid=conversation-title-button]"),
    )
    .await;
    wait_for_text(&client, "[data-ended=stopped] .answer-end-mark", "Stopped").await;
    assert_eq!(
        text_of(&client, "[data-ended=cut] .answer-end-mark").await,
        "Cut by the output limit"
    );
    assert!(
        text_of(&client, "[data-testid=prompt-truncated]")
            .await
            .contains("dropped part of the conversation")
    );
    // Continue is offered under the newest answer only.
    assert_eq!(count(&client, "[data-testid=answer-continue]").await, 1);

    for (lang, switch) in [("en", None), ("zh", Some("中文"))] {
        if let Some(label) = switch {
            support::click_text(&client, "[data-testid=language-switch] button", label).await;
            wait_for_text(
                &client,
                "[data-ended=cut] .answer-end-mark",
                "被输出上限截断",
            )
            .await;
        }
        for (width, height) in [(1280u32, 800u32), (900, 700)] {
            client.set_window_size(width, height).await.unwrap();
            tokio::time::sleep(std::time::Duration::from_millis(400)).await;
            shot(&client, &format!("answers-{lang}-{width}x{height}.png")).await;
        }
        click(&client, "[data-testid=settings-button]").await;
        let words = if lang == "en" {
            "8,192 tokens, as the server reports"
        } else {
            "8,192 个 token，由服务器报告"
        };
        wait_for_text(&client, "[data-testid=provider-window-source]", words).await;
        shot(&client, &format!("answers-settings-{lang}.png")).await;
        click(&client, "[data-testid=settings-close]").await;
        wait_until(&client, "Settings closed", || async {
            count(&client, "[data-testid=provider-window-source]").await == 0
        })
        .await;
    }

    // Continue starts a run that continues the stopped answer.
    client.set_window_size(1280, 800).await.unwrap();
    click(&client, "[data-testid=answer-continue]").await;
    wait_for_text(
        &client,
        "[data-testid=message-list]",
        "South region closed at 980 EUR",
    )
    .await;
    let tasks: Vec<(String,)> =
        support::rows(&db, "SELECT task FROM executions ORDER BY created_at").await;
    assert_eq!(tasks, [("Continue where you stopped.".to_owned(),)]);
    shot(&client, "answers-continued.png").await;
}
