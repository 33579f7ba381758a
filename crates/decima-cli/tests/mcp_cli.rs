//! `decima mcp` and MCP tools in `decima run`, through the real binary: servers added, listed
//! (without secret values), probed and removed; Claude Desktop's file imported; a server that
//! never answers refused in time; and a run whose MCP server runs inside the conversation's
//! Docker sandbox (the default place), on the real engine and the `decima-test:node` image
//! that `scripts/test.sh` builds.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// The signal tests are Unix-only (signals): elsewhere their helpers and imports go unused.
#![cfg_attr(not(unix), allow(unused_imports, dead_code))]

use crate::common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{DockerCleanup, Env, last_tool_result, text};
use serde_json::{Value, json};

/// The image with node and the reference servers (built by `ensure_mcp_test_image`).
const NODE_IMAGE: &str = "decima-test:node";
/// Where that image holds the reference servers.
pub(super) const IN_IMAGE: &str =
    "/opt/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
/// … and the filesystem server.
const FILESYSTEM_IN_IMAGE: &str =
    "/opt/mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js";

pub(super) fn everything_on_host() -> PathBuf {
    decima_testkit::mcp_servers::reference_server("server-everything")
}

#[tokio::test]
async fn servers_are_added_listed_without_secrets_probed_and_removed() {
    let env = Env::new().await;
    let script = everything_on_host().display().to_string();
    let out = env
        .decima(&[
            "mcp",
            "add",
            "everything",
            "--where",
            "host",
            "--env",
            "API_TOKEN=tok-9f8e7d",
            "--",
            "node",
            &script,
            "stdio",
        ])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("with your rights"),
        "{}",
        text(&out.stderr)
    );

    let out = env
        .decima(&[
            "mcp",
            "add",
            "everything",
            "--where",
            "host",
            "--",
            "node",
            "x.js",
        ])
        .await;
    assert_eq!(out.status.code(), Some(2), "a taken name");
    assert!(
        text(&out.stderr).contains("exists already"),
        "{}",
        text(&out.stderr)
    );

    let out = env.decima(&["mcp", "list", "--json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed[0]["name"], "everything");
    assert_eq!(listed[0]["transport"]["place"], "host");
    assert_eq!(
        listed[0]["transport"]["env"]["API_TOKEN"], "",
        "the value is not shown"
    );
    let db = std::fs::read(env.data_dir().join("decima.db")).unwrap();
    assert!(
        !db.windows(10).any(|w| w == b"tok-9f8e7d"),
        "a secret in SQLite"
    );

    let out = env.decima(&["mcp", "tools", "everything", "--json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let tools: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"get-sum"),
        "{names:?}"
    );
    assert!(tools["tokens"].as_u64().unwrap() > 500, "{tools}");

    let out = env.decima(&["mcp", "remove", "everything"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = env.decima(&["mcp", "remove", "everything"]).await;
    assert!(!out.status.success(), "removed once");
    let out = env.decima(&["mcp", "list", "--json"]).await;
    assert_eq!(text(&out.stdout).trim(), "[]");
}

#[tokio::test]
async fn a_server_that_never_answers_fails_in_time_and_leaves_nothing() {
    let env = Env::new().await;
    let marker = format!("decima-hung-{}", std::process::id());
    let out = env
        .decima(&[
            "mcp",
            "add",
            "hung",
            "--where",
            "host",
            "--startup-timeout",
            "1",
            "--",
            "sh",
            "-c",
            &format!("sleep 300; : {marker}"),
        ])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let started = Instant::now();
    let out = env.decima(&["mcp", "tools", "hung"]).await;
    assert!(!out.status.success());
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("\"hung\"") && stderr.contains("within 1 s"),
        "{stderr}"
    );
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&marker) && !c.contains("mcp add"))
        .collect();
    assert!(left.is_empty(), "left running: {left:?}");
}

#[tokio::test]
async fn claude_desktops_file_imports_all_or_nothing() {
    let env = Env::new().await;
    let file = env.dir.path().join("claude_desktop_config.json");
    std::fs::write(
        &file,
        json!({"mcpServers": {
            "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/data"]},
            "tickets": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"X-Key": "k-55aa"}}
        }})
        .to_string(),
    )
    .unwrap();
    let out = env.decima(&["mcp", "import", file.to_str().unwrap()]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("imported 2 server(s): filesystem, tickets"));
    // Again: both names are taken, and nothing more is stored.
    let out = env.decima(&["mcp", "import", file.to_str().unwrap()]).await;
    assert!(!out.status.success());
    let out = env.decima(&["mcp", "list", "--json"]).await;
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 2);
    assert_eq!(
        listed[0]["transport"]["place"], "docker",
        "imported into the sandbox by default"
    );
    assert_eq!(listed[1]["transport"]["headers"]["X-Key"], "");
}

/// A conversation whose sandbox runs the node test image, and the cleanup of its containers.
pub(super) async fn node_conversation(env: &Env) -> (String, DockerCleanup) {
    let image = std::process::Command::new("docker")
        .args(["image", "inspect", NODE_IMAGE])
        .output()
        .expect("the docker CLI: run scripts/test.sh, which installs and starts the engine");
    assert!(
        image.status.success(),
        "no Docker engine or no {NODE_IMAGE} image: run scripts/test.sh, which starts dockerd \
         and builds it (ensure_mcp_test_image) ({})",
        text(&image.stderr)
    );
    let out = env
        .decima(&["conversation", "create", "--title", "mcp in docker"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let id = text(&out.stdout).trim().to_owned();
    let out = env
        .decima(&["conversation", "sandbox", &id, "--image", NODE_IMAGE])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let data_dir = std::path::absolute(env.data_dir()).unwrap();
    let instance = decima_sandbox::DockerEngine::instance_for_data_dir(&data_dir);
    (id, DockerCleanup(instance))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_docker_a_run_calls_a_server_running_in_the_conversations_container() {
    let env = Env::new().await;
    let (conversation, cleanup) = node_conversation(&env).await;
    // The default place: the sandbox.
    env.mcp_add(&[
        "everything",
        "--env",
        "ANALYST_VAR=set",
        "--",
        "node",
        IN_IMAGE,
        "stdio",
    ])
    .await;
    env.mcp_add(&["files", "--", "node", FILESYSTEM_IN_IMAGE, "/workspace"])
        .await;
    env.call(
        "mcp__everything__echo",
        json!({"message": "from the sandbox"}),
    );
    env.call("mcp__everything__get-env", json!({}));
    env.call("mcp__everything__get-tiny-image", json!({}));
    env.call(
        "write_file",
        json!({"path": "q3.csv", "content": "region,revenue\nEMEA,1200\n"}),
    );
    env.call(
        "mcp__files__read_text_file",
        json!({"path": "/workspace/q3.csv"}),
    );
    env.call("mcp__files__read_text_file", json!({"path": "/etc/passwd"}));
    env.say("Done.");
    let out = env
        .run(
            &[
                "--conversation",
                &conversation,
                "--sandbox",
                "docker",
                "--allow-tool",
                "mcp__everything__*",
                "--allow-tool",
                "mcp__files__*",
            ],
            "Use the server",
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let second = env.request_text(1);
    assert!(second.contains("Echo: from the sandbox"), "{second}");
    let env_result = last_tool_result(&env, 2);
    let seen: Value = serde_json::from_str(&env_result).unwrap();
    assert_eq!(
        seen["HOME"], "/workspace",
        "it ran in the container: {env_result}"
    );
    assert_eq!(seen["ANALYST_VAR"], "set");
    assert!(seen.get("DECIMA_API_KEY").is_none(), "{env_result}");
    let last_result = |i: usize| last_tool_result(&env, i);
    // The image was saved in the container's workspace, where the model's tools see it.
    let image = last_result(3);
    let saved = image
        .split("saved in the workspace as ")
        .nth(1)
        .and_then(|s| s.split(']').next())
        .unwrap_or_else(|| panic!("no saved image named: {image}"))
        .to_owned();
    // The filesystem server, in the same container, reads what write_file wrote there and
    // refuses what lies outside its folder.
    let read = last_result(5);
    assert!(read.contains("EMEA,1200"), "{read}");
    let outside = last_result(6);
    assert!(outside.starts_with("[tool error"), "{outside}");
    assert!(!outside.contains("root:"), "{outside}");

    // The server stopped with the run: no node process is left in the container.
    let filter = format!("label=decima.instance={}", cleanup.0);
    let ps = std::process::Command::new("docker")
        .args(["ps", "-q", "--filter", &filter])
        .output()
        .unwrap();
    let container = text(&ps.stdout).trim().to_owned();
    assert!(!container.is_empty(), "the sandbox container");
    let head = std::process::Command::new("docker")
        .args([
            "exec",
            &container,
            "head",
            "-c",
            "4",
            &format!("/workspace/{saved}"),
        ])
        .output()
        .unwrap();
    assert_eq!(&head.stdout[1..4], b"PNG", "{}", text(&head.stderr));
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let ps = std::process::Command::new("docker")
            .args(["exec", &container, "ps", "-o", "args"])
            .output()
            .unwrap();
        let listed = text(&ps.stdout);
        if !listed.contains("node") {
            break;
        }
        assert!(Instant::now() < deadline, "left in the container: {listed}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A run on the host whose server is placed in Docker (the default place): the server's
/// container binds the run's folder at `/workspace`, so it reads what `write_file` wrote on the
/// host, and what it writes lands in that folder as the analyst's file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_runs_server_in_docker_sees_and_writes_the_runs_own_folder() {
    let env = Env::new().await;
    let (conversation, _cleanup) = node_conversation(&env).await;
    env.mcp_add(&["files", "--", "node", FILESYSTEM_IN_IMAGE, "/workspace"])
        .await;
    env.call(
        "write_file",
        json!({"path": "q4.csv", "content": "region,revenue\nAPAC,870\n"}),
    );
    env.call(
        "mcp__files__read_text_file",
        json!({"path": "/workspace/q4.csv"}),
    );
    env.call(
        "mcp__files__write_file",
        json!({"path": "/workspace/notes.md", "content": "APAC is down"}),
    );
    env.say("Done.");
    let out = env
        .run(
            &[
                "--conversation",
                &conversation,
                "--allow-tool",
                "mcp__files__*",
            ],
            "Read the figures",
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let read = last_tool_result(&env, 2);
    assert!(
        read.contains("APAC,870"),
        "the host file, seen in Docker: {read}"
    );
    let written = last_tool_result(&env, 3);
    assert!(!written.starts_with("[tool error"), "{written}");
    let notes = env.ws().join("notes.md");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "APAC is down");
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        assert_eq!(
            std::fs::metadata(&notes).unwrap().uid(),
            std::fs::metadata(env.ws()).unwrap().uid(),
            "the server's file is the analyst's"
        );
    }
}

/// Starts a run whose host server is inside a long call, and returns the run and the server's
/// process group (a shell in front of node, as with `npx`: the real server is a child).
pub(super) async fn run_inside_a_long_call(env: &Env, mark: &str) -> (std::process::Child, i32) {
    let script = everything_on_host().display().to_string();
    let out = env
        .decima(&[
            "mcp",
            "add",
            "everything",
            "--where",
            "host",
            "--",
            "sh",
            "-c",
            &format!("node {script} stdio; : {mark}"),
        ])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    env.call(
        "mcp__everything__trigger-long-running-operation",
        json!({"duration": 60, "steps": 2}),
    );
    env.say("Done.");
    let child = env.spawn_run_with(&["--allow-tool", "mcp__everything__*"], "Wait");
    env.server
        .wait_for_requests(1, Duration::from_secs(60))
        .await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let pgid = loop {
        if let Some(&pid) = decima_testkit::processes::with_cmdline(mark).first() {
            break pid;
        }
        assert!(Instant::now() < deadline, "the server did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // The call has reached the server once the model's answer is read.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert!(
        decima_testkit::processes::group_members(pgid).len() >= 2,
        "sh and node in one group"
    );
    (child, pgid)
}

/// Sends `signal` to `child` `times` times and waits up to 15 s for it to end.
pub(super) async fn signal_and_wait(
    child: std::process::Child,
    signal: &str,
    times: usize,
) -> std::process::Output {
    for _ in 0..times {
        let sent = std::process::Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    }
    let started = Instant::now();
    let mut child = child;
    while child.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "decima did not stop within 15 s of {signal}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.wait_with_output().unwrap()
}

/// SIGTERM (a session's end, `kill`) stops a run as Ctrl-C does: cancelled, exit 130, and the
/// host server it was calling shut down with its whole group.
// Signals: Unix by nature (Windows stops a process with Ctrl-Break, which a test cannot send
// to a process without a console of its own).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_cancels_the_run_and_stops_its_host_server() {
    let env = Env::new().await;
    let mark = format!("decima-term-{}", std::process::id());
    let (child, pgid) = run_inside_a_long_call(&env, &mark).await;
    let out = signal_and_wait(child, "-TERM", 1).await;
    let left = decima_testkit::processes::group_members(pgid);
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    assert!(left.is_empty(), "left running: {left:?}");
}

/// A second signal quits at once, without the clean shutdown: the host server's group is
/// killed all the same (exiting runs no destructor, so nothing else would).
// Signals: Unix by nature (Windows stops a process with Ctrl-Break, which a test cannot send
// to a process without a console of its own).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_signal_quits_at_once_and_leaves_no_host_server() {
    let env = Env::new().await;
    let mark = format!("decima-quit-{}", std::process::id());
    let (child, pgid) = run_inside_a_long_call(&env, &mark).await;
    let out = signal_and_wait(child, "-INT", 2).await;
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let left = decima_testkit::processes::group_members(pgid);
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "left running: {left:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The tool names offered in request `i`.
pub(super) fn offered(env: &Env, i: usize) -> Vec<String> {
    env.server.requests()[i].json.as_ref().unwrap()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

/// `decima ARGS` on a terminal (a pseudo-terminal made by util-linux's `script`), with `input`
/// typed into it: what the analyst at a shell sees and answers.
pub(super) async fn on_a_terminal(env: &Env, args: &[&str], input: &str) -> (bool, String) {
    let cmd = env.command(args);
    let quote = |s: &std::ffi::OsStr| format!("'{}'", s.to_string_lossy().replace('\'', r"'\''"));
    let line = std::iter::once(quote(cmd.get_program()))
        .chain(cmd.get_args().map(quote))
        .collect::<Vec<_>>()
        .join(" ");
    let mut script = std::process::Command::new("script");
    script
        .args(["-qfec", &line, "/dev/null"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => script.env(key, value),
            None => script.env_remove(key),
        };
    }
    let input = input.to_owned();
    tokio::task::spawn_blocking(move || {
        use std::io::Write as _;
        let mut child = script.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        // Each answer once its question is on the screen would need a reader; the terminal
        // keeps what is typed ahead until the question reads it, as a shell's does.
        stdin.write_all(input.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        drop(stdin);
        (out.status.success(), text(&out.stdout))
    })
    .await
    .unwrap()
}

/// Adds the reference "everything" server over stdio on the host, nothing else set.
pub(super) async fn add_everything_on_host(env: &Env) {
    let script = everything_on_host().display().to_string();
    env.mcp_add(&[
        "everything",
        "--where",
        "host",
        "--",
        "node",
        &script,
        "stdio",
    ])
    .await;
}
