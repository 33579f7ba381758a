//! Our token counts against Python tiktoken, the reference, on the testkit corpus.
//!
//! Text counts must be identical (same BPE, same regex, `encode_ordinary` on both sides), and
//! message and request counts must match OpenAI's cookbook formula computed in Python. Needs
//! `python3` with `python3 -m pip install --break-system-packages tiktoken==0.14.0`; without it
//! these tests fail, they never skip. Nothing is downloaded: the rank tables are written from
//! tiktoken-rs's own.
//!
//! Figures: `cargo test -p decima-llm --test token_accuracy -- --nocapture`.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use base64::Engine as _;
use decima_core::{NewMessage, Role, TokenCounter};
use decima_llm::tokens::TiktokenCounter;
use decima_llm::{ChatRequest, ToolSpec};
use decima_testkit::ConversationBuilder;
use serde_json::{Value, json};

const PIP: &str = "python3 -m pip install --break-system-packages tiktoken==0.14.0";
const ENCODINGS: [&str; 2] = ["cl100k_base", "o200k_base"];

fn counter(encoding: &str) -> TiktokenCounter {
    match encoding {
        "o200k_base" => TiktokenCounter::o200k_base(),
        _ => TiktokenCounter::cl100k_base(),
    }
}

/// Writes `<encoding>.tiktoken` in tiktoken's format from tiktoken-rs's tables. The Python side
/// checks their sha256 against OpenAI's published files.
fn write_ranks(dir: &Path) {
    let tables = [
        ("cl100k_base", tiktoken_rs::cl100k_base_singleton()),
        ("o200k_base", tiktoken_rs::o200k_base_singleton()),
    ];
    for (name, bpe) in tables {
        let mut out = String::new();
        // Mergeable ranks are dense from 0; the first gap comes before the special tokens.
        for rank in 0u32.. {
            let Ok(bytes) = bpe.decode_bytes(&[rank]) else {
                break;
            };
            let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
            writeln!(out, "{b64} {rank}").unwrap();
        }
        std::fs::write(dir.join(format!("{name}.tiktoken")), out).unwrap();
    }
}

/// Runs the Python reference in `mode` on JSON lines and returns its output lines.
fn python(mode: &str, lines: &[String]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    write_ranks(dir.path());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/tiktoken_reference.py");
    let mut child = Command::new("python3")
        .arg(script)
        .arg("--ranks-dir")
        .arg(dir.path())
        .arg(mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run python3 ({e}): install Python 3, then run `{PIP}`"));
    let mut stdin = child.stdin.take().unwrap();
    let input = lines.join("\n");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        output.status.success(),
        "the Python tiktoken reference failed ({}). If tiktoken is missing, run `{PIP}`.\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The testkit corpus: English and Chinese prose, tool calls and results, reasoning. A few user
/// messages get a participant name so the name rule is exercised too.
fn corpus() -> Vec<Vec<NewMessage>> {
    [1u64, 2, 3]
        .into_iter()
        .map(|seed| {
            let mut messages = ConversationBuilder::new(seed, 600).build().messages;
            for (i, m) in messages.iter_mut().enumerate() {
                if m.role == Role::User && i % 7 == 0 {
                    m.name = Some(format!("analyst_{i}"));
                }
            }
            messages
        })
        .collect()
}

fn texts_of(m: &NewMessage) -> Vec<&str> {
    let mut texts = vec![m.content.as_str()];
    texts.extend(m.name.as_deref());
    texts.extend(m.reasoning.as_deref());
    texts.extend(m.tool_call_id.as_deref());
    for call in &m.tool_calls {
        texts.extend([
            call.id.as_str(),
            call.name.as_str(),
            call.arguments.as_str(),
        ]);
    }
    texts
}

/// Inputs where tokenizers usually disagree: special-token markers, contractions, numbers, odd
/// whitespace, scripts, emoji and combining marks.
fn edge_cases() -> Vec<String> {
    let mut cases: Vec<String> = [
        "",
        " ",
        "<|endoftext|>",
        "hi <|endoftext|> there <|endofprompt|><|fim_prefix|><|im_start|>system",
        "I'm sure they'll say it's what we've done, DON'T YOU'D",
        "1234567890 3.14159 -42 1,000,000 ¾ ²",
        "line one\r\nline two\n\n\n   indented\ttab\u{a0}nbsp\u{3000}ideographic space",
        "trailing spaces   ",
        "     leading",
        "{\"path\": \"/workspace/data/batch-12/part-7.csv\", \"content\": \"id,amount\\n1,10\\n\"}",
        "收入列包含多种货币，汇总之前需要先做换算。",
        "日本語のテキストとカタカナ、ひらがな。한국어 문장입니다.",
        "Ελληνικά, русский текст, עברית, العربية, हिन्दी",
        "emoji 😀👍🏽👨‍👩‍👧 and flags 🇫🇷",
        "e\u{301}le\u{300}ve Zalgo: Z\u{351}\u{34b}\u{300}a\u{33e}l\u{352}g\u{31a}o",
        "=====================================================================",
        "fn main() {\n    println!(\"{}\", x?);\n}\n",
        "https://ledger.example.com/api/v2/entries/1234567?q=a&b=c#frag",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    cases.push("ab".repeat(5_000));
    cases.push(" ".repeat(3_000));
    cases.push(format!("x{}y", "\n".repeat(2_000)));
    cases
}

#[test]
fn text_counts_equal_python_tiktoken() {
    let conversations = corpus();
    let mut texts: Vec<String> = conversations
        .iter()
        .flatten()
        .flat_map(texts_of)
        .map(String::from)
        .collect();
    let corpus_len = texts.len();
    texts.extend(edge_cases());
    let lines: Vec<String> = texts
        .iter()
        .map(|t| serde_json::to_string(t).unwrap())
        .collect();
    let reference = python("texts", &lines);
    assert_eq!(reference.len(), texts.len());

    for encoding in ENCODINGS {
        let counter = counter(encoding);
        let mut ours_total = 0u64;
        let mut theirs_total = 0u64;
        let mut mismatches = Vec::new();
        for (text, expected) in texts.iter().zip(&reference) {
            let theirs = expected[encoding].as_u64().unwrap();
            let ours = u64::from(counter.count_text(text));
            ours_total += ours;
            theirs_total += theirs;
            if ours != theirs {
                mismatches.push(format!("{ours} vs {theirs}: {:?}", truncate(text)));
            }
        }
        eprintln!(
            "{encoding}: {} texts ({corpus_len} from the corpus), rust {ours_total} tokens, python {theirs_total}, {} mismatches",
            texts.len(),
            mismatches.len()
        );
        assert!(
            mismatches.is_empty(),
            "{encoding}: {} texts count differently from Python tiktoken:\n{}",
            mismatches.len(),
            mismatches[..mismatches.len().min(10)].join("\n")
        );
    }
}

fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "shell".into(),
            description: "Run a shell command in the workspace container.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "cmd": {"type": "string", "description": "The command line."},
                    "timeout_s": {"type": "integer", "description": "Seconds before it is killed"}
                },
                "required": ["cmd"]
            }),
        },
        ToolSpec {
            name: "read_file".into(),
            description: "Read a file from the workspace".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Absolute path."},
                    "encoding": {"type": "string", "description": "Text encoding", "enum": ["utf-8", "latin-1", "utf-16"]}
                }
            }),
        },
        ToolSpec {
            name: "write_file".into(),
            description: "Write a file.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Absolute path"},
                    "content": {"type": "string", "description": "The full new content."},
                    "mode": {"type": ["string", "null"], "enum": ["create", "overwrite", null]}
                }
            }),
        },
    ]
}

/// A message as the cookbook's `num_tokens_from_messages` sees it: every key is counted.
fn wire(m: &NewMessage) -> Value {
    let mut v = json!({"role": m.role.as_str(), "content": m.content});
    if let Some(name) = &m.name {
        v["name"] = json!(name);
    }
    if let Some(reasoning) = &m.reasoning {
        v["reasoning"] = json!(reasoning);
    }
    if let Some(id) = &m.tool_call_id {
        v["tool_call_id"] = json!(id);
    }
    if !m.tool_calls.is_empty() {
        v["tool_calls"] = m
            .tool_calls
            .iter()
            .map(|c| json!({"name": c.name, "arguments": c.arguments}))
            .collect();
    }
    v
}

fn openai_tool(t: &ToolSpec) -> Value {
    json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}})
}

#[test]
fn request_counts_match_the_cookbook_within_one_percent() {
    let conversations = corpus();
    let tools = tools();
    // Each whole conversation with tools, each without, and a short prefix.
    let mut requests: Vec<(Vec<NewMessage>, Vec<ToolSpec>)> = Vec::new();
    for messages in &conversations {
        requests.push((messages.clone(), tools.clone()));
        requests.push((messages.clone(), Vec::new()));
        requests.push((messages[..5].to_vec(), tools[1..].to_vec()));
    }
    let lines: Vec<String> = requests
        .iter()
        .map(|(messages, tools)| {
            json!({
                "messages": messages.iter().map(wire).collect::<Vec<_>>(),
                "tools": tools.iter().map(openai_tool).collect::<Vec<_>>(),
            })
            .to_string()
        })
        .collect();
    let reference = python("requests", &lines);
    assert_eq!(reference.len(), requests.len());

    for encoding in ENCODINGS {
        let counter = counter(encoding);
        let (mut ours_sum, mut theirs_sum) = (0u64, 0u64);
        let mut message_mismatches = 0usize;
        for ((messages, tools), expected) in requests.iter().zip(&reference) {
            let expected = &expected[encoding];
            let per_message = expected["messages"].as_array().unwrap();
            for (m, theirs) in messages.iter().zip(per_message) {
                if u64::from(counter.count_message(m)) != theirs.as_u64().unwrap() {
                    message_mismatches += 1;
                }
            }
            assert_eq!(
                u64::from(counter.count_tools(tools)),
                expected["tools"].as_u64().unwrap(),
                "{encoding}: tool definitions"
            );
            let request = ChatRequest {
                model: String::new(),
                messages: messages.iter().cloned().map(std::sync::Arc::new).collect(),
                tools: tools.clone(),
                ..ChatRequest::default()
            };
            let ours = u64::from(counter.count_request(&request));
            let theirs = expected["total"].as_u64().unwrap();
            let error = ours.abs_diff(theirs) as f64 / theirs as f64;
            assert!(
                error <= 0.01,
                "{encoding}: request of {} messages: rust {ours}, cookbook {theirs} ({:.3}%)",
                messages.len(),
                error * 100.0
            );
            // The store's cached per-message counts must add up to the request count.
            let cached: u32 = messages.iter().map(|m| counter.count_message(m)).sum();
            assert_eq!(
                u64::from(cached + counter.count_tools(tools) + 3),
                ours,
                "{encoding}: cached counts do not add up"
            );
            ours_sum += ours;
            theirs_sum += theirs;
        }
        eprintln!(
            "{encoding}: {} requests, rust {ours_sum} tokens, cookbook {theirs_sum} ({:+.4}%), {message_mismatches} per-message differences",
            requests.len(),
            (ours_sum as f64 - theirs_sum as f64) / theirs_sum as f64 * 100.0
        );
        assert_eq!(
            message_mismatches, 0,
            "{encoding}: per-message counts differ"
        );
    }
}

/// Runs of characters outside ASCII: the Chinese sentences of the corpus prose.
fn chinese_fragments(text: &str) -> Vec<&str> {
    text.split(|c: char| c.is_ascii())
        .filter(|s| s.chars().any(|c| ('\u{4E00}'..='\u{9FFF}').contains(&c)))
        .collect()
}

#[test]
fn chinese_costs_less_with_o200k() {
    let conversations = corpus();
    let mut chinese: Vec<&str> = Vec::new();
    let mut english: Vec<String> = Vec::new();
    for m in conversations.iter().flatten() {
        chinese.extend(chinese_fragments(&m.content));
        let ascii: String = m.content.chars().filter(char::is_ascii).collect();
        english.push(ascii);
    }
    let chars: usize = chinese.iter().map(|s| s.chars().count()).sum();
    let lines: Vec<String> = chinese
        .iter()
        .map(|t| serde_json::to_string(t).unwrap())
        .collect();
    let reference = python("texts", &lines);
    let mut totals = Vec::new();
    for encoding in ENCODINGS {
        let counter = counter(encoding);
        let ours: u64 = chinese
            .iter()
            .map(|t| u64::from(counter.count_text(t)))
            .sum();
        let theirs: u64 = reference
            .iter()
            .map(|r| r[encoding].as_u64().unwrap())
            .sum();
        assert_eq!(ours, theirs, "{encoding}: Chinese fragments");
        let english_tokens: u64 = english
            .iter()
            .map(|t| u64::from(counter.count_text(t)))
            .sum();
        let english_chars: usize = english.iter().map(String::len).sum();
        eprintln!(
            "{encoding}: Chinese {} fragments, {chars} chars -> {ours} tokens ({:.3} tokens/char); English {english_chars} chars -> {english_tokens} tokens ({:.3} tokens/char)",
            chinese.len(),
            ours as f64 / chars as f64,
            english_tokens as f64 / english_chars as f64
        );
        totals.push(ours);
    }
    assert!(!chinese.is_empty());
    eprintln!(
        "Chinese: o200k uses {:.1}% fewer tokens than cl100k",
        (1.0 - totals[1] as f64 / totals[0] as f64) * 100.0
    );
    assert!(
        totals[1] < totals[0],
        "o200k should encode Chinese more compactly"
    );
}

fn truncate(text: &str) -> String {
    text.chars().take(80).collect()
}
