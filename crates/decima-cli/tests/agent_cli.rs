//! The agent loop end to end through the `decima` binary: `run`, `recover`, `resume` and
//! `execution list|show` on a real workspace directory and a real SQLite file, with the model's
//! tool calls scripted by the wire-level test server. Every path a run can take is driven from
//! the command line, and its outcome is read back from stdout, the exit code and the database.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// The signal tests are Unix-only (signals): elsewhere their helpers and imports go unused.
#![cfg_attr(not(unix), allow(unused_imports, dead_code))]

use std::path::Path;
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use decima_core::Role;
use decima_testkit::{Reply, StreamFault, Turn, workspace};
use serde_json::{Value, json};

use crate::common;

use common::*;
use decima_testkit::processes::{group_gone, group_members};

pub(super) fn todos(list: &[(&str, &str)]) -> Value {
    json!({ "todos": list.iter().map(|(title, status)| json!({"title": title, "status": status})).collect::<Vec<_>>() })
}

/// Scripts a todo that is started, reads a file that is not there, and is marked failed: a
/// data failure.
pub(super) fn script_data_failure(env: &Env, missing: &str) {
    env.call(
        "todo_write",
        todos(&[("clean the data", "in_progress"), ("summarise", "pending")]),
    );
    env.call("read_file", json!({"path": missing}));
    env.call(
        "todo_write",
        json!({"todos": [
            {"title": "clean the data", "status": "failed", "reason": "the input file is missing"},
            {"title": "summarise", "status": "pending"}
        ]}),
    );
}

/// The processes (zombies left out) whose working directory is `dir`: what a command run in
/// the workspace left behind.
pub(super) fn running_in(dir: &Path) -> Vec<(i32, String)> {
    let dir = std::fs::canonicalize(dir).unwrap();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if std::fs::read_link(format!("/proc/{pid}/cwd"))
            .ok()
            .as_deref()
            != Some(dir.as_path())
        {
            continue;
        }
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                stat.rsplit_once(')')
                    .map(|(_, rest)| rest.trim_start().starts_with('Z'))
            })
            .unwrap_or(true);
        if !zombie {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            found.push((pid, text(&cmdline).replace('\0', " ")));
        }
    }
    found
}

/// Sends SIGINT (Ctrl-C) to `child` and waits up to 10 s for it to exit; on a timeout kills it
/// and the command's process group `pgid`, if any, and panics.
pub(super) async fn interrupt(mut child: Child, pgid: Option<i32>) -> Output {
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(10) {
            child.kill().unwrap();
            if let Some(pgid) = pgid {
                kill_group(pgid);
            }
            panic!("decima did not stop within 10 s of SIGINT");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.wait_with_output().unwrap()
}

/// 1. A planned run: a todo plan with phases, a shell command writing a file, a read, every
/// todo completed. The answer alone on a piped stdout, the execution id on stderr, the file in
/// the workspace, and the plan, snapshots and step records in the database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planned_run_succeeds_and_is_stored_whole() {
    let env = Env::new().await;
    // Text before a tool call is not the answer: it must not reach stdout.
    env.turn(
        "Let me plan this first.",
        &[(
            "call_0",
            "todo_write",
            &json!({"todos": [
                {"title": "collect", "status": "in_progress", "phase": "gather"},
                {"title": "report", "status": "pending", "phase": "write"}
            ]})
            .to_string(),
        )],
    );
    env.call(
        "shell",
        json!({"command": "mkdir -p out && printf 'a,b\\n1,2\\n' > out/data.csv && wc -l < out/data.csv"}),
    );
    env.call(
        "todo_write",
        json!({"todos": [
            {"title": "collect", "status": "completed", "phase": "gather"},
            {"title": "report", "status": "in_progress", "phase": "write"}
        ]}),
    );
    env.call("read_file", json!({"path": "out/data.csv"}));
    env.call(
        "todo_write",
        json!({"todos": [
            {"title": "collect", "status": "completed", "phase": "gather"},
            {"title": "report", "status": "completed", "phase": "write"}
        ]}),
    );
    let answer = "The data has 2 lines: a header and one row.";
    env.say(answer);

    let out = env.run(&[], "Collect the data and report on it").await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(text(&out.stdout), format!("{answer}\n"), "{stderr}");
    let id = execution_id(&out.stderr);
    assert_eq!(env.server.pending_replies(), 0);
    assert_eq!(
        std::fs::read_to_string(env.ws().join("out/data.csv")).unwrap(),
        "a,b\n1,2\n"
    );
    // The results reached the model: the line count, then the file's content.
    assert!(env.request_text(2).contains("[exit code 0]"));
    assert!(env.request_text(4).contains("a,b\\n1,2"));

    let view = env.show(&id).await;
    assert_eq!(view["id"], id.as_str());
    assert_eq!(view["status"], "succeeded");
    assert_eq!(view["result"], answer);
    assert_eq!(
        Path::new(view["workspace"].as_str().unwrap()),
        std::fs::canonicalize(env.ws()).unwrap()
    );
    let todos = view["todos"].as_array().unwrap();
    assert_eq!(todos.len(), 2, "{view}");
    assert!(todos.iter().all(|t| t["status"] == "completed"), "{view}");
    assert_eq!(todos[0]["phase"], "gather");
    let reasons: Vec<&str> = view["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["reason"].as_str().unwrap())
        .collect();
    assert_eq!(reasons, ["run_start", "todo_start", "todo_start"], "{view}");
    let kinds: Vec<&str> = view["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    for kind in ["analysis", "action", "supervision"] {
        assert!(kinds.contains(&kind), "no {kind} step: {kinds:?}");
    }
    assert_eq!(
        kinds.iter().filter(|k| **k == "analysis").count(),
        6,
        "one per model call: {kinds:?}"
    );
    assert!(view["failures"].as_array().unwrap().is_empty());
}

/// 2. `--json`: one event object per line, the tool, plan, snapshot, context and timing events
/// among them, and the `finished` event last.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_output_is_one_event_per_line_ending_with_finished() {
    let env = Env::new().await;
    env.call(
        "todo_write",
        json!({"todos": [{"title": "write", "status": "in_progress", "phase": "only"}]}),
    );
    env.call("shell", json!({"command": "echo hello > hello.txt"}));
    env.call(
        "todo_write",
        json!({"todos": [{"title": "write", "status": "completed", "phase": "only"}]}),
    );
    env.say("Wrote hello.txt.");
    let out = env.run(&["--json"], "Write hello").await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let id = execution_id(&out.stderr);

    let stdout = text(&out.stdout);
    assert!(stdout.ends_with('\n'));
    let events: Vec<Value> = stdout
        .lines()
        .map(|line| {
            let event: Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"));
            assert!(event.is_object(), "{line}");
            assert!(event["type"].is_string(), "no type: {line}");
            event
        })
        .collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    for wanted in [
        "tool_started",
        "tool_finished",
        "message_stored",
        "todos_changed",
        "snapshot_taken",
        "context_usage",
        "step_timed",
    ] {
        assert!(types.contains(&wanted), "no {wanted} event: {types:?}");
    }
    assert!(
        !stdout.contains("Wrote hello.txt.\n\n"),
        "no bare answer on stdout: {stdout}"
    );
    let last = events.last().unwrap();
    let mut keys: Vec<&str> = last
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["execution_id", "status", "type"], "{last}");
    assert_eq!(
        last,
        &json!({"type": "finished", "execution_id": id, "status": "succeeded"})
    );
    assert_eq!(
        types.iter().filter(|t| **t == "finished").count(),
        1,
        "{types:?}"
    );
}

/// 3. A data failure: the todo rewrites a seeded workspace and then fails. The run exits 6,
/// the workspace is back byte for byte, the report is stored; `recover --choice skip` goes on
/// to the end, and a second recover of the finished execution is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_failure_rolls_back_and_recover_skip_finishes() {
    let env = Env::new().await;
    let ws = env.ws();
    workspace::seed(&ws).unwrap();
    let before = workspace::tree(&ws).unwrap();

    env.call(
        "todo_write",
        todos(&[("clean the data", "in_progress"), ("summarise", "pending")]),
    );
    env.call(
        "shell",
        json!({"command": "rm doomed.txt && mkdir -p new/dir && printf '\\x00\\xff' > new/dir/x.bin && printf changed > a/b/c/deep.txt && head -c 1000 keep.bin > keep.tmp && mv keep.tmp keep.bin && rm -r a/b/c"}),
    );
    env.call("read_file", json!({"path": "missing/input.csv"}));
    env.call(
        "todo_write",
        json!({"todos": [
            {"title": "clean the data", "status": "failed", "reason": "the input file is missing"},
            {"title": "summarise", "status": "pending"}
        ]}),
    );
    let out = env
        .run(&["--on-failure", "stop"], "Clean and summarise")
        .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    let id = execution_id(&out.stderr);
    assert_eq!(
        workspace::tree(&ws).unwrap(),
        before,
        "the workspace is back byte for byte"
    );

    let view = env.show(&id).await;
    assert_eq!(view["status"], "awaiting_user", "{view}");
    let failures = view["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1, "{view}");
    let failure = &failures[0];
    assert_eq!(failure["class"], "data", "{failure}");
    assert!(!failure["message"].as_str().unwrap().is_empty());
    assert!(
        failure["rolled_back"]
            .as_object()
            .is_some_and(|r| !r.is_empty()),
        "{failure}"
    );
    assert!(
        failure["rolled_back"]["files_removed"].as_u64().unwrap() >= 1,
        "{failure}"
    );
    assert!(
        failure["suggestions"]
            .as_array()
            .is_some_and(|s| !s.is_empty()),
        "{failure}"
    );
    assert!(failure["resolution"].is_null(), "{failure}");
    assert_eq!(failure["details"]["place"]["todo_title"], "clean the data");
    // The plan is back to when the todo started.
    assert_eq!(view["todos"][0]["status"], "in_progress", "{view}");

    env.call(
        "todo_write",
        todos(&[("clean the data", "skipped"), ("summarise", "completed")]),
    );
    env.say("Skipped the cleaning; summary done.");
    let out = env.decima(&["recover", &id, "--choice", "skip"]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(text(&out.stdout), "Skipped the cleaning; summary done.\n");
    let n = env.server.requests().len();
    assert!(
        env.request_text(n - 2).contains("skipped this todo"),
        "the model was told: {}",
        env.request_text(n - 2)
    );

    let view = env.show(&id).await;
    assert_eq!(view["status"], "succeeded", "{view}");
    assert_eq!(view["todos"][0]["status"], "skipped", "{view}");
    assert_eq!(view["todos"][1]["status"], "completed", "{view}");
    assert_eq!(view["failures"][0]["resolution"], "skip", "{view}");

    let again = env.decima(&["recover", &id, "--choice", "retry"]).await;
    assert_eq!(again.status.code(), Some(2), "{}", text(&again.stderr));
    assert!(again.stdout.is_empty());
    assert!(
        text(&again.stderr).contains("not awaiting a choice"),
        "{}",
        text(&again.stderr)
    );
}

/// 4. `recover --choice replan` hands the model the failure report; `retry` tries the todo
/// again and can succeed; `abort` ends the execution cancelled with exit 130.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recover_replan_retry_and_abort() {
    let env = Env::new().await;
    script_data_failure(&env, "missing/one.csv");
    let out = env.run(&[], "Clean and summarise").await;
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    let id = execution_id(&out.stderr);

    // Replan: the new plan fails again.
    let first_after_replan = env.server.requests().len();
    script_data_failure(&env, "missing/two.csv");
    let out = env
        .decima(&[
            "recover",
            &id,
            "--choice",
            "replan",
            "--note",
            "the inputs are under missing/",
        ])
        .await;
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    let request = env.request_text(first_after_replan);
    assert!(request.contains("Failure report"), "{request}");
    assert!(
        request.contains("the inputs are under missing/"),
        "{request}"
    );
    assert!(request.contains("write a new plan"), "{request}");
    assert!(request.contains("clean the data"), "{request}");

    // Retry: the todo is tried again, and this time it works.
    let first_after_retry = env.server.requests().len();
    std::fs::write(env.ws().join("input.csv"), "x\n1\n").unwrap();
    env.call("read_file", json!({"path": "input.csv"}));
    env.call(
        "todo_write",
        todos(&[("clean the data", "completed"), ("summarise", "completed")]),
    );
    env.say("Cleaned and summarised.");
    let out = env.decima(&["recover", &id, "--choice", "retry"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Cleaned and summarised.\n");
    let request = env.request_text(first_after_retry);
    assert!(request.contains("try this todo again"), "{request}");
    let view = env.show(&id).await;
    assert_eq!(view["status"], "succeeded", "{view}");
    let resolutions: Vec<&Value> = view["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["resolution"])
        .collect();
    assert_eq!(resolutions, [&json!("replan"), &json!("retry")], "{view}");

    // Abort, on a second execution.
    script_data_failure(&env, "missing/three.csv");
    let out = env.run(&[], "Clean again").await;
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    let second = execution_id(&out.stderr);
    let requests = env.server.requests().len();
    let out = env.decima(&["recover", &second, "--choice", "abort"]).await;
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    assert_eq!(
        env.server.requests().len(),
        requests,
        "abort asks the model nothing"
    );
    let view = env.show(&second).await;
    assert_eq!(view["status"], "cancelled", "{view}");
    assert_eq!(view["failures"][0]["resolution"], "abort", "{view}");
}

/// 5. A run killed with SIGKILL while a command runs is marked interrupted by the next
/// command; `resume` continues it without running the call again and tells the model its
/// effect is unknown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_run_is_interrupted_and_resume_never_repeats_the_call() {
    let env = Env::new().await;
    let ws = env.ws();
    // The second call of the answer never starts: it must not run on resume either.
    script_long_call_then_another(&env);
    let mut child = env.spawn_run("Do it once");
    wait_for_file(&ws.join("effects"), Duration::from_secs(60), &mut child).await;
    let pgid = read_pid(&ws.join("pid"));
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    let id = execution_id(&out.stderr);

    let shown = env.decima(&["execution", "show", &id, "--json"]).await;
    // SIGKILL spares the command's process group: it is the test's to clean up.
    kill_group(pgid);
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    assert!(
        text(&shown.stderr).contains(&format!("execution {id} was interrupted")),
        "the next command says it marked the run: {}",
        text(&shown.stderr)
    );
    let view: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(view["status"], "interrupted", "{view}");

    env.say("It may or may not have run; I checked.");
    let out = env.decima(&["resume", &id]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        text(&out.stdout),
        "It may or may not have run; I checked.\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("effects")).unwrap(),
        "ran\n",
        "the call ran once"
    );
    let view = env.show(&id).await;
    assert_eq!(view["status"], "succeeded", "{view}");
    let messages = env.messages(&view).await;
    let calls = call_ids(&messages);
    assert_eq!(calls, ["call_0", "call_1"]);
    let result = tool_result(&messages, "call_0");
    assert!(
        result.contains("[interrupted]") && result.contains("effect is unknown"),
        "{result}"
    );
    let result = tool_result(&messages, "call_1");
    assert!(
        result.contains("[interrupted]") && result.contains("did not run"),
        "{result}"
    );
    // The model was told the same.
    assert!(env.request_text(1).contains("effect is unknown"));

    let again = env.decima(&["resume", &id]).await;
    assert_eq!(again.status.code(), Some(2), "{}", text(&again.stderr));
}

/// 6. Ctrl-C (SIGINT) while a command runs: the command's process is killed, the run ends
/// cancelled with exit 130, and the stored tool result says so.
// Signals: Unix by nature (Windows stops a process with Ctrl-Break, which a test cannot send
// to a process without a console of its own).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_cancels_the_run_and_kills_the_command() {
    let env = Env::new().await;
    let ws = env.ws();
    env.call("shell", json!({"command": "echo $$ > pid; sleep 600"}));
    let mut child = env.spawn_run("Wait");
    wait_for_file(&ws.join("pid"), Duration::from_secs(60), &mut child).await;
    let pid = read_pid(&ws.join("pid"));
    // The shell leads a process group of its own, with its `sleep` in it.
    assert!(group_members(pid).len() >= 2, "{:?}", group_members(pid));
    assert!(
        running_in(&ws)
            .iter()
            .any(|(_, cmd)| cmd.contains("sleep 600")),
        "{:?}",
        running_in(&ws)
    );
    let out = interrupt(child, Some(pid)).await;
    let stderr = text(&out.stderr);
    let leftover = group_gone(pid, Duration::from_secs(2)).await;
    kill_group(pid);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        leftover.is_empty(),
        "the command was killed: {leftover:?} remain"
    );
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the shell {pid} is gone"
    );
    assert_eq!(running_in(&ws), [], "nothing runs in the workspace");
    let id = execution_id(&out.stderr);
    let view = env.show(&id).await;
    assert_eq!(view["status"], "cancelled", "{view}");
    let messages = env.messages(&view).await;
    let result = tool_result(&messages, "call_0");
    assert!(result.contains("[cancelled]"), "{result}");
}

/// 6b. Ctrl-C while the model is still answering: the request is dropped, the run ends
/// cancelled with exit 130, and the half answer is kept, marked as stopped (never as a whole
/// answer, and without the calls it may have begun).
// Signals: Unix by nature (Windows stops a process with Ctrl-Break, which a test cannot send
// to a process without a console of its own).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_while_the_model_answers_cancels_the_run() {
    let env = Env::new().await;
    env.server.enqueue(Reply::Stream(Turn {
        text: vec!["Half an ".into(), "answer".into()],
        fault: Some(StreamFault::StallAfter(2)),
        ..Turn::default()
    }));
    let child = env.spawn_run("Wait on the model");
    env.server
        .wait_for_requests(1, Duration::from_secs(60))
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let out = interrupt(child, None).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(
        env.server
            .wait_for_disconnect(0, Duration::from_secs(5))
            .await
            .is_some(),
        "the request was dropped"
    );
    let id = execution_id(&out.stderr);
    let view = env.show(&id).await;
    assert_eq!(view["status"], "cancelled", "{view}");
    // What the model had said is kept, marked as stopped, where the run stopped.
    let messages = env.messages(&view).await;
    let said: Vec<_> = messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .collect();
    assert_eq!(said.len(), 1, "{messages:?}");
    assert!(said[0].tool_calls.is_empty(), "{messages:?}");
    let shown = env
        .decima(&[
            "conversation",
            "show",
            view["conversation_id"].as_str().unwrap(),
            "--json",
        ])
        .await;
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    let shown: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    let answer = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    assert_eq!(answer["answer"]["ended"], "stopped", "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quick_run_answers_in_one_request_with_no_tool_offered() {
    let env = Env::new().await;
    env.say("Four.");
    // Asked for the tenth man too: a quick chat still neither offers it nor reviews.
    let out = env
        .run(&["--quick", "--tenth-man", "hybrid"], "What is 2 + 2?")
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Four.");
    let requests = env.server.requests();
    assert_eq!(requests.len(), 1, "one answer and no final review");
    let tools = &requests[0].json.as_ref().unwrap()["tools"];
    assert!(
        tools.is_null() || tools.as_array().is_some_and(Vec::is_empty),
        "{tools}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_providers_tenth_man_default_is_refused_for_an_unknown_provider_or_mode() {
    let env = Env::new().await;
    let unknown = env
        .decima(&["provider", "tenth-man", "nobody", "off"])
        .await;
    assert!(!unknown.status.success());
    assert!(
        text(&unknown.stderr).contains("nobody"),
        "{}",
        text(&unknown.stderr)
    );
    let mode = env
        .decima(&["provider", "tenth-man", "nobody", "sometimes"])
        .await;
    assert!(!mode.status.success());
    let said = text(&mode.stderr);
    assert!(
        said.contains("off, tool_only, system_only, hybrid or default")
            && said.contains("sometimes"),
        "{said}"
    );
}
