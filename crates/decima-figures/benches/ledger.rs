//! The ledger's costs: indexing a 1 MB tool output (against reading its bytes for digits, the
//! floor of any index), and matching an answer of 200 figures against 100,000 entries (against
//! a linear scan of the entries for each figure): `cargo bench -p decima-figures --bench ledger`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

/// The allocator the CLI and the window ship with.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use decima_figures::{LedgerBuilder, Origin, Source, check_answer, read_figures};
use support::{Kind, run, sentence};

/// About 1 MB of tool output: CSV, aligned tables and summaries as the generator prints them.
fn megabyte() -> String {
    let mut rng = fastrand::Rng::with_seed(7);
    let mut text = String::new();
    while text.len() < 1 << 20 {
        let r = run(&mut rng, 3);
        for o in &r.outputs {
            text.push_str(o);
            text.push('\n');
        }
    }
    text
}

fn indexing(c: &mut Criterion) {
    let text = megabyte();
    let mut group = c.benchmark_group("ledger/index_1mb");
    group.bench_function("baseline_count_digits", |b| {
        b.iter(|| black_box(text.bytes().filter(u8::is_ascii_digit).count()));
    });
    // The scanner alone, without layouts or subjects: the floor of this reader.
    group.bench_function("scan_only", |b| {
        b.iter(|| black_box(decima_figures::scan(&text).len()))
    });
    // The reader on one core.
    group.bench_function("read_figures", |b| {
        b.iter(|| black_box(read_figures(&text).len()))
    });
    let source = || Source {
        origin: Origin::Tool,
        message_seq: 2,
        tool_call_id: None,
        path: None,
    };
    // The ledger's cost to a run: the output's entries, read in parts on the machine's cores.
    group.bench_function("add_text", |b| {
        b.iter(|| {
            let mut l = LedgerBuilder::new();
            black_box(l.add_text(source(), &text))
        });
    });
    // Paid once per check, not per output: the entries sorted for lookup.
    group.bench_function("add_text_and_build", |b| {
        b.iter(|| {
            let mut l = LedgerBuilder::new();
            l.add_text(source(), &text);
            black_box(l.build().len())
        });
    });
    group.finish();
}

fn matching(c: &mut Criterion) {
    let mut rng = fastrand::Rng::with_seed(45);
    let r = run(&mut rng, 540);
    let ledger = support::ledger_builder(&r).build();
    assert!(ledger.len() >= 100_000, "{} entries", ledger.len());
    let kinds = [
        Kind::Real,
        Kind::Reformatted,
        Kind::Derived,
        Kind::FabricatedDigit,
    ];
    let mut answer = String::new();
    let mut figures = 0;
    while figures < 200 {
        let s = sentence(&mut rng, &r, kinds[figures % kinds.len()]);
        answer.push_str(&s.text);
        figures = read_figures(&answer).len();
    }
    let mut group = c.benchmark_group("ledger/match_200_in_100k");
    group.bench_function("baseline_linear_scan", |b| {
        let values: Vec<f64> = read_figures(&answer)
            .iter()
            .map(|l| l.figure.magnitude())
            .collect();
        b.iter(|| {
            let mut hits = 0usize;
            for v in &values {
                hits += ledger
                    .entries()
                    .iter()
                    .filter(|e| (e.magnitude() - v).abs() < 0.5)
                    .count();
            }
            black_box(hits)
        });
    });
    group.bench_function("check_answer", |b| {
        b.iter(|| black_box(check_answer(&answer, &ledger).len()))
    });
    group.bench_function("build_and_check", |b| {
        b.iter(|| {
            let mut copy = LedgerBuilder::new();
            for s in ledger.sources() {
                copy.add_source(s.clone());
            }
            for e in ledger.entries() {
                copy.push(e.clone());
            }
            let l = copy.build();
            black_box(check_answer(&answer, &l).len())
        });
    });
    group.finish();
}

criterion_group!(benches, indexing, matching);
criterion_main!(benches);
