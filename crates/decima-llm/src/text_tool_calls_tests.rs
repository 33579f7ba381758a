//! Fixtures are the text a model writes under its chat template, taken verbatim where a source
//! prints it. "test-chat.cpp" is ggml-org/llama.cpp's tests/test-chat.cpp; its templates are under
//! models/templates/ in the same repository, and its parsers (common_chat_parse_*) in
//! common/chat-parser.cpp (formerly common/chat.cpp).

use std::time::{Duration, Instant};

use serde_json::json;

use super::*;

/// The tools llama.cpp's fixtures offer.
const LLAMA_CPP_TOOLS: &[&str] = &["special_function", "special_function_with_opt", "python"];

/// Compact JSON of `value`, built with the same map type as the code under test.
fn compact(value: Value) -> String {
    serde_json::to_string(&value).unwrap()
}

/// (name, arguments) of every recovered call.
fn calls(recovered: &Recovered) -> Vec<(&str, &str)> {
    recovered
        .calls
        .iter()
        .map(|call| (call.name.as_str(), call.arguments.as_str()))
        .collect()
}

fn arg1() -> String {
    compact(json!({"arg1": 1}))
}

#[test]
fn qwen25_hermes_two_calls() {
    // Qwen2.5-7B-Instruct, models/templates/Qwen-Qwen2.5-7B-Instruct.jinja (one
    // `<tool_call>\n{"name": …, "arguments": …}\n</tool_call>` per call, joined by "\n"); the
    // fixture is test-chat.cpp's "Test multiple tool calls" for the Hermes 2 Pro format, the
    // format llama.cpp assigns to that template (common_chat_parse_hermes_2_pro).
    let text = "<tool_call>\n\
                {\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}\n\
                </tool_call>\n\
                <tool_call>\n\
                {\"name\": \"python\", \"arguments\": {\"code\":\"print('hello')\"}}\n\
                </tool_call>";
    let found = recover(text, LLAMA_CPP_TOOLS).unwrap();
    assert_eq!(found.form, TextCallForm::Hermes);
    let code = compact(json!({"code": "print('hello')"}));
    assert_eq!(
        calls(&found),
        [("special_function", arg1().as_str()), ("python", &code)]
    );
    assert_eq!(found.remaining_text, "");
    assert!(found.calls[0].id.starts_with("text_call_0_"), "{found:?}");
    assert!(found.calls[1].id.starts_with("text_call_1_"), "{found:?}");
    assert!(found.calls.iter().all(|call| call.signature.is_none()));
}

#[test]
fn hermes_keeps_the_prose_before_the_block() {
    // Hermes 2 Pro (NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja): test-chat.cpp's
    // message_assist_call_content fixture, content then a block.
    let text = "Hello, world!\nWhat's up?<tool_call>\n\
                {\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}\n\
                </tool_call>";
    let found = recover(text, LLAMA_CPP_TOOLS).unwrap();
    assert_eq!(found.form, TextCallForm::Hermes);
    assert_eq!(calls(&found), [("special_function", arg1().as_str())]);
    assert_eq!(found.remaining_text, "Hello, world!\nWhat's up?");
}

#[test]
fn hermes_without_its_closing_tag() {
    // Qwen2.5 / Qwen3 stop at EOS (<|im_end|>) and sometimes before writing `</tool_call>`: the
    // template's block (Qwen-Qwen2.5-7B-Instruct.jinja) cut after the JSON.
    let text = "Let me look.\n<tool_call>\n\
                {\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}\n";
    let found = recover(text, LLAMA_CPP_TOOLS).unwrap();
    assert_eq!(found.form, TextCallForm::Hermes);
    assert_eq!(calls(&found), [("special_function", arg1().as_str())]);
    assert_eq!(found.remaining_text, "Let me look.");

    // The same slip on the first of two blocks: the block ends where the next one opens.
    let text = "<tool_call>\n{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}\n\
                <tool_call>\n{\"name\": \"python\", \"arguments\": {\"code\": \"1\"}}\n</tool_call>";
    let found = recover(text, LLAMA_CPP_TOOLS).unwrap();
    assert_eq!(found.calls.len(), 2);
    assert_eq!(found.remaining_text, "");
}

#[test]
fn hermes_after_reasoning_and_not_inside_it() {
    // QwQ-32B (models/templates/Qwen-QwQ-32B.jinja opens `<think>` in the prompt): test-chat.cpp's
    // message_assist_call_thoughts fixture. The reasoning is prose; the call is taken.
    let text = "I'm\nthinking</think>\n\
                <tool_call>{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}</tool_call>";
    let found = recover(text, LLAMA_CPP_TOOLS).unwrap();
    assert_eq!(calls(&found), [("special_function", arg1().as_str())]);
    assert_eq!(found.remaining_text, "I'm\nthinking</think>");

    // A block inside reasoning is thought, not a call (test-chat.cpp: "<think><tool_call>nah
    // uhg</tool_call>" parses to reasoning only).
    assert_eq!(
        recover("<think><tool_call>nah uhg</tool_call>", LLAMA_CPP_TOOLS),
        None
    );
    let text = "<think>I could write <tool_call>{\"name\": \"special_function\", \
                \"arguments\": {\"arg1\": 1}}</tool_call></think>No call is needed.";
    assert_eq!(recover(text, LLAMA_CPP_TOOLS), None);
}

#[test]
fn bare_json_with_parameters() {
    // Llama 3.2 3B Instruct, models/templates/meta-llama-Llama-3.2-3B-Instruct.jinja ("Respond in
    // the format {"name": function name, "parameters": dictionary of argument name and its
    // value}"), test-chat.cpp's fixture for it; no marker, so the bare form.
    let text = "{\"name\": \"special_function\", \"parameters\": {\"arg1\": 1}}";
    let found = recover(text, LLAMA_CPP_TOOLS).unwrap();
    assert_eq!(found.form, TextCallForm::BareJson);
    assert_eq!(calls(&found), [("special_function", arg1().as_str())]);
    assert_eq!(found.remaining_text, "");
}

#[test]
fn fenced_json_block() {
    // Hermes-format models that fence their call: test-chat.cpp's Hermes 2 Pro fixtures
    // "```json\n  {…}\n```" and "```\n{…}\n```" (common_chat_parse_hermes_2_pro's block_start).
    for text in [
        "```json\n  {\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}\n```",
        "```\n{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}\n```",
    ] {
        let found = recover(text, LLAMA_CPP_TOOLS).unwrap();
        assert_eq!(found.form, TextCallForm::BareJson, "{text}");
        assert_eq!(calls(&found), [("special_function", arg1().as_str())]);
        assert_eq!(found.remaining_text, "");
    }
}

#[test]
fn array_of_calls() {
    // Mistral Nemo (models/templates/mistralai-Mistral-Nemo-Instruct-2407.jinja) writes
    // `[TOOL_CALLS][{…, "id": "…"}, {…}]`; `[TOOL_CALLS]` is a special token, which a server
    // detokenizing with skip_special_tokens drops (vLLM's mistral_tool_parser.py turns that off in
    // adjust_request for this reason), leaving the array alone.
    let text = "[{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}, \"id\": \"123456789\"}, \
                {\"name\": \"python\", \"arguments\": {\"code\": \"print('hey')\"}, \"id\": \"987654321\"}]";
    let found = recover(text, LLAMA_CPP_TOOLS).unwrap();
    assert_eq!(found.form, TextCallForm::BareJson);
    let code = compact(json!({"code": "print('hey')"}));
    assert_eq!(
        calls(&found),
        [("special_function", arg1().as_str()), ("python", &code)]
    );
    // Generated ids, not the model's.
    assert!(found.calls.iter().all(|c| c.id.starts_with("text_call_")));
}

#[test]
fn double_encoded_arguments_are_read() {
    // The Mistral templates render `tool_call.function|tojson`, and OpenAI-format history holds
    // arguments as a JSON string, so Mistral models see and write `"arguments": "{…}"`.
    let text = "[TOOL_CALLS][{\"name\": \"special_function\", \"arguments\": \"{\\\"arg1\\\": 1}\", \
                \"id\": \"123456789\"}]";
    let found = recover(text, LLAMA_CPP_TOOLS).unwrap();
    assert_eq!(found.form, TextCallForm::Mistral);
    assert_eq!(calls(&found), [("special_function", arg1().as_str())]);

    let text = "{\"name\": \"special_function\", \"arguments\": \"{\\\"arg1\\\": 1}\"}";
    let found = recover(text, LLAMA_CPP_TOOLS).unwrap();
    assert_eq!(calls(&found), [("special_function", arg1().as_str())]);

    // A string that holds no object is not arguments.
    let text = "{\"name\": \"python\", \"arguments\": \"print('hey')\"}";
    assert_eq!(recover(text, LLAMA_CPP_TOOLS), None);
}

#[test]
fn llama31_python_tag_with_eom() {
    // Llama 3.1 8B Instruct, models/templates/meta-llama-Llama-3.1-8B-Instruct.jinja: a tool call
    // turn ends with <|eom_id|> in ipython mode (<|eot_id|> otherwise); the model may prefix the
    // JSON with <|python_tag|> (vLLM's llama_tool_parser.py, Llama3JsonToolParser.bot_token).
    let text =
        "<|python_tag|>{\"name\": \"special_function\", \"parameters\": {\"arg1\": 1}}<|eom_id|>";
    let found = recover(text, LLAMA_CPP_TOOLS).unwrap();
    assert_eq!(found.form, TextCallForm::Llama3);
    assert_eq!(calls(&found), [("special_function", arg1().as_str())]);
    assert_eq!(found.remaining_text, "");

    // Parallel calls joined by ";" (Llama3JsonToolParser.tool_call_regex), after some prose.
    let text = "Checking both.<|python_tag|>{\"name\": \"special_function\", \"parameters\": \
                {\"arg1\": 1}}; {\"name\": \"python\", \"parameters\": {\"code\": \"1\"}}<|eot_id|>";
    let found = recover(text, LLAMA_CPP_TOOLS).unwrap();
    assert_eq!(found.form, TextCallForm::Llama3);
    assert_eq!(found.calls.len(), 2);
    assert_eq!(found.remaining_text, "Checking both.");

    // A built-in tool call (`<|python_tag|>brave_search.call(query="…")`) is not JSON: left alone.
    let text = "<|python_tag|>brave_search.call(query=\"weather\")<|eom_id|>";
    assert_eq!(recover(text, &["brave_search"]), None);
}

#[test]
fn llama3_json_forms_without_python_tag() {
    // common_chat_parse_llama_3_1's function_regex accepts an optional `"type": "function"` before
    // the name; an end token left in the text also marks the Llama form.
    let typed =
        "{\"type\": \"function\", \"name\": \"special_function\", \"parameters\": {\"arg1\": 1}}";
    let ended = "{\"name\": \"special_function\", \"parameters\": {\"arg1\": 1}}<|eot_id|>";
    for text in [typed, ended] {
        let found = recover(text, LLAMA_CPP_TOOLS).unwrap();
        assert_eq!(found.form, TextCallForm::Llama3, "{text}");
        assert_eq!(calls(&found), [("special_function", arg1().as_str())]);
    }
}

#[test]
fn llama3_function_tags() {
    // Llama 3.1's custom-tool format `<function=NAME>{…}</function>`: test-chat.cpp's fixture for
    // models/templates/meetkai-functionary-medium-v3.1.jinja (a Llama 3.1 fine-tune,
    // common_chat_parse_functionary_v3_1_llama_3_1), then its two-call Hermes fixture.
    let text = "<function=special_function>{\"arg1\": 1}</function>";
    let found = recover(text, LLAMA_CPP_TOOLS).unwrap();
    assert_eq!(found.form, TextCallForm::Llama3);
    assert_eq!(calls(&found), [("special_function", arg1().as_str())]);

    let text = "<function=special_function>{\"arg1\": 1}</function>\n\
                <function=python>{\"code\":\"print('hello')\"}</function>";
    let found = recover(text, LLAMA_CPP_TOOLS).unwrap();
    let code = compact(json!({"code": "print('hello')"}));
    assert_eq!(
        calls(&found),
        [("special_function", arg1().as_str()), ("python", &code)]
    );
    assert_eq!(found.remaining_text, "");
}

#[test]
fn mistral_v03_tool_calls_array() {
    // Mistral 7B Instruct v0.3's chat template renders `[TOOL_CALLS] [` + each call's function
    // JSON + `, "id": "…"}` + `]` (its tokenizer_config.json); Mistral Nemo's
    // (mistralai-Mistral-Nemo-Instruct-2407.jinja) the same without the space, test-chat.cpp's
    // fixture verbatim.
    for text in [
        "[TOOL_CALLS] [{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}, \"id\": \"123456789\"}]",
        "[TOOL_CALLS][{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}, \"id\": \"123456789\"}]",
    ] {
        let found = recover(text, LLAMA_CPP_TOOLS).unwrap();
        assert_eq!(found.form, TextCallForm::Mistral, "{text}");
        assert_eq!(calls(&found), [("special_function", arg1().as_str())]);
        assert_eq!(found.remaining_text, "");
    }
}

#[test]
fn mistral_name_args_form_twice() {
    // Ministral 3 / Magistral / Devstral (`[TOOL_CALLS]NAME[ARGS]{…}` per call): test-chat.cpp's
    // parallel fixture for models/templates/mistralai-Ministral-3-14B-Reasoning-2512.jinja.
    let text = "[TOOL_CALLS]special_function[ARGS]{\"arg1\": 1}\
                [TOOL_CALLS]special_function_with_opt[ARGS]{\"arg1\": 1, \"arg2\": 2}";
    let found = recover(text, LLAMA_CPP_TOOLS).unwrap();
    assert_eq!(found.form, TextCallForm::Mistral);
    let opt = compact(json!({"arg1": 1, "arg2": 2}));
    assert_eq!(
        calls(&found),
        [
            ("special_function", arg1().as_str()),
            ("special_function_with_opt", &opt)
        ]
    );
    assert_eq!(found.remaining_text, "");

    // Mistral Small 3.2 24B Instruct 2506 (Mistral-Small-3.2-24B-Instruct-2506.jinja) writes a
    // `[CALL_ID]` between name and `[ARGS]`: test-chat.cpp's fixture, then two calls as the
    // template renders them.
    let text = "[TOOL_CALLS]special_function[CALL_ID]123456789[ARGS]{\"arg1\": 1}";
    let found = recover(text, LLAMA_CPP_TOOLS).unwrap();
    assert_eq!(calls(&found), [("special_function", arg1().as_str())]);
    let text = "[TOOL_CALLS]special_function[CALL_ID]000000001[ARGS]{\"arg1\": 1}\
                [TOOL_CALLS]special_function_with_opt[CALL_ID]000000002[ARGS]{\"arg1\": 1, \"arg2\": 2}";
    let found = recover(text, LLAMA_CPP_TOOLS).unwrap();
    assert_eq!(found.calls.len(), 2);
    assert_eq!(found.calls[1].arguments, opt);

    // vLLM's v11 Mistral parser documents the text with `[ARGS]` dropped as a special token:
    // `[TOOL_CALLS]add{"a": 3.5, "b": 4}`.
    let found = recover("[TOOL_CALLS]add{\"a\": 3.5, \"b\": 4}", &["add"]).unwrap();
    assert_eq!(
        calls(&found),
        [("add", compact(json!({"a": 3.5, "b": 4})).as_str())]
    );
}

#[test]
fn mistral_marker_inside_reasoning_is_thought() {
    // test-chat.cpp's Ministral 3 "fake tool call marker in reasoning" fixture: one call.
    let text = "[THINK]Let me think about [TOOL_CALLS]special_function[ARGS]{\"arg1\":1} and more\
                [/THINK][TOOL_CALLS]special_function[ARGS]{\"arg1\": 1}";
    let found = recover(text, LLAMA_CPP_TOOLS).unwrap();
    assert_eq!(calls(&found), [("special_function", arg1().as_str())]);
    assert_eq!(
        found.remaining_text,
        "[THINK]Let me think about [TOOL_CALLS]special_function[ARGS]{\"arg1\":1} and more[/THINK]"
    );
}

#[test]
fn prose_that_mentions_json_is_not_a_call() {
    for text in [
        "You can call it as {\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}} later.",
        "This is not a tool call:\n{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}",
        "The config is JSON, for example {\"debug\": true}.",
        "Hello, world!\nWhat's up?",
    ] {
        assert_eq!(recover(text, LLAMA_CPP_TOOLS), None, "{text}");
    }
}

#[test]
fn a_tool_that_was_not_offered_is_not_a_call() {
    let offered = &["shell"];
    for text in [
        "{\"name\": \"delete_everything\", \"arguments\": {}}",
        "<tool_call>\n{\"name\": \"delete_everything\", \"arguments\": {}}\n</tool_call>",
        "[TOOL_CALLS]delete_everything[ARGS]{}",
        "<function=delete_everything>{}</function>",
        "<|python_tag|>{\"name\": \"delete_everything\", \"parameters\": {}}",
    ] {
        assert_eq!(recover(text, offered), None, "{text}");
    }
    // Nothing offered: nothing to call.
    assert_eq!(
        recover("{\"name\": \"shell\", \"arguments\": {}}", &[]),
        None
    );
}

#[test]
fn a_call_without_object_arguments_is_not_a_call() {
    for (text, offered) in [
        ("{\"name\": \"x\"}", &["shell"][..]),
        ("{\"name\": \"shell\"}", &["shell"][..]),
        (
            "{\"name\": \"shell\", \"arguments\": [\"ls\"]}",
            &["shell"][..],
        ),
        (
            "{\"name\": \"shell\", \"arguments\": {}, \"parameters\": {}}",
            &["shell"][..],
        ),
        ("[TOOL_CALLS]shell[ARGS][\"ls\"]", &["shell"][..]),
    ] {
        assert_eq!(recover(text, offered), None, "{text}");
    }
}

#[test]
fn a_structured_answer_is_not_a_call() {
    let offered = &["shell", "risk_level"];
    for text in [
        "{\"risk_level\": \"low\", \"reasons\": [\"read-only command\"]}",
        "```json\n{\"risk_level\": \"low\"}\n```",
        "[{\"risk_level\": \"low\"}]",
        // Has a tool's name, but is an answer: keys a call does not have.
        "{\"name\": \"shell\", \"arguments\": {}, \"risk_level\": \"low\"}",
        "{\"type\": \"summary\", \"name\": \"shell\", \"parameters\": {}}",
    ] {
        assert_eq!(recover(text, offered), None, "{text}");
    }
}

#[test]
fn empty_text_is_not_a_call() {
    assert_eq!(recover("", &["shell"]), None);
    assert_eq!(recover(" \n\t", &["shell"]), None);
}

#[test]
fn broken_or_unread_blocks_stay_text() {
    // Truncated JSON in a closed block.
    let text =
        "<tool_call>\n{\"name\": \"special_function\", \"arguments\": {\"arg1\": \n</tool_call>";
    assert_eq!(recover(text, LLAMA_CPP_TOOLS), None);
    // Qwen3-Coder's XML parameters (test-chat.cpp's Nemotron 3 / Qwen3-Coder fixture) are another
    // form, not read here: no call is made up from it.
    let text = "<tool_call>\n<function=special_function>\n<parameter=arg1>\n1\n</parameter>\n\
                </function>\n</tool_call>\n";
    assert_eq!(recover(text, LLAMA_CPP_TOOLS), None);
    // A good block is taken and a bad one left as written.
    let bad = "<tool_call>\n{\"name\": \"nope\", \"arguments\": {}}\n</tool_call>";
    let text = format!(
        "{bad}\n<tool_call>\n{{\"name\": \"special_function\", \"arguments\": {{\"arg1\": 1}}}}\n</tool_call>"
    );
    let found = recover(&text, LLAMA_CPP_TOOLS).unwrap();
    assert_eq!(calls(&found), [("special_function", arg1().as_str())]);
    assert_eq!(found.remaining_text, bad);
}

#[test]
fn ids_are_fixed_for_the_same_text_and_differ_between_texts() {
    let a =
        "<tool_call>\n{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}\n</tool_call>";
    let b = "Again.\n<tool_call>\n{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}\n</tool_call>";
    let id = |text: &str| recover(text, LLAMA_CPP_TOOLS).unwrap().calls[0].id.clone();
    assert_eq!(id(a), id(a));
    assert_ne!(id(a), id(b));
    assert!(
        id(a).chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
        "usable as an Anthropic tool_use id: {}",
        id(a)
    );
}

#[test]
fn forms_have_stable_names() {
    assert_eq!(TextCallForm::Hermes.as_str(), "hermes");
    assert_eq!(TextCallForm::BareJson.as_str(), "bare_json");
    assert_eq!(TextCallForm::Llama3.as_str(), "llama3");
    assert_eq!(TextCallForm::Mistral.as_str(), "mistral");
}

/// Runs `recover` on `text` and fails if it takes longer than a linear pass could.
fn assert_quick(text: &str, offered: &[&str]) -> Option<Recovered> {
    let started = Instant::now();
    let found = recover(text, offered);
    let took = started.elapsed();
    // A linear pass over 1 MB takes milliseconds even unoptimized; re-parsing from every marker to
    // the end would take minutes.
    assert!(took < Duration::from_secs(5), "took {took:?}");
    found
}

#[test]
fn a_megabyte_of_markers_stays_linear() {
    const MB: usize = 1 << 20;
    let repeat = |unit: &str| unit.repeat(MB / unit.len());
    for unit in [
        "<tool_call>{\"a\": \"",
        "[TOOL_CALLS]special_function[ARGS]{\"a\": \"",
        "[TOOL_CALLS] [{\"a\": \"",
        "<function=special_function>{\"a\": \"",
        "<|python_tag|>{\"a\": \"",
        "<think>",
        "</think>[THINK]",
        "{\"name\": \"special_function\", \"arguments\": {\"a\": [",
    ] {
        assert_eq!(assert_quick(&repeat(unit), LLAMA_CPP_TOOLS), None, "{unit}");
    }
    // A real call with a megabyte of arguments is still a call.
    let big = "x".repeat(MB);
    let text = format!(
        "<tool_call>\n{{\"name\": \"python\", \"arguments\": {{\"code\": \"{big}\"}}}}\n</tool_call>"
    );
    let found = assert_quick(&text, LLAMA_CPP_TOOLS).unwrap();
    assert_eq!(found.calls[0].arguments, compact(json!({"code": big})));
}
