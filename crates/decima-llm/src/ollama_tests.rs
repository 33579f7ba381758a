use super::*;
use crate::{JsonSchemaFormat, Protocol, ToolSpec};
use decima_core::{FailureClass, ImagePart, ToolCall};

fn config() -> ProviderConfig {
    let mut config = ProviderConfig::new(
        "ollama",
        Protocol::Ollama,
        "http://localhost:11434/v1",
        "qwen3:8b",
    );
    config.num_ctx = Some(32_768);
    config
}

/// A system prompt, a question, a call with its result (which carries an image) and the
/// answer's reasoning: every kind of message Decima sends.
fn conversation() -> ChatRequest {
    let mut answer = ChatMessage::new(Role::Assistant, "");
    answer.reasoning = Some("The user wants the weather.".into());
    answer.tool_calls = vec![ToolCall {
        id: "call_k3b9x0qa".into(),
        name: "get_weather".into(),
        arguments: r#"{"city": "Toronto", "units": {"temp": "C"}}"#.into(),
        signature: None,
    }];
    let mut result = ChatMessage::new(Role::Tool, "11 degrees celsius");
    result.tool_call_id = Some("call_k3b9x0qa".into());
    result.images = vec![ImagePart {
        media_type: "image/png".into(),
        data: "iVBORw0KGgo=".into(),
        tokens: 0,
    }];
    ChatRequest {
        model: "qwen3:8b".into(),
        messages: [
            ChatMessage::new(Role::System, "You are terse."),
            ChatMessage::new(Role::User, "what is the weather in Toronto?"),
            answer,
            result,
        ]
        .map(std::sync::Arc::new)
        .into(),
        tools: vec![ToolSpec {
            name: "get_weather".into(),
            description: "Get the weather in a given city".into(),
            parameters: json!({
                "type": "object",
                "properties": { "city": { "type": "string" } },
                "required": ["city"]
            }),
        }],
        max_tokens: Some(2048),
        temperature: Some(0.5),
        response_format: Some(JsonSchemaFormat {
            name: "weather".into(),
            schema: json!({ "type": "object", "properties": { "temp": { "type": "integer" } } }),
            strict: true,
        }),
        ..ChatRequest::default()
    }
}

#[test]
fn the_body_is_ollamas_native_chat_request() {
    let body = request_body(&config(), &conversation());
    assert_eq!(
        body,
        json!({
            "model": "qwen3:8b",
            "messages": [
                { "role": "system", "content": "You are terse." },
                { "role": "user", "content": "what is the weather in Toronto?" },
                {
                    "role": "assistant",
                    "content": "",
                    "thinking": "The user wants the weather.",
                    "tool_calls": [{
                        "id": "call_k3b9x0qa",
                        "function": {
                            "name": "get_weather",
                            "arguments": { "city": "Toronto", "units": { "temp": "C" } }
                        }
                    }]
                },
                {
                    "role": "tool",
                    "content": "11 degrees celsius",
                    "images": ["iVBORw0KGgo="],
                    "tool_name": "get_weather",
                    "tool_call_id": "call_k3b9x0qa"
                }
            ],
            "tools": [{
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Get the weather in a given city",
                    "parameters": {
                        "type": "object",
                        "properties": { "city": { "type": "string" } },
                        "required": ["city"]
                    }
                }
            }],
            "stream": true,
            "format": { "type": "object", "properties": { "temp": { "type": "integer" } } },
            "options": { "num_ctx": 32768, "num_predict": 2048, "temperature": 0.5 }
        })
    );
    assert!(body.get("think").is_none(), "each model keeps its default");
}

#[test]
fn options_carry_only_what_is_set() {
    let mut request = conversation();
    request.max_tokens = None;
    request.temperature = None;
    let body = request_body(&config(), &request);
    assert_eq!(body["options"], json!({ "num_ctx": 32768 }));
    let mut unset = config();
    unset.num_ctx = None;
    assert!(request_body(&unset, &request).get("options").is_none());
    request.max_tokens = Some(100);
    assert_eq!(
        request_body(&unset, &request)["options"],
        json!({ "num_predict": 100 })
    );
}

#[test]
fn no_tool_choice_sends_no_tools_and_bad_arguments_go_as_an_empty_object() {
    let mut request = conversation();
    request.tool_choice = Some(ToolChoice::None);
    let mut answer = (*request.messages[2]).clone();
    answer.tool_calls[0].arguments = "[1, 2]".into();
    request.messages[2] = std::sync::Arc::new(answer);
    let body = request_body(&config(), &request);
    assert!(body.get("tools").is_none());
    assert_eq!(
        body["messages"][2]["tool_calls"][0]["function"]["arguments"],
        json!({})
    );
}

#[test]
fn the_endpoint_is_under_the_root_with_or_without_v1() {
    for (base, url) in [
        (
            "http://localhost:11434/v1",
            "http://localhost:11434/api/chat",
        ),
        (
            "http://localhost:11434/v1/",
            "http://localhost:11434/api/chat",
        ),
        ("http://localhost:11434", "http://localhost:11434/api/chat"),
        ("http://localhost:11434/", "http://localhost:11434/api/chat"),
        (
            "https://gpu.example/ollama/v1",
            "https://gpu.example/ollama/api/chat",
        ),
    ] {
        assert_eq!(chat_url(base), url, "{base}");
    }
}

/// Decodes lines in order, then the end of the stream.
fn decode(lines: &[&str]) -> Result<Vec<StreamEvent>, LlmError> {
    let mut decoder = Decoder::default();
    let mut events = Vec::new();
    for line in lines {
        let decoded = decoder.decode("ollama", line)?;
        events.extend(decoded.events);
        if decoded.done {
            return Ok(events);
        }
    }
    events.extend(decoder.finish("ollama")?);
    Ok(events)
}

#[test]
fn a_streamed_answer_from_the_api_docs() {
    // docs/api.md, "Chat request (Streaming)", each object on its one line.
    let events = decode(&[
        r#"{"model":"llama3.2","created_at":"2023-08-04T08:52:19.385406455-07:00","message":{"role":"assistant","content":"The","images":null},"done":false}"#,
        r#"{"model":"llama3.2","created_at":"2023-08-04T19:22:45.499127Z","message":{"role":"assistant","content":""},"done":true,"total_duration":4883583458,"load_duration":1334875,"prompt_eval_count":26,"prompt_eval_duration":342546000,"eval_count":282,"eval_duration":4535599000}"#,
    ])
    .unwrap();
    assert_eq!(
        events,
        [
            StreamEvent::TextDelta("The".into()),
            StreamEvent::Finish(FinishReason::Stop),
            StreamEvent::Usage(Usage {
                prompt_tokens: 26,
                completion_tokens: 282,
                cache_read_tokens: 0,
                cache_write_tokens: 0,
            }),
        ]
    );
}

#[test]
fn a_tool_call_from_the_api_docs_gets_an_id_and_finishes_on_tool_calls() {
    // docs/api.md, "Chat request (Streaming with tools)": no id (before 0.12.10), arguments an
    // object, and Ollama's "stop" on the done line.
    let lines = [
        r#"{"model":"llama3.2","created_at":"2025-07-07T20:22:19.184789Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Tokyo"}}}]},"done":false}"#,
        r#"{"model":"llama3.2","created_at":"2025-07-07T20:22:19.19314Z","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"total_duration":182242375,"load_duration":41295167,"prompt_eval_count":169,"prompt_eval_duration":24573166,"eval_count":15,"eval_duration":115959084}"#,
    ];
    let events = decode(&lines).unwrap();
    let StreamEvent::ToolCall(call) = &events[0] else {
        panic!("{events:?}")
    };
    assert_eq!(call.name, "get_weather");
    assert_eq!(call.arguments, r#"{"city":"Tokyo"}"#);
    assert!(call.id.starts_with("call_0_"), "{}", call.id);
    assert_eq!(
        decode(&lines).unwrap(),
        events,
        "the same bytes, the same id"
    );
    assert_eq!(events[1], StreamEvent::Finish(FinishReason::ToolCalls));
    assert_eq!(
        events[2],
        StreamEvent::Usage(Usage {
            prompt_tokens: 169,
            completion_tokens: 15,
            ..Usage::default()
        })
    );
}

#[test]
fn newer_servers_send_the_calls_id_and_index_which_is_kept() {
    // api/types.go order: ToolCall{id, function{index, name, arguments}}; two calls at once.
    let events = decode(&[
        r#"{"model":"qwen3:8b","created_at":"2025-11-05T10:00:00.1Z","message":{"role":"assistant","content":"","tool_calls":[{"id":"call_k3b9x0qa","function":{"index":0,"name":"get_weather","arguments":{"city":"Tokyo"}}},{"id":"call_p0a1b2c3","function":{"index":1,"name":"get_time","arguments":{}}}]},"done":false}"#,
        r#"{"model":"qwen3:8b","created_at":"2025-11-05T10:00:00.2Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":1,"load_duration":1,"prompt_eval_count":20,"prompt_eval_duration":1,"eval_count":9,"eval_duration":1}"#,
    ])
    .unwrap();
    let calls: Vec<(&str, &str, &str)> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCall(c) => {
                Some((c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("call_k3b9x0qa", "get_weather", r#"{"city":"Tokyo"}"#),
            ("call_p0a1b2c3", "get_time", "{}")
        ]
    );
}

#[test]
fn thinking_is_reasoning_and_comes_before_the_text() {
    let events = decode(&[
        r#"{"model":"qwen3","created_at":"2025-06-01T10:00:00.1Z","message":{"role":"assistant","content":"","thinking":"Count the r's"},"done":false}"#,
        r#"{"model":"qwen3","created_at":"2025-06-01T10:00:00.2Z","message":{"role":"assistant","content":"Three.","thinking":" - done"},"done":false}"#,
        r#"{"model":"qwen3","created_at":"2025-06-01T10:00:00.3Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}"#,
    ])
    .unwrap();
    assert_eq!(
        events,
        [
            StreamEvent::ReasoningDelta("Count the r's".into()),
            StreamEvent::ReasoningDelta(" - done".into()),
            StreamEvent::TextDelta("Three.".into()),
            StreamEvent::Finish(FinishReason::Stop),
        ],
        "no counts, no usage"
    );
}

#[test]
fn an_answer_cut_by_num_predict_finishes_on_length_and_its_calls_are_cut_off() {
    let events = decode(&[
        r#"{"model":"m","created_at":"2025-06-01T10:00:00.1Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"index":0,"name":"write","arguments":{"path":"a"}}}]},"done":false}"#,
        r#"{"model":"m","created_at":"2025-06-01T10:00:00.2Z","message":{"role":"assistant","content":"and then"},"done":false}"#,
        r#"{"model":"m","created_at":"2025-06-01T10:00:00.3Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"length","total_duration":5,"load_duration":1,"prompt_eval_count":12,"prompt_eval_duration":2,"eval_count":64,"eval_duration":3}"#,
    ])
    .unwrap();
    assert!(
        matches!(&events[1], StreamEvent::ToolCallCutOff(c) if c.name == "write" && c.arguments == r#"{"path":"a"}"#),
        "{events:?}"
    );
    assert!(!events.iter().any(|e| matches!(e, StreamEvent::ToolCall(_))));
    assert!(events.contains(&StreamEvent::Finish(FinishReason::Length)));
    // Other reasons ("load", "unload") pass through as they are.
    let load = decode(&[
        r#"{"model":"m","created_at":"2025-06-01T10:00:00Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"load"}"#,
    ])
    .unwrap();
    assert_eq!(
        load,
        [StreamEvent::Finish(FinishReason::Other("load".into()))]
    );
}

#[test]
fn an_error_line_is_a_classified_stream_error() {
    // docs/api/errors.mdx: a mid-stream error.
    let err = decode(&[
        r#"{"model":"m","created_at":"2025-06-01T10:00:00.1Z","message":{"role":"assistant","content":"can"},"done":false}"#,
        r#"{"error":"an error was encountered while running the model"}"#,
    ])
    .unwrap_err();
    assert!(
        matches!(&err, LlmError::StreamError { message, .. } if message == "an error was encountered while running the model"),
        "{err:?}"
    );
    assert_eq!(err.class(), FailureClass::Transient);
    let overflow = decode(&[
        r#"{"error":"the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length"}"#,
    ])
    .unwrap_err();
    assert_eq!(
        overflow.class(),
        FailureClass::ContextOverflow,
        "{overflow}"
    );
    let bad = decode(&[r#"{"error":"invalid format","status":400}"#]).unwrap_err();
    assert_eq!(bad.class(), FailureClass::Data, "{bad}");
}

#[test]
fn malformed_lines_and_a_missing_done_are_errors() {
    let err = decode(&[r#"{"model":"m","message":{"role":"assistant","content":"x""#]).unwrap_err();
    assert!(
        matches!(&err, LlmError::Protocol { detail, .. } if detail.contains("not valid JSON")),
        "{err:?}"
    );
    let err = decode(&["[1,2]"]).unwrap_err();
    assert!(matches!(err, LlmError::Protocol { .. }), "{err:?}");
    let err = decode(&[
        r#"{"model":"m","created_at":"2025-06-01T10:00:00.1Z","message":{"role":"assistant","content":"half"},"done":false}"#,
    ])
    .unwrap_err();
    assert!(
        matches!(&err, LlmError::Stream { detail, .. } if detail.contains("ended before the model finished")),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_replayed_body_split_anywhere_decodes_the_same() {
    let body = concat!(
        r#"{"model":"m","created_at":"2025-06-01T10:00:00.1Z","message":{"role":"assistant","content":"Grüße"},"done":false}"#,
        "\n\n",
        r#"{"model":"m","created_at":"2025-06-01T10:00:00.2Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","eval_count":3}"#,
    )
    .as_bytes();
    let config = ProviderConfig::new("ollama", Protocol::Ollama, "http://127.0.0.1", "m");
    for at in 0..=body.len() {
        let chunks = vec![
            bytes::Bytes::copy_from_slice(&body[..at]),
            bytes::Bytes::copy_from_slice(&body[at..]),
        ];
        let completion = crate::collect(crate::replay(config.clone(), chunks))
            .await
            .unwrap();
        assert_eq!(completion.text, "Grüße", "split at {at}");
        assert_eq!(completion.finish, Some(FinishReason::Stop));
        assert_eq!(completion.usage.map(|u| u.completion_tokens), Some(3));
    }
}
