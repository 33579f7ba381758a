//! The real path of one step's context, from the store up: live summaries, pinned units, the
//! uncovered tail read backwards in pages, select, assemble and measure, on a real SQLite file,
//! for 1k, 10k and 100k-message conversations, compacted and not.
//!
//! - `step_context/windowed`: `decima_runtime::context::build`, what `decima context` and every
//!   chat turn run.
//! - `step_context/full_reload`: the path it replaced, measured in the same run: load every live
//!   message, expand pinned units over all of them, then select and assemble.
//!
//! Run: `cargo bench -p decima-runtime --bench step`

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

use std::collections::BTreeMap;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use decima_core::NewMessage;
use decima_core::context::{CompressionLevel, Strategy, pinned_units, select};
use decima_core::prompt::{AssembleInput, Preset, assemble};
use decima_runtime::NoEvents;
use decima_runtime::compression::{CompressContext, CompressRequest, compress};
use decima_runtime::context::{Scale, build, render_session_context};
use decima_runtime::settings::WindowSettings;
use decima_store::{Conversation, Store};
use decima_testkit::ConversationBuilder;

const WINDOW: u32 = 128_000;

async fn conversation(store: &Store, n: usize, compacted: bool) -> Conversation {
    let built = ConversationBuilder::new(7, n).content_chars(160).build();
    let c = store
        .conversations()
        .import("bench", None, &built.messages)
        .await
        .unwrap();
    if compacted {
        let preset = Preset::default();
        let window = WindowSettings::new(WINDOW);
        let ctx = CompressContext {
            store,
            data_dir: std::path::Path::new("/nonexistent"),
            conversation: &c,
            preset: &preset,
            window: &window,
            scale: Scale::ONE,
            provider: None,
            events: &NoEvents,
        };
        compress(
            &ctx,
            CompressRequest {
                level: Some(CompressionLevel::Standard),
                strategy: Strategy::Extract,
                dry_run: false,
                written: None,
            },
        )
        .await
        .unwrap();
    }
    store.conversations().get(c.id).await.unwrap()
}

/// What every step did before: reload the whole history and select over it.
async fn full_reload(store: &Store, c: &Conversation, preset: &Preset, budget: u32) -> u32 {
    let messages = store.messages().all(c.id).await.unwrap();
    let pinned = pinned_units(&messages);
    let summaries = store.compactions().live_summaries(c.id).await.unwrap();
    let todos = store.todos().pinned_in_conversation(c.id).await.unwrap();
    let budget = decima_core::context::HistoryBudget::new(budget);
    let selection = select(&messages, &pinned, &summaries, &budget).unwrap();
    let session = render_session_context(&todos, &summaries);
    let sent: Vec<&decima_core::Message> = selection
        .pinned
        .iter()
        .copied()
        .chain(selection.recent.iter())
        .collect();
    let working: Vec<std::sync::Arc<NewMessage>> = sent
        .iter()
        .map(|m| std::sync::Arc::new(NewMessage::from(*m)))
        .collect();
    let tokens: Vec<u32> = sent.iter().map(|m| m.tokens).collect();
    let placeholders = BTreeMap::new();
    let mut input = AssembleInput::new(&working);
    input.history_tokens = Some(&tokens);
    input.session_context = &session;
    input.placeholders = &placeholders;
    let counter = decima_llm::tokens::store_counter();
    assemble(preset, &input, counter.as_ref()).total
}

fn step_context(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = rt
        .block_on(Store::open(
            &dir.path().join("bench.db"),
            decima_llm::tokens::store_counter(),
        ))
        .unwrap();
    let preset = Preset::default();
    let window = WindowSettings::new(WINDOW);
    let mut group = c.benchmark_group("step_context");
    group
        .measurement_time(Duration::from_secs(4))
        .sample_size(20);
    for n in [1_000usize, 10_000, 100_000] {
        for compacted in [true, false] {
            let conv = rt.block_on(conversation(&store, n, compacted));
            let label = if compacted {
                "compacted"
            } else {
                "uncompacted"
            };
            let built = rt
                .block_on(build(&store, &conv, &preset, &window, Scale::ONE))
                .unwrap();
            println!(
                "{n} messages, {label}: loads {} messages, {} pending, usage {:.2}",
                built.history.loaded_messages, built.history.pending_messages, built.report.usage
            );
            group.bench_with_input(
                BenchmarkId::new(format!("windowed_{label}"), n),
                &n,
                |b, _| {
                    b.to_async(&rt).iter(|| async {
                        let built = build(&store, &conv, &preset, &window, Scale::ONE)
                            .await
                            .unwrap();
                        std::hint::black_box(built.report.total)
                    })
                },
            );
            let budget = built.budgeting.history.tokens;
            group.bench_with_input(
                BenchmarkId::new(format!("full_reload_{label}"), n),
                &n,
                |b, _| {
                    b.to_async(&rt).iter(|| async {
                        std::hint::black_box(full_reload(&store, &conv, &preset, budget).await)
                    })
                },
            );
        }
    }
    group.finish();
}

criterion_group!(benches, step_context);
criterion_main!(benches);
