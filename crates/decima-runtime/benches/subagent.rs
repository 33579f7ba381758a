//! What spawning a subagent costs before the child's first model call, on a 10k-message
//! parent, on the host and in Docker (container already running), against a bare
//! `docker exec true` in the same run; and exporting a 10k-message history into the container.
//!
//! The spawn figure is the time from the parent's `spawn_subagent` call starting (its
//! `ToolStarted` event) to the child's first request arriving at the wire-level test server:
//! the history export (incremental: only what the parent added since its last spawn), the
//! copy into the container, the child's execution, conversation and first message, and its
//! first context. The parent spawns one child per step; each child answers at once.
//!
//! Run: `cargo bench -p decima-runtime --bench subagent` (the Docker half needs the engine and
//! the `decima-test:busybox` image that `scripts/test.sh` sets up).

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use decima_core::export::ExportFormat;
use decima_runtime::agent::subagent::Exported;
use decima_runtime::agent::{
    self, CancellationToken, DockerConfig, RunRequest, Session, StopOnFailure, SubagentLimits,
};
use decima_runtime::docker::LazyDocker;
use decima_runtime::{Event, EventSink};
use decima_sandbox::host::BoxFuture;
use decima_sandbox::{DockerEngine, DockerSandbox};
use decima_store::{SandboxKind, Store};
use decima_testkit::{LlmServer, RecordedRequest, Reply, ScriptedToolCall, Turn};
use serde_json::json;

const WINDOW: u32 = 128_000;
const TEST_IMAGE: &str = "decima-test:busybox";

mod world;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// When each spawn call started.
#[derive(Default)]
struct SpawnStarts(Mutex<Vec<Instant>>);

impl EventSink for SpawnStarts {
    fn emit(&self, event: Event) {
        if let Event::ToolStarted { name, .. } = event
            && name == "spawn_subagent"
        {
            self.0.lock().unwrap().push(Instant::now());
        }
    }
}

fn is_child(request: &RecordedRequest) -> bool {
    request
        .json
        .as_ref()
        .is_some_and(|b| b.to_string().contains("You are a subagent"))
}

/// The spawn results the parent has so far in this run (the 10k-message history has tool
/// results of its own).
fn spawn_results(request: &RecordedRequest) -> u64 {
    request.json.as_ref().map_or(0, |b| {
        let messages = b["messages"].as_array().map_or(&[][..], Vec::as_slice);
        let run_start = messages
            .iter()
            .rposition(|m| m["role"] == "user" && m["content"] == "Spawn helpers")
            .unwrap_or(0);
        messages[run_start..]
            .iter()
            .filter(|m| m["role"] == "tool")
            .count() as u64
    })
}

struct World {
    rt: tokio::runtime::Runtime,
    dir: tempfile::TempDir,
    server: LlmServer,
    store: Store,
    conversation: decima_core::ConversationId,
    spawns: Arc<AtomicU64>,
}

fn world() -> World {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let spawns = Arc::new(AtomicU64::new(0));
    let (server, store, conversation) = rt.block_on(async {
        let server = LlmServer::start().await;
        let wanted = Arc::clone(&spawns);
        server.respond_with(move |request| {
            let turn = if is_child(request) {
                Turn {
                    text: vec!["ok".into()],
                    ..Turn::default()
                }
            } else if spawn_results(request) < wanted.load(Ordering::SeqCst) {
                Turn {
                    tool_calls: vec![ScriptedToolCall {
                        id: format!("s{}", spawn_results(request)),
                        name: "spawn_subagent".into(),
                        argument_chunks: vec![json!({"task": "say ok"}).to_string()],
                    }],
                    ..Turn::default()
                }
            } else {
                Turn {
                    text: vec!["done".into()],
                    ..Turn::default()
                }
            };
            Reply::Stream(turn)
        });
        let store = world::store_with_provider(dir.path(), server.openai_base_url(), WINDOW).await;
        let conversation = world::import_10k(&store, "bench").await;
        world::compact(&store, dir.path(), &conversation, WINDOW).await;
        agent::set_sandbox_settings(
            &store,
            conversation.id,
            &DockerConfig::with_image(TEST_IMAGE),
        )
        .await
        .unwrap();
        (server, store, conversation.id)
    });
    World {
        rt,
        dir,
        server,
        store,
        conversation,
        spawns,
    }
}

impl World {
    /// One parent run that spawns `n` children one after the other; returns each spawn's
    /// overhead.
    fn spawn_run(&self, sandbox: SandboxKind, n: u64) -> Vec<Duration> {
        self.spawns.store(n, Ordering::SeqCst);
        let before = self.server.requests().len();
        let starts = SpawnStarts::default();
        self.rt.block_on(async {
            let session = Session {
                store: &self.store,
                data_dir: self.dir.path(),
                provider: Some("local"),
                events: &starts,
                choices: &StopOnFailure,
                cancel: CancellationToken::new(),
            };
            let outcome = agent::run(
                &session,
                RunRequest {
                    conversation: Some(self.conversation),
                    workspace: Some(self.dir.path().join("ws")),
                    task: "Spawn helpers".into(),
                    sandbox,
                    options: agent::RunOptions {
                        // The loop's cost is measured here, not the tenth man's.
                        tenth_man: decima_runtime::review::TenthManMode::Off,
                        max_steps: 1_000_000,
                        subagents: SubagentLimits {
                            max_children: u32::MAX,
                            ..SubagentLimits::default()
                        },
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
        let firsts: Vec<Instant> = self.server.requests()[before..]
            .iter()
            .filter(|r| is_child(r) && spawn_results(r) == 0)
            .map(|r| r.received_at)
            .collect();
        let starts = starts.0.into_inner().unwrap();
        assert_eq!(firsts.len(), starts.len());
        starts
            .iter()
            .zip(firsts)
            .map(|(s, f)| f.duration_since(*s))
            .collect()
    }
}

fn spawn_overhead(c: &mut Criterion) {
    let w = world();
    std::fs::create_dir_all(w.dir.path().join("ws")).unwrap();
    let mut group = c.benchmark_group("subagent_spawn");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));

    // Warm up: the first export of the parent's history, the token memo, the container.
    w.spawn_run(SandboxKind::Host, 1);
    group.bench_function("host_10k", |b| {
        b.iter_custom(|iters| w.spawn_run(SandboxKind::Host, iters).iter().sum())
    });
    w.spawn_run(SandboxKind::Docker, 1);
    group.bench_function("docker_10k_container_running", |b| {
        b.iter_custom(|iters| w.spawn_run(SandboxKind::Docker, iters).iter().sum())
    });

    // The anchor: a bare `docker exec true` in the same container, through bollard.
    let sandbox = w.rt.block_on(async {
        let docker = LazyDocker::new(&w.store, w.dir.path(), w.conversation)
            .await
            .unwrap();
        docker.get().await.unwrap()
    });
    let container = w.rt.block_on(sandbox.container()).unwrap();
    group.bench_function("bare_docker_exec_true", |b| {
        b.iter(|| w.rt.block_on(bare_exec(sandbox.engine(), &container)))
    });

    // Exporting the whole 10k-message history into the container: the file rewritten from
    // the store, then copied in.
    let history = w.dir.path().join("context").join("bench_history.txt");
    std::fs::create_dir_all(history.parent().unwrap()).unwrap();
    let docker =
        w.rt.block_on(LazyDocker::new(&w.store, w.dir.path(), w.conversation))
            .unwrap();
    let execution = decima_core::ExecutionId::new();
    group.bench_function("export_10k_into_container", |b| {
        b.iter(|| {
            w.rt.block_on(async {
                let conversation = w.store.conversations().get(w.conversation).await.unwrap();
                decima_runtime::export::export_to_file(
                    &w.store,
                    w.dir.path(),
                    &conversation,
                    ExportFormat::Text,
                    &history,
                    true,
                )
                .await
                .unwrap();
                docker
                    .upload_histories(&[Exported {
                        execution,
                        path: history.clone(),
                        appended: false,
                    }])
                    .await
                    .unwrap();
            })
        })
    });
    group.finish();
    println!(
        "history file: {} bytes",
        std::fs::metadata(&history).unwrap().len()
    );
    w.rt.block_on(sandbox.remove(true)).unwrap();
    drop_sandbox(sandbox);
}

fn drop_sandbox(_sandbox: Arc<DockerSandbox>) {}

fn bare_exec<'a>(engine: &'a DockerEngine, container: &'a str) -> BoxFuture<'a, ()> {
    Box::pin(async move {
        let docker = engine.client();
        let exec = docker
            .create_exec(
                container,
                bollard::exec::CreateExecOptions::<String> {
                    cmd: Some(vec!["true".into()]),
                    attach_stdout: Some(true),
                    attach_stderr: Some(true),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        if let bollard::exec::StartExecResults::Attached { mut output, .. } =
            docker.start_exec(&exec.id, None).await.unwrap()
        {
            use futures_util::StreamExt as _;
            while output.next().await.is_some() {}
        }
        docker.inspect_exec(&exec.id).await.unwrap();
    })
}

criterion_group!(benches, spawn_overhead);
criterion_main!(benches);
