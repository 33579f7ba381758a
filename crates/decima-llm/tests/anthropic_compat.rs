//! The Anthropic preset against the stream shapes the real API and the proxies in front of it
//! send: one table row per quirk, each naming where it was seen, every row run through the wire
//! and its assistant turn sent back. Then the Anthropic defects, each in its own test.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use decima_core::{FailureClass, Role};
use decima_llm::secrets::SecretString;
use decima_llm::{
    ChatMessage, ChatRequest, Completion, FinishReason, HttpProvider, LlmError, Provider,
    ProviderConfig, ReasoningBlock, Timeouts, collect, presets,
};
use decima_testkit::llm_server::{AnthropicQuirks, InputInStart, ThinkingBlock};
use decima_testkit::{LlmServer, Reply, ScriptedToolCall, StreamFault, StreamOptions, Turn};
use serde_json::{Value, json};

const KEY: &str = "sk-ant-test-compat-0123456789";
const SIG_A: &str = "EqQBCkgIARABGAIiQL2UoU0b1OHYiSigA==";
const SIG_B: &str = "ErUBCkYIBxgCIkBz2Lq7aMbZ+SigB==";
const REDACTED: &str = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP";

/// The Anthropic preset, pointed at the test server.
fn preset_config(server: &LlmServer) -> ProviderConfig {
    let preset = presets::find("anthropic").unwrap();
    let mut config = ProviderConfig::new(
        preset.name.clone(),
        preset.protocol,
        server.anthropic_base_url(),
        preset.default_model.clone(),
    );
    config.context_window = preset.context_window;
    config.api_key = Some(SecretString::new(KEY));
    config.timeouts = Timeouts {
        connect: Duration::from_secs(2),
        idle: Duration::from_secs(5),
        total: Duration::from_secs(20),
    };
    config
}

fn provider(server: &LlmServer) -> Arc<dyn Provider> {
    Arc::new(HttpProvider::new(preset_config(server)).unwrap())
}

fn ask(text: &str) -> ChatRequest {
    ChatRequest {
        model: "claude-sonnet-4-5".into(),
        messages: [ChatMessage::new(Role::User, text)]
            .map(std::sync::Arc::new)
            .into(),
        ..ChatRequest::default()
    }
}

fn call(id: &str, name: &str, chunks: &[&str]) -> ScriptedToolCall {
    ScriptedToolCall {
        id: id.into(),
        name: name.into(),
        argument_chunks: chunks.iter().map(|s| s.to_string()).collect(),
    }
}

fn strings(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).collect()
}

/// Runs one turn; when it completes, sends its assistant turn back (with a result for every tool
/// call) and returns the content blocks the client echoed.
async fn run(turn: Turn) -> (Result<Completion, LlmError>, Option<Value>) {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(turn));
    server.enqueue(Reply::Stream(Turn {
        text: strings(&["ok"]),
        ..Turn::default()
    }));
    let p = provider(&server);
    let first = collect(p.stream(&ask("q"))).await;
    let Ok(done) = &first else {
        return (first, None);
    };
    let mut next = ask("q");
    next.messages.push(done.to_message().into());
    for call in &done.tool_calls {
        let mut result = ChatMessage::new(Role::Tool, "done");
        result.tool_call_id = Some(call.id.clone());
        next.messages.push(result.into());
    }
    next.messages
        .push(ChatMessage::new(Role::User, "go on").into());
    collect(p.stream(&next)).await.unwrap();
    let body = server.requests()[1].json.clone().unwrap();
    let echoed = body["messages"][1]["content"].clone();
    (first, Some(echoed))
}

type Check = fn(&Result<Completion, LlmError>, Option<&Value>);

/// One quirk: what it is, who was seen sending it, the scripted turn, and what must come out.
struct Quirk {
    name: &'static str,
    source: &'static str,
    turn: Turn,
    check: Check,
}

fn done(result: &Result<Completion, LlmError>) -> &Completion {
    match result {
        Ok(done) => done,
        Err(e) => panic!("the turn failed: {e}"),
    }
}

fn quirks() -> Vec<Quirk> {
    vec![
        Quirk {
            name: "ping events between every event",
            source: "Anthropic streaming docs: a stream may contain any number of ping events \
                     (docs.claude.com/en/docs/build-with-claude/streaming)",
            turn: Turn {
                text: strings(&["Hel", "lo"]),
                options: StreamOptions {
                    ping_events: true,
                    split_every: Some(7),
                    ..StreamOptions::default()
                },
                ..Turn::default()
            },
            check: |r, echo| {
                assert_eq!(done(r).text, "Hello");
                assert_eq!(done(r).finish, Some(FinishReason::Stop));
                assert_eq!(echo.unwrap(), &json!([{"type": "text", "text": "Hello"}]));
            },
        },
        Quirk {
            name: "error event mid-stream: overloaded_error",
            source: "Anthropic streaming docs, error events: during high usage an \
                     overloaded_error may arrive inside a 200 stream",
            turn: Turn {
                text: strings(&["par", "tial"]),
                fault: Some(StreamFault::ErrorEventAfter(3)),
                ..Turn::default()
            },
            check: |r, _| {
                let err = r.as_ref().unwrap_err();
                assert_eq!(err.class(), FailureClass::Transient, "{err}");
                assert!(err.to_string().contains("overloaded_error"), "{err}");
            },
        },
        Quirk {
            name: "signature_delta closes a thinking block",
            source: "Anthropic extended-thinking docs, streaming: thinking_delta pieces, then \
                     one signature_delta just before content_block_stop",
            turn: Turn {
                reasoning: strings(&["Let me ", "check."]),
                reasoning_signature: Some(SIG_A.into()),
                text: strings(&["Done."]),
                ..Turn::default()
            },
            check: |r, echo| {
                let done = done(r);
                assert_eq!(done.reasoning.as_deref(), Some("Let me check."));
                assert_eq!(done.reasoning_signature.as_deref(), Some(SIG_A));
                assert_eq!(
                    echo.unwrap()[0],
                    json!({"type": "thinking", "thinking": "Let me check.", "signature": SIG_A})
                );
            },
        },
        Quirk {
            name: "redacted_thinking between two thinking blocks",
            source: "Anthropic extended-thinking docs: redacted_thinking arrives whole (data, no \
                     deltas) and the sequence of thinking and redacted_thinking blocks must come \
                     back unmodified and in order; maximhq/bifrost#5093 lost them both ways",
            turn: Turn {
                reasoning: strings(&["First."]),
                reasoning_signature: Some(SIG_A.into()),
                text: strings(&["Answer."]),
                anthropic: AnthropicQuirks {
                    thinking_blocks: vec![
                        ThinkingBlock::Redacted {
                            data: REDACTED.into(),
                        },
                        ThinkingBlock::Thinking {
                            deltas: strings(&["Sec", "ond."]),
                            signature: SIG_B.into(),
                        },
                    ],
                    ..AnthropicQuirks::default()
                },
                ..Turn::default()
            },
            check: |r, echo| {
                let done = done(r);
                assert_eq!(done.text, "Answer.");
                assert_eq!(done.reasoning.as_deref(), Some("First.Second."));
                assert_eq!(done.reasoning_blocks.len(), 3);
                assert_eq!(
                    echo.unwrap(),
                    &json!([
                        {"type": "thinking", "thinking": "First.", "signature": SIG_A},
                        {"type": "redacted_thinking", "data": REDACTED},
                        {"type": "thinking", "thinking": "Second.", "signature": SIG_B},
                        {"type": "text", "text": "Answer."},
                    ])
                );
            },
        },
        Quirk {
            name: "a thinking block whose text is not returned, only its signature",
            source: "Anthropic thinking docs: thinking is billed even when its text is not \
                     returned; the signed block still goes back as received",
            turn: Turn {
                text: strings(&["42"]),
                anthropic: AnthropicQuirks {
                    thinking_blocks: vec![ThinkingBlock::Thinking {
                        deltas: Vec::new(),
                        signature: SIG_B.into(),
                    }],
                    ..AnthropicQuirks::default()
                },
                ..Turn::default()
            },
            check: |r, echo| {
                assert_eq!(done(r).text, "42");
                assert_eq!(
                    echo.unwrap()[0],
                    json!({"type": "thinking", "thinking": "", "signature": SIG_B})
                );
            },
        },
        Quirk {
            name: "tool input in several input_json_delta pieces, the first one empty",
            source: "Anthropic streaming docs (tool use example); the stream captured in \
                     quarkiverse/quarkus-langchain4j#1778",
            turn: Turn {
                tool_calls: vec![call(
                    "toolu_01",
                    "read_file",
                    &["{\"path\":", " \"/data/a.csv\", \"rows\"", ": 10}"],
                )],
                anthropic: AnthropicQuirks {
                    empty_first_input_delta: true,
                    ..AnthropicQuirks::default()
                },
                ..Turn::default()
            },
            check: |r, echo| {
                let done = done(r);
                assert_eq!(
                    done.tool_calls[0].arguments,
                    "{\"path\": \"/data/a.csv\", \"rows\": 10}"
                );
                assert_eq!(done.finish, Some(FinishReason::ToolCalls));
                assert_eq!(
                    echo.unwrap()[0]["input"],
                    json!({"path": "/data/a.csv", "rows": 10})
                );
            },
        },
        Quirk {
            name: "a tool without arguments: one empty input_json_delta only",
            source: "quarkiverse/quarkus-langchain4j#1778 (searchCalendars with \
                     \"partial_json\":\"\" as its only delta)",
            turn: Turn {
                tool_calls: vec![call("toolu_02", "list_tables", &[])],
                anthropic: AnthropicQuirks {
                    empty_first_input_delta: true,
                    ..AnthropicQuirks::default()
                },
                ..Turn::default()
            },
            check: |r, echo| {
                assert_eq!(done(r).tool_calls[0].arguments, "{}");
                assert_eq!(echo.unwrap()[0]["input"], json!({}));
            },
        },
        Quirk {
            name: "tool input split where the text so far is {…}-shaped",
            source: "Decima's own defect: code arguments hold `{}`, and a split after it \
                     wiped everything streamed before",
            turn: Turn {
                tool_calls: vec![call(
                    "toolu_03",
                    "python",
                    &[
                        "{\"code\": \"d = {}",
                        "\\nprint(d)\", \"x\": {}",
                        ", \"y\": 1}",
                    ],
                )],
                anthropic: AnthropicQuirks {
                    empty_first_input_delta: true,
                    ..AnthropicQuirks::default()
                },
                ..Turn::default()
            },
            check: |r, _| {
                assert_eq!(
                    done(r).tool_calls[0].arguments,
                    "{\"code\": \"d = {}\\nprint(d)\", \"x\": {}, \"y\": 1}"
                );
            },
        },
        Quirk {
            name: "the whole tool input in content_block_start, no deltas",
            source: "proxies that synthesise Anthropic streams from complete calls: \
                     inflaborg/ccrelay#119, farion1231/cc-switch#2557",
            turn: Turn {
                tool_calls: vec![call("toolu_04", "shell", &["{\"cmd\": \"ls {}\"}"])],
                anthropic: AnthropicQuirks {
                    input_in_start: InputInStart::Only,
                    ..AnthropicQuirks::default()
                },
                ..Turn::default()
            },
            check: |r, _| {
                let args: Value = serde_json::from_str(&done(r).tool_calls[0].arguments).unwrap();
                assert_eq!(args, json!({"cmd": "ls {}"}));
            },
        },
        Quirk {
            name: "the whole tool input in content_block_start, then an empty delta",
            source: "such a proxy forwarding the API's empty first input_json_delta \
                     (quarkiverse/quarkus-langchain4j#1778)",
            turn: Turn {
                tool_calls: vec![call("toolu_05", "shell", &["{\"cmd\": \"wc -l\"}"])],
                anthropic: AnthropicQuirks {
                    input_in_start: InputInStart::WithEmptyDelta,
                    ..AnthropicQuirks::default()
                },
                ..Turn::default()
            },
            check: |r, _| {
                let args: Value = serde_json::from_str(&done(r).tool_calls[0].arguments).unwrap();
                assert_eq!(args, json!({"cmd": "wc -l"}));
            },
        },
        Quirk {
            name: "a tool_use block still open at message_stop after max_tokens",
            source: "charmbracelet/fantasy#364: the API ends a message cut by max_tokens \
                     without the tool block's content_block_stop",
            turn: Turn {
                text: strings(&["Writing the file."]),
                tool_calls: vec![call(
                    "toolu_06",
                    "write_file",
                    &["{\"path\": \"out.csv\", \"content\": \"a,b\\n1,"],
                )],
                finish: Some("max_tokens".into()),
                anthropic: AnthropicQuirks {
                    leave_last_tool_use_open: true,
                    ..AnthropicQuirks::default()
                },
                ..Turn::default()
            },
            check: |r, echo| {
                // Reported as cut off with its raw text, never repaired into a call that runs.
                let done = done(r);
                assert_eq!(done.finish, Some(FinishReason::Length));
                assert!(done.tool_calls.is_empty(), "{done:?}");
                assert_eq!(done.cut_off_tool_calls.len(), 1, "{done:?}");
                let cut = &done.cut_off_tool_calls[0];
                assert_eq!(
                    (cut.id.as_str(), cut.name.as_str()),
                    ("toolu_06", "write_file")
                );
                assert_eq!(
                    cut.arguments,
                    "{\"path\": \"out.csv\", \"content\": \"a,b\\n1,"
                );
                assert_eq!(
                    echo.unwrap(),
                    &json!([{"type": "text", "text": "Writing the file."}])
                );
            },
        },
        Quirk {
            name: "a complete tool_use block never closed before message_stop",
            source: "proxies that drop content_block_stop (charmbracelet/fantasy#364 closes \
                     every block still open at the end)",
            turn: Turn {
                tool_calls: vec![
                    call("toolu_07", "shell", &["{\"cmd\": \"ls\"}"]),
                    call("toolu_08", "shell", &["{\"cmd\":", " \"pwd\"}"]),
                ],
                anthropic: AnthropicQuirks {
                    leave_last_tool_use_open: true,
                    ..AnthropicQuirks::default()
                },
                ..Turn::default()
            },
            check: |r, echo| {
                let done = done(r);
                let ids: Vec<&str> = done.tool_calls.iter().map(|c| c.id.as_str()).collect();
                assert_eq!(ids, ["toolu_07", "toolu_08"]);
                assert_eq!(done.tool_calls[1].arguments, "{\"cmd\": \"pwd\"}");
                assert_eq!(echo.unwrap()[1]["input"], json!({"cmd": "pwd"}));
            },
        },
        Quirk {
            name: "stop_reason model_context_window_exceeded",
            source: "anthropic-sdk-python v0.119.0 (new stop reason); the Vercel AI SDK maps it \
                     to length",
            turn: Turn {
                text: strings(&["The table has"]),
                finish: Some("model_context_window_exceeded".into()),
                ..Turn::default()
            },
            check: |r, _| assert_eq!(done(r).finish, Some(FinishReason::Length)),
        },
        Quirk {
            name: "cumulative usage with input and cache tokens in message_delta",
            source: "Anthropic streaming docs: the usage of message_delta is cumulative",
            turn: Turn {
                text: strings(&["ok"]),
                usage: Some((1200, 30)),
                anthropic: AnthropicQuirks {
                    full_usage_in_message_delta: true,
                    ..AnthropicQuirks::default()
                },
                ..Turn::default()
            },
            check: |r, _| {
                let usage = done(r).usage.unwrap();
                assert_eq!((usage.prompt_tokens, usage.completion_tokens), (1200, 30));
            },
        },
        Quirk {
            name: "the real API's shape all at once, split across reads with pings",
            source: "AnthropicQuirks::real_api(): the sources of the rows above together",
            turn: Turn {
                reasoning: strings(&["Look ", "first."]),
                reasoning_signature: Some(SIG_A.into()),
                text: strings(&["Checking ", "both."]),
                tool_calls: vec![
                    call("toolu_a", "shell", &["{\"cmd\": \"cat {}", " | wc\"}"]),
                    call("toolu_b", "read_file", &["{\"path\":", " \"b.csv\"}"]),
                ],
                usage: Some((500, 40)),
                options: StreamOptions {
                    ping_events: true,
                    split_every: Some(5),
                    ..StreamOptions::default()
                },
                anthropic: AnthropicQuirks {
                    thinking_blocks: vec![ThinkingBlock::Redacted {
                        data: REDACTED.into(),
                    }],
                    ..AnthropicQuirks::real_api()
                },
                ..Turn::default()
            },
            check: |r, echo| {
                let done = done(r);
                assert_eq!(done.text, "Checking both.");
                assert_eq!(done.tool_calls[0].arguments, "{\"cmd\": \"cat {} | wc\"}");
                assert_eq!(done.tool_calls[1].arguments, "{\"path\": \"b.csv\"}");
                assert_eq!(done.usage.unwrap().prompt_tokens, 500);
                assert_eq!(done.finish, Some(FinishReason::ToolCalls));
                assert_eq!(
                    echo.unwrap(),
                    &json!([
                        {"type": "thinking", "thinking": "Look first.", "signature": SIG_A},
                        {"type": "redacted_thinking", "data": REDACTED},
                        {"type": "text", "text": "Checking both."},
                        {"type": "tool_use", "id": "toolu_a", "name": "shell",
                         "input": {"cmd": "cat {} | wc"}},
                        {"type": "tool_use", "id": "toolu_b", "name": "read_file",
                         "input": {"path": "b.csv"}},
                    ])
                );
            },
        },
    ]
}

#[tokio::test]
async fn the_anthropic_preset_holds_up_against_every_stream_quirk() {
    for quirk in quirks() {
        println!("quirk: {} (source: {})", quirk.name, quirk.source);
        let check = quirk.check;
        let (result, echo) = run(quirk.turn).await;
        let outcome = std::panic::AssertUnwindSafe(|| check(&result, echo.as_ref()));
        if let Err(panic) = std::panic::catch_unwind(outcome) {
            eprintln!("quirk failed: {} (source: {})", quirk.name, quirk.source);
            std::panic::resume_unwind(panic);
        }
    }
}

// ---------- The Anthropic defects, one test each ----------

/// Defect 5: the check that drops the initial `{}` ran on every delta, and wiped the arguments
/// whenever the text so far started with `{` and ended with `}`.
#[tokio::test]
async fn tool_input_split_after_a_braced_prefix_is_kept_whole() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        tool_calls: vec![call(
            "toolu_1",
            "python",
            &[
                "{\"code\": \"def f():\\n    return {}",
                "\\n\", \"args\": {}",
                "}",
            ],
        )],
        ..Turn::default()
    }));
    let done = collect(provider(&server).stream(&ask("q"))).await.unwrap();
    assert_eq!(
        done.tool_calls[0].arguments,
        "{\"code\": \"def f():\\n    return {}\\n\", \"args\": {}}"
    );
}

/// Defect 10, first half: a `tool_use` block still open at `message_stop` was dropped.
#[tokio::test]
async fn a_tool_use_block_open_at_message_stop_is_emitted() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        tool_calls: vec![call("toolu_9", "shell", &["{\"cmd\": ", "\"ls -la\"}"])],
        anthropic: AnthropicQuirks {
            leave_last_tool_use_open: true,
            ..AnthropicQuirks::default()
        },
        ..Turn::default()
    }));
    let done = collect(provider(&server).stream(&ask("q"))).await.unwrap();
    assert_eq!(done.finish, Some(FinishReason::ToolCalls));
    assert_eq!(done.tool_calls.len(), 1, "{done:?}");
    assert_eq!(done.tool_calls[0].id, "toolu_9");
    assert_eq!(done.tool_calls[0].arguments, "{\"cmd\": \"ls -la\"}");
}

/// Defect 10, second half: `redacted_thinking` blocks were dropped and never sent back.
#[tokio::test]
async fn redacted_thinking_is_kept_and_sent_back_unchanged_in_order() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        tool_calls: vec![call("toolu_r", "shell", &["{\"cmd\": \"ls\"}"])],
        anthropic: AnthropicQuirks {
            thinking_blocks: vec![
                ThinkingBlock::Redacted {
                    data: REDACTED.into(),
                },
                ThinkingBlock::Thinking {
                    deltas: strings(&["I will ", "list."]),
                    signature: SIG_A.into(),
                },
            ],
            ..AnthropicQuirks::default()
        },
        ..Turn::default()
    }));
    server.enqueue(Reply::Stream(Turn {
        text: strings(&["Two files."]),
        ..Turn::default()
    }));
    let p = provider(&server);
    let mut request = ask("what is here?");
    request.thinking_budget = Some(2048);
    let first = collect(p.stream(&request)).await.unwrap();
    assert_eq!(
        first.reasoning_blocks,
        vec![
            ReasoningBlock::RedactedThinking {
                data: REDACTED.into()
            },
            ReasoningBlock::Thinking {
                thinking: "I will list.".into(),
                signature: SIG_A.into()
            },
        ]
    );

    // The answer as the loop stores it: a valid draft that keeps everything the API needs.
    let reloaded = first.to_message();
    reloaded.validate().unwrap();
    let mut next = request.clone();
    next.messages.push(reloaded.into());
    let mut result = ChatMessage::new(Role::Tool, "a.csv b.csv");
    result.tool_call_id = Some("toolu_r".into());
    next.messages.push(result.into());
    collect(p.stream(&next)).await.unwrap();
    let body = server.requests()[1].json.clone().unwrap();
    assert_eq!(
        body["messages"][1]["content"],
        json!([
            {"type": "redacted_thinking", "data": REDACTED},
            {"type": "thinking", "thinking": "I will list.", "signature": SIG_A},
            {"type": "tool_use", "id": "toolu_r", "name": "shell", "input": {"cmd": "ls"}},
        ])
    );
}
