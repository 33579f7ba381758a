//! What a long run costs on providers with prompt caches: a scripted run of 200 steps with
//! realistic tool output, against the test server's model of Anthropic's and OpenAI's caches,
//! priced at their published rates (Claude Sonnet 4.5: $3 input, $0.30 cache read, $3.75 cache
//! write, $15 output per million tokens; GPT-4.1: $2, $0.50, $2, $8).
//!
//! Three layouts of the same run, in the same process:
//! - **stable**: Decima as it is, the run itself;
//! - **unstable**: the same requests in the layout before (the todos and the step history in the
//!   session context, ahead of the history), replayed through a fresh cache model;
//! - **naive**: a client that sends the whole history every time, without compression or
//!   breakpoints, replayed the same way.
//!
//! `cargo bench -p decima-runtime --bench prompt_cache` runs 200 steps; under `cargo test` it
//! runs 30, to check that it still works. The figures are counts and dollars, not times.

#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use decima_llm::{ChatRequest, Prices, Protocol, ProviderConfig};

/// The two wire protocols whose prompt caches this bench models.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Wire {
    Anthropic,
    OpenAi,
}

impl From<Wire> for Protocol {
    fn from(wire: Wire) -> Self {
        match wire {
            Wire::Anthropic => Protocol::Anthropic,
            Wire::OpenAi => Protocol::OpenAi,
        }
    }
}
use decima_runtime::agent::{self, RunOptions, RunRequest, Session, StopOnFailure};
use decima_runtime::review::TenthManMode;
use decima_runtime::{CollectEvents, Event};
use decima_store::{NewProvider, Store};
use decima_testkit::{LlmServer, PromptCacheModel, Reply, ScriptedToolCall, Turn};
use serde_json::{Value, json};

const ANTHROPIC: Prices = Prices {
    input: 3.0,
    cached_input: 0.3,
    cache_write: 3.75,
    output: 15.0,
};
const OPENAI: Prices = Prices {
    input: 2.0,
    cached_input: 0.5,
    cache_write: 2.0,
    output: 8.0,
};
/// The model's window: a long run compresses a few times in it.
const WINDOW: u32 = 128_000;

/// A tool call's output as an analyst's run produces them: listings, log searches, JSON from an
/// API, a summary table. Deterministic, a few kilobytes each.
fn command(step: usize) -> String {
    match step % 4 {
        0 => format!(
            "for i in $(seq 1 80); do echo \"{step},$i,ACC-$((10000 + i * {step})),$((i * 37 % 1000)).$((i % 100)),EUR,settled,2026-0$((i % 9 + 1))-1$((i % 9))\"; done"
        ),
        1 => format!(
            "for i in $(seq 1 50); do echo \"2026-11-0$((i % 9 + 1))T1$((i % 10)):0$((i % 6)):00Z batch-{step} worker-$((i % 7)) ERROR reconcile: ledger row $((i * 13)) does not match statement line $((i * 11)) (delta $((i % 17)).$((i % 90)) EUR)\"; done"
        ),
        2 => format!(
            "printf '{{\"page\": {step}, \"items\": ['; for i in $(seq 1 40); do printf '{{\"id\": \"INV-%05d\", \"amount\": %d.%02d, \"currency\": \"EUR\", \"status\": \"open\"}},' $((i * {step})) $((i * 41 % 900)) $((i % 100)); done; printf '{{}}]}}\\n'"
        ),
        _ => format!(
            "echo 'region  invoices  matched  open  delta_eur'; for i in $(seq 1 45); do echo \"R-$((i + {step}))  $((i * 7))  $((i * 6))  $((i % 5))  $((i * 19 % 400)).$((i % 100))\"; done"
        ),
    }
}

fn todos(done: usize) -> Value {
    let titles = [
        "collect the ledgers",
        "match invoices to statements",
        "investigate the deltas",
        "write the report",
    ];
    json!({ "todos": titles.iter().enumerate().map(|(i, t)| json!({
        "title": t,
        "status": if i < done { "completed" } else if i == done { "in_progress" } else { "pending" },
    })).collect::<Vec<_>>() })
}

/// The model's answer to request `n` of `steps`: a plan, tool calls with a todo update every
/// quarter, and a final answer. Output tokens are about a quarter of the answer's characters.
fn answer(n: usize, steps: usize) -> Reply {
    let call = |name: &str, args: Value, i: usize| ScriptedToolCall {
        id: format!("call_{n}_{i}"),
        name: name.into(),
        argument_chunks: vec![args.to_string()],
    };
    let (tool_calls, text) = if n == 0 {
        (vec![call("todo_write", todos(0), 0)], String::new())
    } else if n + 1 >= steps {
        (
            Vec::new(),
            "Every ledger reconciles except the deltas listed above, all under 17 EUR.".to_owned(),
        )
    } else if n.is_multiple_of((steps / 4).max(1)) {
        (
            vec![
                call("shell", json!({ "command": command(n) }), 0),
                call("todo_write", todos((n * 4 / steps).min(3)), 1),
            ],
            String::new(),
        )
    } else {
        (
            vec![call("shell", json!({ "command": command(n) }), 0)],
            String::new(),
        )
    };
    let chars: usize = text.len()
        + tool_calls
            .iter()
            .map(|c| c.argument_chunks.concat().len() + c.name.len())
            .sum::<usize>();
    Reply::Stream(Turn {
        text: if text.is_empty() {
            Vec::new()
        } else {
            vec![text]
        },
        tool_calls,
        usage: Some((0, u32::try_from(chars / 4 + 20).unwrap())),
        ..Turn::default()
    })
}

/// One call's figures.
#[derive(Debug, Clone, Copy, Default)]
struct Call {
    input: u64,
    read: u64,
    written: u64,
    output: u64,
}

#[derive(Debug, Default)]
struct Figures {
    calls: Vec<Call>,
    compressions: usize,
}

impl Figures {
    fn input(&self) -> u64 {
        self.calls.iter().map(|c| c.input).sum()
    }
    fn read(&self) -> u64 {
        self.calls.iter().map(|c| c.read).sum()
    }
    fn cost(&self, prices: &Prices) -> f64 {
        self.calls
            .iter()
            .map(|c| prices.cost(c.input, c.read, c.written, c.output))
            .sum()
    }
    /// The share read from the cache, leaving out the first request and each request that
    /// followed a compression (whose summaries the cache could not have seen).
    fn share_between(&self, misses: &[usize]) -> f64 {
        let (read, input) = self
            .calls
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 0 && !misses.contains(i))
            .fold((0, 0), |(r, t), (_, c)| (r + c.read, t + c.input));
        read as f64 / input.max(1) as f64
    }
}

struct Run {
    stable: Figures,
    /// Request bodies as the server received them.
    bodies: Vec<Value>,
    /// The calls that followed a compression.
    after_compression: Vec<usize>,
    /// Output tokens per call, to price the replays alike.
    outputs: Vec<u64>,
    /// The whole conversation at the end, for the naive client.
    store: Store,
    conversation: decima_core::ConversationId,
    _dir: tempfile::TempDir,
    _server: LlmServer,
}

async fn run(protocol: Wire, steps: usize) -> Run {
    let server = LlmServer::start().await;
    server.model_prompt_caches();
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&asked);
    server.respond_with(move |_| answer(counter.fetch_add(1, Ordering::SeqCst), steps));
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(
        &dir.path().join("decima.db"),
        decima_llm::tokens::store_counter(),
    )
    .await
    .unwrap();
    let (kind, base_url, prices) = match protocol {
        Wire::Anthropic => ("anthropic", server.anthropic_base_url(), ANTHROPIC),
        Wire::OpenAi => ("openai", server.openai_base_url(), OPENAI),
    };
    store
        .providers()
        .create(NewProvider {
            name: "priced".into(),
            kind: kind.into(),
            preset: None,
            base_url,
            model: "cache-model".into(),
            context_window: WINDOW,
            settings: json!({ "prices": prices, "prompt_cache_key": protocol == Wire::OpenAi }),
        })
        .await
        .unwrap();
    let events = CollectEvents::default();
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let session = Session {
        store: &store,
        data_dir: dir.path(),
        provider: Some("priced"),
        events: &events,
        choices: &StopOnFailure,
        cancel: agent::CancellationToken::new(),
    };
    let outcome = agent::run(
        &session,
        RunRequest {
            workspace: Some(workspace),
            task: "Reconcile the Q3 ledgers against the bank statements".into(),
            options: RunOptions {
                tenth_man: TenthManMode::Off,
                max_steps: u32::try_from(steps + 10).unwrap(),
                // The cache's figures, not the figure check's: the scripted answers' numbers are made up.
                check_figures: false,
                ..RunOptions::default()
            },
            ..RunRequest::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(
        outcome.execution.status.as_str(),
        "succeeded",
        "{:?}",
        outcome.execution.error
    );
    let view = agent::view(&store, outcome.execution.id).await.unwrap();
    let calls: Vec<Call> = view
        .usage
        .calls
        .iter()
        .map(|c| Call {
            input: u64::from(c.tokens_in.unwrap_or(0)),
            read: u64::from(c.cache_read_tokens.unwrap_or(0)),
            written: u64::from(c.cache_write_tokens.unwrap_or(0)),
            output: u64::from(c.tokens_out.unwrap_or(0)),
        })
        .collect();
    assert_eq!(calls.len(), steps);
    // A compression between two calls: the call after it is the first to send new summaries.
    let bodies: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.json.clone().unwrap())
        .collect();
    let after_compression: Vec<usize> = (1..bodies.len())
        .filter(|&i| summaries_of(&bodies[i]) != summaries_of(&bodies[i - 1]))
        .collect();
    let compressions = events
        .take()
        .iter()
        .filter(|e| matches!(e, Event::Compacted { .. }))
        .count();
    Run {
        outputs: calls.iter().map(|c| c.output).collect(),
        stable: Figures {
            calls,
            compressions,
        },
        bodies,
        after_compression,
        store,
        conversation: outcome.execution.conversation_id,
        _dir: dir,
        _server: server,
    }
}

/// The summaries a request carries (their text), to find where a compression happened.
fn summaries_of(body: &Value) -> String {
    let mut out = String::new();
    let mut take = |text: &str| {
        if text.contains(" summary of messages ") {
            out.push_str(text);
        }
    };
    match &body["system"] {
        Value::Array(blocks) => blocks
            .iter()
            .for_each(|b| take(b["text"].as_str().unwrap_or_default())),
        Value::String(s) => take(s),
        _ => {}
    }
    for m in body["messages"].as_array().into_iter().flatten() {
        if m["role"] == "system" {
            take(m["content"].as_str().unwrap_or_default());
        }
    }
    out
}

/// Whether a message or block is the volatile tail.
fn tail_text(text: &str) -> bool {
    text.contains("# Recent steps") || text.contains("Pinned todos:")
}

/// The request as the layout before sent it: the volatile tail joined to the session context,
/// ahead of the history (the breakpoints kept, so that only the order differs).
fn unstable(protocol: Wire, body: &Value) -> Value {
    let mut body = body.clone();
    match protocol {
        Wire::OpenAi => {
            let messages = body["messages"].as_array_mut().unwrap();
            let Some(at) = messages.iter().rposition(|m| {
                m["role"] == "system" && tail_text(m["content"].as_str().unwrap_or_default())
            }) else {
                return body;
            };
            let tail = messages.remove(at);
            let session = messages
                .iter()
                .position(|m| m["role"] != "system")
                .unwrap_or(messages.len());
            messages.insert(session, tail);
        }
        Wire::Anthropic => {
            let mut tail = None;
            for m in body["messages"].as_array_mut().unwrap() {
                if let Some(blocks) = m["content"].as_array_mut()
                    && let Some(at) = blocks.iter().position(|b| {
                        b["text"]
                            .as_str()
                            .is_some_and(|t| t.starts_with("<system-reminder>"))
                    })
                {
                    tail = Some(blocks.remove(at));
                }
            }
            if let Some(tail) = tail {
                let text = tail["text"].as_str().unwrap_or_default();
                let text = text
                    .trim_start_matches("<system-reminder>\n")
                    .trim_end_matches("\n</system-reminder>");
                let block = json!({ "type": "text", "text": text });
                match body.get_mut("system") {
                    Some(Value::Array(blocks)) => blocks.push(block),
                    _ => body["system"] = json!([block]),
                }
            }
        }
    }
    body
}

/// The size of a request's volatile tail, in bytes.
fn tail_bytes(protocol: Wire, body: &Value) -> usize {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let Some(last) = messages.last() else {
        return 0;
    };
    match protocol {
        Wire::OpenAi if tail_text(last["content"].as_str().unwrap_or_default()) => {
            last["content"].as_str().unwrap_or_default().len()
        }
        Wire::Anthropic => last["content"]
            .as_array()
            .and_then(|blocks| blocks.last())
            .and_then(|b| b["text"].as_str())
            .filter(|t| t.starts_with("<system-reminder>"))
            .map_or(0, str::len),
        Wire::OpenAi => 0,
    }
}

/// The naive client's requests: before each answer, the whole history, nothing marked.
async fn naive(run: &Run, protocol: Wire) -> Vec<Value> {
    let messages = run.store.messages().all(run.conversation).await.unwrap();
    let tools = run.bodies[0]["tools"].clone();
    let config = ProviderConfig::new(
        "naive",
        protocol.into(),
        "http://127.0.0.1:1",
        "cache-model",
    );
    let answers: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == decima_core::Role::Assistant)
        .map(|(i, _)| i)
        .collect();
    answers
        .iter()
        .map(|&end| {
            let request = ChatRequest {
                model: "cache-model".into(),
                messages: messages[..end]
                    .iter()
                    .map(|m| Arc::new(decima_core::NewMessage::from(m)))
                    .collect(),
                ..ChatRequest::default()
            };
            let mut body = match protocol {
                Wire::Anthropic => decima_llm::anthropic::request_body(&config, &request),
                Wire::OpenAi => decima_llm::openai::request_body(&config, &request),
            };
            body["tools"] = tools.clone();
            body
        })
        .collect()
}

fn replay(protocol: Wire, bodies: &[Value], outputs: &[u64]) -> Figures {
    let mut model = PromptCacheModel::default();
    let calls = bodies
        .iter()
        .zip(outputs)
        .map(|(body, &output)| {
            let usage = match protocol {
                Wire::Anthropic => model.serve_anthropic(body),
                Wire::OpenAi => model.serve_openai(body),
            };
            Call {
                input: u64::from(usage.prompt),
                read: u64::from(usage.read),
                written: u64::from(usage.written),
                output,
            }
        })
        .collect();
    Figures {
        calls,
        compressions: 0,
    }
}

fn report(protocol: Wire, steps: usize, run: &Run, unstable: &Figures, naive: &Figures) {
    let prices = match protocol {
        Wire::Anthropic => ANTHROPIC,
        Wire::OpenAi => OPENAI,
    };
    let name = match protocol {
        Wire::Anthropic => "Anthropic (Claude Sonnet 4.5 prices)",
        Wire::OpenAi => "OpenAI (GPT-4.1 prices)",
    };
    let naive_cost = naive.cost(&prices);
    let tails: Vec<usize> = run.bodies.iter().map(|b| tail_bytes(protocol, b)).collect();
    println!("\n{name}, {steps} steps, {WINDOW}-token window");
    println!(
        "volatile tail: {} tokens on average, {} at most (bytes / 4)",
        tails.iter().sum::<usize>() / tails.len().max(1) / 4,
        tails.iter().max().copied().unwrap_or(0) / 4
    );
    println!(
        "| layout | input tokens | read from cache | between compressions | compressions | cost | ÷ naive |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for (label, f, misses, compressions) in [
        (
            "stable (Decima)",
            &run.stable,
            &run.after_compression[..],
            Some(run.stable.compressions),
        ),
        (
            "stable order off",
            unstable,
            &run.after_compression[..],
            Some(run.stable.compressions),
        ),
        ("naive, whole history", naive, &[][..], None),
    ] {
        let cost = f.cost(&prices);
        println!(
            "| {label} | {} | {:.1}% | {:.1}% | {} | ${cost:.2} | {:.0}% |",
            f.input(),
            f.read() as f64 * 100.0 / f.input().max(1) as f64,
            f.share_between(misses) * 100.0,
            compressions.map_or("none".to_owned(), |c| c.to_string()),
            cost * 100.0 / naive_cost
        );
    }
    // What a compressing client can reach against the naive one: its requests grow from what
    // a compression leaves up to the compression threshold, so they average at least half the
    // largest request it sends, whatever the compression leaves. Where the naive client's
    // requests are cached as well as these (OpenAI caches any repeated prefix), the cost ratio
    // cannot fall much below the ratio of input tokens.
    let mean = |f: &Figures| f.input() as f64 / f.calls.len().max(1) as f64;
    let largest = run.stable.calls.iter().map(|c| c.input).max().unwrap_or(0);
    let after: Vec<String> = run
        .after_compression
        .iter()
        .map(|&i| run.stable.calls[i].input.to_string())
        .collect();
    println!(
        "requests: Decima {:.0} input tokens on average, {largest} at most (at the compression threshold), {} after each compression; naive {:.0} on average",
        mean(&run.stable),
        after.join(" / "),
        mean(naive),
    );
    println!(
        "floor of a client that compresses at that threshold: half its largest request is {:.0}% of the naive mean",
        largest as f64 / 2.0 * 100.0 / mean(naive).max(1.0)
    );
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let steps = if bench { 200 } else { 30 };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        for protocol in [Wire::Anthropic, Wire::OpenAi] {
            let run = run(protocol, steps).await;
            let unstable_bodies: Vec<Value> =
                run.bodies.iter().map(|b| unstable(protocol, b)).collect();
            let unstable = replay(protocol, &unstable_bodies, &run.outputs);
            let naive_bodies = naive(&run, protocol).await;
            let naive = replay(protocol, &naive_bodies, &run.outputs);
            assert_eq!(naive.calls.len(), steps);
            report(protocol, steps, &run, &unstable, &naive);
        }
    });
}
