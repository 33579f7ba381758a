//! The store on PostgreSQL over loopback, each figure beside an anchor of the same run.
//!
//! - `pg_append/store`: `Messages::append` of one message into a 1,000-message conversation on
//!   PostgreSQL (the conversation's row locked, the seq taken, the row and its triggers).
//!   `pg_append/bare_insert`: the same row as one prepared INSERT with its seq given.
//!   `pg_append/fenced_store`: the same append through a store fenced by a run's lease (every
//!   statement checks the lease's epoch).
//! - `sqlite_append/store`: the same append on a SQLite file, for comparison.
//! - `import_10k/postgres`: `Conversations::import` of 10,000 messages into a fresh conversation
//!   of the shared database, in one transaction (what `decima conversation import` and, per
//!   conversation, `decima db copy --to` do); `import_10k/sqlite`: the same into a SQLite file.
//! - Printed after the criterion groups: p50 and p99 of 2,000 single appends on each backend,
//!   and of the time from a writer's commit to another connection's listener seeing it
//!   (`Store::changes`), 500 times.
//! - Printed last: eight processes (this executable, started again as writers) append 250
//!   messages each to one conversation at once, after a start signal; their throughput beside
//!   one process appending the same 2,000 alone, and a check that the seqs came out gapless and
//!   unique with every acknowledged message stored.
//!
//! Needs the tests' PostgreSQL (`DECIMA_TEST_POSTGRES_URL`; `scripts/test.sh` starts one, or
//! `source scripts/lib.sh && start_test_postgres`).
//!
//! Run: `cargo bench -p decima-store --bench shared`

// Bench code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

use std::io::{BufRead, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use decima_core::{EstimateCounter, MessageId, NewMessage, Role, Timestamp};
use decima_store::{Change, Store, StoreLocation};
use tokio::runtime::Runtime;

async fn postgres_store() -> Store {
    let url = decima_testkit::postgres::fresh_database("bench_shared").await;
    let location = StoreLocation::parse(&url).unwrap();
    Store::migrate(&location).await.unwrap();
    Store::connect(&location, Arc::new(EstimateCounter))
        .await
        .unwrap()
}

async fn sqlite_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("decima.db"), Arc::new(EstimateCounter))
        .await
        .unwrap();
    (dir, store)
}

fn message(i: usize) -> NewMessage {
    NewMessage::new(
        if i.is_multiple_of(2) {
            Role::User
        } else {
            Role::Assistant
        },
        format!("message {i}: the churn threshold moved from 4.2% to 3.9% for the EU cohort"),
    )
}

async fn filled(store: &Store) -> decima_core::ConversationId {
    let history: Vec<NewMessage> = (0..1_000).map(message).collect();
    store
        .conversations()
        .import("bench", None, &history)
        .await
        .unwrap()
        .id
}

fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)];
    (at(0.50), at(0.99))
}

fn appends(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    // Pools and the listener close their connections on drop, which needs the runtime.
    let _in_runtime = rt.enter();
    let pg = rt.block_on(postgres_store());
    let pg_conversation = rt.block_on(filled(&pg));
    let (_dir, lite) = rt.block_on(sqlite_store());
    let lite_conversation = rt.block_on(filled(&lite));
    let pool = pg.postgres_pool().unwrap().clone();
    let bare_conversation = rt
        .block_on(pg.conversations().create("bare", None))
        .unwrap()
        .id;

    let mut group = c.benchmark_group("pg_append");
    let mut n = 0usize;
    group.bench_function("store", |b| {
        b.iter(|| {
            n += 1;
            rt.block_on(pg.messages().append(pg_conversation, message(n)))
                .unwrap();
        })
    });
    // The same append through a store fenced by a run's lease: what the fence's check costs.
    let claim = rt
        .block_on(pg.leases().claim(
            decima_core::ExecutionId::new(),
            "bench",
            Duration::from_secs(3_600),
        ))
        .unwrap()
        .unwrap();
    let fenced = rt.block_on(pg.fenced(&claim)).unwrap();
    group.bench_function("fenced_store", |b| {
        b.iter(|| {
            n += 1;
            rt.block_on(fenced.messages().append(pg_conversation, message(n)))
                .unwrap();
        })
    });
    let mut seq = 1_000_000i64;
    group.bench_function("bare_insert", |b| {
        b.iter(|| {
            seq += 1;
            rt.block_on(
                sqlx::query(
                    "INSERT INTO messages (id, conversation_id, seq, role, content, tokens, \
                     pinned, created_at) VALUES ($1, $2, $3, 'user', $4, 20, FALSE, $5)",
                )
                .bind(MessageId::new().to_string())
                .bind(bare_conversation.to_string())
                .bind(seq)
                .bind(format!("message {seq}"))
                .bind(Timestamp::now().0)
                .execute(&pool),
            )
            .unwrap();
        })
    });
    group.finish();
    let mut group = c.benchmark_group("sqlite_append");
    group.bench_function("store", |b| {
        b.iter(|| {
            n += 1;
            rt.block_on(lite.messages().append(lite_conversation, message(n)))
                .unwrap();
        })
    });
    group.finish();

    // Percentiles, which criterion's estimates do not give.
    for (name, store, conversation) in [
        ("PostgreSQL", &pg, pg_conversation),
        ("SQLite", &lite, lite_conversation),
    ] {
        let mut samples = Vec::with_capacity(2_000);
        for i in 0..2_000 {
            let started = Instant::now();
            rt.block_on(store.messages().append(conversation, message(i)))
                .unwrap();
            samples.push(started.elapsed());
        }
        let (p50, p99) = percentiles(samples);
        println!("append on {name}: p50 {p50:?}, p99 {p99:?} (2,000 appends)");
    }

    // From a writer's commit to a listener on another connection.
    let watcher = rt.block_on(postgres_store_on(&pg));
    let mut feed = rt.block_on(watcher.changes()).unwrap().unwrap();
    let mut samples = Vec::with_capacity(500);
    for i in 0..500 {
        let started = Instant::now();
        let m = rt
            .block_on(pg.messages().append(pg_conversation, message(i)))
            .unwrap();
        loop {
            let change = rt
                .block_on(async { tokio::time::timeout(Duration::from_secs(5), feed.next()).await })
                .expect("the listener hears the append")
                .unwrap();
            if change
                == (Change::Message {
                    conversation: pg_conversation,
                    seq: m.seq,
                })
            {
                break;
            }
        }
        samples.push(started.elapsed());
    }
    let (p50, p99) = percentiles(samples);
    println!("append to another connection's listener: p50 {p50:?}, p99 {p99:?} (500 appends)");
}

fn imports(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let _in_runtime = rt.enter();
    let pg = rt.block_on(postgres_store());
    let (_dir, lite) = rt.block_on(sqlite_store());
    let history: Vec<NewMessage> = (0..10_000).map(message).collect();
    let mut group = c.benchmark_group("import_10k");
    group.sample_size(10);
    for (name, store) in [("postgres", &pg), ("sqlite", &lite)] {
        group.bench_function(name, |b| {
            b.iter(|| {
                rt.block_on(store.conversations().import("bulk", None, &history))
                    .unwrap()
            })
        });
    }
    group.finish();
}

/// A second handle on the same shared database, with pools of its own.
async fn postgres_store_on(store: &Store) -> Store {
    let options = store.postgres_pool().unwrap().connect_options();
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .connect_with((*options).clone())
        .await
        .unwrap();
    let url = format!(
        "postgres://{}@{}:{}/{}?options=-c%20search_path%3D{}%2Cpublic",
        options.get_username(),
        options.get_host(),
        options.get_port(),
        options.get_database().unwrap_or("postgres"),
        sqlx::query_scalar::<_, String>("SELECT current_schema()")
            .fetch_one(&pool)
            .await
            .unwrap()
    );
    pool.close().await;
    Store::connect(
        &StoreLocation::parse(&url).unwrap(),
        Arc::new(EstimateCounter),
    )
    .await
    .unwrap()
}

criterion_group!(
    name = benches;
    config = Criterion::default()
        .sample_size(30)
        .measurement_time(Duration::from_secs(5))
        .warm_up_time(Duration::from_secs(1));
    targets = appends, imports
);
/// Set in a writer process: `URL CONVERSATION COUNT LABEL`.
const WRITER: &str = "DECIMA_BENCH_SHARED_WRITER";
const PROCESSES: usize = 8;
const EACH: usize = 250;

/// A writer process: connects, says "ready", waits for a line on stdin, appends, and prints
/// the seqs it was given.
fn writer(spec: &str) {
    let mut parts = spec.split(' ');
    let (url, conversation, count, label) = (
        parts.next().unwrap(),
        parts.next().unwrap().parse().unwrap(),
        parts.next().unwrap().parse::<usize>().unwrap(),
        parts.next().unwrap(),
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let store = rt
        .block_on(Store::connect(
            &StoreLocation::parse(url).unwrap(),
            Arc::new(EstimateCounter),
        ))
        .unwrap();
    println!("ready");
    std::io::stdout().flush().unwrap();
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).unwrap();
    let mut seqs = Vec::with_capacity(count);
    for i in 0..count {
        let mut m = message(i);
        m.content = format!("{label} {i}");
        seqs.push(
            rt.block_on(store.messages().append(conversation, m))
                .unwrap()
                .seq,
        );
    }
    let listed: Vec<String> = seqs.iter().map(i64::to_string).collect();
    println!("{}", listed.join(","));
    rt.block_on(store.close());
}

/// Runs `processes` writers of `each` appends at once; returns the wall time from the start
/// signal to the last writer's exit, and every seq acknowledged.
fn concurrent_writers(
    url: &str,
    conversation: &str,
    processes: usize,
    each: usize,
) -> (Duration, Vec<i64>) {
    let mut children: Vec<_> = (0..processes)
        .map(|p| {
            Command::new(std::env::current_exe().unwrap())
                .env(WRITER, format!("{url} {conversation} {each} w{p}"))
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut outputs: Vec<_> = children
        .iter_mut()
        .map(|c| std::io::BufReader::new(c.stdout.take().unwrap()))
        .collect();
    for out in &mut outputs {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ready");
    }
    let started = Instant::now();
    for child in &mut children {
        writeln!(child.stdin.as_mut().unwrap(), "go").unwrap();
    }
    let mut seqs = Vec::new();
    for (child, out) in children.iter_mut().zip(&mut outputs) {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        assert!(child.wait().unwrap().success());
        seqs.extend(line.trim().split(',').map(|s| s.parse::<i64>().unwrap()));
    }
    (started.elapsed(), seqs)
}

/// The URL of a store's database as another process reaches it (its schema included).
fn url_of(rt: &Runtime, store: &Store) -> String {
    let pool = store.postgres_pool().unwrap();
    let options = pool.connect_options();
    let schema: String = rt
        .block_on(sqlx::query_scalar("SELECT current_schema()").fetch_one(pool))
        .unwrap();
    format!(
        "postgres://{}@{}:{}/{}?options=-c%20search_path%3D{}%2Cpublic",
        options.get_username(),
        options.get_host(),
        options.get_port(),
        options.get_database().unwrap_or("postgres"),
        schema
    )
}

fn eight_processes() {
    let rt = Runtime::new().unwrap();
    let _in_runtime = rt.enter();
    let store = rt.block_on(postgres_store());
    let url = url_of(&rt, &store);
    for (processes, each) in [(1, PROCESSES * EACH), (PROCESSES, EACH)] {
        let conversation = rt
            .block_on(store.conversations().create("writers", None))
            .unwrap()
            .id;
        let (took, mut seqs) = concurrent_writers(&url, &conversation.to_string(), processes, each);
        seqs.sort_unstable();
        let total = processes * each;
        assert_eq!(
            seqs,
            (1..=total as i64).collect::<Vec<_>>(),
            "gapless and unique"
        );
        let stored = rt.block_on(store.messages().all(conversation)).unwrap();
        assert_eq!(stored.len(), total, "every acknowledged message is stored");
        println!(
            "{processes} process(es) appending {total} messages to one conversation: {took:?}, \
             {:.0} messages/s; seqs 1..={total} gapless and unique",
            total as f64 / took.as_secs_f64()
        );
    }
    rt.block_on(store.close());
}

fn main() {
    if let Ok(spec) = std::env::var(WRITER) {
        writer(&spec);
        return;
    }
    benches();
    eight_processes();
    Criterion::default().configure_from_args().final_summary();
}
