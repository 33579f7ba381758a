//! MCP servers' settings and limits through the real binary: switched off for a conversation or
//! for every run, a bearer token read from stdin, tools listed from a Docker container, a
//! server's folder and allowed and denied tools, every kind of result and a call timeout in
//! Docker, a hung or garbage server refused in time, and the terminal asked before a call.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::mcp_cli::*;
use crate::common;
use common::{Env, last_tool_result, text};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[tokio::test]
async fn a_server_is_switched_off_for_one_conversation_or_for_every_run() {
    let env = Env::new().await;
    add_everything_on_host(&env).await;
    let out = env
        .decima(&["conversation", "create", "--title", "quiet"])
        .await;
    let quiet = text(&out.stdout).trim().to_owned();
    let out = env
        .decima(&["mcp", "disable", "everything", "--conversation", &quiet])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));

    env.say("One.");
    let out = env.run(&["--conversation", &quiet], "Anything").await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !offered(&env, 0).iter().any(|t| t.starts_with("mcp__")),
        "switched off here"
    );
    env.say("Two.");
    let out = env.run(&[], "Anything, elsewhere").await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        offered(&env, 1).contains(&"mcp__everything__echo".to_owned()),
        "on elsewhere"
    );

    let out = env.decima(&["mcp", "disable", "everything"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    env.say("Three.");
    let out = env.run(&[], "Anything, again").await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !offered(&env, 2).iter().any(|t| t.starts_with("mcp__")),
        "off for every run"
    );
    let out = env.decima(&["mcp", "list"]).await;
    assert!(
        text(&out.stdout).contains("everything (disabled)"),
        "{}",
        text(&out.stdout)
    );

    let out = env.decima(&["mcp", "disable", "nothing-here"]).await;
    assert!(!out.status.success(), "an unknown server");
}

#[tokio::test]
async fn a_bearer_token_read_from_stdin_goes_to_the_secret_store_only() {
    use std::io::Write as _;
    let env = Env::new().await;
    let mut cmd = env.command(&[
        "mcp",
        "add",
        "remote",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--bearer-token-stdin",
    ]);
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"tok-secret-77\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let db = std::fs::read(env.data_dir().join("decima.db")).unwrap();
    assert!(
        !db.windows(13).any(|w| w == b"tok-secret-77"),
        "a token in SQLite"
    );
    let kept = std::fs::read_to_string(env.data_dir().join("secrets.json")).unwrap();
    assert!(
        kept.contains("tok-secret-77"),
        "the token is in the secret store"
    );
    let out = env.decima(&["mcp", "list", "--json"]).await;
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        listed[0]["transport"]["bearer_token"], "",
        "set, and not shown"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_of_a_docker_server_are_listed_from_a_container_and_nothing_is_left_running() {
    let env = Env::new().await;
    let (conversation, cleanup) = node_conversation(&env).await;
    env.mcp_add(&["everything", "--", "node", IN_IMAGE, "stdio"])
        .await;
    // Every container of this data directory, by name, stopped ones included.
    let containers = || {
        let filter = format!("label=decima.instance={}", cleanup.0);
        let ps = std::process::Command::new("docker")
            .args(["ps", "-a", "--format", "{{.Names}}", "--filter", &filter])
            .output()
            .unwrap();
        text(&ps.stdout)
            .lines()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    // In the conversation's container, with its settings (the image that has node).
    let out = env
        .decima(&[
            "mcp",
            "tools",
            "everything",
            "--json",
            "--conversation",
            &conversation,
        ])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"echo"), "{names:?}");
    assert!(listed["tokens"].as_u64().unwrap() > 100, "{listed}");
    let after_conversation = containers();
    assert_eq!(after_conversation.len(), 1, "{after_conversation:?}");
    // A program the image does not have is named, with what to do, and the server that
    // failed its check is no longer used by runs.
    env.mcp_add(&["absent", "--", "uvx", "mcp-server-fetch"])
        .await;
    let out = env
        .decima(&["mcp", "tools", "absent", "--conversation", &conversation])
        .await;
    assert!(!out.status.success());
    let said = text(&out.stderr);
    assert!(
        said.contains("\"uvx\" is not in the sandbox image") && said.contains("--where host"),
        "{said}"
    );
    assert!(said.contains("runs no longer use \"absent\""), "{said}");
    let listed = env.decima(&["mcp", "list", "--json"]).await;
    let servers: serde_json::Value = serde_json::from_str(&text(&listed.stdout)).unwrap();
    let absent = servers
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "absent")
        .unwrap();
    assert_eq!(absent["enabled"], false, "{absent}");

    let filter = format!("label=decima.instance={}", cleanup.0);
    let ps = std::process::Command::new("docker")
        .args(["ps", "-q", "--filter", &filter])
        .output()
        .unwrap();
    let container = text(&ps.stdout).trim().to_owned();
    let left = std::process::Command::new("docker")
        .args(["exec", &container, "ps", "-o", "args"])
        .output()
        .unwrap();
    assert!(
        !text(&left.stdout).contains("node"),
        "{}",
        text(&left.stdout)
    );

    // Without a conversation, the check runs in a container of the default settings, made for
    // it and removed after it: tests/sandbox_image.rs, in the image those settings name.
}

/// `--cwd`, `--allow` and `--deny` on `mcp add`: stored, listed, and obeyed by a run (a server
/// started in its own folder; a denied tool never offered, an allow list offering only itself).
#[tokio::test]
async fn a_servers_folder_and_its_allowed_and_denied_tools_are_set_when_it_is_added() {
    let env = Env::new().await;
    let fs_script = decima_testkit::mcp_servers::reference_server("server-filesystem")
        .display()
        .to_string();
    // A folder outside the run's workspace, so the default working directory would not do.
    let elsewhere = tempfile::tempdir().unwrap();
    let data = std::fs::canonicalize(elsewhere.path()).unwrap();
    std::fs::write(data.join("q1.csv"), "region,revenue\nLATAM,410\n").unwrap();
    let data = data.display().to_string();
    // The server is given "." as its folder: only the working directory makes it `data`.
    env.mcp_add(&[
        "files",
        "--where",
        "host",
        "--cwd",
        &data,
        "--deny",
        "write_file",
        "--deny",
        "edit_file",
        "--",
        "node",
        &fs_script,
        ".",
    ])
    .await;
    let everything = everything_on_host().display().to_string();
    env.mcp_add(&[
        "everything",
        "--where",
        "host",
        "--allow",
        "echo",
        "--",
        "node",
        &everything,
        "stdio",
    ])
    .await;
    let out = env.decima(&["mcp", "list", "--json"]).await;
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let files = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "files")
        .unwrap();
    assert_eq!(files["deny"], json!(["write_file", "edit_file"]));
    assert_eq!(files["transport"]["cwd"], data);

    env.call(
        "mcp__files__read_text_file",
        json!({"path": format!("{data}/q1.csv")}),
    );
    env.say("Done.");
    let out = env
        .run(&["--allow-tool", "mcp__files__*"], "Read the file")
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let tools = offered(&env, 0);
    assert!(
        tools.contains(&"mcp__files__read_text_file".to_owned()),
        "{tools:?}"
    );
    for denied in ["mcp__files__write_file", "mcp__files__edit_file"] {
        assert!(!tools.contains(&denied.to_owned()), "{tools:?}");
    }
    let mine: Vec<&String> = tools
        .iter()
        .filter(|t| t.starts_with("mcp__everything__"))
        .collect();
    assert_eq!(mine, ["mcp__everything__echo"]);
    let read = last_tool_result(&env, 1);
    assert!(read.contains("LATAM,410"), "{read}");
}

/// The reference server's kinds of result inside the sandbox, as on the host: an embedded
/// resource, structured content, a tool that refuses its input, and a long call cut off by the
/// server's call timeout while the server lives on for the next call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_docker_every_kind_of_result_and_a_call_timeout_reach_the_model() {
    let env = Env::new().await;
    let (conversation, _cleanup) = node_conversation(&env).await;
    env.mcp_add(&[
        "everything",
        "--call-timeout",
        "3",
        "--",
        "node",
        IN_IMAGE,
        "stdio",
    ])
    .await;
    env.call("mcp__everything__get-resource-reference", json!({}));
    env.call(
        "mcp__everything__get-structured-content",
        json!({"location": "Chicago"}),
    );
    env.call("mcp__everything__get-sum", json!({"a": "twelve", "b": 1}));
    env.call(
        "mcp__everything__trigger-long-running-operation",
        json!({"duration": 30, "steps": 3}),
    );
    env.call("mcp__everything__echo", json!({"message": "still here"}));
    env.say("Done.");
    let started = Instant::now();
    let out = env
        .run(
            &[
                "--conversation",
                &conversation,
                "--sandbox",
                "docker",
                "--allow-tool",
                "mcp__everything__*",
            ],
            "Try every kind of result",
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "the long call was cut off at 3 s: {:?}",
        started.elapsed()
    );
    let result = |i: usize| last_tool_result(&env, i);
    let resource = result(1);
    assert!(
        resource.contains("[resource demo://resource/dynamic/text/1]"),
        "{resource}"
    );
    let structured = result(2);
    let said: Value = serde_json::from_str(&structured).unwrap();
    assert!(said["temperature"].is_number(), "{structured}");
    let refused = result(3);
    assert!(refused.starts_with("[tool error"), "{refused}");
    assert!(refused.contains("expected number"), "{refused}");
    let cut = result(4);
    assert!(cut.contains("within 3 s"), "{cut}");
    assert_eq!(result(5), "Echo: still here", "the server lived on");
}

/// A server in the sandbox that never answers, and one that writes garbage, are refused in
/// time with why, and nothing of theirs is left running in the container.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_docker_a_hung_or_garbage_server_is_refused_in_time_and_leaves_nothing() {
    let env = Env::new().await;
    let (conversation, cleanup) = node_conversation(&env).await;
    for (name, script) in [
        ("hung", "sleep 300"),
        (
            "garbage",
            "echo 'listening on port 8080' >&2; while true; do echo 'not json {'; sleep 0.05; done",
        ),
    ] {
        env.mcp_add(&[name, "--startup-timeout", "2", "--", "sh", "-c", script])
            .await;
        let started = Instant::now();
        let out = env
            .decima(&["mcp", "tools", name, "--conversation", &conversation])
            .await;
        assert!(!out.status.success(), "{name}: {}", text(&out.stdout));
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{name}: {:?}",
            started.elapsed()
        );
        let said = text(&out.stderr);
        assert!(said.contains("within 2 s"), "{name}: {said}");
        if name == "garbage" {
            assert!(said.contains("listening on port 8080"), "{said}");
        }
    }
    let filter = format!("label=decima.instance={}", cleanup.0);
    let ps = std::process::Command::new("docker")
        .args(["ps", "-q", "--filter", &filter])
        .output()
        .unwrap();
    for container in text(&ps.stdout).split_whitespace() {
        let listed = std::process::Command::new("docker")
            .args(["exec", container, "ps", "-o", "args"])
            .output()
            .unwrap();
        let listed = text(&listed.stdout);
        assert!(
            !listed.contains("sleep 300") && !listed.contains("not json"),
            "left in the container: {listed}"
        );
    }
}

/// On a terminal, an MCP call no rule approved is asked there: "c" allows the tool for the
/// conversation (the next call is not asked), "n" refuses another and the run goes on. With
/// stdin piped, nobody is asked: the call is refused with how to allow it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_terminal_asks_before_an_mcp_call_and_a_pipe_refuses_it() {
    let env = Env::new().await;
    add_everything_on_host(&env).await;
    env.call("mcp__everything__echo", json!({"message": "first"}));
    env.call("mcp__everything__echo", json!({"message": "second"}));
    env.call("mcp__everything__get-sum", json!({"a": 2, "b": 3}));
    env.say("Done.");
    let ws = env.ws().display().to_string();
    let (ok, screen) = on_a_terminal(
        &env,
        &["run", "--workspace", &ws, "Echo twice, then add"],
        "c\nn\n",
    )
    .await;
    assert!(ok, "{screen}");
    assert_eq!(
        screen.matches("run it? y = this call").count(),
        2,
        "asked for the first echo and the sum, not the second echo: {screen}"
    );
    assert!(screen.contains("echo"), "{screen}");
    assert_eq!(last_tool_result(&env, 1), "Echo: first");
    assert_eq!(last_tool_result(&env, 2), "Echo: second");
    let refused = last_tool_result(&env, 3);
    assert!(refused.contains("the analyst refused"), "{refused}");

    // Piped: nobody to ask, so the call is refused and says how to allow it.
    env.call("mcp__everything__get-sum", json!({"a": 2, "b": 3}));
    env.say("Done without it.");
    let out = env.run(&[], "Add").await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let refused = last_tool_result(&env, 5);
    assert!(refused.contains("needs approval"), "{refused}");
    assert!(refused.contains("--allow-tool"), "{refused}");
}
