//! The client against the real reference servers from npm (`server-everything` and
//! `server-filesystem`, installed by `scripts/test.sh` at fixed versions and run with `node` by
//! path), and against servers that misbehave: one that never answers, one that writes garbage,
//! one that exits mid-call. No test is skipped: without the servers installed, each fails and
//! says how to install them.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use decima_mcp::client::HostContext;
use decima_mcp::{McpClient, McpError, Place, ServerConfig, Transport};
use decima_testkit::processes::{group_gone, group_members};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

fn everything(name: &str) -> ServerConfig {
    let script = decima_testkit::mcp_servers::reference_server("server-everything");
    let mut c = ServerConfig::stdio(
        name,
        "node",
        vec![script.display().to_string(), "stdio".into()],
    );
    if let Transport::Stdio { env, .. } = &mut c.transport {
        env.insert("DECIMA_SET_BY_ANALYST".into(), "yes".into());
    }
    c.at(Place::Host)
}

fn host(dir: &Path) -> HostContext {
    HostContext {
        workspace: dir.to_path_buf(),
        log: Some(dir.join("logs/server.stderr.log")),
    }
}

fn args(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

/// The pid of the newest process running `needle` in its command line, a child of this test.
fn pid_running(needle: &str) -> Option<i32> {
    let me = std::process::id() as i32;
    let mut found = None;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, r)| r.split_whitespace().nth(1))
            .and_then(|p| p.parse::<i32>().ok());
        if ppid == Some(me) && String::from_utf8_lossy(&cmd).contains(needle) {
            found = Some(found.map_or(pid, |f: i32| f.max(pid)));
        }
    }
    found
}

#[tokio::test]
async fn everything_speaks_text_images_resources_structure_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let client = McpClient::connect(&everything("everything"), &host(dir.path()), None)
        .await
        .unwrap();
    let names: Vec<&str> = client.tools().iter().map(|t| t.name.as_str()).collect();
    for expected in [
        "echo",
        "get-sum",
        "get-tiny-image",
        "trigger-long-running-operation",
    ] {
        assert!(names.contains(&expected), "{expected} not in {names:?}");
    }
    let echo = client.tools().iter().find(|t| t.name == "echo").unwrap();
    assert_eq!(echo.read_only, Some(true));
    assert_eq!(echo.input_schema["properties"]["message"]["type"], "string");

    let never = CancellationToken::new();
    let out = client
        .call("echo", args(json!({"message": "über 12 €"})), &never)
        .await
        .unwrap();
    assert_eq!(out.text, "Echo: über 12 €");
    assert!(!out.is_error);

    let out = client
        .call("get-tiny-image", Map::new(), &never)
        .await
        .unwrap();
    assert_eq!(out.images.len(), 1, "{}", out.text);
    assert_eq!(out.images[0].mime, "image/png");
    assert_eq!(&out.images[0].data[1..4], b"PNG");
    assert!(out.text.contains("[image 1: image/png"), "{}", out.text);

    let out = client
        .call("get-resource-reference", Map::new(), &never)
        .await
        .unwrap();
    assert!(
        out.text
            .contains("[resource demo://resource/dynamic/text/1]\nResource 1:"),
        "{}",
        out.text
    );
    let out = client
        .call("get-resource-links", args(json!({"count": 2})), &never)
        .await
        .unwrap();
    assert_eq!(
        out.text.matches("[resource link] demo://").count(),
        2,
        "{}",
        out.text
    );

    let out = client
        .call(
            "get-structured-content",
            args(json!({"location": "Chicago"})),
            &never,
        )
        .await
        .unwrap();
    let said: Value = serde_json::from_str(&out.text).unwrap();
    assert!(said["temperature"].is_number(), "{}", out.text);

    let out = client
        .call("get-sum", args(json!({"a": "twelve"})), &never)
        .await
        .unwrap();
    assert!(
        out.is_error,
        "a tool that refuses its input is a failed call"
    );
    assert!(out.text.contains("expected number"), "{}", out.text);

    let out = client
        .call("no-such-tool", Map::new(), &never)
        .await
        .unwrap();
    assert!(out.is_error, "{}", out.text);
    client.shutdown().await;
}

#[tokio::test]
async fn a_host_server_sees_only_the_whitelist_and_the_analysts_variables() {
    let dir = tempfile::tempdir().unwrap();
    let client = McpClient::connect(&everything("env"), &host(dir.path()), None)
        .await
        .unwrap();
    let out = client
        .call("get-env", Map::new(), &CancellationToken::new())
        .await
        .unwrap();
    let env: Value = serde_json::from_str(&out.text).unwrap();
    assert_eq!(env["DECIMA_SET_BY_ANALYST"], "yes");
    assert!(env["PATH"].is_string());
    // Cargo sets these for every test process; a server must not inherit them.
    assert!(env.get("CARGO_MANIFEST_DIR").is_none(), "{}", out.text);
    assert!(env.get("CARGO_PKG_NAME").is_none(), "{}", out.text);
    client.shutdown().await;
}

#[tokio::test]
async fn a_cancelled_or_timed_out_call_returns_at_once_and_the_server_lives_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = everything("slow");
    config.call_timeout_secs = 1;
    let client = McpClient::connect(&config, &host(dir.path()), None)
        .await
        .unwrap();
    let long = || args(json!({"duration": 30, "steps": 3}));

    let started = Instant::now();
    let e = client
        .call(
            "trigger-long-running-operation",
            long(),
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, McpError::CallTimeout { seconds: 1, .. }), "{e}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );

    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        stopper.cancel();
    });
    let started = Instant::now();
    let e = client
        .call("trigger-long-running-operation", long(), &cancel)
        .await
        .unwrap_err();
    assert!(matches!(e, McpError::Cancelled { .. }), "{e}");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );

    // Both abandoned calls were cancelled on the server's side; it still answers.
    let out = client
        .call(
            "echo",
            args(json!({"message": "still here"})),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "Echo: still here");
    client.shutdown().await;
}

#[tokio::test]
async fn shutdown_leaves_no_process_behind() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().display().to_string();
    // A shell in front of node: the real server is a child, as with npx or a wrapper script.
    let script = decima_testkit::mcp_servers::reference_server("server-everything");
    let mut config = ServerConfig::stdio(
        "wrapped",
        "sh",
        vec![
            "-c".into(),
            format!("node {} stdio; : {marker}", script.display()),
        ],
    );
    config = config.at(Place::Host);
    let client = McpClient::connect(&config, &host(dir.path()), None)
        .await
        .unwrap();
    let pgid = pid_running(&marker).expect("the wrapper runs");
    assert!(group_members(pgid).len() >= 2, "sh and node in one group");
    client.shutdown().await;
    let left = group_gone(pgid, Duration::from_secs(2)).await;
    assert!(left.is_empty(), "left: {left:?}");
}

#[tokio::test]
async fn a_server_that_never_answers_is_refused_in_time_and_killed() {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("{}-hung", dir.path().display());
    let mut config = ServerConfig::stdio(
        "hung",
        "sh",
        vec!["-c".into(), format!("sleep 300; : {marker}")],
    );
    config.startup_timeout_secs = 1;
    config = config.at(Place::Host);
    let context = host(dir.path());
    let connect = McpClient::connect(&config, &context, None);
    tokio::pin!(connect);
    // Look at the process while the handshake waits.
    let pgid = loop {
        tokio::select! {
            r = &mut connect => panic!("returned before the timeout: {r:?}"),
            () = tokio::time::sleep(Duration::from_millis(50)) => {
                if let Some(pid) = pid_running(&marker) { break pid; }
            }
        }
    };
    let started = Instant::now();
    let e = connect.await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    let text = e.to_string();
    assert!(text.contains("within 1 s"), "{text}");
    let left = group_gone(pgid, Duration::from_secs(2)).await;
    assert!(left.is_empty(), "left: {left:?}");
}

#[tokio::test]
async fn a_server_that_writes_garbage_is_refused_with_its_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("{}-garbage", dir.path().display());
    let mut config = ServerConfig::stdio(
        "garbage",
        "sh",
        vec![
            "-c".into(),
            format!(
                "echo 'listening on port 8080' >&2; \
                 while true; do echo 'not json {{'; sleep 0.05; done; : {marker}"
            ),
        ],
    );
    config.startup_timeout_secs = 2;
    config = config.at(Place::Host);
    let started = Instant::now();
    let e = McpClient::connect(&config, &host(dir.path()), None)
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );
    let text = e.to_string();
    assert!(
        text.contains("within 2 s"),
        "refused for its timeout: {text}"
    );
    assert!(
        decima_testkit::processes::with_cmdline(&marker).is_empty(),
        "nothing of it is left running"
    );
    assert!(
        text.contains("listening on port 8080"),
        "the stderr explains: {text}"
    );
    let log = std::fs::read_to_string(dir.path().join("logs/server.stderr.log")).unwrap();
    assert!(log.contains("listening on port 8080"), "{log}");
}

/// A server that completes the handshake and lists one tool, then exits when it is called.
const EXITS_MID_CALL: &str = r#"
const rl = require('readline').createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
rl.on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') {
    send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion,
      capabilities: { tools: {} }, serverInfo: { name: 'exits', version: '1' } } });
  } else if (m.method === 'tools/list') {
    send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'crash',
      inputSchema: { type: 'object' } }] } });
  } else if (m.method === 'tools/call') {
    process.stderr.write('fatal: out of memory\n');
    process.exit(3);
  }
});
"#;

#[tokio::test]
async fn a_server_that_exits_mid_call_fails_the_call_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("exits.js");
    std::fs::write(&script, EXITS_MID_CALL).unwrap();
    let config =
        ServerConfig::stdio("exits", "node", vec![script.display().to_string()]).at(Place::Host);
    let client = McpClient::connect(&config, &host(dir.path()), None)
        .await
        .unwrap();
    assert_eq!(client.tools()[0].name, "crash");
    let started = Instant::now();
    let e = client
        .call("crash", Map::new(), &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let text = e.to_string();
    assert!(text.contains("closed during the call"), "{text}");
    client.shutdown().await;
}

#[tokio::test]
async fn the_filesystem_server_works_in_the_workspace_and_refuses_outside_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("q3.csv"), "region,revenue\nEMEA,1200\n").unwrap();
    let script = decima_testkit::mcp_servers::reference_server("server-filesystem");
    let mut config = ServerConfig::stdio(
        "files",
        "node",
        vec![script.display().to_string(), root.display().to_string()],
    );
    config = config.at(Place::Host);
    let client = McpClient::connect(&config, &host(&root), None)
        .await
        .unwrap();
    let never = CancellationToken::new();
    let path = root.join("q3.csv").display().to_string();
    let tool = if client.tools().iter().any(|t| t.name == "read_text_file") {
        "read_text_file"
    } else {
        "read_file"
    };
    let out = client
        .call(tool, args(json!({"path": path})), &never)
        .await
        .unwrap();
    assert!(out.text.contains("EMEA,1200"), "{}", out.text);
    let out = client
        .call(tool, args(json!({"path": "/etc/passwd"})), &never)
        .await
        .unwrap();
    assert!(out.is_error, "outside the allowed folder: {}", out.text);
    client.shutdown().await;
}

/// The reference server over HTTP in `mode` (`streamableHttp`, or `sse` for the older
/// transport) on a free port, once it listens.
async fn everything_over_http(mode: &str) -> (tokio::process::Child, u16) {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let script = decima_testkit::mcp_servers::reference_server("server-everything");
    let server = tokio::process::Command::new("node")
        .arg(script)
        .arg(mode)
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the {mode} server did not listen"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (server, port)
}

#[tokio::test]
async fn everything_over_streamable_http_with_headers_and_a_bearer_token() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, port) = everything_over_http("streamableHttp").await;
    let mut config = ServerConfig::http("remote", format!("http://127.0.0.1:{port}/mcp"));
    if let Transport::Http { headers, .. } = &mut config.transport {
        headers.insert("X-Team".into(), "risk".into());
    }
    let client = McpClient::connect(&config, &host(dir.path()), Some("t0ken"))
        .await
        .unwrap();
    assert!(client.tools().iter().any(|t| t.name == "echo"));
    let out = client
        .call(
            "echo",
            args(json!({"message": "over http"})),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "Echo: over http");
    client.shutdown().await;
    server.kill().await.unwrap();

    // Nothing listening: a clear error in time, not a hang.
    let mut config = ServerConfig::http("gone", format!("http://127.0.0.1:{port}/mcp"));
    config.startup_timeout_secs = 3;
    let started = Instant::now();
    let e = McpClient::connect(&config, &host(dir.path()), None)
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(e.to_string().contains("\"gone\""), "{e}");
}

#[tokio::test]
async fn the_bearer_token_and_headers_go_on_the_wire_as_http_wants_them() {
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut head = Vec::new();
        let mut buf = [0u8; 4096];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = socket.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        let _ = socket
            .write_all(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n")
            .await;
        String::from_utf8_lossy(&head).to_lowercase()
    });
    let mut config = ServerConfig::http("wire", format!("http://127.0.0.1:{port}/mcp"));
    config.startup_timeout_secs = 5;
    if let Transport::Http { headers, .. } = &mut config.transport {
        headers.insert("X-Team".into(), "risk".into());
    }
    let _ = McpClient::connect(&config, &host(dir.path()), Some("t0ken")).await;
    let head = tokio::time::timeout(Duration::from_secs(5), seen)
        .await
        .unwrap()
        .unwrap();
    assert!(head.contains("authorization: bearer t0ken\r\n"), "{head}");
    assert!(head.contains("x-team: risk\r\n"), "{head}");
}

/// The older HTTP+SSE transport, which servers still offer beside streamable HTTP (the
/// reference server's `sse` mode serves it on /sse): refused in time, with what to give instead.
#[tokio::test]
async fn a_legacy_sse_endpoint_is_refused_in_time_saying_what_to_give_instead() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, port) = everything_over_http("sse").await;
    let mut config = ServerConfig::http("legacy", format!("http://127.0.0.1:{port}/sse"));
    config.startup_timeout_secs = 5;
    let started = Instant::now();
    let e = McpClient::connect(&config, &host(dir.path()), None)
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    let text = e.to_string();
    assert!(text.contains("older HTTP+SSE transport"), "{text}");
    assert!(text.contains("/mcp"), "{text}");
    server.kill().await.unwrap();
}
