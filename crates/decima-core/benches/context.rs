//! Context build per agent step, for 1k, 10k and 100k-message conversations, against the naive
//! baseline of the designs Decima replaces, measured in the same run.
//!
//! - `context_build/decima`: the pure stages only: select the window (global summary, segment
//!   summaries, the uncovered tail verbatim, pinned units) over cached token counts and measure
//!   it, on messages already in memory. The conversation is in steady state: summaries cover all
//!   but its last 300 messages, as compression keeps it. The whole step from the store up
//!   (windowed load, select, assemble, measure) is measured where it lives, in
//!   `cargo bench -p decima-runtime --bench step`; this crate keeps no copy of that code.
//! - `context_build/naive_tiktoken`: what the replaced designs did every step: reload the whole
//!   history (a clone), recount every message with the real tokenizer (tiktoken o200k), and take
//!   messages from the end while they fit. Neither side assembles: both choose the window only.
//! - `context_build/naive_estimate`: the same with the cheap character estimate instead of a
//!   tokenizer: a baseline faster than the originals, so its ratio is a floor.
//!
//! Run: `cargo bench -p decima-core --bench context`

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

use std::time::Duration;

/// The allocator the CLI and the window ship with.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use decima_core::NewMessage;
use decima_core::context::{
    ContextReport, HistoryBudget, Layer, Strategy, Summary, SummaryLevel, Thresholds, pinned_units,
    select,
};
use decima_core::{
    ConversationId, EstimateCounter, Message, MessageId, Role, Timestamp, TokenCounter,
};
use decima_testkit::ConversationBuilder;

const WINDOW: u32 = 128_000;
const UNCOVERED: i64 = 300;

fn history(n: usize) -> Vec<Message> {
    let built = ConversationBuilder::new(7, n).content_chars(160).build();
    let conversation = ConversationId::new();
    built
        .messages
        .into_iter()
        .enumerate()
        .map(|(i, m)| Message {
            id: MessageId::new(),
            conversation_id: conversation,
            execution_id: None,
            seq: i as i64 + 1,
            tokens: EstimateCounter.count_message(&m),
            role: m.role,
            name: m.name,
            content: m.content,
            reasoning: m.reasoning,
            reasoning_signature: m.reasoning_signature,
            tool_calls: m.tool_calls,
            tool_call_id: m.tool_call_id,
            pinned: m.pinned,
            created_at: Timestamp(0),
            deleted_at: None,
        })
        .collect()
}

/// A global summary and two segments covering everything but the last `UNCOVERED` messages,
/// ending where a tool pair does not straddle the frontier.
fn summaries(messages: &[Message]) -> Vec<Summary> {
    let n = messages.len() as i64;
    let mut frontier = n - UNCOVERED;
    while frontier > 1 && messages[frontier as usize].role == Role::Tool {
        frontier -= 1;
    }
    let third = frontier / 3;
    let summary = |level, start, end, tokens| Summary {
        id: format!("s{start}"),
        level,
        start_seq: start,
        end_seq: end,
        text: "Goal: …".into(),
        tokens,
        strategy: Strategy::Extract,
    };
    vec![
        summary(SummaryLevel::Global, 1, third, 9_000),
        summary(SummaryLevel::Segment, third + 1, 2 * third, 12_000),
        summary(SummaryLevel::Segment, 2 * third + 1, frontier, 12_000),
    ]
}

fn naive(messages: &[Message], budget: u32, counter: &dyn TokenCounter) -> u32 {
    let reloaded: Vec<Message> = messages.to_vec();
    let drafts: Vec<NewMessage> = reloaded.iter().map(NewMessage::from).collect();
    let counts: Vec<u32> = drafts.iter().map(|m| counter.count_message(m)).collect();
    let mut used = 0u32;
    let mut start = drafts.len();
    while start > 0 && used + counts[start - 1] <= budget {
        used += counts[start - 1];
        start -= 1;
    }
    std::hint::black_box(&drafts[start..]);
    used
}

fn context_build(c: &mut Criterion) {
    let mut group = c.benchmark_group("context_build");
    group
        .measurement_time(Duration::from_secs(4))
        .sample_size(20);
    let budget = HistoryBudget::new(WINDOW - 8_192);
    for n in [1_000usize, 10_000, 100_000] {
        let messages = history(n);
        let summaries = summaries(&messages);
        let pinned = pinned_units(&messages);
        // Sanity: the steady state selects the uncovered tail without compression.
        let selection = select(&messages, &pinned, &summaries, &budget).unwrap();
        assert!(
            selection.recent.len() as i64 >= UNCOVERED - 2,
            "{}",
            selection.recent.len()
        );
        group.bench_with_input(BenchmarkId::new("decima", n), &n, |b, _| {
            b.iter(|| {
                let selection = select(&messages, &pinned, &summaries, &budget).unwrap();
                let report = ContextReport::from_selection(
                    vec![Layer::new("system", 1_200)],
                    &selection,
                    WINDOW,
                    &Thresholds::default(),
                );
                std::hint::black_box(report.total)
            })
        });
        let tiktoken = decima_llm::tokens::TiktokenCounter::o200k_base();
        group.bench_with_input(BenchmarkId::new("naive_tiktoken", n), &n, |b, _| {
            b.iter(|| std::hint::black_box(naive(&messages, budget.tokens, &tiktoken)))
        });
        group.bench_with_input(BenchmarkId::new("naive_estimate", n), &n, |b, _| {
            b.iter(|| std::hint::black_box(naive(&messages, budget.tokens, &EstimateCounter)))
        });
    }
    group.finish();
}

/// Extract compression of a 10,000-message history with no summary yet: the plan (select, digest,
/// render within the share) that a standard compression stores.
fn extract_10k(c: &mut Criterion) {
    let messages = history(10_000);
    let pinned = pinned_units(&messages);
    let budget = HistoryBudget::new(WINDOW - 8_192);
    let mut group = c.benchmark_group("extract_compression");
    group.sample_size(20);
    group.bench_function("10k_standard", |b| {
        b.iter(|| {
            let plan = decima_core::context::plan(decima_core::context::compress::PlanInput {
                messages: &messages,
                pinned: &pinned,
                summaries: &[],
                level: decima_core::context::CompressionLevel::Standard,
                strategy: Strategy::Extract,
                budget,
                counter: &EstimateCounter,
                written: None,
            })
            .unwrap();
            assert!(!plan.new_summaries.is_empty());
            std::hint::black_box(plan.tokens_after)
        })
    });
    group.finish();
}

/// The greppable text export of 10,000 messages of about 500 bytes each (about 5 MB).
fn export_10k(c: &mut Criterion) {
    let built = ConversationBuilder::new(9, 10_000)
        .content_chars(420)
        .build();
    let messages: Vec<Message> = built
        .messages
        .into_iter()
        .enumerate()
        .map(|(i, m)| Message {
            id: MessageId::new(),
            conversation_id: ConversationId::new(),
            execution_id: None,
            seq: i as i64 + 1,
            tokens: 0,
            role: m.role,
            name: m.name,
            content: m.content,
            reasoning: m.reasoning,
            reasoning_signature: m.reasoning_signature,
            tool_calls: m.tool_calls,
            tool_call_id: m.tool_call_id,
            pinned: m.pinned,
            created_at: Timestamp(1_795_000_000_000 + i as i64),
            deleted_at: None,
        })
        .collect();
    let mut out = String::new();
    for m in &messages {
        decima_core::export::render_message(decima_core::export::ExportFormat::Text, m, &mut out);
    }
    println!("text export of 10k messages: {} bytes", out.len());
    let mut group = c.benchmark_group("export");
    group.sample_size(20);
    group.bench_function("text_10k", |b| {
        b.iter(|| {
            let mut out = String::with_capacity(6 << 20);
            for m in &messages {
                decima_core::export::render_message(
                    decima_core::export::ExportFormat::Text,
                    m,
                    &mut out,
                );
            }
            std::hint::black_box(out.len())
        })
    });
    group.finish();
}

/// The stages of a review summary's block (1,024 messages, as `decima-runtime` digests them):
/// extracting the digest, rendering it to the text that is cached, parsing that text back, and
/// merging nine blocks' digests into one, so that a change to one stage shows in its own figure.
fn digest_block(c: &mut Criterion) {
    let messages = history(10_240);
    let block = &messages[1_024..2_048];
    let sources = || block.iter().map(decima_core::context::Source::from);
    let digest = decima_core::context::Digest::from_continuation(sources());
    let text = digest.render(decima_core::context::Detail::Standard);
    let parsed: Vec<_> = messages
        .chunks(1_024)
        .take(9)
        .map(|b| {
            let d = decima_core::context::Digest::from_continuation(
                b.iter().map(decima_core::context::Source::from),
            );
            decima_core::context::Digest::parse(&d.render(decima_core::context::Detail::Standard))
        })
        .collect();
    let mut group = c.benchmark_group("digest_block");
    group.sample_size(30);
    // On a new thread each time: the extractor remembers the sentences it analysed per
    // thread, and a review meets a block's text for the first time.
    group.bench_function("extract_1024", |b| {
        b.iter(|| {
            std::thread::scope(|scope| {
                scope
                    .spawn(|| decima_core::context::Digest::from_continuation(sources()))
                    .join()
                    .unwrap()
            })
        })
    });
    group.bench_function("extract_1024_warm", |b| {
        b.iter(|| decima_core::context::Digest::from_continuation(sources()))
    });
    group.bench_function("render_1024", |b| {
        b.iter(|| digest.render(decima_core::context::Detail::Standard))
    });
    group.bench_function("parse_1024", |b| {
        b.iter(|| decima_core::context::Digest::parse(&text))
    });
    group.bench_function("merge_9_blocks", |b| {
        b.iter_batched(
            || parsed.clone(),
            |blocks| {
                let mut merged = decima_core::context::Digest::default();
                for d in blocks {
                    merged.merge(d);
                }
                merged
            },
            criterion::BatchSize::LargeInput,
        )
    });
    // The nine blocks merged, rendered within a review's summary share and counted by the
    // store's tokenizer, as a review's summary is.
    let mut merged = decima_core::context::Digest::default();
    for d in parsed.iter().cloned() {
        merged.merge(d);
    }
    let counter = decima_llm::tokens::store_counter();
    group.bench_function("fitted_9_blocks_24k", |b| {
        b.iter(|| {
            merged.render_fitted(
                decima_core::context::Detail::Standard,
                24_000,
                &decima_core::context::extract::Counting(counter.as_ref()),
            )
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    context_build,
    extract_10k,
    export_10k,
    digest_block
);
criterion_main!(benches);
