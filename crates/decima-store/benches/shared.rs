//! The store on PostgreSQL over loopback, each figure beside an anchor of the same run.
//!
//! - `pg_append/store`: `Messages::append` of one message into a 1,000-message conversation on
//!   PostgreSQL (the conversation's row locked, the seq taken, the row and its triggers).
//!   `pg_append/bare_insert`: the same row as one prepared INSERT with its seq given.
//! - `sqlite_append/store`: the same append on a SQLite file, for comparison.
//! - Printed after the criterion groups: p50 and p99 of 2,000 single appends on each backend,
//!   and of the time from a writer's commit to another connection's listener seeing it
//!   (`Store::changes`), 500 times.
//!
//! Needs the tests' PostgreSQL (`DECIMA_TEST_POSTGRES_URL`; `scripts/test.sh` starts one, or
//! `source scripts/lib.sh && start_test_postgres`).
//!
//! Run: `cargo bench -p decima-store --bench shared`

// Bench code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
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
    targets = appends
);
criterion_main!(benches);
