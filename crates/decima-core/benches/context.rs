//! Context build per agent step, for 1k, 10k and 100k-message conversations, against the naive
//! baseline of the designs Decima replaces, measured in the same run.
//!
//! - `context_build/decima`: select the window (global summary, segment summaries, the uncovered
//!   tail verbatim, pinned units) over cached token counts, and measure it. The conversation is in
//!   steady state: summaries cover all but its last 300 messages, as compression keeps it.
//! - `context_build/naive`: reload the whole history (a clone), recount every message, then take
//!   messages from the end while they fit. It counts with the cheap estimate rather than a real
//!   tokenizer, which makes the baseline faster than the originals and the ratio conservative.
//!
//! Run: `cargo bench -p decima-core --bench context`

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
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

fn naive(messages: &[Message], budget: u32) -> (Vec<Message>, u32) {
    let reloaded: Vec<Message> = messages.to_vec();
    let counts: Vec<u32> = reloaded
        .iter()
        .map(|m| {
            let draft = decima_core::NewMessage {
                role: m.role,
                name: m.name.clone(),
                content: m.content.clone(),
                reasoning: m.reasoning.clone(),
                tool_calls: m.tool_calls.clone(),
                tool_call_id: m.tool_call_id.clone(),
                ..decima_core::NewMessage::default()
            };
            EstimateCounter.count_message(&draft)
        })
        .collect();
    let mut used = 0u32;
    let mut start = reloaded.len();
    while start > 0 && used + counts[start - 1] <= budget {
        used += counts[start - 1];
        start -= 1;
    }
    (reloaded[start..].to_vec(), used)
}

fn context_build(c: &mut Criterion) {
    let mut group = c.benchmark_group("context_build");
    group.measurement_time(Duration::from_secs(4));
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
        group.bench_with_input(BenchmarkId::new("naive", n), &n, |b, _| {
            b.iter(|| std::hint::black_box(naive(&messages, budget.tokens).1))
        });
    }
    group.finish();
}

criterion_group!(benches, context_build);
criterion_main!(benches);
