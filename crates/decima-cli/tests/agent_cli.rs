//! The agent loop end to end through the `decima` binary: `run`, `recover`, `resume` and
//! `execution list|show` on a real workspace directory and a real SQLite file, with the model's
//! tool calls scripted by the wire-level test server. Every path a run can take is driven from
//! the command line, and its outcome is read back from stdout, the exit code and the database.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use decima_core::Role;
use decima_testkit::{Reply, StreamFault, Turn, workspace};
use serde_json::{Value, json};

use crate::common;

use common::*;
use decima_testkit::processes::group_members;

fn todos(list: &[(&str, &str)]) -> Value {
    json!({ "todos": list.iter().map(|(title, status)| json!({"title": title, "status": status})).collect::<Vec<_>>() })
}

/// Scripts a todo that is started, reads a file that is not there, and is marked failed: a
/// data failure.
fn script_data_failure(env: &Env, missing: &str) {
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
fn running_in(dir: &Path) -> Vec<(i32, String)> {
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

/// Waits up to `limit` for process group `pgid` to be gone; returns what is left.
async fn group_gone(pgid: i32, limit: Duration) -> Vec<i32> {
    let started = Instant::now();
    loop {
        let members = group_members(pgid);
        if members.is_empty() || started.elapsed() > limit {
            return members;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Sends SIGINT (Ctrl-C) to `child` and waits up to 10 s for it to exit; on a timeout kills it
/// and the command's process group `pgid`, if any, and panics.
async fn interrupt(mut child: Child, pgid: Option<i32>) -> Output {
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
    assert_eq!(reasons, ["todo_start", "todo_start"], "{view}");
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
    let out = env.decima(&["recover", &id, "--choice", "replan"]).await;
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    let request = env.request_text(first_after_replan);
    assert!(request.contains("Failure report"), "{request}");
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
/// cancelled with exit 130, and the half answer is not stored as the model's.
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
    let messages = env.messages(&view).await;
    assert!(
        messages.iter().all(|m| m.role != Role::Assistant),
        "{messages:?}"
    );
}

/// 7. `--max-steps 2` with a model that keeps calling tools: exit 6 on a step_budget failure,
/// and `recover --choice retry` grants another budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_step_budget_waits_and_retry_grants_another() {
    let env = Env::new().await;
    for i in 0..3 {
        env.call("shell", json!({"command": format!("echo {i} >> steps")}));
    }
    env.say("done");
    let out = env.run(&["--max-steps", "2", "--json"], "Loop").await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    assert_eq!(env.server.requests().len(), 2);
    let id = execution_id(&out.stderr);
    // The last line says where it stopped; the exit message names the execution.
    let stdout = text(&out.stdout);
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(
        last,
        json!({"type": "finished", "execution_id": id, "status": "awaiting_user"})
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.contains(r#""type":"awaiting_choice""#)),
        "{stdout}"
    );
    assert!(stderr.lines().last().unwrap().contains(&id), "{stderr}");
    let view = env.show(&id).await;
    assert_eq!(view["status"], "awaiting_user");
    let failure = &view["failures"][0];
    assert_eq!(failure["details"]["trigger"], "step_budget", "{failure}");
    assert!(failure["resolution"].is_null());
    assert_eq!(failure["suggestions"][0], "retry", "{failure}");
    assert_eq!(
        std::fs::read_to_string(env.ws().join("steps")).unwrap(),
        "0\n1\n"
    );

    let out = env.decima(&["recover", &id, "--choice", "retry"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "done\n");
    assert_eq!(env.server.pending_replies(), 0);
    assert_eq!(
        std::fs::read_to_string(env.ws().join("steps")).unwrap(),
        "0\n1\n2\n"
    );
    let view = env.show(&id).await;
    assert_eq!(view["status"], "succeeded");
    assert_eq!(view["failures"][0]["resolution"], "retry");
}

/// 8. Two runs in one conversation are both listed, each with its status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn execution_list_shows_every_run_of_a_conversation() {
    let env = Env::new().await;
    env.say("First.");
    let out = env.run(&[], "First task").await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let first = execution_id(&out.stderr);
    let conversation = env.show(&first).await["conversation_id"]
        .as_str()
        .unwrap()
        .to_owned();

    // The second waits on its step budget.
    env.call("shell", json!({"command": "true"}));
    let out = env
        .run(
            &["--conversation", &conversation, "--max-steps", "1"],
            "Second task",
        )
        .await;
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    let second = execution_id(&out.stderr);
    assert_ne!(first, second);
    // The second run was sent the first one's history.
    assert!(env.request_text(1).contains("First task"));

    // A run in another conversation is not listed.
    env.say("Elsewhere.");
    let out = env.run(&[], "Other task").await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let other = execution_id(&out.stderr);

    let out = env
        .decima(&[
            "execution",
            "list",
            "--conversation",
            &conversation,
            "--json",
        ])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows: Vec<(&str, &str, &str)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r["conversation_id"], conversation.as_str());
            (
                r["id"].as_str().unwrap(),
                r["status"].as_str().unwrap(),
                r["task"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (first.as_str(), "succeeded", "First task"),
            (second.as_str(), "awaiting_user", "Second task")
        ]
    );

    let out = env
        .decima(&["execution", "list", "--conversation", &conversation])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "a header and two rows: {table}");
    assert!(
        lines[1].contains(&first) && lines[1].contains("succeeded"),
        "{table}"
    );
    assert!(
        lines[2].contains(&second) && lines[2].contains("awaiting_user"),
        "{table}"
    );
    assert!(!table.contains(&other), "{table}");

    // Without a conversation, every run is listed.
    let out = env.decima(&["execution", "list", "--json"]).await;
    let all: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(all.as_array().unwrap().len(), 3, "{all}");
}

/// 9. Hostile tool input through the CLI: arguments that are not JSON, paths out of the
/// workspace, 100 MB of output, a command that never ends, invalid UTF-8. Each gets a clear
/// result, nothing outside the workspace changes, and the run still succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_tool_input_gets_clear_results_and_the_run_succeeds() {
    let env = Env::new().await;
    let outside = env.dir.path().join("outside.txt");
    std::fs::write(&outside, "secret").unwrap();
    env.raw_call("shell", "{not json"); // call_0
    env.call("read_file", json!({"path": "../outside.txt"})); // call_1
    env.call(
        "write_file",
        json!({"path": "../outside.txt", "content": "overwritten"}),
    ); // call_2
    env.call(
        "shell",
        json!({"command": "head -c 100000000 /dev/zero | tr '\\000' a"}),
    ); // call_3
    env.call("shell", json!({"command": "sleep 600", "timeout_s": 1})); // call_4
    env.call(
        "shell",
        json!({"command": "printf 'ok \\377\\376 bytes\\n'"}),
    ); // call_5
    env.say("Survived.");

    let started = Instant::now();
    let out = env.run(&[], "Try everything").await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(90));
    assert_eq!(text(&out.stdout), "Survived.\n");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "secret");
    assert_eq!(env.server.pending_replies(), 0);
    assert_eq!(
        running_in(&env.ws()),
        [],
        "the command that timed out left nothing running"
    );

    let id = execution_id(&out.stderr);
    let view = env.show(&id).await;
    assert_eq!(view["status"], "succeeded", "{view}");
    assert!(view["failures"].as_array().unwrap().is_empty(), "{view}");
    let messages = env.messages(&view).await;
    let result = |i: usize| tool_result(&messages, &format!("call_{i}")).to_owned();

    let r = result(0);
    assert!(
        r.contains("[tool error: data]") && r.contains("not valid JSON"),
        "{r}"
    );
    for i in [1, 2] {
        let r = result(i);
        assert!(r.contains("[tool error: permission]"), "call_{i}: {r}");
        assert!(!r.contains("secret"), "call_{i}: {r}");
    }
    let r = result(3);
    assert!(r.contains(".decima/output/"), "{}", &r[..r.len().min(2000)]);
    assert!(r.len() < 100_000, "{}", r.len());
    let r = result(4);
    assert!(r.contains("timed out"), "{r}");
    let r = result(5);
    assert!(r.contains("ok \u{fffd}\u{fffd} bytes"), "{r}");

    // The model got the same results in the requests after each call.
    for (i, request) in env.server.requests().iter().enumerate().skip(1) {
        let last = request.json.as_ref().unwrap()["messages"]
            .as_array()
            .unwrap()
            .iter()
            .rfind(|m| m["role"] == "tool")
            .unwrap()["content"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(last, result(i - 1), "request {i}");
    }
}

/// 10. `--on-failure ask` reads the choice from stdin even when it is a pipe: the report goes
/// to stderr, `skip` continues the run to its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_failure_ask_takes_the_choice_from_stdin() {
    let env = Env::new().await;
    script_data_failure(&env, "missing/input.csv");
    env.call(
        "todo_write",
        todos(&[("clean the data", "skipped"), ("summarise", "completed")]),
    );
    env.say("Summarised without cleaning.");
    let ws = env.ws().to_string_lossy().into_owned();
    let mut cmd = env.command(&["run", "--workspace", &ws, "--on-failure", "ask", "Clean"]);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = tokio::task::spawn_blocking(move || {
        let mut child = cmd.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        // Not a choice, then a choice this failure does not offer (it rolled back already).
        std::io::Write::write_all(&mut stdin, b"maybe\nrollback\nskip\n").unwrap();
        drop(stdin);
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(text(&out.stdout), "Summarised without cleaning.\n");
    assert!(
        stderr.contains("where: todo 1 of 2"),
        "the report: {stderr}"
    );
    assert!(
        stderr.contains("what now? replan, skip, retry or abort"),
        "only what the failure offers: {stderr}"
    );
    assert_eq!(
        stderr
            .matches("please answer replan, skip, retry or abort")
            .count(),
        2,
        "a wrong answer, and one not offered, are asked again: {stderr}"
    );
    let id = execution_id(&out.stderr);
    let view = env.show(&id).await;
    assert_eq!(view["status"], "succeeded", "{view}");
    assert_eq!(view["failures"][0]["resolution"], "skip", "{view}");
    assert_eq!(view["todos"][0]["status"], "skipped", "{view}");
}

/// 6c. Ctrl-C while the final tenth-man review streams: the review is dropped and nothing of it
/// is stored; the run's answer, already stored, stands, and the analyst is told it was not
/// reviewed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_during_the_final_review_skips_it_and_the_answer_stands() {
    let env = Env::new().await;
    env.say("The total is 42.");
    env.server.enqueue(Reply::Stream(Turn {
        text: vec!["{\"risk_level\": ".into(), "\"low\"".into()],
        fault: Some(StreamFault::StallAfter(1)),
        ..Turn::default()
    }));
    let child = env.spawn_run_with(&["--tenth-man", "system_only"], "Add up the totals");
    env.server
        .wait_for_requests(2, Duration::from_secs(60))
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let out = interrupt(child, None).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(text(&out.stdout).trim(), "The total is 42.");
    assert!(stderr.contains("review was cancelled"), "{stderr}");
    assert!(
        env.server
            .wait_for_disconnect(1, Duration::from_secs(5))
            .await
            .is_some(),
        "the review request was dropped"
    );
    let view = env.show(&execution_id(&out.stderr)).await;
    assert_eq!(view["status"], "succeeded", "{view}");
    assert_eq!(view["result"], "The total is 42.");
    assert_eq!(view["contested"], false, "{view}");
    assert_eq!(view["reviews"], json!([]), "{view}");
}
