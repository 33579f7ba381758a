//! The Docker sandbox against a real engine (start one with scripts/test.sh or
//! `source scripts/lib.sh && ensure_docker && ensure_test_image`), the container already
//! running:
//! - `docker exec true` through bare bollard (create_exec + start_exec + read to the end +
//!   inspect_exec) against `DockerSandbox::exec("true")` (the wrapper with its watchdog and
//!   timeout kill, the scrubbed environment, output collection);
//! - uploading a history export the size of 10k messages (~3 MB, built deterministically) to
//!   /workspace/context/.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

use std::hint::black_box;

use bollard::exec::{CreateExecOptions, StartExecOptions, StartExecResults};
use criterion::{Criterion, criterion_group, criterion_main};
use decima_sandbox::docker::{DockerConfig, DockerEngine, DockerSandbox};
use decima_sandbox::host::{Sandbox, ShellRequest};
use futures_util::StreamExt;

/// 10k chat messages as JSON lines, about 3 MB, the same bytes every run.
fn history() -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(10_000);
    let words = [
        "the",
        "report",
        "quarterly",
        "revenue",
        "analysis",
        "table",
        "growth",
        "region",
        "customer",
        "margin",
        "forecast",
        "data",
        "query",
        "result",
        "chart",
        "summary",
    ];
    let mut out = String::new();
    for i in 0..10_000 {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        let mut text = String::new();
        while text.len() < 250 {
            text.push_str(words[rng.usize(..words.len())]);
            text.push(' ');
        }
        out.push_str(&format!(
            "{{\"seq\":{i},\"role\":\"{role}\",\"content\":\"{}\"}}\n",
            text.trim_end()
        ));
    }
    out.into_bytes()
}

fn docker(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let key = format!("bench-{}", uuid::Uuid::now_v7().simple());
    let sandbox = rt.block_on(async {
        let engine = DockerEngine::connect("decimabench")
            .await
            .expect("a running Docker engine: run scripts/test.sh first");
        DockerSandbox::new(
            engine,
            DockerConfig::with_image("decima-test:busybox"),
            &key,
        )
        .unwrap()
    });
    let container = rt.block_on(sandbox.container()).unwrap();
    let client = sandbox.engine().client().clone();
    let data = history();
    eprintln!("history export: {} bytes", data.len());

    let mut group = c.benchmark_group("docker");
    group.bench_function("bare_bollard_exec_true", |b| {
        b.to_async(&rt).iter(|| async {
            let created = client
                .create_exec(
                    &container,
                    CreateExecOptions {
                        attach_stdout: Some(true),
                        attach_stderr: Some(true),
                        cmd: Some(vec!["true".to_owned()]),
                        user: Some("1000:1000".to_owned()),
                        ..Default::default()
                    },
                )
                .await
                .unwrap();
            let started = client
                .start_exec(&created.id, None::<StartExecOptions>)
                .await
                .unwrap();
            if let StartExecResults::Attached { mut output, .. } = started {
                while output.next().await.is_some() {}
            }
            let inspected = client.inspect_exec(&created.id).await.unwrap();
            black_box(inspected.exit_code)
        })
    });
    group.bench_function("docker_sandbox_exec_true", |b| {
        b.to_async(&rt).iter(|| async {
            let outcome = sandbox.exec(ShellRequest::new("true")).await.unwrap();
            assert_eq!(outcome.exit_code, Some(0));
            black_box(outcome)
        })
    });
    group.sample_size(20);
    group.bench_function("upload_history_3mb", |b| {
        b.to_async(&rt).iter(|| async {
            let path = sandbox
                .upload_bytes("context/history.jsonl", data.clone())
                .await
                .unwrap();
            black_box(path)
        })
    });
    group.finish();

    rt.block_on(sandbox.remove(true)).unwrap();
}

criterion_group!(benches, docker);
criterion_main!(benches);
