//! Long runs against the test server's model of the providers' prompt caches: every request
//! starts with the one before it, except for its volatile tail, on the bytes the server
//! received; Anthropic's breakpoints are where they belong; and the run reads most of its input
//! from the cache.

use decima_core::ConversationId;
use decima_core::prompt::Preset;
use decima_runtime::agent::{self, RunOutcome};
use decima_store::{ExecutionStatus, NewProvider};
use serde_json::{Value, json};

use crate::common::{Fixture, todos};

/// Steps of the scripted run (model calls), as the issue asks: 24 and more.
const STEPS: usize = 26;

/// A realistic tool output: a few kilobytes of a CSV listing.
fn listing_command(step: usize) -> String {
    format!(
        "for i in $(seq 1 60); do echo \"{step},$i,ACC-$((10000 + i * {step})),$((i * 37 % 1000)).$((i % 100)),EUR,settled\"; done"
    )
}

/// Scripts a run of [`STEPS`] model calls: a plan, shell listings with a todo update every
/// few steps, and a final answer.
fn script(f: &Fixture) {
    f.call(
        "todo_write",
        todos(&[
            ("load the ledgers", "in_progress"),
            ("reconcile", "pending"),
        ]),
    );
    for step in 1..STEPS - 1 {
        if step % 6 == 0 {
            f.calls(&[
                ("shell", json!({ "command": listing_command(step) })),
                (
                    "todo_write",
                    todos(&[
                        ("load the ledgers", "completed"),
                        ("reconcile", "in_progress"),
                    ]),
                ),
            ]);
        } else {
            f.call("shell", json!({ "command": listing_command(step) }));
        }
    }
    f.say("The ledgers reconcile: every account settled in EUR.");
}

async fn add(f: &Fixture, name: &str, kind: &str, settings: Value) {
    add_with_window(f, name, kind, settings, 200_000).await;
}

async fn add_with_window(f: &Fixture, name: &str, kind: &str, settings: Value, window: u32) {
    let base_url = match kind {
        "anthropic" => f.server.anthropic_base_url(),
        _ => f.server.openai_base_url(),
    };
    f.store
        .providers()
        .create(NewProvider {
            name: name.into(),
            kind: kind.into(),
            preset: None,
            base_url,
            model: "cache-model".into(),
            context_window: window,
            settings,
        })
        .await
        .unwrap();
}

/// The received body's bytes up to the end of `value` (the last JSON value in it that the next
/// request must repeat).
fn bytes_through(body: &[u8], value: &Value) -> Vec<u8> {
    let needle = value.to_string().into_bytes();
    let at = body
        .windows(needle.len())
        .rposition(|w| w == needle.as_slice())
        .expect("the value is in the body as sent");
    body[..at + needle.len()].to_vec()
}

/// Whether a message is the volatile tail: the step history after the conversation.
fn is_tail(message: &Value) -> bool {
    message["role"] == "system"
        && message["content"]
            .as_str()
            .is_some_and(|c| c.contains("Recent steps"))
}

/// OpenAI-compatible: the tail is the last message, a system message with the step history.
/// Each body, up to its tail, is a byte prefix of the next body; the tools are the same bytes.
fn check_openai_prefixes(f: &Fixture, conversation: ConversationId) {
    let requests = f.server.requests();
    assert_eq!(requests.len(), STEPS);
    let mut tools: Option<String> = None;
    let (mut repeated, mut sent) = (0usize, 0usize);
    for (i, pair) in requests.windows(2).enumerate() {
        let (before, after) = (&pair[0], &pair[1]);
        let (was, is) = (prompt_of(before), prompt_of(after));
        repeated += common_prefix(was.as_bytes(), is.as_bytes());
        sent += is.len();
        let json = before.json.as_ref().unwrap();
        let messages = json["messages"].as_array().unwrap();
        // Every step's messages are still in the window (nothing was compressed): no request
        // carries a step history, which would repeat what the request shows.
        let tailed = is_tail(messages.last().unwrap());
        assert!(!tailed, "request {i}: {:?}", messages.last());
        assert!(!messages.iter().any(is_tail));
        let kept = bytes_through(
            &before.body,
            &messages[messages.len() - 1 - usize::from(tailed)],
        );
        assert!(
            after.body.starts_with(&kept),
            "request {} does not start with request {i} up to its tail:\n{}\n---\n{}",
            i + 1,
            String::from_utf8_lossy(&kept),
            String::from_utf8_lossy(&after.body[..kept.len().min(after.body.len())])
        );
        let these = json["tools"].to_string();
        assert_eq!(tools.get_or_insert_with(|| these.clone()), &these);
        assert_eq!(json["prompt_cache_key"], conversation.to_string());
        assert!(!before.body.windows(13).any(|w| w == b"cache_control"));
    }
    // A short run's requests repeat the one before them for at least 90% of their prompt,
    // over the run: what a prefix cache can serve. The prompt is the tools and the messages,
    // in the order a server's chat template renders them (the body's other fields are not
    // prompt).
    let share = repeated as f64 / sent as f64;
    eprintln!(
        "requests repeat the previous one for {:.1}% of their prompt",
        share * 100.0
    );
    assert!(share >= 0.90, "only {:.1}% repeated", share * 100.0);
}

/// A request's prompt as a server renders it: the tools, then the messages.
fn prompt_of(request: &decima_testkit::RecordedRequest) -> String {
    let json = request.json.as_ref().unwrap();
    format!("{}{}", json["tools"], json["messages"])
}

/// How many leading bytes two prompts share.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// A request as Anthropic caches it: tools, system blocks and message blocks, without the
/// breakpoint markers (which are not content).
fn anthropic_segments(json: &Value) -> Vec<String> {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove("cache_control");
        }
        v.to_string()
    };
    let mut out: Vec<String> = json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(strip)
        .collect();
    match &json["system"] {
        Value::Array(blocks) => out.extend(blocks.iter().map(strip)),
        Value::Null => {}
        other => out.push(other.to_string()),
    }
    for m in json["messages"].as_array().unwrap() {
        for b in m["content"].as_array().unwrap() {
            out.push(format!("{}:{}", m["role"], strip(b)));
        }
    }
    out
}

fn breakpoints(json: &Value) -> Vec<String> {
    let mut at = Vec::new();
    let system = json["system"].as_array().cloned().unwrap_or_default();
    for (i, b) in system.iter().enumerate() {
        if b.get("cache_control").is_some() {
            at.push(format!("system {i}"));
        }
    }
    let messages = json["messages"].as_array().unwrap();
    for (i, m) in messages.iter().enumerate() {
        for (j, b) in m["content"].as_array().unwrap().iter().enumerate() {
            if b.get("cache_control").is_some() {
                at.push(format!("message {i} block {j}"));
            }
        }
    }
    at
}

/// Anthropic: the tail is a `<system-reminder>` block at the end of the last user turn, the
/// system is the preset and nothing that changes; each request's segments up to its tail are
/// the next one's first segments; at most four breakpoints: the end of the system, and the
/// last history blocks of this request and the one before.
fn check_anthropic_prefixes(f: &Fixture) {
    let requests = f.server.requests();
    assert_eq!(requests.len(), STEPS);
    for (i, r) in requests.iter().enumerate() {
        let json = r.json.as_ref().unwrap();
        let messages = json["messages"].as_array().unwrap();
        let last = messages.last().unwrap();
        assert_eq!(last["role"], "user");
        let blocks = last["content"].as_array().unwrap();
        let tail = blocks.last().unwrap();
        let text = tail["text"].as_str().unwrap_or_default();
        let tailed = text.starts_with("<system-reminder>") && text.contains("Recent steps");
        // Nothing was compressed: every step is still in the request, and none is repeated in
        // a step history.
        assert!(!tailed, "request {i} ends with: {tail}");
        assert!(
            tail.get("cache_control").is_none() || !tailed,
            "the tail is never cached"
        );
        let system = json["system"].to_string();
        assert!(!system.contains("Recent steps") && !system.contains("Pinned todos"));
        let at = breakpoints(json);
        assert!(at.len() <= 4, "request {i}: {at:?}");
        // A preset's text ends with a breakpoint, which caches the tools before it too.
        let system_blocks = json["system"].as_array().map_or(0, Vec::len);
        if system_blocks > 0 {
            assert_eq!(at[0], format!("system {}", system_blocks - 1), "{at:?}");
        }
        // The block just before the tail ends this request's history.
        let last_history = if !tailed {
            format!("message {} block {}", messages.len() - 1, blocks.len() - 1)
        } else if blocks.len() > 1 {
            format!("message {} block {}", messages.len() - 1, blocks.len() - 2)
        } else {
            let prev = &messages[messages.len() - 2]["content"];
            format!(
                "message {} block {}",
                messages.len() - 2,
                prev.as_array().unwrap().len() - 1
            )
        };
        assert_eq!(at.last().unwrap(), &last_history, "request {i}: {at:?}");
        if i >= 1 {
            let expected = usize::from(system_blocks > 0) + 2;
            assert_eq!(
                at.len(),
                expected,
                "system, the last request's end, this one's: {at:?}"
            );
        }
    }
    for (i, pair) in requests.windows(2).enumerate() {
        let before = anthropic_segments(pair[0].json.as_ref().unwrap());
        let after = anthropic_segments(pair[1].json.as_ref().unwrap());
        let kept = &before[..];
        assert_eq!(
            &after[..kept.len()],
            kept,
            "request {} does not start with request {i} up to its tail",
            i + 1
        );
    }
}

async fn cache_share(f: &Fixture, outcome: &RunOutcome) -> f64 {
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    let stored = f
        .store
        .executions()
        .get(outcome.execution.id)
        .await
        .unwrap();
    assert_eq!(stored.usage.model_calls as usize, STEPS);
    let share = stored.usage.cache_read_tokens as f64 / stored.usage.tokens_in as f64;
    eprintln!(
        "{:.1}% of {} input tokens read from cache",
        share * 100.0,
        stored.usage.tokens_in
    );
    share
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_openai_run_repeats_each_request_as_the_next_ones_prefix() {
    let f = Fixture::new().await;
    f.server.model_prompt_caches();
    add(&f, "cached", "openai", json!({ "prompt_cache_key": true })).await;
    script(&f);
    let outcome = f.run_with("cached", "Reconcile the ledgers").await;
    check_openai_prefixes(&f, outcome.execution.conversation_id);
    let share = cache_share(&f, &outcome).await;
    assert!(
        share >= 0.80,
        "{:.1}% of input read from cache",
        share * 100.0
    );
}

/// Runs the task in a conversation whose preset has a system prompt of its own.
async fn run_with_preset(f: &Fixture, provider: &str) -> RunOutcome {
    let preset = Preset::simple(
        "You are a careful financial analyst. Reconcile ledgers account by account, and say \
         which figures you checked.",
    );
    let record = f
        .store
        .presets()
        .create(
            "analyst",
            "native",
            None,
            &serde_json::to_value(&preset).unwrap(),
        )
        .await
        .unwrap();
    let conversation = f
        .store
        .conversations()
        .create("ledgers", Some(&record.id))
        .await
        .unwrap();
    f.run_in(provider, Some(conversation.id), "Reconcile the ledgers")
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_anthropic_run_caches_at_its_breakpoints() {
    let f = Fixture::new().await;
    f.server.model_prompt_caches();
    // Anthropic's published prices for Claude Sonnet 4.5, per million tokens.
    let prices = json!({ "input": 3.0, "cached_input": 0.3, "cache_write": 3.75, "output": 15.0 });
    add(&f, "claude", "anthropic", json!({ "prices": prices })).await;
    script(&f);
    let outcome = run_with_preset(&f, "claude").await;
    assert!(
        f.server.requests()[0].json.as_ref().unwrap()["system"]
            .to_string()
            .contains("careful financial analyst")
    );
    check_anthropic_prefixes(&f);
    let share = cache_share(&f, &outcome).await;
    assert!(
        share >= 0.80,
        "{:.1}% of input read from cache",
        share * 100.0
    );
    // The estimated cost is each call's usage at those prices, and what the CLI's JSON says.
    let view =
        serde_json::to_value(agent::view(&f.store, outcome.execution.id).await.unwrap()).unwrap();
    let mut micro = 0.0;
    for call in view["usage"]["calls"].as_array().unwrap() {
        let n = |k: &str| call[k].as_f64().unwrap();
        let plain = n("tokens_in") - n("cache_read_tokens") - n("cache_write_tokens");
        micro += (plain * 3.0
            + n("cache_read_tokens") * 0.3
            + n("cache_write_tokens") * 3.75
            + n("tokens_out") * 15.0)
            .round();
    }
    let cost = view["usage"]["cost_usd"].as_f64().unwrap();
    assert!(
        (cost - micro / 1e6).abs() < 1e-5,
        "{cost} vs {}",
        micro / 1e6
    );
    let uncached = view["usage"]["tokens_in"].as_f64().unwrap() * 3.0 / 1e6;
    assert!(
        cost < uncached / 2.0,
        "the cache halves the input's cost at least: {cost} of {uncached}"
    );
    assert_eq!(view["usage"]["compressions"], 0);
}

/// The summaries' text in an Anthropic request, where the preset and the summaries are the
/// blocks of `system`.
fn summaries_block(json: &Value) -> Option<String> {
    json["system"]
        .as_array()?
        .iter()
        .filter_map(|b| b["text"].as_str())
        .find(|t| t.contains(" summary of messages "))
        .map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn across_compressions_the_summaries_end_a_cached_prefix_and_each_stretch_repeats_itself() {
    let f = Fixture::new().await;
    f.server.model_prompt_caches();
    // A small window: the run compresses a few times.
    add_with_window(&f, "claude", "anthropic", json!({}), 16_000).await;
    script(&f);
    let outcome = run_with_preset(&f, "claude").await;
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    let view = agent::view(&f.store, outcome.execution.id).await.unwrap();
    let compressions = view.usage.compressions.unwrap();
    assert!(compressions >= 1, "the run compressed");
    let requests = f.server.requests();
    let bodies: Vec<&Value> = requests.iter().map(|r| r.json.as_ref().unwrap()).collect();
    let mut summarised = 0;
    for (i, body) in bodies.iter().enumerate() {
        let at = breakpoints(body);
        assert!(at.len() <= 4, "request {i}: {at:?}");
        if let Some(summaries) = summaries_block(body) {
            summarised += 1;
            // The preset's block and the summaries' block each end a cached prefix.
            let system = body["system"].as_array().unwrap();
            let last = system.last().unwrap();
            assert_eq!(last["text"].as_str(), Some(summaries.as_str()));
            assert!(last.get("cache_control").is_some(), "request {i}: {at:?}");
            assert!(
                system[0].get("cache_control").is_some(),
                "request {i}: {at:?}"
            );
        }
    }
    assert!(
        summarised > 0,
        "requests after a compression carry summaries"
    );
    // Between two compressions (the summaries unchanged), each request starts with the one
    // before it up to its tail; across one, the summaries change and the prefix with them.
    let mut stretches = 0;
    for (i, pair) in bodies.windows(2).enumerate() {
        if summaries_block(pair[0]) != summaries_block(pair[1]) {
            stretches += 1;
            continue;
        }
        let before = anthropic_segments(pair[0]);
        let after = anthropic_segments(pair[1]);
        let kept = &before[..before.len() - usize::from(i > 0)];
        assert_eq!(&after[..kept.len()], kept, "request {} vs {i}", i + 1);
    }
    assert!(
        stretches >= 1 && stretches <= compressions as usize,
        "{stretches} of {compressions}"
    );
}
