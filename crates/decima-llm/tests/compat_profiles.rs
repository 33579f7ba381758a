//! The OpenAI-compatible client against more of the servers' behaviour: calls cut off by the
//! output limit, reasoning in both fields, keep-alive comments, usage without choices, failures
//! inside a stream, then every OpenAI-compatible preset against its server's profile, with and
//! without streaming, Gemini's thought signatures, and the cache figures of every usage shape.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::compat::*;
use decima_core::{FailureClass, Role};
use decima_llm::{
    ChatMessage, Completion, CutOffToolCall, FinishReason, LlmError, Protocol, StreamEvent, Usage,
    collect, presets,
};
use decima_testkit::llm_server::{
    AnthropicQuirks, OpenAiQuirks, Profile, ReasoningField as ScriptReasoning, gemini,
};
use decima_testkit::{LlmServer, Reply, ScriptedToolCall, StreamOptions, Turn};
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// Defect 7. Arguments cut off by the output limit are not a call to run: "repairing" them would
/// write a truncated file. The answer reports the call as cut off, its text as received, in both
/// protocols (Anthropic's `max_tokens` stop leaves the `tool_use` block open).
#[tokio::test]
async fn calls_cut_off_by_the_output_limit_are_reported_not_repaired() {
    let cut = r#"{"path":"a.py","content":"def f():\n    ret"#;
    for (protocol, finish) in [
        (Protocol::OpenAi, "length"),
        (Protocol::Anthropic, "max_tokens"),
    ] {
        let server = LlmServer::start().await;
        server.enqueue(Reply::Stream(Turn {
            text: vec!["Writing.".into()],
            tool_calls: vec![ScriptedToolCall {
                id: "call_w".into(),
                name: "write_file".into(),
                argument_chunks: vec![cut.into()],
            }],
            finish: Some(finish.into()),
            ..Turn::default()
        }));
        let events: Vec<StreamEvent> = provider(config(&server, protocol))
            .stream(&request())
            .map(Result::unwrap)
            .collect()
            .await;
        let cut_off = CutOffToolCall {
            id: "call_w".into(),
            name: "write_file".into(),
            arguments: cut.into(),
        };
        assert!(
            events.contains(&StreamEvent::ToolCallCutOff(cut_off.clone())),
            "{protocol:?}: {events:?}"
        );
        assert!(
            !events.iter().any(|e| matches!(e, StreamEvent::ToolCall(_))),
            "{protocol:?}: {events:?}"
        );
        let mut done = Completion::default();
        for event in events {
            done.apply(event);
        }
        assert_eq!(done.finish, Some(FinishReason::Length), "{protocol:?}");
        assert!(done.is_cut_off());
        assert!(done.tool_calls.is_empty(), "{protocol:?}: {done:?}");
        assert_eq!(done.cut_off_tool_calls, vec![cut_off], "{protocol:?}");
        assert_eq!(done.text, "Writing.");
        assert!(done.to_message().tool_calls.is_empty());
    }
}

/// Defect 7, whatever the order: a call that arrived whole before the answer ended on the output
/// limit is not run either.
#[test]
fn a_length_finish_moves_earlier_calls_out_of_the_calls_to_run() {
    let mut done = Completion::default();
    done.apply(StreamEvent::ToolCall(expected_calls()[0].clone()));
    done.apply(StreamEvent::Finish(FinishReason::Length));
    done.apply(StreamEvent::ToolCall(expected_calls()[1].clone()));
    assert!(done.tool_calls.is_empty());
    assert_eq!(
        done.cut_off_tool_calls
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        ["shell", "read_file"]
    );
}

/// Defect 8. vLLM sends `reasoning` and `reasoning_content` in the same delta
/// (vllm-project/vllm#34030): the reasoning is kept, and echoed back, once.
#[tokio::test]
async fn reasoning_in_both_fields_is_taken_once() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        reasoning: vec!["Think ".into(), "hard.".into()],
        reasoning_field: ScriptReasoning::Both,
        text: vec!["42".into()],
        ..Turn::default()
    }));
    server.enqueue(Reply::Stream(Turn {
        text: vec!["ok".into()],
        ..Turn::default()
    }));
    let mut cfg = config(&server, Protocol::OpenAi);
    cfg.reasoning_echo = true;
    let p = provider(cfg);
    let first = collect(p.stream(&request())).await.unwrap();
    assert_eq!(first.reasoning.as_deref(), Some("Think hard."));
    let mut next = request();
    next.messages.push(first.to_message().into());
    next.messages
        .push(ChatMessage::new(Role::User, "why?").into());
    collect(p.stream(&next)).await.unwrap();
    let body = server.requests()[1].json.clone().unwrap();
    assert_eq!(body["messages"][2]["reasoning_content"], "Think hard.");
}

/// Defect 9. OpenRouter keeps slow streams open with `: OPENROUTER PROCESSING` comments
/// (openrouter.ai/docs/api-reference/streaming), DeepSeek with `: keep-alive`
/// (api-docs.deepseek.com/quick_start/rate_limit): a comment proves the connection alive, so it
/// resets the idle timer. Events come every 800 ms, comments half-way, the idle timeout is 600 ms.
#[tokio::test]
async fn keepalive_comments_reset_the_idle_timer() {
    for protocol in [Protocol::OpenAi, Protocol::Anthropic] {
        let server = LlmServer::start().await;
        server.enqueue(Reply::Stream(Turn {
            text: vec!["slow ".into(), "but ".into(), "alive".into()],
            options: StreamOptions {
                keepalive_comments: true,
                keepalive_text: Some("OPENROUTER PROCESSING".into()),
                event_delay: Some(Duration::from_millis(800)),
                ..StreamOptions::default()
            },
            ..Turn::default()
        }));
        let mut cfg = config(&server, protocol);
        cfg.timeouts.idle = Duration::from_millis(600);
        let done = collect(provider(cfg).stream(&request()))
            .await
            .unwrap_or_else(|e| panic!("{protocol:?}: {e}"));
        assert_eq!(done.text, "slow but alive", "{protocol:?}");
    }

    // Without comments the same pace is an idle timeout.
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        text: vec!["slow ".into(), "dead".into()],
        options: StreamOptions {
            event_delay: Some(Duration::from_millis(800)),
            ..StreamOptions::default()
        },
        ..Turn::default()
    }));
    let mut cfg = config(&server, Protocol::OpenAi);
    cfg.timeouts.idle = Duration::from_millis(600);
    let err = collect(provider(cfg).stream(&request())).await.unwrap_err();
    assert!(matches!(err, LlmError::IdleTimeout { .. }), "{err}");
}

/// OpenAI's `include_usage`, vLLM and LiteLLM end with a `"choices": []` usage chunk; some servers
/// never send `data: [DONE]`. Both still make a whole answer.
#[tokio::test]
async fn a_usage_chunk_with_empty_choices_and_no_done() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        options: StreamOptions {
            omit_done: true,
            ..StreamOptions::default()
        },
        ..tool_turn(OpenAiQuirks::default())
    }));
    let events: Vec<StreamEvent> = provider(config(&server, Protocol::OpenAi))
        .stream(&request())
        .map(Result::unwrap)
        .collect()
        .await;
    let mut done = Completion::default();
    for event in events {
        done.apply(event);
    }
    assert_eq!(done.tool_calls, expected_calls());
    assert_eq!(done.finish, Some(FinishReason::ToolCalls));
    assert_eq!(
        done.usage,
        Some(Usage {
            prompt_tokens: 30,
            completion_tokens: 12,
            ..Usage::default()
        })
    );
}

/// Errors and failure reasons inside a 200 stream, each as a real server sends it, classified
/// so that server failures are retried and refusals are not.
#[tokio::test]
async fn failures_inside_a_stream_are_classified() {
    let text = r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Par"},"finish_reason":null}]}"#;
    let cases = [
        (
            // OpenRouter, once a model has started: an error object and finish_reason "error"
            // (openrouter.ai/docs/api-reference/streaming, "Handling Errors During Streaming").
            r#"data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","provider":"openai","error":{"code":"server_error","message":"Provider disconnected unexpectedly"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}"#,
            FailureClass::Transient,
        ),
        (
            // The same finish reason without the error object.
            r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"error"}]}"#,
            FailureClass::Transient,
        ),
        (
            // DeepSeek interrupts an answer it has no resources for
            // (api-docs.deepseek.com/api/create-chat-completion, finish_reason).
            r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"insufficient_system_resource"}]}"#,
            FailureClass::Transient,
        ),
        (
            // vLLM's error shape (block/goose#8031).
            r#"data: {"object":"error","message":"This model's maximum context length is 4096 tokens.","type":"BadRequestError","param":null,"code":400}"#,
            FailureClass::ContextOverflow,
        ),
        (
            r#"data: {"error":{"object":"error","message":"Engine loop died","type":"InternalServerError","param":null,"code":500}}"#,
            FailureClass::Transient,
        ),
        (
            // LM Studio: an error object with only a message (zendev-sh/goai#110).
            r#"data: {"error":{"message":"Compute error."},"message":"Compute error."}"#,
            FailureClass::Data,
        ),
    ];
    for (line, class) in cases {
        let server = LlmServer::start().await;
        server.enqueue(Reply::RawSse {
            chunks: vec![(Duration::ZERO, format!("{text}\n\n{line}\n\n").into_bytes())],
        });
        let err = collect(provider(config(&server, Protocol::OpenAi)).stream(&request()))
            .await
            .unwrap_err();
        assert!(matches!(err, LlmError::StreamError { .. }), "{line}: {err}");
        assert_eq!(err.class(), class, "{line}: {err}");
    }

    // Zhipu stops a stream its moderation flags with "sensitive"
    // (docs.bigmodel.cn/cn/guide/platform/securityaudit): a content filter, not an error.
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        text: vec!["Par".into()],
        finish: Some("sensitive".into()),
        ..Turn::default()
    }));
    let done = collect(provider(config(&server, Protocol::OpenAi)).stream(&request()))
        .await
        .unwrap();
    assert_eq!(done.finish, Some(FinishReason::ContentFilter));
}

#[tokio::test]
async fn every_openai_compatible_preset_against_its_server() {
    let mut seen = Vec::new();
    for preset in presets::all()
        .iter()
        .filter(|p| p.protocol == Protocol::OpenAi)
    {
        let profile = profile_of(&preset.name).unwrap_or_else(|| {
            panic!(
                "preset {} has no server profile in tests/compat.rs",
                preset.name
            )
        });
        let server = LlmServer::start().await;
        check_against(
            &preset.name,
            &server,
            preset_config(&server, preset),
            profile,
        )
        .await;
        seen.push(profile);
    }
    for profile in CUSTOM_SERVERS {
        let server = LlmServer::start().await;
        let mut cfg = config(&server, Protocol::OpenAi);
        if profile == Profile::GeminiOpenAi {
            cfg.model = "gemini-3-pro-preview".into();
        }
        check_against(profile.name(), &server, cfg, profile).await;
        seen.push(profile);
    }
    for profile in Profile::ALL {
        assert!(
            seen.contains(&profile),
            "{} is never tested",
            profile.name()
        );
    }
}

/// The same turn as a whole `chat.completion` from a server that does not stream, for every
/// server's reasoning field.
#[tokio::test]
async fn every_server_answering_without_streaming() {
    for profile in Profile::ALL {
        let server = LlmServer::start().await;
        let mut turn = profile.apply(Turn {
            reasoning: vec!["Look first.".into()],
            ..tool_turn(OpenAiQuirks::default())
        });
        turn.openai = OpenAiQuirks {
            json_body: true,
            ..OpenAiQuirks::default()
        };
        server.enqueue(Reply::Stream(turn));
        let done = collect(provider(config(&server, Protocol::OpenAi)).stream(&request()))
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", profile.name()));
        assert_eq!(done.text, "Let me look.", "{}", profile.name());
        assert_eq!(
            done.reasoning.as_deref(),
            Some("Look first."),
            "{}",
            profile.name()
        );
        assert_eq!(done.tool_calls, expected_calls(), "{}", profile.name());
        assert_eq!(
            done.finish,
            Some(FinishReason::ToolCalls),
            "{}",
            profile.name()
        );
    }
}

#[tokio::test]
async fn gemini_takes_unsigned_calls_with_googles_stand_in_and_other_servers_see_nothing() {
    let server = LlmServer::start().await;
    server.refuse_with(gemini::refuses_unsigned_calls);
    server.enqueue(Reply::Stream(Profile::GeminiOpenAi.apply(Turn {
        text: vec!["Still two.".into()],
        ..Turn::default()
    })));
    let mut cfg = config(&server, Protocol::OpenAi);
    cfg.model = "gemini-3-flash-preview".into();
    let done = collect(provider(cfg).stream(&unsigned_history("gemini-3-flash-preview")))
        .await
        .unwrap();
    assert_eq!(done.text, "Still two.");
    let body = server.requests()[0].json.clone().unwrap();
    let signature_of = |message: usize, call: usize| {
        body["messages"][message]["tool_calls"][call]["extra_content"].clone()
    };
    // messages: 0 system, 1 user, 2 old step, 3-4 results, 5 answer, 6 user, 7 new step.
    assert_eq!(
        signature_of(7, 0),
        json!({ "google": { "thought_signature": "skip_thought_signature_validator" } }),
        "the current turn's step gets the stand-in on its first call"
    );
    assert_eq!(
        signature_of(7, 1),
        Value::Null,
        "only the first call is signed"
    );
    assert_eq!(
        signature_of(2, 0),
        Value::Null,
        "earlier turns go as they are"
    );

    // Signed calls sent to a server that is not Gemini: the field never appears.
    let other = LlmServer::start().await;
    other.enqueue(Reply::Stream(Turn {
        text: vec!["Two.".into()],
        ..Turn::default()
    }));
    let mut history = unsigned_history("qwen3");
    let mut step = (*history.messages[7]).clone();
    step.tool_calls[0].signature = Some("c2lnbmF0dXJl0".into());
    history.messages[7] = Arc::new(step);
    let mut cfg = config(&other, Protocol::OpenAi);
    cfg.model = "qwen3".into();
    collect(provider(cfg).stream(&history)).await.unwrap();
    let sent = String::from_utf8(other.requests()[0].body.clone()).unwrap();
    assert!(!sent.contains("extra_content"), "{sent}");
}

/// Prompt-cache figures reach `Usage` from each server's own usage shape: OpenAI's
/// `prompt_tokens_details.cached_tokens` (streamed and as one JSON body), DeepSeek's
/// `prompt_cache_hit_tokens`, and Anthropic's `cache_read_input_tokens` and
/// `cache_creation_input_tokens`, whose `input_tokens` leaves both out.
#[tokio::test]
async fn prompt_cache_hits_and_writes_are_read_from_every_usage_shape() {
    let cached_turn = |openai: OpenAiQuirks| Turn {
        text: vec!["Done.".into()],
        usage: Some((2_000, 12)),
        cached: Some((1_536, 300)),
        openai,
        ..Turn::default()
    };
    let server = LlmServer::start().await;
    let expected_openai = Usage {
        prompt_tokens: 2_000,
        completion_tokens: 12,
        cache_read_tokens: 1_536,
        cache_write_tokens: 0,
    };
    for quirks in [
        Profile::OpenAi.quirks(),
        Profile::DeepSeek.quirks(),
        OpenAiQuirks {
            json_body: true,
            ..OpenAiQuirks::default()
        },
    ] {
        let shape = format!("{quirks:?}");
        server.enqueue(Reply::Stream(cached_turn(quirks)));
        let done = collect(provider(config(&server, Protocol::OpenAi)).stream(&request()))
            .await
            .unwrap();
        assert_eq!(done.usage, Some(expected_openai), "{shape}");
    }
    // The documented stream, and the real API's, which repeats the cumulative usage (cache
    // fields included) in `message_delta`.
    for anthropic in [AnthropicQuirks::default(), AnthropicQuirks::real_api()] {
        let shape = format!("{anthropic:?}");
        server.enqueue(Reply::Stream(Turn {
            anthropic,
            ..cached_turn(OpenAiQuirks::default())
        }));
        let done = collect(provider(config(&server, Protocol::Anthropic)).stream(&request()))
            .await
            .unwrap();
        assert_eq!(
            done.usage,
            Some(Usage {
                prompt_tokens: 2_000,
                completion_tokens: 12,
                cache_read_tokens: 1_536,
                cache_write_tokens: 300,
            }),
            "{shape}"
        );
    }
}
