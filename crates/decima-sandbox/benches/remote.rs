//! A `shell` call in a container on a remote engine, over mutual TLS and over SSH, against the
//! same call on the local socket, in the same run: the local engine behind a `socat` TLS front
//! on loopback (certificates made by `openssl`) and behind OpenSSH's `sshd` on loopback (keys
//! made by `ssh-keygen`, reached through `ssh -L`), so the differences are what TLS, SSH and
//! TCP add, not a network. Needs a running engine, the busybox test image, openssl, socat and
//! OpenSSH (scripts/test.sh).
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use decima_sandbox::docker::address::EngineAddress;
use decima_sandbox::docker::{DockerConfig, DockerEngine, DockerSandbox};
use decima_sandbox::host::{Sandbox, ShellRequest};
use decima_testkit::{ssh, tls};

fn remote(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let good = tls::team(dir.path());
    let front = tls::Front::start(dir.path(), "server");
    let ssh_dir = dir.path().join("ssh");
    std::fs::create_dir_all(&ssh_dir).unwrap();
    let sshd = ssh::Server::start(&ssh_dir);
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
    let over_ssh = sandbox(EngineAddress::Ssh {
        destination: format!("{}@127.0.0.1", ssh::login_name()),
        port: Some(sshd.port),
        config: Some(sshd.client_config.clone()),
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
    group.bench_function("remote_engine_over_ssh", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(over_ssh.exec(ShellRequest::new("true")).await.unwrap()) })
    });
    group.finish();
    rt.block_on(async {
        local.remove(true).await.unwrap();
        remote.remove(true).await.unwrap();
        over_ssh.remove(true).await.unwrap();
    });
    drop(front);
    drop(sshd);
}

criterion_group!(benches, remote);
criterion_main!(benches);
