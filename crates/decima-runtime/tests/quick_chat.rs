//! A quick chat, a provider's own tenth man default and the title the model writes: what keeps
//! a question from becoming a long reviewed run, and names the conversation after it.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::Fixture;
use decima_runtime::agent::{self, RunOptions, RunRequest, StopOnFailure};
use decima_runtime::providers;
use decima_runtime::review::TenthManMode;
use decima_runtime::titles;
use decima_store::{ExecutionStatus, SandboxKind};
use decima_testkit::Reply;

#[tokio::test]
async fn a_quick_chat_offers_no_tool_and_no_review_follows_its_answer() {
    let f = Fixture::new().await;
    f.say("Paris is the capital of France.");
    // The tenth man in both places: a quick chat still neither offers it nor reviews.
    let outcome = agent::run(
        &f.session(&StopOnFailure),
        RunRequest {
            conversation: None,
            workspace: Some(f.workspace()),
            task: "What is the capital of France?".into(),
            sandbox: SandboxKind::Host,
            options: RunOptions {
                tenth_man: TenthManMode::Hybrid,
                quick: true,
                ..RunOptions::default()
            },
        },
    )
    .await
    .unwrap();
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    assert_eq!(
        outcome.answer.as_deref(),
        Some("Paris is the capital of France.")
    );
    let requests = f.server.requests();
    assert_eq!(requests.len(), 1, "one answer, no final review");
    let body = requests[0].json.as_ref().unwrap();
    let tools = body
        .get("tools")
        .and_then(|t| t.as_array())
        .map_or(0, Vec::len);
    assert_eq!(tools, 0, "no tool is offered: {body}");
    // The same conversation's next full run offers its tools again.
    f.say("Done.");
    let full = f
        .run_in(
            "local",
            Some(outcome.execution.conversation_id),
            "Now properly",
        )
        .await;
    assert_eq!(full.execution.status, ExecutionStatus::Succeeded);
    let offered = f.server.requests()[1].json.clone().unwrap();
    let names: Vec<&str> = offered["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(
        names.contains(&"todo_write") && names.contains(&"shell"),
        "{names:?}"
    );
}

#[tokio::test]
async fn a_providers_tenth_man_default_is_kept_and_read_back() {
    let f = Fixture::new().await;
    assert_eq!(
        providers::tenth_man_of(&f.store, Some("local"))
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        providers::tenth_man_default(&f.store, None).await.unwrap(),
        TenthManMode::default()
    );
    providers::set_tenth_man(&f.store, "local", Some(TenthManMode::Off))
        .await
        .unwrap();
    assert_eq!(
        providers::tenth_man_default(&f.store, Some("local"))
            .await
            .unwrap(),
        TenthManMode::Off
    );
    // The only provider is the one a run without a name uses.
    assert_eq!(
        providers::tenth_man_default(&f.store, None).await.unwrap(),
        TenthManMode::Off
    );
    // Its other settings are kept.
    let record = f.store.providers().get_by_name("local").await.unwrap();
    assert_eq!(record.context_window, 64_000);
    let missing = providers::set_tenth_man(&f.store, "nobody", Some(TenthManMode::Off))
        .await
        .unwrap_err();
    assert!(missing.to_string().contains("nobody"), "{missing}");
    providers::set_tenth_man(&f.store, "local", None)
        .await
        .unwrap();
    assert_eq!(
        providers::tenth_man_of(&f.store, Some("local"))
            .await
            .unwrap(),
        None
    );
}

#[tokio::test]
async fn the_model_titles_a_conversation_unless_the_analyst_renamed_it() {
    let f = Fixture::new().await;
    f.say("Revenue rose 12% in the North, driven by two new accounts.");
    let outcome = f
        .run_with("local", "how did q3 revenue do by region?")
        .await;
    let id = outcome.execution.conversation_id;
    let rules = f.store.conversations().get(id).await.unwrap().title;

    f.say("\"Q3 revenue by region.\"");
    let titled = titles::title_from_model(&f.store, f.dir.path(), Some("local"), id, &rules)
        .await
        .unwrap();
    assert_eq!(titled.as_deref(), Some("Q3 revenue by region"));
    assert_eq!(
        f.store.conversations().get(id).await.unwrap().title,
        "Q3 revenue by region"
    );
    let asked = f.request_text(1);
    assert!(
        asked.contains("how did q3 revenue do by region?"),
        "{asked}"
    );
    assert!(asked.contains("Revenue rose 12%"), "{asked}");

    // Renamed by the analyst: the model is not even asked, and the title stays.
    f.store.conversations().rename(id, "Mine").await.unwrap();
    let kept = titles::title_from_model(&f.store, f.dir.path(), Some("local"), id, &rules)
        .await
        .unwrap();
    assert_eq!(kept, None);
    assert_eq!(f.server.requests().len(), 2);

    // A server that fails leaves the title as it was, with an error.
    f.server.enqueue(Reply::unauthorized());
    let failed = titles::title_from_model(&f.store, f.dir.path(), Some("local"), id, "Mine").await;
    assert!(failed.is_err());
    assert_eq!(f.store.conversations().get(id).await.unwrap().title, "Mine");
}
