//! SSE parse and assembly throughput: a recorded body run through the same SSE parser, protocol
//! decoder and tool-call assembler as a live response (`decima_llm::replay`), without a network.
//!
//! Each body holds 10,000 text deltas of 3 to 6 characters, then one tool call whose 500-character
//! arguments arrive in 100 pieces, then usage and the end of the stream: the shape of a long
//! streamed answer. It is cut into 1,400-byte pieces, as TCP delivers it.
//!
//! Run: `cargo bench -p decima-llm --bench sse`

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use decima_llm::{Protocol, ProviderConfig, collect, replay};
use serde_json::json;

const DELTAS: usize = 10_000;
const ARG_PIECES: usize = 100;
const CHUNK: usize = 1_400;

fn words(i: usize) -> String {
    ["the ", "total", " of ", "March", " was ", "42,17"][i % 6].to_string()
}

fn argument_pieces() -> Vec<String> {
    let args = json!({ "path": "/workspace/data/q3.csv", "query": "x".repeat(440) }).to_string();
    let size = args.len().div_ceil(ARG_PIECES);
    args.as_bytes()
        .chunks(size)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect()
}

/// Returns the body and the number of SSE events in it.
fn openai_body() -> (Vec<u8>, usize) {
    let mut body = String::new();
    let mut events = 0;
    let mut chunk = |delta: serde_json::Value, finish: Option<&str>| {
        let value = json!({
            "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_795_000_000, "model": "gpt-4o",
            "choices": [{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish }]
        });
        body.push_str(&format!("data: {value}\n\n"));
        events += 1;
    };
    chunk(json!({ "role": "assistant", "content": "" }), None);
    for i in 0..DELTAS {
        chunk(json!({ "content": words(i) }), None);
    }
    chunk(
        json!({ "tool_calls": [{ "index": 0, "id": "call_1", "type": "function", "function": { "name": "query", "arguments": "" } }] }),
        None,
    );
    for piece in argument_pieces() {
        chunk(
            json!({ "tool_calls": [{ "index": 0, "function": { "arguments": piece } }] }),
            None,
        );
    }
    chunk(json!({}), Some("tool_calls"));
    body.push_str("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":900,\"completion_tokens\":10100,\"total_tokens\":11000}}\n\ndata: [DONE]\n\n");
    (body.into_bytes(), events + 2)
}

fn anthropic_body() -> (Vec<u8>, usize) {
    let mut body = String::new();
    let mut events = 0;
    let mut event = |name: &str, data: serde_json::Value| {
        body.push_str(&format!("event: {name}\ndata: {data}\n\n"));
        events += 1;
    };
    event(
        "message_start",
        json!({ "type": "message_start", "message": { "id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude", "stop_reason": null, "stop_sequence": null, "usage": { "input_tokens": 900, "output_tokens": 1 } } }),
    );
    event(
        "content_block_start",
        json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "text", "text": "" } }),
    );
    for i in 0..DELTAS {
        event(
            "content_block_delta",
            json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": words(i) } }),
        );
    }
    event(
        "content_block_stop",
        json!({ "type": "content_block_stop", "index": 0 }),
    );
    event(
        "content_block_start",
        json!({ "type": "content_block_start", "index": 1, "content_block": { "type": "tool_use", "id": "toolu_1", "name": "query", "input": {} } }),
    );
    for piece in argument_pieces() {
        event(
            "content_block_delta",
            json!({ "type": "content_block_delta", "index": 1, "delta": { "type": "input_json_delta", "partial_json": piece } }),
        );
    }
    event(
        "content_block_stop",
        json!({ "type": "content_block_stop", "index": 1 }),
    );
    event(
        "message_delta",
        json!({ "type": "message_delta", "delta": { "stop_reason": "tool_use", "stop_sequence": null }, "usage": { "output_tokens": 10100 } }),
    );
    event("message_stop", json!({ "type": "message_stop" }));
    (body.into_bytes(), events)
}

fn sse(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("sse_decode");
    for (name, protocol, (body, events)) in [
        ("openai", Protocol::OpenAi, openai_body()),
        ("anthropic", Protocol::Anthropic, anthropic_body()),
    ] {
        let chunks: Vec<bytes::Bytes> = body
            .chunks(CHUNK)
            .map(bytes::Bytes::copy_from_slice)
            .collect();
        let config = ProviderConfig::new("bench", protocol, "http://127.0.0.1", "m");
        // Sanity: the body decodes to the full answer.
        let done = rt
            .block_on(collect(replay(config.clone(), chunks.clone())))
            .unwrap();
        assert_eq!(
            done.text.len(),
            (0..DELTAS).map(|i| words(i).len()).sum::<usize>()
        );
        assert_eq!(done.tool_calls.len(), 1);
        println!("{name}: {} bytes, {events} SSE events per body", body.len());
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(name, |b| {
            b.to_async(&rt)
                .iter(|| collect(replay(config.clone(), chunks.clone())))
        });
    }
    group.finish();
}

criterion_group!(benches, sse);
criterion_main!(benches);
