//! What the MCP client adds to a call: `McpClient::call` of `server-everything`'s `echo`
//! against a bare stdio round trip to the same kind of server (one JSON-RPC line written, one
//! read, no SDK), measured in the same run; and the time from spawning a server to its tools
//! being listed.
//!
//! Run: `cargo bench -p decima-mcp --bench call` (the reference servers must be installed:
//! `source scripts/lib.sh && ensure_mcp_servers`).

// Bench code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use decima_mcp::client::HostContext;
use decima_mcp::{McpClient, Place, ServerConfig};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

fn script() -> PathBuf {
    decima_testkit::mcp_servers::reference_server("server-everything")
}

fn config() -> ServerConfig {
    ServerConfig::stdio(
        "everything",
        "node",
        vec![script().display().to_string(), "stdio".into()],
    )
    .at(Place::Host)
}

fn calls(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let host = HostContext {
        workspace: dir.path().to_path_buf(),
        log: None,
    };
    let client = rt
        .block_on(McpClient::connect(&config(), &host, None))
        .unwrap();
    // The bare round trip: the same server, spoken to by hand.
    let (mut child, mut stdin, mut stdout) = rt.block_on(async {
        let mut child = tokio::process::Command::new("node")
            .arg(script())
            .arg("stdio")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}});
        stdin
            .write_all(format!("{init}\n").as_bytes())
            .await
            .unwrap();
        while let Some(line) = stdout.next_line().await.unwrap() {
            if line.contains("\"id\":0") {
                break;
            }
        }
        stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .await
            .unwrap();
        (child, stdin, stdout)
    });
    let mut group = c.benchmark_group("mcp");
    group
        .measurement_time(Duration::from_secs(5))
        .sample_size(50);
    let never = CancellationToken::new();
    let arguments = json!({"message": "hello"}).as_object().cloned().unwrap();
    group.bench_function("call_echo_client", |b| {
        b.iter(|| {
            rt.block_on(client.call("echo", arguments.clone(), &never))
                .unwrap()
        })
    });
    let mut id = 1u64;
    group.bench_function("call_echo_bare_stdio", |b| {
        b.iter(|| {
            id += 1;
            rt.block_on(async {
                let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"message": "hello"}}});
                stdin
                    .write_all(format!("{request}\n").as_bytes())
                    .await
                    .unwrap();
                let tag = format!("\"id\":{id}");
                while let Some(line) = stdout.next_line().await.unwrap() {
                    if line.contains(&tag) {
                        return line;
                    }
                }
                panic!("the server closed");
            })
        })
    });
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    // Timed from the spawn to the tool list; the shutdown after each start is not timed.
    group.bench_function("start_to_tools_listed", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let started = std::time::Instant::now();
                    let c = McpClient::connect(&config(), &host, None).await.unwrap();
                    total += started.elapsed();
                    c.shutdown().await;
                }
                total
            })
        })
    });
    group.finish();
    rt.block_on(async {
        client.shutdown().await;
        let _ = child.kill().await;
    });
}

criterion_group!(benches, calls);
criterion_main!(benches);
