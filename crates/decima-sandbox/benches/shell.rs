//! The shell tool's overhead over a bare `sh -c true` spawn. Goal: at most 5 ms above it.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

use std::hint::black_box;
use std::process::{Command, Stdio};

use criterion::{Criterion, criterion_group, criterion_main};
use decima_sandbox::host::{HostLimits, HostSandbox, Sandbox, ShellRequest};

fn shell(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = HostSandbox::new(dir.path().to_path_buf(), HostLimits::default());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();

    let mut group = c.benchmark_group("shell");
    group.bench_function("bare_sh_c_true", |b| {
        b.iter(|| {
            let status = Command::new("sh")
                .arg("-c")
                .arg("true")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .output()
                .unwrap();
            black_box(status)
        })
    });
    group.bench_function("host_sandbox_exec_true", |b| {
        b.to_async(&rt).iter(|| async {
            let outcome = sandbox.exec(ShellRequest::new("true")).await.unwrap();
            assert_eq!(outcome.exit_code, Some(0));
            black_box(outcome)
        })
    });
    group.bench_function("host_sandbox_exec_echo", |b| {
        b.to_async(&rt).iter(|| async {
            let outcome = sandbox.exec(ShellRequest::new("echo hello")).await.unwrap();
            black_box(outcome)
        })
    });
    group.finish();
}

criterion_group!(benches, shell);
criterion_main!(benches);
