//! Subagents end to end through the `decima` binary: a parent plants facts (in a tool result
//! and in its reasoning) and spawns a child; the child finds them by grepping the history file
//! its first message points at; the parent gets the child's answer. A grandchild greps its
//! grandparent's file; children of one answer run side by side; every limit refuses with a
//! message the model can act on. The model is a function of the request the wire-level test
//! server receives, so parallel children get consistent answers whatever order they ask in.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::process::Output;

use common::{DockerCleanup, Env, TEST_IMAGE, docker_conversation, execution_id, text};
use decima_testkit::{RecordedRequest, Reply, ScriptedToolCall, Turn};

use serde_json::{Value, json};

/// The planted facts: one only in a tool result, one only in the parent's reasoning.
const TOOL_FACT: &str = "ZEBRA-7731";
const REASONING_FACT: &str = "Marguerite Okonkwo";

/// The scripted model. Who is asking is read from the conversation's first user message.
fn model(request: &RecordedRequest) -> Reply {
    let body = request.json.as_ref().expect("a JSON request");
    let messages = body["messages"].as_array().expect("messages");
    let first_user = messages
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    let results: Vec<String> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    let last = results.last().cloned().unwrap_or_default();
    let step = results.len();
    let role = [
        "PLANT", "GREP", "RELAY", "DEEP", "FANOUT", "WAITER", "CHAIN", "QUICK", "HELLO",
    ]
    .into_iter()
    .find(|r| task_of(&first_user).starts_with(r))
    .unwrap_or("?");
    match (role, step) {
        ("PLANT", 0) => Turn {
            reasoning: vec![format!("The auditor on this case is {REASONING_FACT}.")],
            tool_calls: vec![call(
                "p1",
                "shell",
                json!({"command": format!("echo 'vault code: {TOOL_FACT}'")}),
            )],
            ..Turn::default()
        },
        ("PLANT", 1) => spawn("p2", "GREP: find the vault code and the auditor's name"),
        ("GREP", 0) => {
            let path = parent_history(&first_user);
            shell(
                "c1",
                &format!(
                    "grep -o 'ZEBRA-[0-9]*' {path} | head -n 1; \
                     grep -o 'Marguerite [A-Z][a-z]*' {path} | head -n 1"
                ),
            )
        }
        ("RELAY", 0) => spawn("r1", "DEEP: find the cipher your grandparent noted"),
        ("CHAIN", 0) => spawn("h1", "RELAY: pass it on"),
        ("DEEP", 0) => {
            let path = ancestor_history(&first_user);
            shell("g1", &format!("grep -o 'OSPREY-[0-9]*' {path} | head -n 1"))
        }
        ("FANOUT", 0) => spawn_three("WAITER", "wait for your siblings"),
        ("QUICK", 0) => spawn_three("HELLO", "say hello"),
        ("HELLO", 0) => say("hello"),
        ("WAITER", 0) => {
            let n = task_of(&first_user)
                .chars()
                .nth(7)
                .expect("WAITER n")
                .to_string();
            // Each child marks its start, then waits (up to 30 s) until all three have started:
            // run one after the other, the first would time out seeing only itself.
            shell(
                "w1",
                &format!(
                    "touch started_{n}; i=0; while [ $(ls started_* | wc -l) -lt 3 ] && \
                     [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; \
                     echo \"siblings seen: $(ls started_* | wc -l)\""
                ),
            )
        }
        // The parent's last step answers with every result it got, so a test can read them.
        (_, _) if ["PLANT", "RELAY", "FANOUT", "CHAIN", "QUICK"].contains(&role) => {
            say(&format!("final: {}", results.join(" | ")))
        }
        (_, _) => say(&format!("found: {last}")),
    }
    .into_reply()
}

/// The model, with a top-level run that plants a cipher with a shell call, then spawns a relay
/// that spawns the grandchild.
fn plant_deep(request: &RecordedRequest) -> Reply {
    let body = request.json.as_ref().unwrap().to_string();
    if body.contains("PLANT-DEEP") && !body.contains("You are a subagent") {
        let results = body.matches("\"role\":\"tool\"").count();
        return match results {
            0 => shell("t1", "echo 'cipher: OSPREY-42'"),
            1 => spawn("t2", "RELAY: ask a helper to find the cipher"),
            _ => say("final: done"),
        }
        .into_reply();
    }
    model(request)
}

trait IntoReply {
    fn into_reply(self) -> Reply;
}

impl IntoReply for Turn {
    fn into_reply(self) -> Reply {
        Reply::Stream(self)
    }
}

fn call(id: &str, name: &str, args: Value) -> ScriptedToolCall {
    ScriptedToolCall {
        id: id.into(),
        name: name.into(),
        argument_chunks: vec![args.to_string()],
    }
}

fn shell(id: &str, command: &str) -> Turn {
    Turn {
        tool_calls: vec![call(id, "shell", json!({ "command": command }))],
        ..Turn::default()
    }
}

fn spawn(id: &str, task: &str) -> Turn {
    Turn {
        tool_calls: vec![call(id, "spawn_subagent", json!({ "task": task }))],
        ..Turn::default()
    }
}

/// Three spawn_subagent calls in one answer: `PREFIX n: what` for n = 1..=3.
fn spawn_three(prefix: &str, what: &str) -> Turn {
    Turn {
        tool_calls: (1..=3)
            .map(|n| {
                call(
                    &format!("s{n}"),
                    "spawn_subagent",
                    json!({"task": format!("{prefix} {n}: {what}")}),
                )
            })
            .collect(),
        ..Turn::default()
    }
}

fn say(text: &str) -> Turn {
    Turn {
        text: vec![text.into()],
        ..Turn::default()
    }
}

/// A subagent's task is the last section of its first message; a top-level run's is the
/// message itself.
fn task_of(first_user: &str) -> &str {
    first_user
        .rsplit_once("## Your task\n")
        .map_or(first_user, |(_, task)| task)
        .trim()
}

/// The path in the first message's `grep -n -i 'keyword' PATH` example.
fn parent_history(first_user: &str) -> String {
    first_user
        .lines()
        .find_map(|l| l.trim().strip_prefix("grep -n -i 'keyword' "))
        .expect("a grep example with the parent's history path")
        .to_owned()
}

/// The first path listed under the older ancestors' histories.
fn ancestor_history(first_user: &str) -> String {
    let (_, after) = first_user
        .split_once("Older ancestors' histories, nearest first:\n")
        .expect("a list of ancestors' histories");
    after.lines().next().unwrap().trim().to_owned()
}

async fn run(env: &Env, extra: &[&str], task: &str) -> (Output, String) {
    let out = env.run(extra, task).await;
    let id = execution_id(&out.stderr);
    (out, id)
}

async fn tree(env: &Env, id: &str) -> Value {
    let out = env.decima(&["execution", "tree", id, "--json"]).await;
    assert!(out.status.success(), "tree: {}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The first request a subagent made: the one whose first user message is its brief.
fn first_request_of(env: &Env, task_prefix: &str) -> String {
    env.server
        .requests()
        .iter()
        .filter_map(|r| r.json.as_ref())
        .find(|body| {
            body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["role"] == "user")
                .and_then(|m| m["content"].as_str())
                .is_some_and(|c| task_of(c).starts_with(task_prefix))
        })
        .unwrap_or_else(|| panic!("no request from the {task_prefix} subagent"))
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_greps_its_parents_history_and_its_answer_comes_back() {
    let env = Env::new().await;
    env.server.respond_with(model);
    let (out, id) = run(&env, &[], "PLANT: audit the vault").await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    // The child found both facts in the file, and its answer is the parent's tool result.
    assert!(stdout.contains(TOOL_FACT), "{stdout}");
    assert!(stdout.contains(REASONING_FACT), "{stdout}");
    assert!(stdout.contains("found: "), "{stdout}");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("[subagent "), "{stderr}");

    // The child's first request: the brief, the path and the grep example.
    let first = first_request_of(&env, "GREP");
    let history = env
        .data_dir()
        .join("context")
        .join(format!("history_{id}.txt"))
        .to_string_lossy()
        .into_owned();
    assert!(first.contains("Goal: PLANT: audit the vault"), "{first}");
    assert!(
        first.contains(&format!("grep -n -i 'keyword' {history}")),
        "{first}"
    );
    assert!(
        first.contains("You are a subagent (depth 1 of at most 3)"),
        "{first}"
    );
    // The file holds the fact from the tool result and the one from the reasoning.
    let file = std::fs::read_to_string(&history).unwrap();
    assert!(file.contains(TOOL_FACT) && file.contains(REASONING_FACT));
    assert!(file.contains("@reasoning") && file.contains("@tool_call"));
    assert!(file.contains("### seq=1 role=user"));

    // Stored as a tree: the child is an execution of the parent at depth 1.
    let tree = tree(&env, &id).await;
    assert_eq!(tree["status"], "succeeded");
    let children = tree["subagents"].as_array().unwrap();
    assert_eq!(children.len(), 1, "{tree}");
    assert_eq!(children[0]["depth"], 1);
    assert_eq!(children[0]["status"], "succeeded");
    assert_eq!(children[0]["parent_id"], id.as_str());
    assert!(children[0]["result"].as_str().unwrap().contains(TOOL_FACT));
    let show = env.show(&id).await;
    assert_eq!(show["children"][0]["id"], children[0]["id"]);
    let shown = env.decima(&["execution", "show", &id]).await;
    assert!(text(&shown.stdout).contains("subagents (1):"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grandchild_greps_its_grandparents_history() {
    let env = Env::new().await;
    env.server.respond_with(plant_deep);
    let (out, id) = run(&env, &[], "PLANT-DEEP: note a cipher").await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let first = first_request_of(&env, "DEEP");
    assert!(
        first.contains("You are a subagent (depth 2 of at most 3)"),
        "{first}"
    );
    assert!(first.contains(&format!("history_{id}.txt")), "{first}");
    let tree = tree(&env, &id).await;
    let relay = &tree["subagents"][0];
    let deep = &relay["subagents"][0];
    assert_eq!(deep["depth"], 2, "{tree}");
    assert!(
        deep["result"].as_str().unwrap().contains("OSPREY-42"),
        "the grandchild did not find the cipher: {tree}"
    );
    assert!(relay["result"].as_str().unwrap().contains("OSPREY-42"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_spawns_of_one_answer_run_side_by_side() {
    let env = Env::new().await;
    env.server.respond_with(model);
    let (out, id) = run(&env, &[], "FANOUT: three at once").await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(
        stdout.matches("siblings seen: 3").count(),
        3,
        "every child saw the other two running: {stdout}"
    );
    let tree = tree(&env, &id).await;
    assert_eq!(tree["subagents"].as_array().unwrap().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_refuse_with_a_clear_tool_error() {
    // Children per parent: the third spawn is refused, the first two run.
    let env = Env::new().await;
    env.server.respond_with(model);
    let (out, id) = run(&env, &["--subagent-children", "2"], "QUICK: three at once").await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("spawn_subagent refused: this execution has already spawned 2"),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert_eq!(
        tree(&env, &id).await["subagents"].as_array().unwrap().len(),
        2
    );

    // Running at once: one runs, the other two are refused.
    let env = Env::new().await;
    env.server.respond_with(model);
    let (out, _) = run(&env, &["--subagent-running", "1"], "QUICK: three at once").await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(
        stdout.matches("the most allowed at once").count(),
        2,
        "{stdout}"
    );

    // Depth: the relay at depth 1 may not spawn a grandchild when the limit is 1.
    let env = Env::new().await;
    env.server.respond_with(model);
    let (out, id) = run(&env, &["--subagent-depth", "1"], "CHAIN: pass it down").await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("a subagent here would be at depth 2, and the limit is 1"),
        "{stdout}"
    );
    let tree = tree(&env, &id).await;
    assert_eq!(tree["subagents"][0]["depth"], 1, "{tree}");
    assert!(
        tree["subagents"][0]["subagents"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_child_comes_back_as_a_failed_result_with_its_class() {
    let env = Env::new().await;
    env.server.respond_with(|request| {
        let body = request.json.as_ref().unwrap().to_string();
        if body.contains("You are a subagent") {
            // The child's provider refuses it: a permission failure, which ends the child.
            return Reply::unauthorized();
        }
        match body.matches("\"role\":\"tool\"").count() {
            0 => spawn("x1", "DOOMED: this will not work").into_reply(),
            _ => say("final: gave up").into_reply(),
        }
    });
    let (out, id) = run(&env, &["--on-failure", "stop"], "Delegate the doomed part").await;
    // The child's permission failure is the parent's failed call: the parent takes its own
    // failure path and waits for a choice.
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    let show = env.show(&id).await;
    assert_eq!(show["failures"][0]["class"], "permission", "{show}");
    let messages = env.messages(&show).await;
    let result = messages
        .iter()
        .find(|m| m.tool_call_id.as_deref() == Some("x1"))
        .map(|m| m.content.clone())
        .or_else(|| {
            // The rollback may have removed the result; the failure report keeps the message.
            show["failures"][0]["message"].as_str().map(str::to_owned)
        })
        .unwrap();
    assert!(result.contains("[tool error: permission]"), "{result}");
    assert!(result.contains("did not finish its task"), "{result}");
    let tree = tree(&env, &id).await;
    assert_eq!(tree["subagents"][0]["status"], "failed", "{tree}");
    assert!(
        tree["subagents"][0]["error"]
            .as_str()
            .unwrap()
            .starts_with("[permission]"),
        "{tree}"
    );
}

// ---------------------------------------------------------------------------------------------
// The same through the Docker sandbox, on the real engine the test scripts start.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_docker_a_child_and_a_grandchild_grep_their_ancestors_files_in_the_container() {
    let env = Env::new().await;
    let (conversation, _cleanup) = docker_conversation(&env).await;
    env.server.respond_with(model);
    let (out, id) = run(
        &env,
        &["--conversation", &conversation, "--sandbox", "docker"],
        "PLANT: audit the vault",
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains(TOOL_FACT), "{stdout}");
    assert!(stdout.contains(REASONING_FACT), "{stdout}");
    // The child was told the container path, and grepped it there.
    let first = first_request_of(&env, "GREP");
    assert!(
        first.contains(&format!(
            "grep -n -i 'keyword' /workspace/context/history_{id}.txt"
        )),
        "{first}"
    );
    let shown = tree(&env, &id).await;
    assert_eq!(shown["sandbox"], "docker");
    assert_eq!(shown["subagents"][0]["sandbox"], "docker");
    assert_eq!(shown["subagents"][0]["status"], "succeeded");

    // A grandchild in the same container greps its grandparent's file.
    let env = Env::new().await;
    let (conversation, _cleanup) = docker_conversation(&env).await;
    env.server.respond_with(plant_deep);
    let (out, id) = run(
        &env,
        &["--conversation", &conversation, "--sandbox", "docker"],
        "PLANT-DEEP: note a cipher",
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let first = first_request_of(&env, "DEEP");
    assert!(
        first.contains(&format!("/workspace/context/history_{id}.txt")),
        "{first}"
    );
    let tree = tree(&env, &id).await;
    let deep = &tree["subagents"][0]["subagents"][0];
    assert_eq!(deep["depth"], 2, "{tree}");
    assert!(
        deep["result"].as_str().unwrap().contains("OSPREY-42"),
        "the grandchild did not find the cipher in the container: {tree}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_docker_a_fifty_megabyte_history_arrives_intact() {
    let env = Env::new().await;
    // 50 MB of history: 500 messages of 100 KB, each line different.
    let lines: Vec<String> = (0..500)
        .map(|i| {
            let body: String = (0..1_000)
                .map(|j| format!("{:099}\n", i * 1_000 + j))
                .collect();
            serde_json::json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": body})
                .to_string()
        })
        .collect();
    let jsonl = env.dir.path().join("big.jsonl");
    std::fs::write(&jsonl, lines.join("\n")).unwrap();
    let out = env
        .decima(&[
            "conversation",
            "import",
            jsonl.to_str().unwrap(),
            "--title",
            "big",
        ])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let conversation = text(&out.stdout).trim().to_owned();
    let out = env
        .decima(&[
            "conversation",
            "sandbox",
            &conversation,
            "--image",
            TEST_IMAGE,
        ])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let data_dir = std::path::absolute(env.data_dir()).unwrap();
    let _cleanup = DockerCleanup(decima_sandbox::DockerEngine::instance_for_data_dir(
        &data_dir,
    ));
    env.server.respond_with(|request| {
        let body = request.json.as_ref().unwrap().to_string();
        if body.contains("You are a subagent") {
            let first = body_first_user(request);
            let path = parent_history(&first);
            return match body.matches("\"role\":\"tool\"").count() {
                0 => shell("k1", &format!("sha256sum {path}; wc -c < {path}")),
                _ => say(&format!(
                    "found: {}",
                    last_tool_result(request).unwrap_or_default()
                )),
            }
            .into_reply();
        }
        match body.matches("\"role\":\"tool\"").count() {
            0 => spawn("b1", "CHECKSUM: hash your parent's history file"),
            _ => say(&format!(
                "final: {}",
                last_tool_result(request).unwrap_or_default()
            )),
        }
        .into_reply()
    });
    let (out, id) = run(
        &env,
        &[
            "--conversation",
            &conversation,
            "--sandbox",
            "docker",
            "--no-phase-compression",
        ],
        "Hash the history",
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let host_file = data_dir.join("context").join(format!("history_{id}.txt"));
    let size = std::fs::metadata(&host_file).unwrap().len();
    assert!(size > 50_000_000, "the history is {size} bytes");
    let host_sum = std::process::Command::new("sha256sum")
        .arg(&host_file)
        .output()
        .unwrap();
    let host_sum = text(&host_sum.stdout)[..64].to_owned();
    let stdout = text(&out.stdout);
    assert!(stdout.contains(&host_sum), "{host_sum} not in {stdout}");
    assert!(stdout.contains(&size.to_string()), "{size} not in {stdout}");
}

fn body_first_user(request: &RecordedRequest) -> String {
    request.json.as_ref().unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

fn last_tool_result(request: &RecordedRequest) -> Option<String> {
    request.json.as_ref().unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .map(str::to_owned)
}

/// A unix socket that forwards to the real engine's until cut: the engine, as the client sees
/// it, stops mid-run; the real engine (which other tests use) keeps running. Unix only: on
/// Windows the engine is a named pipe.
#[cfg(unix)]
struct EngineProxy {
    path: std::path::PathBuf,
    tasks: std::sync::Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>,
}

#[cfg(unix)]
impl EngineProxy {
    fn start(path: std::path::PathBuf) -> Self {
        let listener = tokio::net::UnixListener::bind(&path).unwrap();
        let tasks = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let accepting = {
            let tasks = std::sync::Arc::clone(&tasks);
            tokio::spawn(async move {
                loop {
                    let Ok((mut client, _)) = listener.accept().await else {
                        return;
                    };
                    let task = tokio::spawn(async move {
                        if let Ok(mut engine) =
                            tokio::net::UnixStream::connect("/var/run/docker.sock").await
                        {
                            let _ = tokio::io::copy_bidirectional(&mut client, &mut engine).await;
                        }
                    });
                    tasks.lock().unwrap().push(task.abort_handle());
                }
            })
        };
        tasks.lock().unwrap().push(accepting.abort_handle());
        Self { path, tasks }
    }

    /// Stops accepting, drops every open connection and removes the socket.
    fn cutter(&self) -> impl Fn() + Send + Sync + 'static {
        let tasks = std::sync::Arc::clone(&self.tasks);
        let path = self.path.clone();
        move || {
            for task in tasks.lock().unwrap().drain(..) {
                task.abort();
            }
            let _ = std::fs::remove_file(&path);
        }
    }
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_engine_that_stops_mid_run_is_a_system_failure_with_rollback_not_a_hang() {
    let env = Env::new().await;
    let (conversation, _cleanup) = docker_conversation(&env).await;
    let socket = env.dir.path().join("engine.sock");
    let proxy = EngineProxy::start(socket.clone());
    let cut = proxy.cutter();
    env.server.respond_with(move |request| {
        let body = request.json.as_ref().unwrap().to_string();
        match body.matches("\"role\":\"tool\"").count() {
            0 => Turn {
                tool_calls: vec![call(
                    "t1",
                    "todo_write",
                    json!({"todos": [{"title": "Count the rows", "status": "in_progress"}]}),
                )],
                ..Turn::default()
            },
            1 => shell("t2", "echo one > a.txt && cat a.txt"),
            2 => {
                // The engine goes away between two calls.
                cut();
                shell("t3", "cat a.txt")
            }
            _ => say("done"),
        }
        .into_reply()
    });
    let started = std::time::Instant::now();
    let mut cmd = env.command(&[
        "run",
        "--conversation",
        &conversation,
        "--sandbox",
        "docker",
        "--on-failure",
        "stop",
        "Count the rows",
    ]);
    cmd.env("DOCKER_HOST", format!("unix://{}", socket.display()));
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let took = started.elapsed();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    assert!(took < std::time::Duration::from_secs(90), "took {took:?}");
    assert!(stderr.contains("[system]"), "{stderr}");
    assert!(
        stderr.contains("dockerd"),
        "the message says what to do: {stderr}"
    );
    let id = execution_id(&out.stderr);
    let show = env.show(&id).await;
    assert_eq!(show["status"], "awaiting_user");
    let failure = &show["failures"][0];
    assert_eq!(failure["class"], "system", "{show}");
    // The history and the plan went back to the todo's start; the workspace could not be
    // reached, and the report says so.
    assert!(
        failure["rolled_back"]["messages_removed"].as_u64().unwrap() >= 2,
        "{failure}"
    );
    assert!(
        failure["rolled_back"]["workspace_error"].as_str().is_some(),
        "{failure}"
    );
}
