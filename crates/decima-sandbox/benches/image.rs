//! The analyst's image (`decima-sandbox:latest`, built by `decima sandbox image build`) on a
//! real engine:
//! - the first `shell` call in a new container: the container created and started, then
//!   `true` run in it through `DockerSandbox::exec` (goal ≤ 2 s);
//! - a `shell` call in a running container (goal ≤ 60 ms), against a bare `docker exec true`
//!   through bollard in the same container and run.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use bollard::exec::{CreateExecOptions, StartExecOptions, StartExecResults};
use criterion::{Criterion, criterion_group, criterion_main};
use decima_sandbox::docker::{DockerConfig, DockerEngine, DockerSandbox};
use decima_sandbox::host::{Sandbox, ShellRequest};
use futures_util::StreamExt;

fn image(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let engine = rt.block_on(async {
        DockerEngine::connect("decimabench")
            .await
            .expect("a running Docker engine: run scripts/test.sh first")
    });
    let status = rt
        .block_on(engine.image_status(DockerConfig::DEFAULT_IMAGE))
        .unwrap();
    assert!(
        status.present,
        "build the image first: decima sandbox image build"
    );
    let fresh = |engine: &DockerEngine| {
        DockerSandbox::new(
            engine.clone(),
            DockerConfig::default(),
            &format!("bench-{}", uuid::Uuid::now_v7().simple()),
        )
        .unwrap()
    };

    let mut group = c.benchmark_group("analyst_image");
    group.sample_size(10);
    group.bench_function("first_shell_in_a_new_container", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let engine = engine.clone();
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let sandbox = fresh(&engine);
                    let started = Instant::now();
                    let outcome = sandbox.exec(ShellRequest::new("true")).await.unwrap();
                    total += started.elapsed();
                    assert_eq!(outcome.exit_code, Some(0));
                    sandbox.remove(true).await.unwrap();
                }
                total
            }
        })
    });
    group.sample_size(50);
    let sandbox = fresh(&engine);
    let container = rt.block_on(sandbox.container()).unwrap();
    let client = engine.client().clone();
    group.bench_function("bare_docker_exec_true", |b| {
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
            black_box(client.inspect_exec(&created.id).await.unwrap().exit_code)
        })
    });
    group.bench_function("shell_in_a_running_container", |b| {
        b.to_async(&rt).iter(|| async {
            let outcome = sandbox.exec(ShellRequest::new("true")).await.unwrap();
            assert_eq!(outcome.exit_code, Some(0));
            black_box(outcome)
        })
    });
    group.finish();
    rt.block_on(sandbox.remove(true)).unwrap();
}

criterion_group!(benches, image);
criterion_main!(benches);
