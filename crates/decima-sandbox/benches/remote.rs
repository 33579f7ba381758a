//! A `shell` call in a container on a remote engine over mutual TLS, against the same call on
//! the local socket, in the same run: the local engine behind a `socat` TLS front on loopback
//! (certificates made by `openssl`), so the difference is what TLS and TCP add, not a network.
//! Needs a running engine, the busybox test image, openssl and socat (scripts/test.sh).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use decima_sandbox::docker::address::EngineAddress;
use decima_sandbox::docker::{DockerConfig, DockerEngine, DockerSandbox};
use decima_sandbox::host::{Sandbox, ShellRequest};
use decima_testkit::tls;

fn remote(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let good = tls::team(dir.path());
    let front = tls::Front::start(dir.path(), "server");
    let sandbox = |address: EngineAddress| {
        rt.block_on(async {
            let engine = DockerEngine::connect_to(&address, "decimabench")
                .await
                .expect("a running Docker engine: run scripts/test.sh first");
            let sandbox = DockerSandbox::new(
                engine,
                DockerConfig::with_image("decima-test:busybox"),
                &format!("bench-{}", uuid::Uuid::now_v7().simple()),
            )
            .unwrap();
            // The container is created and started outside the measurement.
            let warm = sandbox.exec(ShellRequest::new("true")).await.unwrap();
            assert_eq!(warm.exit_code, Some(0));
            sandbox
        })
    };
    let local = sandbox(EngineAddress::from_env().unwrap());
    let remote = sandbox(EngineAddress::Tls {
        addr: format!("127.0.0.1:{}", front.port),
        certs: good,
    });

    let mut group = c.benchmark_group("shell_call");
    group.bench_function("local_socket", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(local.exec(ShellRequest::new("true")).await.unwrap()) })
    });
    group.bench_function("remote_engine_over_mutual_tls", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(remote.exec(ShellRequest::new("true")).await.unwrap()) })
    });
    group.finish();
    rt.block_on(async {
        local.remove(true).await.unwrap();
        remote.remove(true).await.unwrap();
    });
    drop(front);
}

criterion_group!(benches, remote);
criterion_main!(benches);
