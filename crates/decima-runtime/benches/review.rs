//! The tenth man's costs that are Decima's own: building the reviewer's input for a
//! 10k-message conversation, compressed or not, and answering a review from the cache. The
//! uncompressed history does not fit: its input holds a summary made for the review, built cold
//! (extract over the blocks, nothing cached), as Decima writes a history (its full blocks
//! digested as they filled, the one still filling extracted), from cached block digests
//! (merged and rendered again), or reused whole from the cache; a full review plans it in passes. The naive input
//! (the whole history as text, cut by bytes to the same budget) is measured in the same run to
//! compare.
//!
//! Run: `cargo bench -p decima-runtime --bench review` (a filter after `--` picks some).

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use decima_core::export::{ExportFormat, render_message};
use decima_runtime::NoEvents;
use decima_runtime::review::digest_cache::{summarise, warm};
use decima_runtime::review::input::{Input, Parts, build};
use decima_runtime::review::{
    ReviewContext, ReviewMode, ReviewRequest, ReviewTrigger, ReviewType, review,
};
use decima_store::{Conversation, Store};
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
    let input = |conversation: &Conversation, passes: bool| -> Input {
        let parts = Parts {
            conversation,
            task: "Reconcile the invoices",
            focus: None,
            mode: &ReviewMode::FullHistory,
            open: &[],
            after_seq: None,
            budget: BUDGET,
            passes,
        };
        rt.block_on(build(&store, &parts, counter.as_ref()))
            .unwrap()
    };
    // Forgets the review summaries: every row, or only the ready renderings.
    let forget = |conversation: &Conversation, renderings_only: bool| {
        rt.block_on(forget_digests(&store, conversation, renderings_only));
    };
    group.bench_function("input_10k_compressed", |b| {
        b.iter(|| input(&compressed, false))
    });
    group.bench_function("input_10k_raw_cold", |b| {
        b.iter_batched(
            || forget(&raw, false),
            |()| input(&raw, false),
            BatchSize::PerIteration,
        )
    });
    // As Decima writes a history (runs, chat turns, imports): its full blocks were digested as
    // they filled, and the review extracts only the part of the block still filling it needs.
    group.bench_function("input_10k_raw_written", |b| {
        b.iter_batched(
            || {
                forget(&raw, false);
                rt.block_on(warm(&store, raw.id, 0, 10_000)).unwrap();
            },
            |()| input(&raw, false),
            BatchSize::PerIteration,
        )
    });
    group.bench_function("input_10k_raw_blocks_cached", |b| {
        b.iter_batched(
            || forget(&raw, true),
            |()| input(&raw, false),
            BatchSize::PerIteration,
        )
    });
    input(&raw, false);
    group.bench_function("input_10k_raw_cached", |b| b.iter(|| input(&raw, false)));
    let summarised = input(&raw, false).passes[0].summarised.unwrap();
    let rendering = rt
        .block_on(
            sqlx::query_scalar::<_, i64>(
                "SELECT budget FROM review_digests WHERE conversation_id = ? AND budget > 0 \
             AND from_seq = ? AND through_seq = ?",
            )
            .bind(raw.id.to_string())
            .bind(summarised.0)
            .bind(summarised.1)
            .fetch_one(store.sqlite_pool().expect("a SQLite store")),
        )
        .unwrap();
    group.bench_function("summary_10k_cached", |b| {
        b.iter(|| {
            let s = rt
                .block_on(summarise(
                    &store,
                    raw.id,
                    summarised.0,
                    summarised.1,
                    u32::try_from(rendering).unwrap(),
                    counter.as_ref(),
                ))
                .unwrap();
            assert!(s.cached && s.read == 0);
        })
    });
    group.bench_function("passes_10k_raw", |b| b.iter(|| input(&raw, true)));
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
        figures: Vec::new(),
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
    forget(&raw, false);
    for (title, conversation, passes) in [
        ("compressed", &compressed, false),
        ("raw, cold", &raw, false),
        ("raw, cached", &raw, false),
        ("raw, in passes", &raw, true),
    ] {
        let built = input(conversation, passes);
        println!(
            "{title}: {} request(s), {} tokens, {} messages verbatim, {} summarised for the \
             review ({} read to summarise), first request {:?}",
            built.passes.len(),
            built.tokens(),
            built.shown,
            built.summarised,
            built.summary_read,
            built
                .passes
                .first()
                .map(|p| (p.tokens, p.summarised, p.verbatim)),
        );
    }
    drop(server);
}

/// Deletes the conversation's cached review summaries (or only its ready renderings), so the
/// next input makes them again.
async fn forget_digests(store: &Store, conversation: &Conversation, renderings_only: bool) {
    sqlx::query("DELETE FROM review_digests WHERE conversation_id = ? AND (? = 0 OR budget > 0)")
        .bind(conversation.id.to_string())
        .bind(i64::from(renderings_only))
        .execute(store.sqlite_pool().expect("a SQLite store"))
        .await
        .unwrap();
}

criterion_group!(benches, reviews);
criterion_main!(benches);
