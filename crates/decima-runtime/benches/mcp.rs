//! MCP servers as a run meets them: the time from a run's start to its servers being ready
//! (`McpSession::start`: the server list, the secret store, the spawn, the handshake and the
//! tool list), and one call through the registry's tool (`echo` of the reference
//! `server-everything`), with the server on the host and in the Docker sandbox (container
//! already running). In the same run, a bare `docker exec true` through bollard.
//!
//! Run: `cargo bench -p decima-runtime --bench mcp` (needs the reference servers, the engine
//! and the `decima-test:node` image that `scripts/test.sh` sets up).

// Bench code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use decima_core::ConversationId;
use decima_llm::Protocol;
use decima_mcp::{Place, ServerConfig};
use decima_runtime::NoEvents;
use decima_runtime::docker::LazyDocker;
use decima_runtime::mcp::{McpSession, StartRequest, servers};
use decima_store::Store;

const NODE_IMAGE: &str = "decima-test:node";
const IN_IMAGE: &str =
    "/opt/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js";

fn host_script() -> PathBuf {
    decima_testkit::mcp_servers::reference_server("server-everything")
}

/// A store whose only server is `config`, and a conversation whose sandbox runs the node image.
async fn world(dir: &Path, config: ServerConfig) -> (Store, ConversationId) {
    let store = Store::open(&dir.join("decima.db"), decima_llm::tokens::store_counter())
        .await
        .unwrap();
    servers::add(&store, dir, &[config]).await.unwrap();
    let conversation = store.conversations().create("bench", None).await.unwrap();
    store
        .conversations()
        .set_sandbox_config(
            conversation.id,
            Some(&serde_json::json!({"image": NODE_IMAGE})),
        )
        .await
        .unwrap();
    (store, conversation.id)
}

fn mcp(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let host_dir = tempfile::tempdir().unwrap();
    let docker_dir = tempfile::tempdir().unwrap();
    let workspace = host_dir.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let (host_store, host_conversation) = rt.block_on(world(
        host_dir.path(),
        ServerConfig::stdio(
            "everything",
            "node",
            vec![host_script().display().to_string(), "stdio".into()],
        )
        .at(Place::Host),
    ));
    let (docker_store, docker_conversation) = rt.block_on(world(
        docker_dir.path(),
        ServerConfig::stdio("everything", "node", vec![IN_IMAGE.into(), "stdio".into()]),
    ));
    let lazy = Arc::new(
        rt.block_on(LazyDocker::new(
            &docker_store,
            docker_dir.path(),
            docker_conversation,
        ))
        .unwrap(),
    );
    let sandbox = rt.block_on(lazy.get()).unwrap();
    let container = rt.block_on(sandbox.container()).unwrap();

    let start = |store: &Store, data_dir: &Path, conversation, docker: Option<Arc<LazyDocker>>| {
        rt.block_on(McpSession::start(StartRequest {
            store,
            data_dir,
            conversation,
            host_workspace: docker.is_none().then_some(workspace.as_path()),
            protocol: Protocol::OpenAi,
            docker,
            root_conversation: conversation,
            events: &NoEvents,
        }))
        .unwrap()
    };

    let mut group = c.benchmark_group("mcp");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    for (name, store, dir, conversation, docker) in [
        (
            "start_host",
            &host_store,
            host_dir.path(),
            host_conversation,
            None,
        ),
        (
            "start_docker",
            &docker_store,
            docker_dir.path(),
            docker_conversation,
            Some(lazy.clone()),
        ),
    ] {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let started = Instant::now();
                    let session = start(store, dir, conversation, docker.clone());
                    total += started.elapsed();
                    assert!(!session.is_empty(), "the server did not start");
                    rt.block_on(session.shutdown());
                }
                total
            })
        });
    }
    group
        .sample_size(50)
        .measurement_time(Duration::from_secs(5));
    for (name, store, dir, conversation, docker) in [
        (
            "call_host",
            &host_store,
            host_dir.path(),
            host_conversation,
            None,
        ),
        (
            "call_docker",
            &docker_store,
            docker_dir.path(),
            docker_conversation,
            Some(lazy.clone()),
        ),
    ] {
        let session = start(store, dir, conversation, docker);
        if name == "call_host" {
            // For the record: what offering the server's tools costs, directly and by search.
            let counter = decima_llm::tokens::store_counter();
            let direct: u32 = session
                .tools()
                .iter()
                .map(|t| counter.count_text(&serde_json::to_string(&t.spec()).unwrap()))
                .sum();
            let search = decima_runtime::mcp::search::search_tools_spec(&session.server_names());
            println!(
                "schemas of everything's {} tools: {direct} tokens offered directly, {} through \
                 search_tools",
                session.tools().len(),
                counter.count_text(&serde_json::to_string(&search).unwrap())
            );
        }
        let tool = session
            .tools()
            .into_iter()
            .find(|t| t.spec().name == "mcp__everything__echo")
            .unwrap();
        let sandbox: Arc<dyn decima_sandbox::Sandbox> = Arc::new(decima_sandbox::HostSandbox::new(
            workspace.clone(),
            decima_sandbox::HostLimits::default(),
        ));
        let arguments = serde_json::json!({"message": "hello"});
        let cancel = decima_runtime::agent::CancellationToken::new();
        group.bench_function(name, |b| {
            b.iter(|| {
                let out = rt.block_on(tool.call(decima_runtime::agent::ToolCallContext {
                    call_id: "call_1",
                    arguments: &arguments,
                    raw: r#"{"message":"hello"}"#,
                    cancel: &cancel,
                    sandbox: &sandbox,
                }));
                assert_eq!(out.text, "Echo: hello");
            })
        });
        rt.block_on(session.shutdown());
    }
    // The anchor: what any exec in that container costs.
    let docker = sandbox.engine().client().clone();
    group.bench_function("bare_docker_exec_true", |b| {
        b.iter(|| {
            rt.block_on(async {
                use bollard::exec::{CreateExecOptions, StartExecResults};
                use futures_util::StreamExt;
                let created = docker
                    .create_exec(
                        &container,
                        CreateExecOptions {
                            cmd: Some(vec!["true".to_owned()]),
                            attach_stdout: Some(true),
                            attach_stderr: Some(true),
                            ..Default::default()
                        },
                    )
                    .await
                    .unwrap();
                if let StartExecResults::Attached { mut output, .. } =
                    docker.start_exec(&created.id, None).await.unwrap()
                {
                    while output.next().await.is_some() {}
                }
                docker.inspect_exec(&created.id).await.unwrap();
            })
        })
    });
    group.finish();
    rt.block_on(async {
        let _ = sandbox.remove(true).await;
    });
}

criterion_group!(benches, mcp);
criterion_main!(benches);
