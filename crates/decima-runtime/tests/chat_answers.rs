//! How a chat turn's answer ends and what it cost, against the wire-level test server: every
//! request carries an output cap from the budget; the usage (cache reads included) is kept per
//! answer; an answer the cap cut is stored as cut and said so; a stream that loops is ended early
//! and kept up to the first repetition; a stopped stream keeps what arrived and frees the
//! conversation; a server that counts far fewer prompt tokens than were sent is caught.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use decima_runtime::chat::{ChatTurn, TurnOutcome, chat_turn};
use decima_runtime::{CollectEvents, Event, Result};
use decima_store::{AnswerEnd, NewProvider, Store};
use decima_testkit::{LlmServer, Reply, StreamFault, Turn};
use tokio_util::sync::CancellationToken;

/// The window of the test provider, and the answer's share of it (a quarter, at most 8,192).
const WINDOW: u32 = 8_192;
const CAP: u32 = 2_048;

async fn setup(server: &LlmServer, dir: &std::path::Path) -> Store {
    setup_as(dir, "openai", server.openai_base_url(), "qwen3").await
}

/// A store with one provider named `local` of `kind` at `base_url`.
async fn setup_as(dir: &std::path::Path, kind: &str, base_url: String, model: &str) -> Store {
    let store = Store::open(&dir.join("decima.db"), decima_llm::tokens::store_counter())
        .await
        .unwrap();
    store
        .providers()
        .create(NewProvider {
            name: "local".into(),
            kind: kind.into(),
            preset: None,
            base_url,
            model: model.into(),
            context_window: WINDOW,
            settings: serde_json::json!({}),
        })
        .await
        .unwrap();
    store
}

async fn turn(
    store: &Store,
    dir: &std::path::Path,
    conversation: Option<decima_core::ConversationId>,
    message: &str,
    events: &CollectEvents,
    cancel: CancellationToken,
) -> Result<TurnOutcome> {
    chat_turn(ChatTurn {
        store,
        data_dir: dir,
        provider: Some("local"),
        conversation,
        message: message.into(),
        events,
        cancel,
    })
    .await
}

fn warnings(events: &CollectEvents) -> Vec<String> {
    events
        .take()
        .into_iter()
        .filter_map(|e| match e {
            Event::Warning { message } => Some(message),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_keeps_its_usage_and_every_request_carries_the_budgets_output_cap() {
    let server = LlmServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let store = setup(&server, dir.path()).await;
    server.enqueue(Reply::Stream(Turn {
        text: vec!["Revenue was 4.2M.".into()],
        usage: Some((900, 12)),
        ..Turn::default()
    }));
    server.enqueue(Reply::Stream(Turn {
        text: vec!["North 2.1M, South 2.1M.".into()],
        usage: Some((960, 14)),
        cached: Some((896, 0)),
        ..Turn::default()
    }));
    let events = CollectEvents::default();
    let first = turn(
        &store,
        dir.path(),
        None,
        "Revenue?",
        &events,
        CancellationToken::new(),
    )
    .await
    .unwrap();
    let id = first.conversation_id;
    let second = turn(
        &store,
        dir.path(),
        Some(id),
        "By region?",
        &events,
        CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(
        (first.ended, second.ended),
        (AnswerEnd::Complete, AnswerEnd::Complete)
    );
    for request in server.requests() {
        assert_eq!(request.json.as_ref().unwrap()["max_tokens"], CAP);
    }
    let answers = store.answers().of_conversation(id).await.unwrap();
    assert_eq!(
        answers.iter().map(|a| a.seq).collect::<Vec<_>>(),
        [first.answer.seq, second.answer.seq]
    );
    let usage = answers[1].record.usage.unwrap();
    assert_eq!(
        (usage.tokens_in, usage.tokens_out, usage.cache_read_tokens),
        (960, 14, 896)
    );
    let totals = store.answers().chat_totals(id).await.unwrap();
    assert_eq!((totals.tokens_in, totals.cache_read_tokens), (1_860, 896));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_the_cap_cut_is_stored_as_cut_and_the_analyst_is_told() {
    let server = LlmServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let store = setup(&server, dir.path()).await;
    server.enqueue(Reply::Stream(Turn {
        text: vec!["The reconciliation shows three differences: first, the".into()],
        usage: Some((700, CAP)),
        finish: Some("length".into()),
        ..Turn::default()
    }));
    let events = CollectEvents::default();
    let outcome = turn(
        &store,
        dir.path(),
        None,
        "Reconcile",
        &events,
        CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(outcome.ended, AnswerEnd::Cut);
    assert!(outcome.answer.content.ends_with("first, the"));
    let answers = store
        .answers()
        .of_conversation(outcome.conversation_id)
        .await
        .unwrap();
    assert_eq!(answers[0].record.ended, AnswerEnd::Cut);
    let said = warnings(&events);
    assert!(
        said.iter()
            .any(|w| w.contains("cut by the output cap") && w.contains("2048")),
        "{said:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_repeats_itself_is_ended_early_and_kept_up_to_the_first_repetition() {
    let server = LlmServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let store = setup(&server, dir.path()).await;
    // A small model's loop, as SmolLM2 wrote it when it missed its end of sequence: the same
    // sentence, token by token, until the window would end it.
    let mut text = vec!["Here is the summary of the ledger. ".to_owned()];
    for _ in 0..400 {
        for piece in ["The total", " is 4,", "200 euros", ". "] {
            text.push(piece.to_owned());
        }
    }
    server.enqueue(Reply::Stream(Turn {
        text,
        usage: Some((500, 1_600)),
        ..Turn::default()
    }));
    let events = CollectEvents::default();
    let outcome = turn(
        &store,
        dir.path(),
        None,
        "Summarise",
        &events,
        CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(outcome.ended, AnswerEnd::Looping);
    let kept = &outcome.answer.content;
    assert!(kept.starts_with("Here is the summary"), "{kept}");
    assert!(kept.matches("4,200 euros").count() <= 1, "{kept}");
    let answers = store
        .answers()
        .of_conversation(outcome.conversation_id)
        .await
        .unwrap();
    assert_eq!(answers[0].record.ended, AnswerEnd::Looping);
    assert!(warnings(&events).iter().any(|w| w.contains("repeating")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_stream_keeps_what_arrived_and_frees_the_conversation_at_once() {
    let server = LlmServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let store = setup(&server, dir.path()).await;
    server.enqueue(Reply::Stream(Turn {
        text: vec!["The first quarter closed ".into(), "at 1.2M, and".into()],
        fault: Some(StreamFault::StallAfter(3)),
        ..Turn::default()
    }));
    let events = CollectEvents::default();
    let cancel = CancellationToken::new();
    let stopper = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(700)).await;
            cancel.cancel();
            Instant::now()
        })
    };
    let outcome = turn(&store, dir.path(), None, "Quarter?", &events, cancel)
        .await
        .unwrap();
    let stopped_at = stopper.await.unwrap();
    assert!(
        stopped_at.elapsed() < Duration::from_secs(1),
        "the stop took effect late"
    );
    assert_eq!(outcome.ended, AnswerEnd::Stopped);
    assert!(
        outcome
            .answer
            .content
            .starts_with("The first quarter closed"),
        "{}",
        outcome.answer.content
    );
    let answers = store
        .answers()
        .of_conversation(outcome.conversation_id)
        .await
        .unwrap();
    assert_eq!(answers[0].record.ended, AnswerEnd::Stopped);
    // The conversation is free: the next turn is not refused as busy.
    server.enqueue(Reply::Stream(Turn {
        text: vec!["Go on: 1.2M.".into()],
        ..Turn::default()
    }));
    turn(
        &store,
        dir.path(),
        Some(outcome.conversation_id),
        "Continue",
        &events,
        CancellationToken::new(),
    )
    .await
    .unwrap();
}

/// A long message whose answer the server says it read 512 prompt tokens of: far fewer than
/// were sent. Returns the turn's conversation and the warnings it gave.
async fn long_turn_counted_short(
    store: &Store,
    server: &LlmServer,
    dir: &std::path::Path,
) -> (decima_core::ConversationId, Vec<String>) {
    let long = "The ledger lists account ACC-1042 with a balance of 1,204.50 EUR. ".repeat(120);
    server.enqueue(Reply::Stream(Turn {
        text: vec!["I see one account.".into()],
        usage: Some((512, 6)),
        ..Turn::default()
    }));
    let events = CollectEvents::default();
    let outcome = turn(store, dir, None, &long, &events, CancellationToken::new())
        .await
        .unwrap();
    let answers = store
        .answers()
        .of_conversation(outcome.conversation_id)
        .await
        .unwrap();
    assert!(answers[0].record.prompt_truncated);
    (outcome.conversation_id, warnings(&events))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_counts_far_fewer_prompt_tokens_than_were_sent_is_caught() {
    let server = LlmServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let store = setup(&server, dir.path()).await;
    let (_, said) = long_turn_counted_short(&store, &server, dir.path()).await;
    assert!(said.iter().any(|w| w.contains("dropped part")), "{said:?}");
    // Such a count is not learned: the calibration does not shrink to it.
    assert_eq!(store.calibrations().get("qwen3").await.unwrap(), None);
}

/// The same on Ollama's own wire, the server that really does it: with a window smaller than
/// the prompt it keeps the prompt's end and reports `prompt_eval_count` for what it kept. The
/// request told it the window Decima planned for (`options.num_ctx`), the answer is marked,
/// and the analyst is told.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ollama_counting_far_fewer_prompt_tokens_than_were_sent_is_caught() {
    let server = LlmServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let store = setup_as(dir.path(), "ollama", server.ollama_base_url(), "llama3.2").await;
    let (_, said) = long_turn_counted_short(&store, &server, dir.path()).await;
    let request = &server.requests()[0];
    assert_eq!(request.path, "/api/chat");
    let body = request.json.as_ref().unwrap();
    assert_eq!(body["options"]["num_ctx"], WINDOW);
    assert!(body["options"]["num_predict"].as_u64().unwrap() > 0);
    assert!(said.iter().any(|w| w.contains("dropped part")), "{said:?}");
}
