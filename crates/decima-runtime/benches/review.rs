//! The tenth man's costs that are Decima's own: building the reviewer's input for a
//! 10k-message conversation, and answering a review from the cache. The naive input (the whole
//! history as text, cut by bytes to the same budget) is measured in the same run to compare.
//!
//! Run: `cargo bench -p decima-runtime --bench review`

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use decima_core::export::{ExportFormat, render_message};
use decima_runtime::NoEvents;
use decima_runtime::review::input::{Parts, build};
use decima_runtime::review::{
    ReviewContext, ReviewMode, ReviewRequest, ReviewTrigger, ReviewType, review,
};
use decima_testkit::{LlmServer, Reply, Turn};

mod world;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The reviewer's window, and the input budget a full review gets from it.
const WINDOW: u32 = 128_000;
const BUDGET: u32 = 120_000;

fn reviews(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (server, store, raw, compressed) = rt.block_on(async {
        let server = LlmServer::start().await;
        server.respond_with(|_| {
            Reply::Stream(Turn {
                text: vec![
                    r#"{"risk_level":"low","summary":"ok","findings":[],"open_questions":[]}"#
                        .into(),
                ],
                ..Turn::default()
            })
        });
        let store = world::store_with_provider(dir.path(), server.openai_base_url(), WINDOW).await;
        let raw = world::import_10k(&store, "raw").await;
        let compressed = world::import_10k(&store, "compressed").await;
        world::compact(&store, dir.path(), &compressed, WINDOW).await;
        (server, store, raw, compressed)
    });
    let counter = decima_llm::tokens::store_counter();
    let mut group = c.benchmark_group("review");
    group
        .measurement_time(Duration::from_secs(6))
        .sample_size(30);
    for (name, conversation) in [("raw", &raw), ("compressed", &compressed)] {
        group.bench_function(format!("input_10k_{name}"), |b| {
            b.iter(|| {
                rt.block_on(build(
                    &store,
                    &Parts {
                        conversation,
                        task: "Reconcile the invoices",
                        focus: None,
                        mode: &ReviewMode::FullHistory,
                        open: &[],
                        after_seq: None,
                        budget: BUDGET,
                    },
                    counter.as_ref(),
                ))
                .unwrap()
            })
        });
    }
    // The naive input: every message as text, cut to the same budget in bytes (four per token).
    group.bench_function("naive_input_10k", |b| {
        b.iter(|| {
            rt.block_on(async {
                let all = store.messages().all(raw.id).await.unwrap();
                let mut text = String::new();
                for m in &all {
                    render_message(ExportFormat::Text, m, &mut text);
                }
                let mut end = text.len().saturating_sub(BUDGET as usize * 4);
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                text.split_off(end)
            })
        })
    });
    let ctx = ReviewContext {
        store: &store,
        data_dir: dir.path(),
        events: &NoEvents,
        agent_provider: Some("local"),
    };
    let request = ReviewRequest {
        conversation: compressed.id,
        execution: None,
        mode: ReviewMode::FullHistory,
        review_type: ReviewType::Full,
        focus: None,
        trigger: ReviewTrigger::User,
        reviewer: None,
        final_review: false,
    };
    // The first review asks the model; every one after it is a cache hit.
    let first = rt.block_on(review(&ctx, request.clone())).unwrap();
    assert!(!first.cached);
    group.bench_function("cache_hit", |b| {
        b.iter(|| {
            let hit = rt.block_on(review(&ctx, request.clone())).unwrap();
            assert!(hit.cached);
        })
    });
    group.finish();
    // For the record: what each input holds.
    let sizes = rt.block_on(async {
        let mut out = Vec::new();
        for conversation in [&raw, &compressed] {
            let input = build(
                &store,
                &Parts {
                    conversation,
                    task: "Reconcile the invoices",
                    focus: None,
                    mode: &ReviewMode::FullHistory,
                    open: &[],
                    after_seq: None,
                    budget: BUDGET,
                },
                counter.as_ref(),
            )
            .await
            .unwrap();
            out.push((
                conversation.title.clone(),
                input.tokens,
                input.shown,
                input.left_out,
            ));
        }
        out
    });
    for (title, tokens, shown, left_out) in sizes {
        println!(
            "{title}: {tokens} tokens, {shown} messages verbatim, {left_out} neither summarised nor shown"
        );
    }
    drop(server);
}

criterion_group!(benches, reviews);
criterion_main!(benches);
