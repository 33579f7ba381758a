//! A run whose sandbox is a remote Docker engine over mutual TLS, named as the docker CLI names
//! one (`DOCKER_HOST`, `DOCKER_TLS_VERIFY`, `DOCKER_CERT_PATH`): the local engine behind a TLS
//! front (`socat`) that demands the team's client certificate. The run's `shell` calls go
//! through it; with a CA that did not sign the engine's certificate the run stops with an error
//! that names TLS and the file, and no call ran on the local engine instead.
//!
//! Needs a running engine, the busybox test image, openssl and socat (scripts/test.sh).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::process::Output;

use common::{Env, docker_conversation, text};
use decima_testkit::tls::{Front, cert_dir, make_ca, team};
use serde_json::json;

/// `decima run --conversation ID --sandbox docker TASK` against the engine at `port` with the
/// certificates of `certs`.
async fn run_remote(env: &Env, conversation: &str, port: u16, certs: &Path, task: &str) -> Output {
    let mut cmd = env.command(&[
        "run",
        "--conversation",
        conversation,
        "--sandbox",
        "docker",
        "--on-failure",
        "stop",
        task,
    ]);
    cmd.env("DOCKER_HOST", format!("tcp://127.0.0.1:{port}"))
        .env("DOCKER_TLS_VERIFY", "1")
        .env("DOCKER_CERT_PATH", certs);
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_works_on_a_remote_engine_over_mutual_tls_and_a_wrong_ca_stops_it() {
    let certs = tempfile::tempdir().unwrap();
    let good = team(certs.path());
    make_ca(certs.path(), "other");
    let wrong_ca = cert_dir(certs.path(), "wrong-ca", "other", Some("analyst"));
    let front = Front::start(certs.path(), "server");

    let env = Env::new().await;
    let (conversation, _cleanup) = docker_conversation(&env).await;
    env.call(
        "shell",
        json!({"command": "echo through-the-remote-engine && id -u && echo made > made.txt"}),
    );
    env.say("Done on the server.");
    let out = run_remote(&env, &conversation, front.port, &good, "Run it remotely").await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let result = common::last_tool_result(&env, 1);
    assert!(
        result.contains("through-the-remote-engine\n1000"),
        "{result}"
    );

    // The same conversation with a CA that did not sign the engine's certificate: the call is
    // refused, the run stops, and the message says TLS and which file.
    env.call("shell", json!({"command": "echo should-not-run > ran.txt"}));
    env.say("unused");
    let out = run_remote(&env, &conversation, front.port, &wrong_ca, "Again").await;
    let said = text(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("TLS") && said.contains("wrong-ca/ca.pem"),
        "the failure names TLS and the CA file: {said}"
    );
    // Nothing ran on the local engine instead: the workspace has the first run's file only.
    let listed = std::process::Command::new("docker")
        .args([
            "ps",
            "-q",
            "--filter",
            &format!("label=decima.conversation={conversation}"),
        ])
        .output()
        .unwrap();
    let containers = text(&listed.stdout);
    assert!(
        !containers.trim().is_empty(),
        "the first run's container is kept on the engine"
    );
    for id in containers.split_whitespace() {
        let ls = std::process::Command::new("docker")
            .args(["exec", id, "ls", "/workspace"])
            .output()
            .unwrap();
        let files = text(&ls.stdout);
        assert!(files.contains("made.txt"), "{files}");
        assert!(!files.contains("ran.txt"), "a call ran elsewhere: {files}");
    }
}
