//! The `python` tool's cost on a warm kernel, in the analyst's image (`decima sandbox image
//! build`, which scripts/test.sh runs) on a running engine: a cell that does nothing, timed
//! from the call to its reply (the bridge's JSON line in, the kernel's messages, the reply
//! out, through the exec's streams), against the kernel's own time for it as the bridge
//! measures it (from `execute_request` to the kernel's idle status). The overhead is the
//! difference: `cargo bench -p decima-sandbox --bench kernel`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use decima_sandbox::docker::{DockerConfig, DockerEngine, DockerSandbox};
use decima_sandbox::kernel::PythonRequest;

fn kernel(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let key = format!("bench-{}", uuid::Uuid::now_v7().simple());
    let sandbox = rt.block_on(async {
        let engine = DockerEngine::connect("decimabench")
            .await
            .expect("a running Docker engine: run scripts/test.sh first");
        DockerSandbox::new(engine, DockerConfig::default(), &key).unwrap()
    });
    let cell = |code: &str| PythonRequest {
        code: code.to_owned(),
        timeout: Duration::from_secs(60),
        charts: "charts/bench".to_owned(),
    };
    // Warm: the kernel started, pandas imported.
    let first = rt
        .block_on(sandbox.python_in("bench", &cell("import pandas as pd\nx = 1")))
        .unwrap();
    assert!(first.fresh_kernel, "{first:?}");
    let mut kernel_time = Duration::ZERO;
    let mut calls = 0u32;
    let mut group = c.benchmark_group("kernel");
    group.bench_function("python_call_pass", |b| {
        b.iter(|| {
            let out = rt
                .block_on(sandbox.python_in("bench", &cell("pass")))
                .unwrap();
            kernel_time += out.elapsed;
            calls += 1;
            black_box(out)
        });
    });
    group.bench_function("python_call_value", |b| {
        b.iter(|| {
            black_box(
                rt.block_on(sandbox.python_in("bench", &cell("x + 1")))
                    .unwrap(),
            )
        });
    });
    group.finish();
    eprintln!(
        "the kernel's own time for `pass`, as the bridge measured it: {:.2} ms on average over {calls} calls",
        kernel_time.as_secs_f64() * 1000.0 / f64::from(calls.max(1))
    );
    rt.block_on(sandbox.remove(true)).unwrap();
}

criterion_group!(benches, kernel);
criterion_main!(benches);
