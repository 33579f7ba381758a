//! A conversation's workspace as the window reads it, on the host and in Docker: files the
//! analyst adds land under their own name (never over another file), are listed as theirs and
//! named to the agent in the next message only; files a run's calls write are listed with the
//! call; a file's head is read without reading it whole, and a copy out has the same bytes.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::Fixture;
use decima_core::ConversationId;
use decima_runtime::agent::{self, RunOptions, RunRequest, StopOnFailure};
use decima_runtime::conversation_options::{self, ConversationOptions};
use decima_runtime::review::TenthManMode;
use decima_runtime::workspace::{self, Writer};
use decima_store::{ExecutionStatus, SandboxKind};
use serde_json::json;

/// The busybox image the Docker tests use (scripts/lib.sh builds it).
const TEST_IMAGE: &str = "decima-test:busybox";

/// Runs `task` in the conversation where its options put it.
async fn run(f: &Fixture, conversation: ConversationId, task: &str, sandbox: SandboxKind) {
    let outcome = agent::run(
        &agent::Session {
            provider: Some("local"),
            ..f.session(&StopOnFailure)
        },
        RunRequest {
            conversation: Some(conversation),
            workspace: None,
            task: task.into(),
            sandbox,
            options: RunOptions {
                tenth_man: TenthManMode::Off,
                ..RunOptions::default()
            },
        },
    )
    .await
    .unwrap();
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
}

/// The newest user message of the conversation.
async fn last_user_message(f: &Fixture, conversation: ConversationId) -> String {
    let messages = f
        .store
        .messages()
        .page_before(conversation, 0, i64::MAX, 100)
        .await
        .unwrap();
    messages
        .iter()
        .rev()
        .find(|m| m.role == decima_core::Role::User)
        .unwrap()
        .content
        .clone()
}

/// Files outside any workspace, as the analyst's own folder holds them.
fn analyst_files() -> (tempfile::TempDir, Vec<std::path::PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let sales = dir.path().join("q3 sales.csv");
    std::fs::write(&sales, "region,net\nNorth,1200.50\n").unwrap();
    let again = dir.path().join("again");
    std::fs::create_dir(&again).unwrap();
    let second = again.join("q3 sales.csv");
    std::fs::write(&second, "region,net\nSouth,800\n").unwrap();
    (dir, vec![sales, second])
}

#[tokio::test]
async fn on_the_host_added_files_are_named_once_and_written_files_carry_their_call() {
    let f = Fixture::new().await;
    let c = f.store.conversations().create("Q3", None).await.unwrap();
    let place = workspace::place(&f.store, f.dir.path(), c.id)
        .await
        .unwrap();
    assert_eq!(place.kind, SandboxKind::Host);
    let dir = place.host_dir.clone().unwrap();
    assert_eq!(dir, f.dir.path().join("workspaces").join(c.id.to_string()));
    std::fs::write(dir.join("untouched.txt"), "nobody wrote this here").unwrap();

    let (outside, files) = analyst_files();
    let added = workspace::add_files(&f.store, &place, c.id, &files)
        .await
        .unwrap();
    let paths: Vec<&str> = added.iter().map(|a| a.path.as_str()).collect();
    assert_eq!(paths, ["q3 sales.csv", "q3 sales (2).csv"]);
    assert_eq!(
        std::fs::read_to_string(dir.join("q3 sales (2).csv")).unwrap(),
        "region,net\nSouth,800\n"
    );
    // A folder is refused with what to do, and nothing is noted for it.
    let refused = workspace::add_files(&f.store, &place, c.id, &[outside.path().to_path_buf()])
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("only files are copied"),
        "{refused}"
    );

    // The window's notice reads the same state: both wait to be named, oldest first.
    assert_eq!(
        workspace::added::pending_paths(&f.store, c.id)
            .await
            .unwrap(),
        ["q3 sales.csv", "q3 sales (2).csv"]
    );

    // The next run's message names both; the one after names nothing.
    f.call(
        "shell",
        json!({"command": "head -n 1 'q3 sales.csv' > header.txt && echo done"}),
    );
    f.say("Read.");
    run(&f, c.id, "Compare the regions", SandboxKind::Host).await;
    let sent = last_user_message(&f, c.id).await;
    assert_eq!(
        sent,
        "Compare the regions\n\n[Files I added to the workspace:\n- q3 sales.csv (25 bytes)\n\
         - q3 sales (2).csv (21 bytes)]"
    );
    assert!(f.request_text(0).contains("- q3 sales (2).csv (21 bytes)"));
    assert!(
        workspace::added::pending_paths(&f.store, c.id)
            .await
            .unwrap()
            .is_empty(),
        "named files are still said to be waiting"
    );
    f.say("Nothing new.");
    run(&f, c.id, "Anything else?", SandboxKind::Host).await;
    assert_eq!(last_user_message(&f, c.id).await, "Anything else?");

    // The panel: what the call wrote, with the call; what the analyst added, as theirs; the
    // file nobody here wrote only among all files.
    let listed = workspace::entries(&f.store, &place, c.id, false)
        .await
        .unwrap();
    let mut by_path: Vec<(String, Writer)> = listed
        .into_iter()
        .map(|e| (e.path, e.written_by.unwrap()))
        .collect();
    by_path.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(by_path.len(), 3, "{by_path:?}");
    assert_eq!(by_path[0].0, "header.txt");
    assert!(
        matches!(&by_path[0].1, Writer::Call { tool, conversation_id, .. } if tool == "shell" && *conversation_id == Some(c.id)),
        "{by_path:?}"
    );
    assert!(
        matches!(&by_path[1].1, Writer::Analyst { name, .. } if name == "q3 sales (2).csv" || name == "q3 sales.csv")
    );
    let all = workspace::entries(&f.store, &place, c.id, true)
        .await
        .unwrap();
    let untouched = all.iter().find(|e| e.path == "untouched.txt").unwrap();
    assert!(untouched.written_by.is_none());
    let header = std::fs::read_to_string(dir.join("header.txt")).unwrap();
    assert_eq!(header, "region,net\n");
}

#[tokio::test]
async fn in_docker_files_are_added_listed_read_in_part_and_copied_out_from_the_container() {
    let f = Fixture::new().await;
    let c = f
        .store
        .conversations()
        .create("Q3 in Docker", None)
        .await
        .unwrap();
    conversation_options::save(
        &f.store,
        c.id,
        ConversationOptions {
            sandbox: Some("docker".into()),
            ..ConversationOptions::default()
        },
    )
    .await
    .unwrap();
    f.store
        .conversations()
        .set_sandbox_config(c.id, Some(&json!({"image": TEST_IMAGE})))
        .await
        .unwrap();
    let place = workspace::place(&f.store, f.dir.path(), c.id)
        .await
        .unwrap();
    assert_eq!(place.kind, SandboxKind::Docker);
    assert!(
        place.host_dir.is_none(),
        "a container's workspace is no host folder"
    );

    let (_outside, files) = analyst_files();
    let added = workspace::add_files(&f.store, &place, c.id, &files[..1])
        .await
        .unwrap();
    assert_eq!(added[0].path, "q3 sales.csv");
    // Copying in never replaces: the sandbox refuses a file already there.
    let again = place
        .sandbox
        .copy_in(files[1].clone(), "q3 sales.csv".into())
        .await
        .unwrap_err();
    assert!(
        again.message.contains("already in the workspace"),
        "{}",
        again.message
    );

    // A run in the container writes a large file; the head is read, not the whole file.
    f.call(
        "shell",
        json!({"command": "cat 'q3 sales.csv' && seq 1 200000 > big.txt && wc -c < big.txt"}),
    );
    f.say("Counted.");
    run(&f, c.id, "Count", SandboxKind::Docker).await;
    assert!(
        f.last_tool_result(1).contains("North,1200.50"),
        "{}",
        f.last_tool_result(1)
    );
    let head = place.sandbox.read_head("big.txt".into(), 10).await.unwrap();
    assert_eq!(head, b"1\n2\n3\n4\n5\n");
    let too_big = place
        .sandbox
        .read_bytes("big.txt".into(), 1000)
        .await
        .unwrap_err();
    assert!(
        too_big.message.contains("more than the 1000 bytes"),
        "{}",
        too_big.message
    );
    assert!(
        place
            .sandbox
            .read_head("../etc/passwd".into(), 10)
            .await
            .is_err()
    );

    let listed = workspace::entries(&f.store, &place, c.id, false)
        .await
        .unwrap();
    let big = listed.iter().find(|e| e.path == "big.txt").unwrap();
    assert_eq!(big.size, 1_288_895);
    assert!(matches!(&big.written_by, Some(Writer::Call { tool, .. }) if tool == "shell"));
    assert!(
        listed
            .iter()
            .any(|e| e.path == "q3 sales.csv"
                && matches!(e.written_by, Some(Writer::Analyst { .. })))
    );

    let out = tempfile::tempdir().unwrap();
    let to = out.path().join("big copy.txt");
    let copied = place
        .sandbox
        .copy_out("big.txt".into(), to.clone())
        .await
        .unwrap();
    assert_eq!(copied, 1_288_895);
    let bytes = std::fs::read(&to).unwrap();
    assert!(bytes.starts_with(b"1\n2\n") && bytes.ends_with(b"199999\n200000\n"));
    assert_eq!(
        std::fs::read_dir(out.path()).unwrap().count(),
        1,
        "no partial file is left"
    );

    if let Ok(engine) = decima_runtime::docker::engine(f.dir.path()).await {
        let _ = engine.remove_conversation(&c.id.to_string(), true).await;
    }
}

/// A subagent's conversation works in its parent's folder: that is the folder its panel lists
/// and "Open folder" opens, not a folder of its own that no run ever used.
#[tokio::test]
async fn a_subagents_conversation_is_placed_in_its_parents_folder() {
    let f = Fixture::new().await;
    let c = f
        .store
        .conversations()
        .create("parent", None)
        .await
        .unwrap();
    f.call("spawn_subagent", json!({"task": "Write the note"}));
    f.call(
        "write_file",
        json!({"path": "note.md", "content": "from the child"}),
    );
    f.say("Written.");
    f.say("Done.");
    run(&f, c.id, "Delegate the note", SandboxKind::Host).await;
    let parent = workspace::place(&f.store, f.dir.path(), c.id)
        .await
        .unwrap();
    let parent_dir = parent.host_dir.clone().unwrap();
    assert!(
        parent_dir.join("note.md").exists(),
        "the child wrote in the parent's folder"
    );
    let parent_run = f
        .store
        .executions()
        .list_by_conversation(c.id)
        .await
        .unwrap();
    let child = f
        .store
        .executions()
        .children(parent_run[0].id)
        .await
        .unwrap()
        .pop()
        .expect("a subagent ran");
    assert_ne!(child.conversation_id, c.id);
    let placed = workspace::place(&f.store, f.dir.path(), child.conversation_id)
        .await
        .unwrap();
    assert_eq!(placed.kind, SandboxKind::Host);
    assert_eq!(placed.host_dir.unwrap(), parent_dir);
    // The window says whose workspace the child's is; the parent's is its own.
    assert_eq!(placed.owner, Some(c.id));
    assert_eq!(parent.owner, None);
}

/// A 2 GiB file (sparse: no disk is spent) is listed with its size, and its preview reads only
/// its head, at once: the panel never reads a file whole to show it.
#[tokio::test]
async fn a_two_gigabyte_file_is_listed_and_only_its_head_is_read() {
    let f = Fixture::new().await;
    let c = f.store.conversations().create("big", None).await.unwrap();
    let place = workspace::place(&f.store, f.dir.path(), c.id)
        .await
        .unwrap();
    let dir = place.host_dir.clone().unwrap();
    let big = std::fs::File::create(dir.join("events.csv")).unwrap();
    big.set_len(2 << 30).unwrap();
    drop(big);
    let all = workspace::entries(&f.store, &place, c.id, true)
        .await
        .unwrap();
    let listed = all.iter().find(|e| e.path == "events.csv").unwrap();
    assert_eq!(listed.size, 2 << 30);
    let started = std::time::Instant::now();
    let head = place
        .sandbox
        .read_head("events.csv".into(), 512 * 1024 + 1)
        .await
        .unwrap();
    assert_eq!(
        head.len(),
        512 * 1024 + 1,
        "the cap and one byte to say there is more"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

/// A server that numbers calls per response sends `call_0` at every step: each file's writer
/// names the answer that holds its call, and the result found from it is that step's, not the
/// newest `call_0`'s.
#[tokio::test]
async fn a_call_id_used_at_every_step_finds_each_files_own_call() {
    let f = Fixture::new().await;
    let c = f
        .store
        .conversations()
        .create("Charts", None)
        .await
        .unwrap();
    for command in [
        "echo a > first.csv && echo wrote first",
        "echo b > second.csv && echo wrote second",
        "echo done",
    ] {
        f.server
            .enqueue(decima_testkit::Reply::Stream(decima_testkit::Turn {
                tool_calls: vec![decima_testkit::ScriptedToolCall {
                    id: "call_0".into(),
                    name: "shell".into(),
                    argument_chunks: vec![json!({ "command": command }).to_string()],
                }],
                ..decima_testkit::Turn::default()
            }));
    }
    f.say("Both written.");
    run(&f, c.id, "Write both", SandboxKind::Host).await;

    let place = workspace::place(&f.store, f.dir.path(), c.id)
        .await
        .unwrap();
    let listed = workspace::entries(&f.store, &place, c.id, false)
        .await
        .unwrap();
    let answer_of = |path: &str| match &listed.iter().find(|e| e.path == path).unwrap().written_by {
        Some(Writer::Call {
            call_id,
            message_seq,
            ..
        }) => {
            assert_eq!(call_id, "call_0");
            message_seq.expect("the answer that holds the call")
        }
        other => panic!("{path}: {other:?}"),
    };
    let (first, second) = (answer_of("first.csv"), answer_of("second.csv"));
    assert!(first < second, "{first} {second}");
    let store = &f.store;
    let result_of = |after: i64| async move {
        let seq = store
            .messages()
            .seq_of_result(c.id, "call_0", Some(after))
            .await
            .unwrap()
            .unwrap();
        store
            .messages()
            .page_before(c.id, 0, i64::MAX, 100)
            .await
            .unwrap()
            .into_iter()
            .find(|m| m.seq == seq)
            .unwrap()
            .content
    };
    assert!(result_of(first).await.contains("wrote first"));
    assert!(result_of(second).await.contains("wrote second"));
    // Without the answer, the newest result of that id: the step after both.
    let newest = store
        .messages()
        .seq_of_result(c.id, "call_0", None)
        .await
        .unwrap()
        .unwrap();
    assert!(newest > second + 1);
}

/// A file the analyst drops while a run writes a file of the same name: neither is lost. The
/// run's file keeps its name and every byte it wrote; the analyst's lands beside it under a free
/// name, is listed as theirs, and the next message names it as it landed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_dropped_while_a_run_writes_the_same_name_lands_beside_it() {
    let f = Fixture::new().await;
    let c = f.store.conversations().create("Race", None).await.unwrap();
    let place = workspace::place(&f.store, f.dir.path(), c.id)
        .await
        .unwrap();
    let outside = tempfile::tempdir().unwrap();
    let dropped = outside.path().join("data.csv");
    std::fs::write(&dropped, "analyst,1\n").unwrap();
    f.call(
        "shell",
        json!({"command": "printf 'run,1\\n' > data.csv && sleep 1 && printf 'run,2\\n' >> data.csv"}),
    );
    f.say("Written.");
    let drop = async {
        // While the command sleeps: data.csv is the run's, half written.
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        workspace::add_files(&f.store, &place, c.id, std::slice::from_ref(&dropped))
            .await
            .unwrap()
    };
    let ((), added) = tokio::join!(run(&f, c.id, "Write the data", SandboxKind::Host), drop);
    assert_eq!(added[0].path, "data (2).csv");
    let dir = place.host_dir.clone().unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join("data.csv")).unwrap(),
        "run,1\nrun,2\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("data (2).csv")).unwrap(),
        "analyst,1\n"
    );
    let listed = workspace::entries(&f.store, &place, c.id, false)
        .await
        .unwrap();
    assert!(listed.iter().any(|e| e.path == "data.csv"
        && matches!(&e.written_by, Some(Writer::Call { tool, .. }) if tool == "shell")));
    assert!(listed.iter().any(|e| e.path == "data (2).csv"
        && matches!(&e.written_by, Some(Writer::Analyst { name, .. }) if name == "data.csv")));
    f.say("Seen.");
    run(&f, c.id, "Look again", SandboxKind::Host).await;
    let told = last_user_message(&f, c.id).await;
    assert!(told.contains("data (2).csv"), "{told}");
}
