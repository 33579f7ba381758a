//! A full review in passes against a real SQLite file and the wire-level test server: one
//! request at a time, so a review cancelled during a pass (as Ctrl-C does to the final review of
//! a run) makes no further request and stores nothing; and one stored review with its passes
//! when it runs to the end.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use decima_runtime::review::{
    ReviewContext, ReviewMode, ReviewRequest, ReviewTrigger, ReviewType, review, review_until,
};
use decima_runtime::{NoEvents, RuntimeError};
use decima_store::{NewProvider, Store};
use decima_testkit::{ConversationBuilder, LlmServer, Reply, Turn};
use tokio_util::sync::CancellationToken;

const ANSWER: &str = r#"{"risk_level":"low","summary":"ok","findings":[{"title":"Totals","severity":"low","argument":"a","evidence_seqs":[3],"recommendation":"r"}],"open_questions":[]}"#;

async fn world(server: &LlmServer) -> (tempfile::TempDir, Store, decima_core::ConversationId) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(
        &dir.path().join("decima.db"),
        decima_llm::tokens::store_counter(),
    )
    .await
    .unwrap();
    store
        .providers()
        .create(NewProvider {
            name: "local".into(),
            kind: "openai".into(),
            preset: None,
            base_url: server.openai_base_url(),
            model: "qwen3".into(),
            context_window: 16_000,
            settings: serde_json::json!({}),
        })
        .await
        .unwrap();
    let built = ConversationBuilder::new(5, 1_500)
        .content_chars(160)
        .build();
    let c = store
        .conversations()
        .import("long", None, &built.messages)
        .await
        .unwrap();
    (dir, store, c.id)
}

fn request(conversation: decima_core::ConversationId) -> ReviewRequest {
    ReviewRequest {
        conversation,
        execution: None,
        mode: ReviewMode::FullHistory,
        review_type: ReviewType::Full,
        focus: None,
        trigger: ReviewTrigger::User,
        reviewer: None,
        final_review: false,
        figures: Vec::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_in_passes_stops_between_them_when_cancelled_and_stores_nothing() {
    let server = LlmServer::start().await;
    let (dir, store, conversation) = world(&server).await;
    let cancel = CancellationToken::new();
    let on_first = cancel.clone();
    // The first pass is answered, and the run is cancelled as its answer arrives.
    server.respond_with(move |_| {
        on_first.cancel();
        Reply::Stream(Turn {
            text: vec![ANSWER.into()],
            ..Turn::default()
        })
    });
    let ctx = ReviewContext {
        store: &store,
        data_dir: dir.path(),
        events: &NoEvents,
        agent_provider: Some("local"),
    };
    let reviewed = review_until(&ctx, request(conversation), &cancel).await;
    assert!(
        matches!(&reviewed, Err(RuntimeError::Review(m)) if m.contains("cancelled")),
        "{reviewed:?}"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        server.requests().len(),
        1,
        "a pass after the cancel was asked"
    );
    assert!(store.reviews().list(conversation).await.unwrap().is_empty());

    // Run to its end, the same review asks pass after pass and stores one review listing them.
    server.respond_with(|_| {
        Reply::Stream(Turn {
            text: vec![ANSWER.into()],
            ..Turn::default()
        })
    });
    let done = review(&ctx, request(conversation)).await.unwrap();
    let passes = &done.review.passes;
    assert!(passes.len() > 1, "{passes:?}");
    assert_eq!(server.requests().len(), 1 + passes.len());
    assert_eq!(
        passes.iter().map(|p| p.pass).collect::<Vec<_>>(),
        (1..=passes.len() as u32).collect::<Vec<_>>()
    );
    // Consecutive: each pass starts after the one before it ends.
    for pair in passes.windows(2) {
        assert!(pair[1].from_seq > pair[0].through_seq, "{passes:?}");
    }
    // The same finding from every pass is one finding.
    assert_eq!(done.review.findings.len(), 1);
    assert_eq!(store.reviews().list(conversation).await.unwrap().len(), 1);
}

/// The tokens a request sends as the reviewer's model counts them (the store's counter here,
/// uncalibrated), with the room it asks for the answer.
fn request_tokens(request: &decima_testkit::RecordedRequest) -> u64 {
    let counter = decima_llm::tokens::store_counter();
    let json = request.json.as_ref().unwrap();
    let text: u64 = json["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            u64::from(counter.count_text(m["content"].as_str().unwrap_or_default()))
                + u64::from(counter.message_overhead())
        })
        .sum();
    text + json["max_tokens"].as_u64().unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_pass_is_repaired_as_a_single_review_within_the_window_and_two_failures_store_nothing()
{
    let server = LlmServer::start().await;
    let (dir, store, conversation) = world(&server).await;
    let ctx = ReviewContext {
        store: &store,
        data_dir: dir.path(),
        events: &NoEvents,
        agent_provider: Some("local"),
    };
    // Pass 2 answers with prose and a long one at that, then repairs it: the repair request,
    // which sends the invalid answer back, stays within the 16k window like every other.
    let long_prose = "I think the risk is high because the totals are off. ".repeat(300);
    let ok = Reply::Stream(Turn {
        text: vec![ANSWER.into()],
        ..Turn::default()
    });
    server.enqueue(ok.clone());
    server.enqueue(Reply::Stream(Turn {
        text: vec![long_prose.clone()],
        ..Turn::default()
    }));
    server.respond_with(|_| {
        Reply::Stream(Turn {
            text: vec![ANSWER.into()],
            ..Turn::default()
        })
    });
    let done = review(&ctx, request(conversation)).await.unwrap();
    let passes = done.review.passes.len();
    let requests = server.requests();
    assert_eq!(requests.len(), passes + 1, "one repair");
    let repair = requests[2].json.as_ref().unwrap()["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(repair.len(), 4);
    assert!(
        repair[3]["content"]
            .as_str()
            .unwrap()
            .contains("could not be used")
    );
    for (i, r) in requests.iter().enumerate() {
        assert!(
            request_tokens(r) <= 16_000,
            "request {i}: {}",
            request_tokens(r)
        );
    }

    // A pass that is invalid twice fails the review: nothing is stored, no later pass is asked.
    let server = LlmServer::start().await;
    let (dir, store, conversation) = world(&server).await;
    let ctx = ReviewContext {
        store: &store,
        data_dir: dir.path(),
        events: &NoEvents,
        agent_provider: Some("local"),
    };
    server.enqueue(ok);
    for _ in 0..2 {
        server.enqueue(Reply::Stream(Turn {
            text: vec!["not a review".into()],
            ..Turn::default()
        }));
    }
    server.respond_with(|_| {
        Reply::Stream(Turn {
            text: vec![ANSWER.into()],
            ..Turn::default()
        })
    });
    let failed = review(&ctx, request(conversation)).await;
    assert!(
        matches!(&failed, Err(RuntimeError::Review(m)) if m.contains("twice")),
        "{failed:?}"
    );
    assert_eq!(
        server.requests().len(),
        3,
        "a pass after the failed one was asked"
    );
    assert!(store.reviews().list(conversation).await.unwrap().is_empty());
}
