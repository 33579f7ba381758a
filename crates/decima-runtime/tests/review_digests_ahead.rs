//! Review digests made ahead, against a real SQLite file: the full blocks of an imported
//! history are digested once, as a review would digest them, and a later review's summary
//! reads only the block still filling and is the summary a review made from nothing gives.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use decima_runtime::review::digest_cache::{BLOCK_SEQS, DIGEST_VERSION, summarise, warm};
use decima_store::Store;
use decima_testkit::ConversationBuilder;

const MESSAGES: i64 = 3_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_blocks_digested_ahead_are_the_reviews_own_and_spare_it_reading_them() {
    let dir = tempfile::tempdir().unwrap();
    let counter = decima_llm::tokens::store_counter();
    let store = Store::open(&dir.path().join("decima.db"), counter.clone())
        .await
        .unwrap();
    let built = ConversationBuilder::new(11, MESSAGES as usize)
        .content_chars(160)
        .build();
    let ahead = store
        .conversations()
        .import("ahead", None, &built.messages)
        .await
        .unwrap();
    let cold = store
        .conversations()
        .import("cold", None, &built.messages)
        .await
        .unwrap();

    // The two full blocks are read and cached; the third, still filling, is not.
    let read = warm(&store, ahead.id, 0, MESSAGES).await.unwrap();
    assert_eq!(read, 2 * BLOCK_SEQS as u64);
    let blocks_of = |conversation| {
        let store = &store;
        async move {
            let mut rows: Vec<(i64, i64, String)> = store
                .review_digests()
                .within(conversation, DIGEST_VERSION, 1, MESSAGES, 0)
                .await
                .unwrap()
                .into_iter()
                .filter(|r| r.budget == 0)
                .map(|r| (r.from_seq, r.through_seq, r.text))
                .collect();
            rows.sort_unstable();
            rows
        }
    };
    let made_ahead = blocks_of(ahead.id).await;
    let ranges: Vec<(i64, i64)> = made_ahead.iter().map(|r| (r.0, r.1)).collect();
    assert_eq!(ranges, [(1, BLOCK_SEQS), (BLOCK_SEQS + 1, 2 * BLOCK_SEQS)]);
    // Nothing changed: nothing to do again.
    assert_eq!(warm(&store, ahead.id, 0, MESSAGES).await.unwrap(), 0);
    // Below one full block there is nothing to make ahead.
    assert_eq!(warm(&store, cold.id, 0, BLOCK_SEQS - 1).await.unwrap(), 0);

    let budget = 6_000;
    let from_ahead = summarise(&store, ahead.id, 1, MESSAGES, budget, counter.as_ref())
        .await
        .unwrap();
    assert_eq!(
        from_ahead.read,
        (MESSAGES - 2 * BLOCK_SEQS) as u64,
        "only the block still filling is read"
    );
    let from_nothing = summarise(&store, cold.id, 1, MESSAGES, budget, counter.as_ref())
        .await
        .unwrap();
    assert_eq!(from_nothing.read, MESSAGES as u64);
    // The review made the same digests of the full blocks as were made ahead.
    let made_by_review = blocks_of(cold.id).await;
    assert_eq!(
        made_by_review.len(),
        3,
        "the two full blocks and the one filling"
    );
    assert_eq!(made_by_review[..2], made_ahead[..]);
    assert_eq!(from_ahead.text, from_nothing.text);
    assert_eq!(from_ahead.tokens, from_nothing.tokens);
    for summary in [&from_ahead, &from_nothing] {
        assert!(summary.tokens <= budget, "{}", summary.tokens);
        assert!(
            summary.text.contains("reconcile the Q3 invoices"),
            "{}",
            summary.text
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_turn_that_fills_a_block_has_it_digested_in_the_background() {
    use decima_runtime::CollectEvents;
    use decima_runtime::chat::{ChatTurn, chat_turn};
    use decima_store::NewProvider;
    use decima_testkit::{LlmServer, Reply, Turn};

    let server = LlmServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let counter = decima_llm::tokens::store_counter();
    let store = Store::open(&dir.path().join("decima.db"), counter.clone())
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
            context_window: 1_000_000,
            settings: serde_json::json!({}),
        })
        .await
        .unwrap();
    // Two short of a full block: the turn's question and answer fill it.
    let built = ConversationBuilder::new(5, BLOCK_SEQS as usize - 2)
        .content_chars(40)
        .build();
    let conversation = store
        .conversations()
        .import("growing", None, &built.messages)
        .await
        .unwrap();
    let full_blocks = || {
        let store = &store;
        async move {
            store
                .review_digests()
                .within(conversation.id, DIGEST_VERSION, 1, BLOCK_SEQS, 0)
                .await
                .unwrap()
                .into_iter()
                .filter(|r| r.budget == 0 && r.from_seq == 1 && r.through_seq == BLOCK_SEQS)
                .count()
        }
    };
    assert_eq!(full_blocks().await, 0, "nothing is digested on import here");

    server.enqueue(Reply::Stream(Turn {
        text: vec!["The totals match.".into()],
        ..Turn::default()
    }));
    let events = CollectEvents::default();
    let outcome = chat_turn(ChatTurn {
        store: &store,
        data_dir: dir.path(),
        provider: Some("local"),
        conversation: Some(conversation.id),
        message: "Do the totals match?".into(),
        events: &events,
        cancel: tokio_util::sync::CancellationToken::new(),
    })
    .await
    .unwrap();
    assert_eq!(outcome.answer.seq, BLOCK_SEQS, "the answer fills the block");

    // The digest is made off the turn's path: wait for it, within reason.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while full_blocks().await == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the full block was never digested"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // A review now reads none of the block's messages.
    let summary = summarise(
        &store,
        conversation.id,
        1,
        BLOCK_SEQS,
        4_000,
        counter.as_ref(),
    )
    .await
    .unwrap();
    assert_eq!(summary.read, 0, "the review merged the digest made ahead");
    assert_eq!(summary.messages, BLOCK_SEQS as u64);
}
