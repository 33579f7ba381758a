//! Switching where a conversation's runs work, with its files: the analyst's files and those a
//! run wrote on the host are copied into the conversation's container (so the next run there
//! reads them), and back; a file already at the destination is kept as it is there, and the
//! source is left whole. Needs a Docker engine and the busybox test image (scripts/lib.sh).

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::Fixture;
use decima_core::ConversationId;
use decima_runtime::conversation_options::{self, ConversationOptions};
use decima_runtime::workspace;
use decima_store::{ExecutionStatus, SandboxKind};
use serde_json::json;

const TEST_IMAGE: &str = "decima-test:busybox";

async fn run_where(f: &Fixture, conversation: ConversationId, sandbox: SandboxKind) {
    let outcome = f.run_here(conversation, "Read the ledger", sandbox).await;
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
}

async fn work_in(f: &Fixture, conversation: ConversationId, sandbox: &str) {
    let own = conversation_options::load(&f.store, conversation)
        .await
        .unwrap();
    conversation_options::save(
        &f.store,
        conversation,
        ConversationOptions {
            sandbox: Some(sandbox.into()),
            ..own
        },
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn switching_to_docker_and_back_takes_the_files_along_and_replaces_nothing() {
    let f = Fixture::new().await;
    let c = f
        .store
        .conversations()
        .create("Ledger", None)
        .await
        .unwrap();
    f.store
        .conversations()
        .set_sandbox_config(c.id, Some(&json!({"image": TEST_IMAGE})))
        .await
        .unwrap();

    // On the host: the analyst adds a ledger in a folder, and a run writes a result.
    let outside = tempfile::tempdir().unwrap();
    let ledger = outside.path().join("ledger_q3.csv");
    std::fs::write(&ledger, "account,amount\nrent,1200.50\n").unwrap();
    let host = workspace::place(&f.store, f.dir.path(), c.id)
        .await
        .unwrap();
    assert_eq!(host.kind, SandboxKind::Host);
    workspace::add_files(&f.store, &host, c.id, &[ledger])
        .await
        .unwrap();
    f.call(
        "shell",
        json!({"command": "mkdir -p out && printf 'total 1200.50\\n' > out/total.txt"}),
    );
    f.say("Totalled.");
    run_where(&f, c.id, SandboxKind::Host).await;
    assert_eq!(
        workspace::census(&f.store, f.dir.path(), c.id, SandboxKind::Host)
            .await
            .unwrap(),
        (2, 28 + 14)
    );

    // Copying before switching is refused: the files would land where they are.
    let early = workspace::copy_across(&f.store, f.dir.path(), c.id, SandboxKind::Host)
        .await
        .unwrap_err();
    assert!(
        early.to_string().contains("already work on this computer"),
        "{early}"
    );

    // To Docker: both files are left on the host until copied, then copied into the
    // container byte for byte, and no longer said to be left behind.
    work_in(&f, c.id, "docker").await;
    let left = workspace::left_on_host(&f.store, f.dir.path(), c.id).await;
    assert_eq!(left.unwrap(), 2);
    let copied = workspace::copy_across(&f.store, f.dir.path(), c.id, SandboxKind::Host)
        .await
        .unwrap();
    let mut names = copied.copied.clone();
    names.sort();
    assert_eq!(names, ["ledger_q3.csv", "out/total.txt"]);
    assert!(copied.kept.is_empty());
    assert_eq!(copied.bytes, 42);
    let left = workspace::left_on_host(&f.store, f.dir.path(), c.id).await;
    assert_eq!(left.unwrap(), 0);
    let docker = workspace::place(&f.store, f.dir.path(), c.id)
        .await
        .unwrap();
    assert_eq!(docker.kind, SandboxKind::Docker);
    assert_eq!(
        docker
            .sandbox
            .read_bytes("out/total.txt".into(), 100)
            .await
            .unwrap(),
        b"total 1200.50\n"
    );

    // The next run in the container reads the ledger where the agent expects it.
    f.call("shell", json!({"command": "cat ledger_q3.csv"}));
    f.say("Read.");
    run_where(&f, c.id, SandboxKind::Docker).await;
    let read = f.last_tool_result(3);
    assert!(read.contains("rent,1200.50"), "{read}");

    // In the container the total changes and a chart is added; back on the host, the chart
    // comes across and the host's own total is kept as it was.
    f.call(
        "shell",
        json!({"command": "printf 'total 9\\n' > out/total.txt && printf 'png' > chart.png"}),
    );
    f.say("Charted.");
    run_where(&f, c.id, SandboxKind::Docker).await;
    work_in(&f, c.id, "host").await;
    let back = workspace::copy_across(&f.store, f.dir.path(), c.id, SandboxKind::Docker)
        .await
        .unwrap();
    assert_eq!(back.copied, ["chart.png"]);
    let mut kept = back.kept.clone();
    kept.sort();
    assert_eq!(kept, ["ledger_q3.csv", "out/total.txt"]);
    let dir = host.host_dir.clone().unwrap();
    assert_eq!(std::fs::read(dir.join("chart.png")).unwrap(), b"png");
    assert_eq!(
        std::fs::read_to_string(dir.join("out/total.txt")).unwrap(),
        "total 1200.50\n",
        "a file already there is never replaced"
    );
    // The container's files are left as they were.
    assert_eq!(
        docker
            .sandbox
            .read_bytes("out/total.txt".into(), 100)
            .await
            .unwrap(),
        b"total 9\n"
    );

    if let Ok(engine) = decima_runtime::docker::engine(f.dir.path()).await {
        let _ = engine.remove_conversation(&c.id.to_string(), true).await;
    }
}

#[tokio::test]
async fn a_dead_docker_engine_is_an_error_that_says_so_and_the_host_files_stay() {
    let f = Fixture::new().await;
    let c = f
        .store
        .conversations()
        .create("Ledger", None)
        .await
        .unwrap();
    let host = workspace::place(&f.store, f.dir.path(), c.id)
        .await
        .unwrap();
    std::fs::write(host.host_dir.clone().unwrap().join("a.csv"), "x\n1\n").unwrap();
    // An engine that does not answer: Settings name a socket with nothing behind it.
    std::fs::write(
        f.dir.path().join("docker-engine.json"),
        json!({"host": format!("unix://{}/no-docker.sock", f.dir.path().display())}).to_string(),
    )
    .unwrap();
    work_in(&f, c.id, "docker").await;
    let err = workspace::copy_across(&f.store, f.dir.path(), c.id, SandboxKind::Host)
        .await
        .unwrap_err();
    assert!(err.to_string().to_lowercase().contains("docker"), "{err}");
    assert_eq!(
        std::fs::read_to_string(host.host_dir.unwrap().join("a.csv")).unwrap(),
        "x\n1\n"
    );
}
