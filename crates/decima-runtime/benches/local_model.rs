//! Decima against a real llama.cpp server with a small real model (SmolLM2-135M-Instruct):
//!
//! 1. **Added latency to first token.** A chat turn in a fresh conversation, from the call to
//!    the first text delta, beside the same request (the very bytes Decima sends, captured once)
//!    written on a plain socket to the same server, in alternation, in one run. The server's
//!    prompt cache serves both the same way, since the prompt is the same.
//! 2. **Prompt-cache share of a chat.** A chat of several turns; of the prompt tokens of the
//!    later turns, the share the server reports it read from its cache (as stored per answer).
//!
//! `cargo bench -p decima-runtime --bench local_model` (with `DECIMA_LLAMACPP_PYTHON` and
//! `DECIMA_LLAMACPP_MODEL` set, as `scripts/test.sh` sets them); under `cargo test` it runs a
//! few rounds only.

#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

use std::time::{Duration, Instant};

use decima_runtime::chat::{ChatTurn, chat_turn};
use decima_runtime::providers::{self, ProviderDraft};
use decima_runtime::settings::ProviderSettings;
use decima_runtime::{Event, EventSink};
use decima_store::Store;
use decima_testkit::llamacpp::LlamaCppServer;
use decima_testkit::{LlmServer, Reply, Turn};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

/// The question of every measured turn.
const QUESTION: &str = "Name one colour.";
/// Output tokens per answer: the first token is what is measured.
const CAP: u32 = 8;

/// Notes when the first text delta arrived.
struct FirstDelta(std::sync::Mutex<Option<Instant>>);

impl EventSink for FirstDelta {
    fn emit(&self, event: Event) {
        if let Event::TextDelta { .. } = event {
            let mut first = self.0.lock().unwrap();
            first.get_or_insert_with(Instant::now);
        }
    }
}

async fn store_with_provider(dir: &std::path::Path, base_url: String) -> Store {
    let store = Store::open(&dir.join("decima.db"), decima_llm::tokens::store_counter())
        .await
        .unwrap();
    providers::add(
        &store,
        dir,
        ProviderDraft {
            name: "local".into(),
            preset: Some("llamacpp".into()),
            base_url: Some(base_url),
            model: Some("smollm2".into()),
            ..ProviderDraft::default()
        },
    )
    .await
    .unwrap();
    let record = store.providers().get_by_name("local").await.unwrap();
    let mut settings = ProviderSettings::from_record(&record).unwrap();
    settings.output_reserve = Some(CAP);
    store
        .providers()
        .update_settings("local", settings.to_value())
        .await
        .unwrap();
    store
}

/// Decima's chat turn in a fresh conversation: from the call to the first text delta.
async fn decima_first_token(store: &Store, dir: &std::path::Path) -> Duration {
    let events = FirstDelta(std::sync::Mutex::new(None));
    let started = Instant::now();
    chat_turn(ChatTurn {
        store,
        data_dir: dir,
        provider: Some("local"),
        conversation: None,
        message: QUESTION.into(),
        events: &events,
        cancel: CancellationToken::new(),
    })
    .await
    .unwrap();
    let first = events.0.lock().unwrap().expect("a text delta");
    first - started
}

/// The body Decima sends for a fresh conversation's first turn, captured from the wire.
async fn captured_body() -> Vec<u8> {
    let recorder = LlmServer::start().await;
    // It answers the chat; asked for its window (as adding and starting a chat ask), it has
    // none to say.
    recorder.respond_with(|request| {
        if request.path.ends_with("/chat/completions") {
            Reply::Stream(Turn {
                text: vec!["Blue.".into()],
                ..Turn::default()
            })
        } else {
            Reply::Status {
                status: 404,
                headers: Vec::new(),
                body: "{}".into(),
            }
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_provider(dir.path(), recorder.openai_base_url()).await;
    decima_first_token(&store, dir.path()).await;
    recorder
        .requests()
        .into_iter()
        .find(|r| r.path.ends_with("/chat/completions"))
        .expect("the chat request")
        .body
}

/// The same bytes on a plain socket, as curl sends them: to the first line with content.
async fn plain_first_token(server: &LlamaCppServer, body: &[u8]) -> Duration {
    let addr = server.root_url().trim_start_matches("http://").to_owned();
    let started = Instant::now();
    let mut stream = TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    let mut lines = BufReader::new(stream).lines();
    while let Some(line) = lines.next_line().await.unwrap() {
        if line.starts_with("data: ") && line.contains("\"content\":\"") {
            return started.elapsed();
        }
    }
    panic!("the server sent no content");
}

fn median(values: Vec<f64>) -> f64 {
    quartiles(values)[1]
}

/// The first quartile, the median and the third quartile.
fn quartiles(mut values: Vec<f64>) -> [f64; 3] {
    values.sort_by(f64::total_cmp);
    let at = |q: usize| values[(values.len() - 1) * q / 4];
    [at(1), at(2), at(3)]
}

async fn added_latency(rounds: usize) {
    let body = captured_body().await;
    let server = LlamaCppServer::start(2_048).await;
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_provider(dir.path(), server.base_url()).await;
    // Warm both paths (the model's first request, the server's cache, Decima's tokenizer).
    for _ in 0..2 {
        plain_first_token(&server, &body).await;
        decima_first_token(&store, dir.path()).await;
    }
    let (mut plain, mut decima, mut added) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        // Alternating which goes first, so that neither always follows the other.
        let (p, d) = if round % 2 == 0 {
            let p = plain_first_token(&server, &body).await;
            (p, decima_first_token(&store, dir.path()).await)
        } else {
            let d = decima_first_token(&store, dir.path()).await;
            (plain_first_token(&server, &body).await, d)
        };
        let ms = |d: Duration| d.as_secs_f64() * 1_000.0;
        plain.push(ms(p));
        decima.push(ms(d));
        added.push(ms(d) - ms(p));
    }
    let q = |v: &[f64]| {
        let [a, b, c] = quartiles(v.to_vec());
        format!("{a:.1} / {b:.1} / {c:.1}")
    };
    println!(
        "first token, {rounds} rounds (quartiles, ms): plain socket {}, Decima's chat turn {}; \
         Decima's added latency per round {} (median of medians' difference {:.1} ms)",
        q(&plain),
        q(&decima),
        q(&added),
        median(decima.clone()) - median(plain.clone())
    );
}

async fn cache_share(turns: usize) {
    let server = LlamaCppServer::start(4_096).await;
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_provider(dir.path(), server.base_url()).await;
    let events = FirstDelta(std::sync::Mutex::new(None));
    let mut conversation = None;
    let questions = [
        "We reconcile the Q3 ledger. What should we check first?",
        "The bank total is 4,210.50 EUR. What next?",
        "Refunds were 310 EUR. Do they matter?",
        "Which accounts moved most?",
        "Summarise what we found.",
        "What is still open?",
        "Who should sign it off?",
        "Thank you.",
    ];
    for question in questions.iter().cycle().take(turns) {
        let outcome = chat_turn(ChatTurn {
            store: &store,
            data_dir: dir.path(),
            provider: Some("local"),
            conversation,
            message: (*question).into(),
            events: &events,
            cancel: CancellationToken::new(),
        })
        .await
        .unwrap();
        conversation = Some(outcome.conversation_id);
    }
    let answers = store
        .answers()
        .of_conversation(conversation.unwrap())
        .await
        .unwrap();
    let later: Vec<_> = answers
        .iter()
        .skip(1)
        .filter_map(|a| a.record.usage)
        .collect();
    let prompt: u64 = later.iter().map(|u| u64::from(u.tokens_in)).sum();
    let cached: u64 = later.iter().map(|u| u64::from(u.cache_read_tokens)).sum();
    println!(
        "prompt cache, {turns} chat turns: of {prompt} prompt tokens of the later turns, {cached} \
         were read from the server's cache ({:.1}%)",
        cached as f64 * 100.0 / prompt.max(1) as f64
    );
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        added_latency(if bench { 40 } else { 3 }).await;
        cache_share(if bench { 8 } else { 3 }).await;
    });
}
