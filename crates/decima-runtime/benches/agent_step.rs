//! The agent loop's own cost per step on a 10k-message conversation: everything a step does
//! apart from waiting on the model and on tools (building the context from the store, the
//! compression check, the request and its token estimate, storing the answer, the results and
//! the step records, the events). The runtime measures it itself (`Event::StepTimed`): the
//! wall time of the step minus the time spent awaiting the model's stream and the tool calls.
//!
//! A run against the wire-level test server: the scripted model calls `shell true <n>` step after
//! step (`echo <n>` on Windows, whose shells have no `true`), then answers. The figure is the overhead of each step after the first (the steady
//! state of a long run); the first step of a run, which reads the window from the store and
//! counts the whole request, is printed separately.
//!
//! Run: `cargo bench -p decima-runtime --bench agent_step`

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use decima_runtime::agent::{self, CancellationToken, RunRequest, Session, StopOnFailure};
use decima_runtime::{Event, EventSink};
use decima_testkit::{LlmServer, Reply, ScriptedToolCall, Turn};

const WINDOW: u32 = 128_000;

/// A command that does nothing and succeeds, in the host shell's language.
const NOOP: &str = if cfg!(windows) { "echo" } else { "true" };

mod world;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Default)]
struct Timings {
    steps: Mutex<Vec<(u64, u64, u64, u64)>>,
    compactions: Mutex<u32>,
}

impl EventSink for Timings {
    fn emit(&self, event: Event) {
        match event {
            Event::StepTimed {
                total_us,
                model_us,
                tools_us,
                overhead_us,
                ..
            } => self
                .steps
                .lock()
                .unwrap()
                .push((total_us, model_us, tools_us, overhead_us)),
            Event::Compacted { .. } => *self.compactions.lock().unwrap() += 1,
            _ => {}
        }
    }
}

fn agent_step(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // How many more steps the scripted model calls a tool before it answers.
    let calls_left = Arc::new(AtomicU64::new(0));
    let (server, store, conversation) = rt.block_on(async {
        let server = LlmServer::start().await;
        let calls_left = Arc::clone(&calls_left);
        server.respond_with(move |_request| {
            let call = calls_left
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .ok();
            Reply::Stream(if let Some(left) = call {
                Turn {
                    tool_calls: vec![ScriptedToolCall {
                        id: String::new(),
                        name: "shell".into(),
                        // Each call differs, as a working model's do: the same call
                        // with the same result step after step is a stuck loop, which
                        // the runtime stops.
                        argument_chunks: vec![format!(r#"{{"command":"{NOOP} {left}"}}"#)],
                    }],
                    ..Turn::default()
                }
            } else {
                Turn {
                    text: vec!["done".into()],
                    ..Turn::default()
                }
            })
        });
        let store = world::store_with_provider(dir.path(), server.openai_base_url(), WINDOW).await;
        let conversation = world::import_10k(&store, "bench").await;
        world::compact(&store, dir.path(), &conversation, WINDOW).await;
        (server, store, conversation)
    });
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let timings = Timings::default();
    // One run of `steps` model calls: `steps - 1` that call `shell true`, then the answer.
    let run = |steps: u64| {
        calls_left.store(steps.saturating_sub(1), Ordering::SeqCst);
        timings.steps.lock().unwrap().clear();
        rt.block_on(async {
            let session = Session {
                store: &store,
                data_dir: dir.path(),
                provider: Some("local"),
                events: &timings,
                choices: &StopOnFailure,
                cancel: CancellationToken::new(),
            };
            let outcome = agent::run(
                &session,
                RunRequest {
                    conversation: Some(conversation.id),
                    workspace: Some(workspace.clone()),
                    task: "Run true until told to stop, then say done".into(),
                    sandbox: decima_store::SandboxKind::Host,
                    options: agent::RunOptions {
                        // The loop's cost is measured here, not the tenth man's.
                        tenth_man: decima_runtime::review::TenthManMode::Off,
                        max_steps: 1_000_000,
                        // The loop's cost, not the figure check's: the scripted answers' numbers are made up.
                        check_figures: false,
                        ..agent::RunOptions::default()
                    },
                },
            )
            .await
            .unwrap();
            assert_eq!(outcome.answer.as_deref(), Some("done"));
        });
        timings.steps.lock().unwrap().clone()
    };
    // Warm the token memo and the calibration once.
    run(2);

    let mut group = c.benchmark_group("agent_step");
    group
        .measurement_time(Duration::from_secs(8))
        .sample_size(20);
    // The steady state: every step of a long run after its first, which reads the window once.
    group.bench_function("overhead_per_step_10k", |b| {
        b.iter_custom(|iters| {
            let steps = run(iters + 1);
            Duration::from_micros(steps[1..].iter().map(|s| s.3).sum())
        })
    });
    group.finish();

    // A breakdown, for the record: the first step of a run (reads the window from the store and
    // counts the whole request) and the steps after it.
    let mut first = Vec::new();
    let mut later = Vec::new();
    for _ in 0..10 {
        let steps = run(20);
        first.push(steps[0]);
        later.extend_from_slice(&steps[1..]);
    }
    let median = |v: &[(u64, u64, u64, u64)], f: fn(&(u64, u64, u64, u64)) -> u64| {
        let mut v: Vec<u64> = v.iter().map(f).collect();
        v.sort_unstable();
        v[v.len() / 2]
    };
    let mut overheads: Vec<u64> = later.iter().map(|s| s.3).collect();
    overheads.sort_unstable();
    let at = |q: f64| overheads[((overheads.len() - 1) as f64 * q) as usize];
    println!(
        "later steps' overhead: p50 {} µs, p90 {} µs, p99 {} µs, max {} µs, mean {} µs",
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0),
        overheads.iter().sum::<u64>() / overheads.len() as u64
    );
    for (label, steps) in [("first step", &first), ("later steps", &later)] {
        println!(
            "{label} (median of {}): total {} µs, model {} µs, tools {} µs, overhead {} µs",
            steps.len(),
            median(steps, |s| s.0),
            median(steps, |s| s.1),
            median(steps, |s| s.2),
            median(steps, |s| s.3),
        );
    }
    println!(
        "compactions during the bench: {}",
        timings.compactions.lock().unwrap()
    );
    drop(server);
}

criterion_group!(benches, agent_step);
criterion_main!(benches);
