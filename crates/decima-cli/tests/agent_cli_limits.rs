//! Runs through the binary at their limits: the step budget, the list of a conversation's runs,
//! hostile tool input, a choice read from stdin, and Ctrl-C during the final review.

#![allow(clippy::unwrap_used, clippy::expect_used)]
// The signal tests are Unix-only (signals): elsewhere their helpers and imports go unused.
#![cfg_attr(not(unix), allow(unused_imports, dead_code))]

use super::agent_cli::*;
use crate::common;
use common::*;
use decima_testkit::{Reply, StreamFault, Turn};
use serde_json::{Value, json};
use std::process::Stdio;
use std::time::{Duration, Instant};

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
        // The words after the choice are guidance for the agent.
        std::io::Write::write_all(&mut stdin, b"maybe\nrollback\nskip: the raw file is fine\n")
            .unwrap();
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
    let last = String::from_utf8_lossy(&env.server.requests().last().unwrap().body).into_owned();
    assert!(last.contains("the raw file is fine"), "{last}");
}

/// 6c. Ctrl-C while the final tenth-man review streams: the review is dropped and nothing of it
/// is stored; the run's answer, already stored, stands, and the analyst is told it was not
/// reviewed.
// Signals: Unix by nature (Windows stops a process with Ctrl-Break, which a test cannot send
// to a process without a console of its own).
#[cfg(unix)]
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
