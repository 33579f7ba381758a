use super::*;
use crate::Protocol;

#[test]
fn a_tool_results_images_follow_its_text_as_base64_image_blocks() {
    let call = decima_core::ToolCall {
        id: "toolu_1".into(),
        name: "mcp__demo__chart".into(),
        arguments: "{}".into(),
        signature: None,
    };
    let mut answer = ChatMessage::new(Role::Assistant, "");
    answer.tool_calls = vec![call];
    let mut result = ChatMessage::new(Role::Tool, "[image 1: saved as .decima/mcp/c.png]");
    result.tool_call_id = Some("toolu_1".into());
    result.images = vec![decima_core::ImagePart {
        media_type: "image/png".into(),
        data: "iVBORw0KGgo=".into(),
        tokens: 12,
    }];
    let plain = {
        let mut m = result.clone();
        m.images.clear();
        m
    };
    let request = |result: ChatMessage| ChatRequest {
        model: "claude".into(),
        messages: [
            ChatMessage::new(Role::User, "chart it"),
            answer.clone(),
            result,
        ]
        .map(std::sync::Arc::new)
        .into(),
        ..ChatRequest::default()
    };
    let config = ProviderConfig::new("a", Protocol::Anthropic, "http://x", "claude");
    let body = request_body(&config, &request(result));
    let block = &body["messages"][2]["content"][0];
    assert_eq!(block["type"], "tool_result", "{body}");
    assert_eq!(
        block["content"],
        json!([
            { "type": "text", "text": "[image 1: saved as .decima/mcp/c.png]" },
            {
                "type": "image",
                "source": { "type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo=" }
            }
        ])
    );
    // Without images the content stays the plain string it always was.
    let body = request_body(&config, &request(plain));
    assert_eq!(
        body["messages"][2]["content"][0]["content"],
        "[image 1: saved as .decima/mcp/c.png]"
    );
}

#[test]
fn an_empty_stored_answer_never_becomes_an_empty_text_block() {
    let request = ChatRequest {
        model: "claude".into(),
        messages: [
            ChatMessage::new(Role::User, "First question"),
            ChatMessage::new(Role::Assistant, ""),
            ChatMessage::new(Role::User, "Second question"),
            ChatMessage::new(Role::Assistant, "  \n"),
            ChatMessage::new(Role::User, "Third"),
        ]
        .map(std::sync::Arc::new)
        .into(),
        ..ChatRequest::default()
    };
    let config = ProviderConfig::new("a", Protocol::Anthropic, "http://x", "claude");
    let body = request_body(&config, &request);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "{body}");
    for block in messages[0]["content"].as_array().unwrap() {
        assert!(!block["text"].as_str().unwrap().trim().is_empty(), "{body}");
    }
}

#[test]
fn breakpoints_end_the_preset_the_summaries_and_the_history_and_the_tail_goes_last() {
    let mut config = ProviderConfig::new("a", Protocol::Anthropic, "http://x", "claude");
    config.cache_ttl = CacheTtl::OneHour;
    let mut result = ChatMessage::new(Role::Tool, "a.csv");
    result.tool_call_id = Some("toolu_1".into());
    let mut call = ChatMessage::new(Role::Assistant, "");
    call.tool_calls.push(decima_core::ToolCall {
        id: "toolu_1".into(),
        name: "shell".into(),
        arguments: "{}".into(),
        signature: None,
    });
    let request = ChatRequest {
        model: "claude".into(),
        messages: [
            ChatMessage::new(Role::System, "Be careful."),
            ChatMessage::new(Role::System, "[global summary of messages 1–40]\nfacts"),
            ChatMessage::new(Role::User, "List files"),
            call,
            result,
            ChatMessage::new(Role::System, "# Recent steps\n[step 2 action] shell"),
        ]
        .map(std::sync::Arc::new)
        .into(),
        cache: crate::PromptCache {
            key: Some("c1".into()),
            // One too many, and one on the tail: both are dropped.
            breakpoints: vec![0, 1, 2, 4, 5, 3],
            volatile_tail: 1,
        },
        ..ChatRequest::default()
    };
    let body = request_body(&config, &request);
    let ttl = json!({ "type": "ephemeral", "ttl": "1h" });
    // The preset and the summaries are blocks of `system`, each ending a cached prefix; the
    // tail is not in it.
    assert_eq!(
        body["system"],
        json!([
            { "type": "text", "text": "Be careful.", "cache_control": ttl },
            { "type": "text", "text": "[global summary of messages 1–40]\nfacts", "cache_control": ttl },
        ])
    );
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[0]["content"][0]["cache_control"], ttl);
    let last = messages.last().unwrap()["content"].as_array().unwrap();
    assert_eq!(last[0]["type"], "tool_result");
    assert_eq!(last[0]["cache_control"], ttl, "the history's end");
    assert_eq!(
        last[1],
        json!({ "type": "text", "text": "<system-reminder>\n# Recent steps\n[step 2 action] shell\n</system-reminder>" }),
        "the tail, after the history and never cached"
    );
    let marked = body.to_string().matches("cache_control").count();
    assert_eq!(marked, 4, "at most four breakpoints: {body}");
    assert!(body.get("prompt_cache_key").is_none(), "an OpenAI field");
    // The five-minute TTL is the API's default and is not named.
    config.cache_ttl = CacheTtl::FiveMinutes;
    let body = request_body(&config, &request);
    assert_eq!(
        body["system"][0]["cache_control"],
        json!({ "type": "ephemeral" })
    );
    // OpenAI takes the key where the provider accepts it, and never a breakpoint.
    let mut openai = ProviderConfig::new("o", Protocol::OpenAi, "http://x/v1", "gpt");
    let body = crate::openai::request_body(&openai, &request);
    assert!(body.get("prompt_cache_key").is_none());
    openai.prompt_cache_key = true;
    let body = crate::openai::request_body(&openai, &request);
    assert_eq!(body["prompt_cache_key"], "c1");
    assert!(!body.to_string().contains("cache_control"));
}

#[test]
fn system_goes_to_its_parameter_and_roles_alternate() {
    let config = ProviderConfig::new("a", Protocol::Anthropic, "http://x", "claude");
    let mut assistant = ChatMessage::new(Role::Assistant, "");
    assistant.reasoning = Some("think".into());
    assistant.reasoning_signature = Some("sig".into());
    assistant.tool_calls.push(decima_core::ToolCall {
        id: "toolu_1".into(),
        name: "shell".into(),
        arguments: "{\"cmd\":\"ls\"}".into(),
        signature: None,
    });
    let mut result = ChatMessage::new(Role::Tool, "a.csv");
    result.tool_call_id = Some("toolu_1".into());
    let request = ChatRequest {
        model: "claude".into(),
        messages: [
            ChatMessage::new(Role::System, "Be careful."),
            ChatMessage::new(Role::User, "List files"),
            assistant,
            result,
            ChatMessage::new(Role::User, "And now?"),
        ]
        .map(std::sync::Arc::new)
        .into(),
        ..ChatRequest::default()
    };
    let body = request_body(&config, &request);
    assert_eq!(body["system"], "Be careful.");
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages.len(),
        3,
        "tool result and next user turn merge: {body}"
    );
    assert_eq!(
        messages[1]["content"][0],
        json!({"type":"thinking","thinking":"think","signature":"sig"})
    );
    assert_eq!(messages[1]["content"][1]["input"], json!({"cmd":"ls"}));
    assert_eq!(messages[2]["content"][0]["type"], "tool_result");
    assert_eq!(messages[2]["content"][1]["text"], "And now?");
    assert_eq!(body["max_tokens"], DEFAULT_MAX_TOKENS);
}

#[test]
fn stored_blocks_go_back_in_order_and_unsigned_or_damaged_ones_never() {
    let config = ProviderConfig::new("a", Protocol::Anthropic, "http://x", "claude");
    let blocks = json!([
        {"type": "thinking", "thinking": "a", "signature": "s1"},
        {"type": "redacted_thinking", "data": "R"},
        {"type": "thinking", "thinking": "b", "signature": ""},
    ]);
    let mut assistant = ChatMessage::new(Role::Assistant, "Answer.");
    assistant.reasoning = Some("ab".into());
    assistant.reasoning_signature = Some(blocks.to_string());
    let mut damaged = ChatMessage::new(Role::Assistant, "Second.");
    damaged.reasoning = Some("c".into());
    damaged.reasoning_signature = Some("[{\"type\":\"thinking\"".into());
    let request = ChatRequest {
        model: "claude".into(),
        messages: [
            ChatMessage::new(Role::User, "q"),
            assistant,
            ChatMessage::new(Role::User, "q2"),
            damaged,
            ChatMessage::new(Role::User, "q3"),
        ]
        .map(std::sync::Arc::new)
        .into(),
        ..ChatRequest::default()
    };
    let body = request_body(&config, &request);
    assert_eq!(
        body["messages"][1]["content"],
        json!([
            {"type": "thinking", "thinking": "a", "signature": "s1"},
            {"type": "redacted_thinking", "data": "R"},
            {"type": "text", "text": "Answer."},
        ])
    );
    assert_eq!(
        body["messages"][3]["content"],
        json!([{"type": "text", "text": "Second."}])
    );
}

#[test]
fn a_schema_answer_is_asked_through_a_forced_tool_and_its_call_read_back_as_the_text() {
    let schema = json!({
        "type": "object",
        "properties": { "risk_level": { "type": "string", "enum": ["low", "high"] } },
        "required": ["risk_level"],
        "additionalProperties": false
    });
    let mut request = ChatRequest {
        model: "claude".into(),
        messages: vec![std::sync::Arc::new(ChatMessage::new(
            Role::User,
            "Review it",
        ))],
        response_format: Some(crate::JsonSchemaFormat {
            name: "tenth_man_review".into(),
            schema: schema.clone(),
            strict: true,
        }),
        ..ChatRequest::default()
    };
    let config = ProviderConfig::new("a", Protocol::Anthropic, "http://x", "claude");
    let body = request_body(&config, &request);
    assert_eq!(body["tools"][0]["name"], "tenth_man_review", "{body}");
    assert_eq!(body["tools"][0]["input_schema"], schema);
    assert_eq!(
        body["tool_choice"],
        json!({"type": "tool", "name": "tenth_man_review"})
    );
    assert_eq!(answers_through_tool(&request), Some("tenth_man_review"));
    let call = decima_core::ToolCall {
        id: "toolu_1".into(),
        name: "tenth_man_review".into(),
        arguments: r#"{"risk_level":"low"}"#.into(),
        signature: None,
    };
    assert_eq!(
        answer_from_tool(StreamEvent::ToolCall(call), "tenth_man_review"),
        StreamEvent::TextDelta(r#"{"risk_level":"low"}"#.into())
    );
    assert_eq!(
        answer_from_tool(
            StreamEvent::Finish(crate::FinishReason::ToolCalls),
            "tenth_man_review"
        ),
        StreamEvent::Finish(crate::FinishReason::Stop)
    );
    // Extended thinking refuses a forced tool: the schema is left to the prompt then.
    request.thinking_budget = Some(2_048);
    let body = request_body(&config, &request);
    assert!(body.get("tool_choice").is_none(), "{body}");
    assert_eq!(answers_through_tool(&request), None);
}
