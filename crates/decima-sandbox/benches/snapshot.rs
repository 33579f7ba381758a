#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]
//! Workspace snapshots on a 1,000-file, 50 MB tree, against `tar -cf` of the same tree; restores
//! against `tar -xf` of it.
//!
//! Goals: first snapshot ≤ 300 ms, snapshot after one change ≤ 30 ms, restore after a few
//! changes ≤ 500 ms.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use criterion::{BatchSize, Criterion, SamplingMode, criterion_group, criterion_main};
use decima_sandbox::snapshot::SnapshotStore;

const FILES: usize = 1000;
const TOTAL_BYTES: usize = 50 * 1024 * 1024;

/// Deterministic pseudo-random tree: 1,000 files in 50 nested folders, 50 MB in all (sizes vary
/// from about 1 KB to 100 KB).
fn generate(root: &Path) -> Vec<PathBuf> {
    let mut rng = fastrand::Rng::with_seed(0x5eed);
    let weights: Vec<usize> = (0..FILES).map(|_| rng.usize(10..1000)).collect();
    let sum: usize = weights.iter().sum();
    let mut paths = Vec::with_capacity(FILES);
    let mut written = 0;
    for (i, w) in weights.iter().enumerate() {
        let size = if i + 1 == FILES {
            TOTAL_BYTES - written
        } else {
            w * TOTAL_BYTES / sum
        };
        written += size;
        let dir = root.join(format!("d{:02}/sub{}", i % 50, i % 3));
        fs::create_dir_all(&dir).unwrap();
        let mut content = vec![0u8; size];
        rng.fill(&mut content);
        let path = dir.join(format!("file{i:04}.bin"));
        fs::write(&path, &content).unwrap();
        paths.push(path);
    }
    paths
}

fn rewrite(path: &Path, seed: u64) {
    let len = fs::metadata(path).map(|m| m.len()).unwrap_or(4096);
    let mut content = vec![0u8; usize::try_from(len).unwrap()];
    fastrand::Rng::with_seed(seed).fill(&mut content);
    fs::write(path, content).unwrap();
}

/// `tar -cf archive -C tree .`, the snapshots' baseline.
fn tar_create(tree: &Path, archive: &Path) {
    // To a real file: GNU tar skips reading contents when the archive is /dev/null.
    let status = Command::new("tar")
        .arg("-cf")
        .arg(archive)
        .arg("-C")
        .arg(tree)
        .arg(".")
        .status()
        .unwrap();
    assert!(status.success());
}

/// `tar -xf archive -C tree`, the restores' baseline.
fn tar_extract(archive: &Path, tree: &Path) {
    let status = Command::new("tar")
        .arg("-xf")
        .arg(archive)
        .arg("-C")
        .arg(tree)
        .status()
        .unwrap();
    assert!(status.success());
}

fn benches(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("workspace");
    let files = generate(&ws);
    // Let the generated files age past the stat cache's racy window.
    std::thread::sleep(Duration::from_millis(200));

    let mut group = c.benchmark_group("snapshot");
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));

    // Each iteration snapshots into a fresh store. The stores are deleted only after the
    // measurement: deleting 50 MB of objects between iterations makes ext4's inode allocator
    // scan recently deleted inodes on every create, which measures the benchmark, not the store.
    let mut finished_stores = Vec::new();
    group.bench_function("first_snapshot_1000_files_50MB", |b| {
        b.iter_batched(
            || {
                let dir = tempfile::tempdir_in(tmp.path()).unwrap();
                let store = SnapshotStore::open(dir.path().join("store")).unwrap();
                (dir, store)
            },
            |(dir, store)| {
                let snap = store.snapshot(&ws).unwrap();
                assert_eq!(snap.stats.files, FILES as u64);
                finished_stores.push(dir);
            },
            BatchSize::PerIteration,
        );
    });
    drop(finished_stores);

    let store_dir = tmp.path().join("store");
    let store = SnapshotStore::open(&store_dir).unwrap();
    let base = store.snapshot(&ws).unwrap();
    eprintln!("first snapshot: {:?}", base.stats);
    std::thread::sleep(Duration::from_millis(200));
    let unchanged = store.snapshot(&ws).unwrap();
    eprintln!("unchanged snapshot: {:?}", unchanged.stats);

    let changed = files[FILES / 2].clone();
    let mut seed = 1;
    group.bench_function("snapshot_after_one_change", |b| {
        b.iter_batched(
            || {
                seed += 1;
                rewrite(&changed, seed);
            },
            |()| {
                let snap = store.snapshot(&ws).unwrap();
                assert_eq!(snap.stats.hashed, 1, "{:?}", snap.stats);
                snap
            },
            BatchSize::PerIteration,
        );
    });

    let created = ws.join("d00/created.txt");
    group.bench_function("restore_after_a_few_changes", |b| {
        b.iter_batched(
            || {
                seed += 1;
                rewrite(&files[1], seed);
                rewrite(&files[2], seed + 1);
                rewrite(&files[3], seed + 2);
                let _ = fs::remove_file(&files[4]);
                fs::write(&created, b"new").unwrap();
                fs::create_dir_all(ws.join("d01/new_dir")).unwrap();
            },
            |()| {
                let stats = store.restore(&base.id, &ws).unwrap();
                assert!(stats.files_written >= 4, "{stats:?}");
                stats
            },
            BatchSize::PerIteration,
        );
    });

    group.bench_function("restore_after_one_change", |b| {
        b.iter_batched(
            || {
                seed += 1;
                rewrite(&changed, seed);
            },
            |()| {
                let stats = store.restore(&base.id, &ws).unwrap();
                assert_eq!(stats.files_written, 1, "{stats:?}");
                stats
            },
            BatchSize::PerIteration,
        );
    });
    let stats = store.restore(&base.id, &ws).unwrap();
    eprintln!("restore with nothing to do: {stats:?}");

    // A full restore into a new, empty folder each time; kept until the end like the stores above.
    let mut finished_targets = Vec::new();
    group.bench_function("restore_into_empty_dir", |b| {
        b.iter_batched(
            || tempfile::tempdir_in(tmp.path()).unwrap(),
            |dir| {
                let stats = store.restore(&base.id, &dir.path().join("ws")).unwrap();
                assert_eq!(stats.files_written, FILES as u64, "{stats:?}");
                finished_targets.push(dir);
            },
            BatchSize::PerIteration,
        );
    });
    drop(finished_targets);

    let tar_out = tmp.path().join("baseline.tar");
    // What the end of a run pays to collect snapshots. With nothing to collect (every object
    // listed, the live manifest read), and with one run's garbage: a snapshot after one change,
    // its manifest and its one new object deleted.
    group.bench_function("gc_one_run_of_garbage", |b| {
        b.iter_batched(
            || {
                seed += 1;
                rewrite(&changed, seed);
                store.snapshot(&ws).unwrap()
            },
            |_garbage| {
                let stats = store
                    .gc(std::slice::from_ref(&base.id), Duration::ZERO)
                    .unwrap();
                assert!(stats.manifests_removed >= 1, "{stats:?}");
            },
            BatchSize::PerIteration,
        );
    });
    group.bench_function("gc_nothing_to_collect", |b| {
        b.iter(|| {
            let stats = store
                .gc(std::slice::from_ref(&base.id), Duration::ZERO)
                .unwrap();
            assert_eq!(stats.manifests_removed, 0);
        });
    });

    // The baselines are GNU tar's, which Windows lacks (its tar.exe is bsdtar; Wine has none).
    if cfg!(unix) {
        group.bench_function("baseline_tar_cf", |b| b.iter(|| tar_create(&ws, &tar_out)));

        // The restores' baselines extract an archive of the base tree (the workspace equals it now).
        tar_create(&ws, &tar_out);
        let mut finished_targets = Vec::new();
        group.bench_function("baseline_tar_xf_into_empty_dir", |b| {
            b.iter_batched(
                || tempfile::tempdir_in(tmp.path()).unwrap(),
                |dir| {
                    tar_extract(&tar_out, dir.path());
                    finished_targets.push(dir);
                },
                BatchSize::PerIteration,
            );
        });
        drop(finished_targets);
        // What a tar-based restore does after one change: tar cannot tell which file changed, so it
        // extracts the whole archive over the workspace.
        group.bench_function("baseline_tar_xf_after_one_change", |b| {
            b.iter_batched(
                || {
                    seed += 1;
                    rewrite(&changed, seed);
                },
                |()| tar_extract(&tar_out, &ws),
                BatchSize::PerIteration,
            );
        });
    }
    group.finish();
}

criterion_group!(snapshot, benches);
criterion_main!(snapshot);
