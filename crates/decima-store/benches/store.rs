//! Store benchmarks, each beside a raw-sqlx anchor measured in the same run.
//!
//! - `append_one/store`: `Messages::append` of one message into a 1,000-message conversation
//!   (validation, token count, seq reservation, insert, read-back), one transaction.
//!   `append_one/raw_sqlx`: the same row as one prepared INSERT in its own transaction.
//! - `import_10k/store`: `Conversations::import` of 10,000 generated messages into a fresh file.
//!   `import_10k/raw_sqlx`: the same rows as 10,000 prepared single-row INSERTs in one transaction.
//!
//! - `export_incremental/one_new_message`: what `decima export -o` does when one message is new:
//!   read the export record and the new messages, render, append, record.
//!
//! - `import_10k/store_without_search_index`: the same import with the full-text index replaced
//!   by a plain table, so the two figures together show what indexing costs.
//! - `search_100k/*`: the first page of full-text hits over 100,000 messages, beside a `LIKE`
//!   scan (the search without an index).
//!
//! Run: `cargo bench -p decima-store --bench store`

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use decima_core::{
    ConversationId, EstimateCounter, MessageId, NewMessage, Role, Timestamp, TokenCounter,
};
use decima_store::Store;
use decima_testkit::ConversationBuilder;
use tokio::runtime::Runtime;

async fn fresh_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("decima.db"), Arc::new(EstimateCounter))
        .await
        .unwrap();
    (dir, store)
}

/// The anchor: one prepared INSERT per row, no validation, no counting.
async fn raw_insert(
    conn: &mut sqlx::SqliteConnection,
    conversation: &str,
    seq: i64,
    m: &NewMessage,
    tokens: u32,
) {
    let tool_calls =
        (!m.tool_calls.is_empty()).then(|| serde_json::to_string(&m.tool_calls).unwrap());
    sqlx::query(
        "INSERT INTO messages (id, conversation_id, execution_id, seq, role, name, content, reasoning, \
         reasoning_signature, tool_calls, tool_call_id, tokens, pinned, created_at) \
         VALUES (?, ?, NULL, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?)",
    )
    .bind(MessageId::new().to_string())
    .bind(conversation)
    .bind(seq)
    .bind(m.role.as_str())
    .bind(m.name.clone())
    .bind(m.content.clone())
    .bind(m.reasoning.clone())
    .bind(tool_calls)
    .bind(m.tool_call_id.clone())
    .bind(i64::from(tokens))
    .bind(m.pinned)
    .bind(Timestamp::now().0)
    .execute(conn)
    .await
    .unwrap();
}

fn append_one(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let (_dir, store, conversation) = rt.block_on(async {
        let (dir, store) = fresh_store().await;
        let built = ConversationBuilder::new(1, 1_000).build();
        let conv = store
            .conversations()
            .import("bench", None, &built.messages)
            .await
            .unwrap();
        (dir, store, conv.id)
    });
    let message = NewMessage::new(
        Role::User,
        "Compare the March totals with last year's and flag any store below 90%.",
    );
    let mut group = c.benchmark_group("append_one");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("store", |b| {
        b.to_async(&rt).iter(|| async {
            store
                .messages()
                .append(conversation, message.clone())
                .await
                .unwrap();
        })
    });
    let mut raw_seq = 10_000_000i64;
    let tokens = EstimateCounter.count_message(&message);
    let conversation_text = conversation.to_string();
    group.bench_function("raw_sqlx", |b| {
        b.to_async(&rt).iter(|| {
            raw_seq += 1;
            let seq = raw_seq;
            let store = &store;
            let message = &message;
            let conversation_text = &conversation_text;
            async move {
                let mut tx = store
                    .sqlite_pool()
                    .expect("a SQLite store")
                    .begin_with("BEGIN IMMEDIATE")
                    .await
                    .unwrap();
                raw_insert(&mut tx, conversation_text, seq, message, tokens).await;
                tx.commit().await.unwrap();
            }
        })
    });
    group.finish();
}

fn import_10k(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let built = ConversationBuilder::new(2, 10_000).build();
    let mut group = c.benchmark_group("import_10k");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("store", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let messages = &built.messages;
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let (_dir, store) = fresh_store().await;
                    let started = Instant::now();
                    store
                        .conversations()
                        .import("bench", None, messages)
                        .await
                        .unwrap();
                    total += started.elapsed();
                    store.close().await;
                }
                total
            }
        })
    });
    // The same import with the search index replaced by a plain table (its triggers dropped,
    // and the bulk insert's one statement into it copying the text without tokenizing it):
    // what indexing costs.
    group.bench_function("store_without_search_index", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let messages = &built.messages;
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let (_dir, store) = fresh_store().await;
                    sqlx::raw_sql(
                        "DROP TRIGGER messages_fts_insert; DROP TRIGGER messages_fts_delete; \
                         DROP TRIGGER messages_fts_update; DROP TABLE messages_fts; \
                         CREATE TABLE messages_fts (body TEXT);",
                    )
                    .execute(store.sqlite_pool().expect("a SQLite store"))
                    .await
                    .unwrap();
                    let started = Instant::now();
                    store
                        .conversations()
                        .import("bench", None, messages)
                        .await
                        .unwrap();
                    total += started.elapsed();
                    store.close().await;
                }
                total
            }
        })
    });
    group.bench_function("raw_sqlx", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let messages = &built.messages;
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let (_dir, store) = fresh_store().await;
                    let conversation = ConversationId::new().to_string();
                    sqlx::query("INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?, 'bench', 0, 0)")
                        .bind(&conversation)
                        .execute(store.sqlite_pool().expect("a SQLite store"))
                        .await
                        .unwrap();
                    // Counting is not part of the anchor: the rows arrive already priced.
                    let tokens: Vec<u32> = messages.iter().map(|m| EstimateCounter.count_message(m)).collect();
                    let started = Instant::now();
                    let mut tx = store.sqlite_pool().expect("a SQLite store").begin_with("BEGIN IMMEDIATE").await.unwrap();
                    for (i, (m, t)) in messages.iter().zip(&tokens).enumerate() {
                        raw_insert(&mut tx, &conversation, i as i64 + 1, m, *t).await;
                    }
                    tx.commit().await.unwrap();
                    total += started.elapsed();
                    store.close().await;
                }
                total
            }
        })
    });
    group.finish();
}

/// Incremental export of one new message to a 10,000-message history file: read what is new since
/// the last exported seq, render it, append it, record the export. What `decima export -o` does.
fn export_incremental_one(c: &mut Criterion) {
    use std::io::Write as _;
    let rt = Runtime::new().unwrap();
    let (dir, store, conversation) = rt.block_on(async {
        let (dir, store) = fresh_store().await;
        let built = ConversationBuilder::new(3, 10_000).build();
        let conv = store
            .conversations()
            .import("bench", None, &built.messages)
            .await
            .unwrap();
        (dir, store, conv.id)
    });
    let path = dir.path().join("history.txt");
    let key = path.to_string_lossy().into_owned();
    rt.block_on(async {
        let mut text = String::new();
        for m in store.messages().all(conversation).await.unwrap() {
            decima_core::export::render_message(
                decima_core::export::ExportFormat::Text,
                &m,
                &mut text,
            );
        }
        std::fs::write(&path, &text).unwrap();
        store
            .exports()
            .record(conversation, &key, "text", 10_000, text.len() as u64)
            .await
            .unwrap();
    });
    let message = NewMessage::new(
        Role::Assistant,
        "The March total is 42,170 EUR; see /workspace/out/march.csv.",
    );
    let mut group = c.benchmark_group("export_incremental");
    group.bench_function("one_new_message", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                rt.block_on(store.messages().append(conversation, message.clone()))
                    .unwrap();
                let started = Instant::now();
                rt.block_on(async {
                    let last = store
                        .exports()
                        .get(conversation, &key)
                        .await
                        .unwrap()
                        .unwrap();
                    let new = store
                        .messages()
                        .range(conversation, last.last_seq + 1, i64::MAX)
                        .await
                        .unwrap();
                    let mut text = String::new();
                    for m in &new {
                        decima_core::export::render_message(
                            decima_core::export::ExportFormat::Text,
                            m,
                            &mut text,
                        );
                    }
                    let mut file = std::fs::OpenOptions::new()
                        .append(true)
                        .open(&path)
                        .unwrap();
                    file.write_all(text.as_bytes()).unwrap();
                    let bytes = file.metadata().unwrap().len();
                    let seq = new.last().map_or(last.last_seq, |m| m.seq);
                    store
                        .exports()
                        .record(conversation, &key, "text", seq, bytes)
                        .await
                        .unwrap();
                });
                total += started.elapsed();
            }
            total
        })
    });
    group.finish();
}

/// Full-text search over 100,000 messages in ten conversations: the first page of hits (30) for
/// a literal stated once near the start, for a word in most messages, and for a two-character
/// Chinese term (below the trigram's reach, so a scan). The anchor is what search was without
/// the index: a `LIKE` scan from the newest row.
fn search_100k(c: &mut Criterion) {
    use decima_store::SearchQuery;
    let rt = Runtime::new().unwrap();
    let (_dir, store) = rt.block_on(async {
        let (dir, store) = fresh_store().await;
        for seed in 0..10u64 {
            let mut messages = ConversationBuilder::new(100 + seed, 10_000)
                .build()
                .messages;
            if seed == 0 {
                messages[4] = NewMessage::new(
                    Role::User,
                    "Pay the refund to IBAN DE44 5001 0517 5407 3249 31, not the old account.",
                );
                messages[9] = NewMessage::new(Role::User, "华东区的客户流失率在九月上升。");
            }
            store
                .conversations()
                .import("bench", None, &messages)
                .await
                .unwrap();
        }
        (dir, store)
    });
    let mut group = c.benchmark_group("search_100k");
    for (name, text) in [
        ("rare_literal", "5407 3249"),
        ("common_word", "the"),
        ("two_chinese_characters", "流失"),
    ] {
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| async {
                let page = store
                    .search()
                    .messages(&SearchQuery {
                        text,
                        conversation: None,
                        before: None,
                        limit: 30,
                    })
                    .await
                    .unwrap();
                assert!(!page.hits.is_empty());
            })
        });
    }
    group.bench_function("like_scan_anchor", |b| {
        b.to_async(&rt).iter(|| async {
            let rows: Vec<(i64,)> = sqlx::query_as(
                "SELECT rowid FROM messages WHERE content LIKE '%5407 3249%' \
                 AND deleted_at IS NULL ORDER BY rowid DESC LIMIT 31",
            )
            .fetch_all(store.sqlite_pool().expect("a SQLite store"))
            .await
            .unwrap();
            assert_eq!(rows.len(), 1);
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    append_one,
    import_10k,
    export_incremental_one,
    search_100k
);
criterion_main!(benches);
