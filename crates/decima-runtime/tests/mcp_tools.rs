//! MCP tools inside a run: the reference `server-everything` (from npm, run on the host with
//! `node` by path) offers its tools beside the built-in ones, under table names; every call
//! needs approval (a run pattern, a stored approval, or the analyst's answer), and a run with
//! no one to ask refuses the call with a tool error and goes on. Nothing is left running when
//! the run ends.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::PathBuf;
use std::sync::Mutex;

use common::Fixture;
use decima_mcp::{Place, ServerConfig, Transport};
use decima_runtime::agent::{self, ChoiceSource, RunOptions, RunRequest, StopOnFailure};
use decima_runtime::mcp::{Approval, ApprovalRequest};
use decima_sandbox::host::BoxFuture;
use decima_store::{ExecutionStatus, Failure};
use serde_json::json;

fn everything_script() -> PathBuf {
    decima_testkit::mcp_servers::reference_server("server-everything")
}

async fn with_everything(f: &Fixture) {
    let mut config = ServerConfig::stdio(
        "everything",
        "node",
        vec![everything_script().display().to_string(), "stdio".into()],
    );
    if let Transport::Stdio { env, .. } = &mut config.transport {
        env.insert("EVERYTHING_TOKEN".into(), "s3cret-value".into());
        env.insert("DECIMA_TEST_MARK".into(), mark(f));
    }
    decima_runtime::mcp::servers::add(&f.store, f.dir.path(), &[config.at(Place::Host)])
        .await
        .unwrap();
}

/// Answers approvals from a list, and records what it was asked.
struct Approver {
    answers: Mutex<Vec<Approval>>,
    asked: Mutex<Vec<ApprovalRequest>>,
}

impl ChoiceSource for Approver {
    fn choose<'a>(
        &'a self,
        _failure: &'a Failure,
    ) -> BoxFuture<'a, Option<decima_runtime::agent::Choice>> {
        Box::pin(async { None })
    }

    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Option<Approval>> {
        self.asked.lock().unwrap().push(request.clone());
        let next = self.answers.lock().unwrap().pop();
        Box::pin(async move { next })
    }
}

/// Runs `task` on the host with `choices` answering, the tenth man off.
async fn run_asking(f: &Fixture, choices: &dyn ChoiceSource, task: &str) -> agent::RunOutcome {
    run_on_host(f, &f.session(choices), task, Vec::new()).await
}

/// Runs `task` on the host with the "claude" (Anthropic) provider, `allow` approving tools.
async fn run_on_claude(f: &Fixture, task: &str, allow: &str) -> agent::RunOutcome {
    let session = decima_runtime::agent::Session {
        provider: Some("claude"),
        ..f.session(&StopOnFailure)
    };
    run_on_host(f, &session, task, vec![allow.into()]).await
}

/// Runs `task` in a new conversation on the host, the tenth man off.
async fn run_on_host(
    f: &Fixture,
    session: &decima_runtime::agent::Session<'_>,
    task: &str,
    allow_tools: Vec<String>,
) -> agent::RunOutcome {
    agent::run(
        session,
        RunRequest {
            conversation: None,
            workspace: Some(f.workspace()),
            task: task.into(),
            sandbox: decima_store::SandboxKind::Host,
            options: RunOptions {
                allow_tools,
                tenth_man: decima_runtime::review::TenthManMode::Off,
                ..RunOptions::default()
            },
        },
    )
    .await
    .unwrap()
}

fn offered_tools(f: &Fixture, request: usize) -> Vec<String> {
    f.server.requests()[request].json.as_ref().unwrap()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn an_allowed_mcp_call_runs_and_its_result_and_image_reach_the_model() {
    let f = Fixture::new().await;
    with_everything(&f).await;
    f.call(
        "mcp__everything__echo",
        json!({"message": "revenue 1200 EUR"}),
    );
    f.call("mcp__everything__get-tiny-image", json!({}));
    f.say("Done.");
    let outcome = f
        .run(
            "Echo it",
            RunOptions {
                allow_tools: vec!["mcp__everything__*".into()],
                ..RunOptions::default()
            },
        )
        .await;
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    let tools = offered_tools(&f, 0);
    assert!(
        tools.contains(&"mcp__everything__echo".to_owned()),
        "{tools:?}"
    );
    assert!(
        tools.contains(&"shell".to_owned()),
        "built-ins stay: {tools:?}"
    );
    let echo = f.server.requests()[0].json.as_ref().unwrap()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "mcp__everything__echo")
        .unwrap()
        .clone();
    assert_eq!(
        echo["function"]["parameters"]["properties"]["message"]["type"], "string",
        "the server's schema, as it gave it"
    );
    assert_eq!(f.last_tool_result(1), "Echo: revenue 1200 EUR");
    let image = f.last_tool_result(2);
    assert!(image.contains("[image 1: image/png"), "{image}");
    // Named once, where the server had it, with where it was saved.
    assert_eq!(image.matches("[image 1:").count(), 1, "{image}");
    let saved = image
        .split("saved in the workspace as ")
        .nth(1)
        .and_then(|s| s.split(']').next())
        .unwrap();
    let bytes = std::fs::read(f.workspace().join(saved)).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    // The image is kept with its result for the window; an OpenAI-compatible model is not
    // shown it in a tool result, so it costs nothing there.
    let (_, kept) = f.result_with_images(&outcome, "[image 1: image/png").await;
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].media_type, "image/png");
    assert_eq!(kept[0].tokens, 0);

    // The server's secret value never reached the database.
    let db = std::fs::read(f.dir.path().join("decima.db")).unwrap();
    assert!(
        !db.windows(12).any(|w| w == b"s3cret-value"),
        "a secret in SQLite"
    );
    assert!(
        no_server_left(&mark(&f)),
        "the run's server was stopped with the run"
    );
    // How its start went, for Settings: its 13 tools and what their schemas cost.
    match decima_runtime::mcp::status::read(f.dir.path(), "everything") {
        Some(decima_runtime::mcp::status::ServerState::Ready { tools, tokens, .. }) => {
            assert_eq!(tools, 13);
            assert!(tokens > 1_000, "{tokens}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_anthropic_model_is_shown_an_mcp_image_in_its_tool_result_in_every_later_request() {
    let f = Fixture::new().await;
    f.add_provider("claude", "anthropic", "claude-sonnet-4-5", 200_000)
        .await;
    with_everything(&f).await;
    f.call("mcp__everything__get-tiny-image", json!({}));
    f.call("shell", json!({"command": "true"}));
    f.say("It is a tiny image.");
    let outcome = run_on_claude(&f, "Look at the image", "mcp__everything__get-tiny-image").await;
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    let requests = f.server.requests();
    assert_eq!(requests.len(), 3);
    // The result of the image call, in the second request and again in the third.
    for request in &requests[1..] {
        let body = request.json.as_ref().unwrap();
        let result = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .find(|b| {
                b["type"] == "tool_result" && b["content"].to_string().contains("get-tiny-image")
            })
            .unwrap_or_else(|| panic!("no image result in {body}"));
        let blocks = result["content"].as_array().unwrap();
        assert_eq!(blocks[0]["type"], "text");
        assert!(
            blocks[0]["text"]
                .as_str()
                .unwrap()
                .contains("[image 1: image/png"),
            "{result}"
        );
        assert_eq!(blocks[1]["type"], "image");
        assert_eq!(blocks[1]["source"]["type"], "base64");
        assert_eq!(blocks[1]["source"]["media_type"], "image/png");
        use base64::Engine as _;
        let png = base64::engine::general_purpose::STANDARD
            .decode(blocks[1]["source"]["data"].as_str().unwrap())
            .unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }
    // Kept with the result, at what showing it costs; counted in the stored tokens.
    let (result, kept) = f.result_with_images(&outcome, "[image 1: image/png").await;
    assert_eq!(kept.len(), 1);
    assert!(kept[0].tokens > 0);
    assert!(
        result.tokens > kept[0].tokens,
        "text and image: {}",
        result.tokens
    );
}

#[tokio::test]
async fn with_no_one_to_ask_an_mcp_call_is_refused_and_the_run_goes_on() {
    let f = Fixture::new().await;
    with_everything(&f).await;
    f.call("mcp__everything__echo", json!({"message": "hi"}));
    f.say("I could not use it.");
    let outcome = f.run("Echo it", RunOptions::default()).await;
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    let refused = f.last_tool_result(1);
    assert!(refused.contains("needs approval"), "{refused}");
    assert!(
        refused.contains("--allow-tool mcp__everything__echo"),
        "{refused}"
    );
    assert!(!refused.contains("Echo: hi"), "it did not run");
}

#[tokio::test]
async fn the_analysts_answers_run_refuse_and_remember_calls() {
    let f = Fixture::new().await;
    with_everything(&f).await;
    // Answers are popped from the end: deny, then this conversation.
    let approver = Approver {
        answers: Mutex::new(vec![Approval::Conversation, Approval::Deny]),
        asked: Mutex::new(Vec::new()),
    };
    f.call("mcp__everything__echo", json!({"message": "one"}));
    f.call("mcp__everything__echo", json!({"message": "two"}));
    f.call("mcp__everything__echo", json!({"message": "three"}));
    f.say("Done.");
    let outcome = run_asking(&f, &approver, "Echo three times").await;
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    assert!(f.last_tool_result(1).contains("the analyst refused"));
    assert_eq!(f.last_tool_result(2), "Echo: two");
    assert_eq!(
        f.last_tool_result(3),
        "Echo: three",
        "approved for the conversation: not asked again"
    );
    let asked = approver.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[0].tool, "echo");
    assert_eq!(
        asked[0].read_only,
        Some(true),
        "the hint is shown with the question"
    );
    assert!(
        f.store
            .mcp_servers()
            .approved("everything", "echo", outcome.execution.conversation_id)
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn a_server_that_does_not_start_costs_its_tools_and_a_warning_not_the_run() {
    let f = Fixture::new().await;
    let config = ServerConfig::stdio("broken", "/no/such/program", vec![]).at(Place::Host);
    // A server that says why on stderr and exits, in the system's own shell.
    #[cfg(unix)]
    let (shell, script) = (
        "sh",
        [
            "-c",
            "echo 'loading config' >&2; echo 'cannot reach db: connection refused' >&2; exit 1",
        ],
    );
    #[cfg(windows)]
    let (shell, script) = (
        "cmd.exe",
        [
            "/c",
            "1>&2 echo loading config& 1>&2 echo cannot reach db: connection refused& exit 1",
        ],
    );
    let noisy =
        ServerConfig::stdio("noisy", shell, script.map(String::from).to_vec()).at(Place::Host);
    decima_runtime::mcp::servers::add(&f.store, f.dir.path(), &[config, noisy])
        .await
        .unwrap();
    f.say("Fine without it.");
    let outcome = run_asking(&f, &StopOnFailure, "Anything").await;
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    let events = f.events.take();
    let warned = events.iter().any(|e| {
        matches!(e, decima_runtime::Event::Warning { message }
            if message.contains("\"broken\"") && message.contains("not offered"))
    });
    assert!(warned, "{events:?}");
    assert!(
        !offered_tools(&f, 0).iter().any(|t| t.starts_with("mcp__")),
        "no tool of a server that did not start"
    );
    // Settings read how each start went, with the last lines the server wrote.
    use decima_runtime::mcp::status::{self, ServerState};
    let Some(ServerState::Failed { error, .. }) = status::read(f.dir.path(), "broken") else {
        panic!("{:?}", status::read(f.dir.path(), "broken"));
    };
    assert!(error.contains("/no/such/program"), "{error}");
    let Some(ServerState::Failed { stderr, .. }) = status::read(f.dir.path(), "noisy") else {
        panic!("{:?}", status::read(f.dir.path(), "noisy"));
    };
    assert_eq!(
        stderr,
        ["loading config", "cannot reach db: connection refused"]
    );
}

/// A value set in the environment of this fixture's server, to find its process.
fn mark(f: &Fixture) -> String {
    f.dir.path().display().to_string()
}

/// Whether no live process carries `mark` in its environment.
fn no_server_left(mark: &str) -> bool {
    let needle = format!("DECIMA_TEST_MARK={mark}");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .all(|pid| {
            let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().next());
            state == Some("Z") || !env.split(|b| *b == 0).any(|v| v == needle.as_bytes())
        })
}

#[tokio::test]
async fn above_a_tenth_of_the_window_tools_are_found_by_search_and_then_offered() {
    let f = Fixture::new().await;
    // "everything" takes about 1,200 tokens of schemas: more than a tenth of 8,000.
    f.add_provider("small", "openai", "qwen3", 8_000).await;
    with_everything(&f).await;
    f.call(
        "search_tools",
        json!({"query": "echo back the input string"}),
    );
    f.call("mcp__everything__echo", json!({"message": "found"}));
    f.say("Done.");
    let session = decima_runtime::agent::Session {
        provider: Some("small"),
        ..f.session(&StopOnFailure)
    };
    let outcome = agent::run(
        &session,
        RunRequest {
            conversation: None,
            workspace: Some(f.workspace()),
            task: "Echo it".into(),
            sandbox: decima_store::SandboxKind::Host,
            options: RunOptions {
                tenth_man: decima_runtime::review::TenthManMode::Off,
                allow_tools: vec!["mcp__everything__echo".into()],
                ..RunOptions::default()
            },
        },
    )
    .await
    .unwrap();
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    let first = offered_tools(&f, 0);
    assert!(first.contains(&"search_tools".to_owned()), "{first:?}");
    assert!(!first.iter().any(|t| t.starts_with("mcp__")), "{first:?}");
    let found = f.last_tool_result(1);
    assert!(found.contains("mcp__everything__echo"), "{found}");
    let second = offered_tools(&f, 1);
    assert!(
        second.contains(&"mcp__everything__echo".to_owned()),
        "{second:?}"
    );
    assert!(
        second.len() < first.len() + 9,
        "only what the search found was added: {second:?}"
    );
    assert_eq!(f.last_tool_result(2), "Echo: found");
}

#[tokio::test]
async fn a_subagents_mcp_call_is_put_to_whoever_answers_the_parent() {
    let f = Fixture::new().await;
    with_everything(&f).await;
    let approver = Approver {
        answers: Mutex::new(vec![Approval::Once]),
        asked: Mutex::new(Vec::new()),
    };
    // The parent spawns a child; the child calls the server; both answer.
    f.call("spawn_subagent", json!({"task": "Echo the word sub"}));
    f.call("mcp__everything__echo", json!({"message": "sub"}));
    f.say("The child echoed.");
    f.say("Done.");
    let outcome = run_asking(&f, &approver, "Delegate an echo").await;
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    assert_eq!(
        approver.asked.lock().unwrap().len(),
        1,
        "asked once, for the child's call"
    );
    assert_eq!(f.last_tool_result(2), "Echo: sub");
    let events = f.events.take();
    assert!(
        events.iter().any(
            |e| matches!(e, decima_runtime::Event::ApprovalAsked { tool, .. } if tool == "echo")
        ),
        "the parent's view is told that the child waits"
    );
}

/// A server shaped like ones analysts meet (a `z.union` of arguments written as a root
/// `oneOf`, a tool without `inputSchema`, one whose schema is `true`, a nameless entry, a tool
/// list in two pages), speaking MCP's JSON-RPC lines itself. It echoes each call.
const ODD_TOOLS: &str = r#"
const rl = require('readline').createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
rl.on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') {
    send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion,
      capabilities: { tools: {} }, serverInfo: { name: 'odd', version: '1' } } });
  } else if (m.method === 'tools/list' && !(m.params && m.params.cursor)) {
    send({ jsonrpc: '2.0', id: m.id, result: { nextCursor: 'page-2', tools: [
      { name: 'get_resource', description: 'Reads a CI resource.', inputSchema: {
        type: 'object', oneOf: [
          { properties: { id: { type: 'string' } }, required: ['id'] },
          { properties: { full_path: { type: 'string' } }, required: ['full_path'] } ] } },
      { name: 'ping' } ] } });
  } else if (m.method === 'tools/list') {
    send({ jsonrpc: '2.0', id: m.id, result: { tools: [
      { name: 'anything', inputSchema: true }, { description: 'no name' } ] } });
  } else if (m.method === 'tools/call') {
    send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text',
      text: 'called ' + m.params.name + ' with ' + JSON.stringify(m.params.arguments) }] } });
  }
});
"#;

#[tokio::test]
async fn tools_the_sdk_would_refuse_are_offered_and_a_root_union_reaches_anthropic_as_an_object() {
    let f = Fixture::new().await;
    f.add_provider("claude", "anthropic", "claude-sonnet-4-5", 200_000)
        .await;
    let script = f.dir.path().join("odd.js");
    std::fs::write(&script, ODD_TOOLS).unwrap();
    let config = ServerConfig::stdio("odd", "node", vec![script.display().to_string()]);
    decima_runtime::mcp::servers::add(&f.store, f.dir.path(), &[config.at(Place::Host)])
        .await
        .unwrap();
    f.call("mcp__odd__get_resource", json!({"full_path": "group/ci"}));
    f.say("Read it.");
    let outcome = run_on_claude(&f, "Read the CI resource", "mcp__odd__*").await;
    // The test server refuses a root union as Anthropic does, so a run that sent one would
    // have failed on its first request.
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    let requests = f.server.requests();
    assert_eq!(requests.len(), 2);
    let tools = requests[0].json.as_ref().unwrap()["tools"]
        .as_array()
        .unwrap()
        .clone();
    let named = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} not offered: {tools:?}"))
            .clone()
    };
    // Both pages, the tools without a usable schema included; the nameless entry is not.
    for name in ["mcp__odd__ping", "mcp__odd__anything"] {
        assert_eq!(named(name)["input_schema"]["type"], "object");
    }
    assert_eq!(
        tools
            .iter()
            .filter(|t| t["name"].as_str().unwrap().starts_with("mcp__odd__"))
            .count(),
        3
    );
    let union = named("mcp__odd__get_resource")["input_schema"].clone();
    assert!(union.get("oneOf").is_none(), "{union}");
    assert_eq!(union["properties"]["full_path"]["type"], "string");
    assert!(
        union["description"].as_str().unwrap().contains("oneOf"),
        "the rule is kept for the model: {union}"
    );
    let (result, _) = f.result_with_images(&outcome, "called get_resource").await;
    assert!(
        result
            .content
            .contains(r#"called get_resource with {"full_path":"group/ci"}"#),
        "{}",
        result.content
    );
}
