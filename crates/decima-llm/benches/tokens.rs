//! Token counting benchmarks, with Python tiktoken measured in the same run as the anchor.
//!
//! - `count_text/{o200k,cl100k}`: `TiktokenCounter::count_text` over every text of a
//!   2,000-message testkit conversation (prose in English and Chinese, tool calls, results,
//!   reasoning), as MB/s.
//! - Summary lines `python_tiktoken <enc>: X MB/s; rust: Y MB/s; ratio Y/X`: Python tiktoken's
//!   `encode_ordinary` on the same texts, timing only its encode loop (best of 5 rounds, inside
//!   Python), against the same loop in Rust. Needs
//!   `python3 -m pip install --break-system-packages tiktoken==0.14.0`.
//! - `conversation_10k/recount_all`: counting all 10,000 messages plus a new one from scratch.
//!   `conversation_10k/append_cached`: what the store does: count only the new message, then add
//!   the 10,000 cached per-message counts.
//! - Optional: `DECIMA_HF_TOKENIZERS="qwen3=/path/tokenizer.json,deepseek=/path/..."` also
//!   reports `HfCounter` throughput and how far cl100k estimates are from each tokenizer's counts,
//!   raw and after calibration.
//!
//! Run: `cargo bench -p decima-llm --bench tokens`

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

use std::hint::black_box;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use decima_core::{NewMessage, TokenCounter};
use decima_llm::ChatRequest;
use decima_llm::tokens::{Calibration, HfCounter, TiktokenCounter};
use decima_testkit::ConversationBuilder;

const PIP: &str = "python3 -m pip install --break-system-packages tiktoken==0.14.0";

fn texts_of(m: &NewMessage) -> Vec<String> {
    let mut texts = vec![m.content.clone()];
    texts.extend(m.name.clone());
    texts.extend(m.reasoning.clone());
    texts.extend(m.tool_call_id.clone());
    for call in &m.tool_calls {
        texts.extend([call.id.clone(), call.name.clone(), call.arguments.clone()]);
    }
    texts.retain(|t| !t.is_empty());
    texts
}

fn corpus_texts() -> Vec<String> {
    ConversationBuilder::new(7, 2_000)
        .build()
        .messages
        .iter()
        .flat_map(texts_of)
        .collect()
}

fn bytes(texts: &[String]) -> u64 {
    texts.iter().map(|t| t.len() as u64).sum()
}

fn count_all(counter: &dyn TokenCounter, texts: &[String]) -> u64 {
    texts
        .iter()
        .map(|t| u64::from(counter.count_text(black_box(t))))
        .sum()
}

/// Best of `rounds` passes over the texts, in MB/s.
fn rust_mb_per_s(counter: &dyn TokenCounter, texts: &[String], rounds: usize) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..rounds {
        let start = Instant::now();
        black_box(count_all(counter, texts));
        best = best.min(start.elapsed().as_secs_f64());
    }
    bytes(texts) as f64 / best / 1e6
}

fn write_ranks(dir: &Path) -> std::io::Result<()> {
    let tables = [
        ("cl100k_base", tiktoken_rs::cl100k_base_singleton()),
        ("o200k_base", tiktoken_rs::o200k_base_singleton()),
    ];
    for (name, bpe) in tables {
        let mut out = String::new();
        for rank in 0u32.. {
            let Ok(token) = bpe.decode_bytes(&[rank]) else {
                break;
            };
            out.push_str(&base64::engine::general_purpose::STANDARD.encode(token));
            out.push_str(&format!(" {rank}\n"));
        }
        std::fs::write(dir.join(format!("{name}.tiktoken")), out)?;
    }
    Ok(())
}

/// Python tiktoken's own timing of its encode loop over the texts.
fn python_bench(texts: &[String], rounds: usize) -> Result<serde_json::Value, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    write_ranks(dir.path()).map_err(|e| e.to_string())?;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/tiktoken_reference.py");
    let mut child = Command::new("python3")
        .arg(script)
        .arg("--ranks-dir")
        .arg(dir.path())
        .arg("--rounds")
        .arg(rounds.to_string())
        .arg("bench")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    let input: String = texts
        .iter()
        .map(|t| serde_json::to_string(t).unwrap_or_default() + "\n")
        .collect();
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    let _ = writer.join();
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).trim().to_string());
    }
    serde_json::from_slice(&output.stdout).map_err(|e| e.to_string())
}

/// First-use cost of each BPE table, then Rust against Python on the same texts.
fn python_comparison(_: &mut Criterion) {
    for (name, counter) in [
        ("o200k", TiktokenCounter::o200k_base()),
        ("cl100k", TiktokenCounter::cl100k_base()),
    ] {
        let start = Instant::now();
        counter.count_text("warm up");
        eprintln!(
            "init {name}: {:.0} ms (once per process)",
            start.elapsed().as_secs_f64() * 1e3
        );
    }
    let texts = corpus_texts();
    eprintln!(
        "corpus: {} texts, {:.2} MB",
        texts.len(),
        bytes(&texts) as f64 / 1e6
    );
    let rounds = 5;
    match python_bench(&texts, rounds) {
        Ok(python) => {
            for (name, key, counter) in [
                ("o200k", "o200k_base", TiktokenCounter::o200k_base()),
                ("cl100k", "cl100k_base", TiktokenCounter::cl100k_base()),
            ] {
                let theirs = python[key]["mb_per_s"].as_f64().unwrap_or(f64::NAN);
                let ours = rust_mb_per_s(&counter, &texts, rounds);
                eprintln!(
                    "python_tiktoken {name}: {theirs:.2} MB/s; rust: {ours:.2} MB/s; ratio {:.2}",
                    ours / theirs
                );
            }
        }
        Err(e) => eprintln!("python_tiktoken: NOT MEASURED ({e}); run `{PIP}`"),
    }
}

fn count_text(c: &mut Criterion) {
    let texts = corpus_texts();
    let mut group = c.benchmark_group("count_text");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(8))
        .throughput(Throughput::BytesDecimal(bytes(&texts)));
    for (name, counter) in [
        ("o200k", TiktokenCounter::o200k_base()),
        ("cl100k", TiktokenCounter::cl100k_base()),
    ] {
        group.bench_function(name, |b| b.iter(|| count_all(&counter, &texts)));
    }
    group.finish();
}

fn conversation_10k(c: &mut Criterion) {
    let counter = TiktokenCounter::o200k_base();
    let messages = ConversationBuilder::new(11, 10_000).build().messages;
    let new_message = ConversationBuilder::new(12, 40).build().messages[30].clone();
    // What the store keeps: one count per message, taken at insert.
    let cached: Vec<u32> = messages.iter().map(|m| counter.count_message(m)).collect();

    let mut group = c.benchmark_group("conversation_10k");
    group.bench_function("append_cached", |b| {
        b.iter(|| {
            let new = counter.count_message(black_box(&new_message));
            black_box(&cached).iter().copied().sum::<u32>() + new
        })
    });
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("recount_all", |b| {
        b.iter(|| {
            black_box(&messages)
                .iter()
                .chain(std::iter::once(&new_message))
                .map(|m| counter.count_message(m))
                .sum::<u32>()
        })
    });
    group.finish();
}

/// A model's "actual" prompt size: its own tokenizer with the default chat framing, plus the
/// reply priming. Real providers also render a chat template; this stands in for `usage`.
fn actual(hf: &HfCounter, messages: &[NewMessage]) -> u32 {
    messages.iter().map(|m| hf.count_message(m)).sum::<u32>() + 3
}

fn estimate_with(counter: TiktokenCounter, messages: &[NewMessage]) -> u32 {
    let request = ChatRequest {
        messages: messages.iter().cloned().map(std::sync::Arc::new).collect(),
        ..ChatRequest::default()
    };
    counter.count_request(&request)
}

/// What Decima estimates for a model without an OpenAI tokenizer: cl100k.
fn estimate(messages: &[NewMessage]) -> u32 {
    estimate_with(TiktokenCounter::cl100k_base(), messages)
}

fn error(predicted: u32, actual: u32) -> f64 {
    (f64::from(predicted) - f64::from(actual)).abs() / f64::from(actual)
}

/// Keeps only the characters `keep` accepts in every message's prose.
fn only(messages: &[NewMessage], keep: fn(char) -> bool) -> Vec<NewMessage> {
    messages
        .iter()
        .map(|m| NewMessage {
            content: m.content.chars().filter(|&c| keep(c)).collect(),
            reasoning: m
                .reasoning
                .as_ref()
                .map(|r| r.chars().filter(|&c| keep(c)).collect()),
            ..m.clone()
        })
        .collect()
}

/// Learns on one conversation turn by turn (as responses arrive), then predicts others.
fn calibration_report(name: &str, hf: &HfCounter) {
    // Text alone, by script: where the tokenizers really differ.
    let sample = ConversationBuilder::new(20, 600).build().messages;
    let cl100k = TiktokenCounter::cl100k_base();
    for (label, keep) in [
        (
            "Chinese prose",
            (|c: char| !c.is_ascii()) as fn(char) -> bool,
        ),
        ("ASCII text (English, ids, paths, JSON)", |c: char| {
            c.is_ascii()
        }),
    ] {
        let texts: Vec<String> = only(&sample, keep).iter().flat_map(texts_of).collect();
        let (own, base) = (count_all(hf, &texts), count_all(&cl100k, &texts));
        eprintln!(
            "calibration {name}: {label}: {own} tokens vs cl100k {base} ({:+.1}%)",
            (own as f64 / base as f64 - 1.0) * 100.0
        );
    }

    let train = ConversationBuilder::new(21, 600).build().messages;
    let mut calibration = Calibration::new();
    let mut online = Vec::new();
    for end in (20..=train.len()).step_by(20) {
        let (est, act) = (estimate(&train[..end]), actual(hf, &train[..end]));
        if calibration.samples >= 3 {
            online.push(error(calibration.apply(est), act));
        }
        calibration.update(est, act);
    }
    let mean = online.iter().sum::<f64>() / online.len().max(1) as f64;
    let max = online.iter().copied().fold(0.0, f64::max);
    eprintln!(
        "calibration {name}: learned factor {:.3} from {} requests; online error after 3 samples: mean {:.2}%, max {:.2}%",
        calibration.factor,
        calibration.samples,
        mean * 100.0,
        max * 100.0
    );

    let same_shape = ConversationBuilder::new(22, 600).build().messages;
    let long_prose = ConversationBuilder::new(23, 600)
        .content_chars(800)
        .build()
        .messages;
    let english = only(&same_shape, |c| c.is_ascii());
    let chinese = only(&same_shape, |c| !c.is_ascii());
    for (label, messages) in [
        ("held-out conversation", &same_shape),
        ("held-out, 800-char prose", &long_prose),
        ("held-out, ASCII only", &english),
        ("held-out, Chinese only", &chinese),
    ] {
        let (est, act) = (estimate(messages), actual(hf, messages));
        let o200k = estimate_with(TiktokenCounter::o200k_base(), messages);
        eprintln!(
            "calibration {name}: {label}: {name} {act}; cl100k {est} (raw error {:.1}%), calibrated {} (error {:.1}%); o200k raw error {:.1}%",
            error(est, act) * 100.0,
            calibration.apply(est),
            error(calibration.apply(est), act) * 100.0,
            error(o200k, act) * 100.0
        );
    }
}

fn hf_report(_: &mut Criterion) {
    let Ok(spec) = std::env::var("DECIMA_HF_TOKENIZERS") else {
        eprintln!(
            "hf: set DECIMA_HF_TOKENIZERS=name=/path/tokenizer.json,... to report HF counters"
        );
        return;
    };
    let texts = corpus_texts();
    for entry in spec.split(',').filter(|e| !e.is_empty()) {
        let (name, path) = entry.split_once('=').unwrap_or((entry, entry));
        let start = Instant::now();
        let hf = match HfCounter::from_file(path) {
            Ok(hf) => hf,
            Err(e) => {
                eprintln!("hf {name}: {e}");
                continue;
            }
        };
        let load = start.elapsed();
        let cl100k = count_all(&TiktokenCounter::cl100k_base(), &texts);
        let own = count_all(&hf, &texts);
        eprintln!(
            "hf {name}: load {:.0} ms; {:.2} MB/s; corpus texts {own} tokens vs cl100k {cl100k} ({:+.1}%)",
            load.as_secs_f64() * 1e3,
            rust_mb_per_s(&hf, &texts, 3),
            (own as f64 / cl100k as f64 - 1.0) * 100.0
        );
        calibration_report(name, &hf);
    }
}

criterion_group!(
    benches,
    python_comparison,
    count_text,
    conversation_10k,
    hf_report
);
criterion_main!(benches);
