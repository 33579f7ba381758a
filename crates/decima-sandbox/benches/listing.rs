//! Listing a workspace of 1,000 files (40 folders of 25), as the loop does after each call
//! that can write there (what changed, for the window's panel and a saved chart): on the host,
//! and in a running Docker container of the busybox test image (start an engine and build the
//! image with scripts/test.sh first). Goals: ≤ 50 ms on the host, ≤ 150 ms in Docker.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use decima_sandbox::docker::{DockerConfig, DockerEngine, DockerSandbox};
use decima_sandbox::host::{HostLimits, HostSandbox, Sandbox, ShellRequest};

fn listing(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    for folder in 0..40 {
        let path = dir.path().join(format!("part-{folder:02}"));
        std::fs::create_dir(&path).unwrap();
        for file in 0..25 {
            std::fs::write(path.join(format!("table-{file:02}.csv")), "a,b\n1,2\n").unwrap();
        }
    }
    let host = HostSandbox::new(dir.path().to_path_buf(), HostLimits::default());
    let docker = rt.block_on(async {
        let engine = DockerEngine::connect("decimabench")
            .await
            .expect("a running Docker engine: run scripts/test.sh first");
        let sandbox = DockerSandbox::new(
            engine,
            DockerConfig::with_image("decima-test:busybox"),
            &format!("bench-{}", uuid::Uuid::now_v7().simple()),
        )
        .unwrap();
        let made = sandbox
            .exec(ShellRequest::new(
                "for d in $(seq -w 0 39); do mkdir -p part-$d; for f in $(seq -w 0 24); do \
                 echo 'a,b' > part-$d/table-$f.csv; done; done",
            ))
            .await
            .unwrap();
        assert_eq!(made.exit_code, Some(0), "{}", made.output);
        sandbox
    });
    assert_eq!(rt.block_on(host.list_files()).unwrap().len(), 1000);
    assert_eq!(rt.block_on(docker.list_files()).unwrap().len(), 1000);

    let mut group = c.benchmark_group("workspace_listing_1000");
    group.bench_function("host", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(host.list_files().await.unwrap()) })
    });
    group.bench_function("docker", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(docker.list_files().await.unwrap()) })
    });
    group.finish();
    rt.block_on(docker.remove(true)).unwrap();
}

criterion_group!(benches, listing);
criterion_main!(benches);
