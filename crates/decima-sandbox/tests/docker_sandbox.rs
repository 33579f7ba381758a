//! The Docker sandbox against a real engine and the `decima-test:busybox` image (see
//! tests/common/mod.rs: a missing engine or image fails these tests, naming scripts/test.sh).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::{Duration, Instant};

use bollard::query_parameters::InspectContainerOptions;
use decima_core::FailureClass;
use decima_sandbox::docker::{DockerConfig, DockerEngine, DockerSandbox};
use decima_sandbox::host::{
    ReadFileRequest, Sandbox, ShellOutcome, ShellRequest, WriteFileRequest,
};
use decima_sandbox::{SandboxError, ToolError};
use sha2::{Digest, Sha256};

use common::{TEST_IMAGE, cleanup, sandbox};

async fn run(sb: &DockerSandbox, command: &str, timeout_s: u64) -> ShellOutcome {
    sb.exec(ShellRequest::new(command).with_timeout(Duration::from_secs(timeout_s)))
        .await
        .unwrap()
}

fn read(path: &str) -> ReadFileRequest {
    ReadFileRequest {
        path: path.to_owned(),
        offset: None,
        limit: None,
    }
}

fn write(path: &str, content: &str) -> WriteFileRequest {
    WriteFileRequest {
        path: path.to_owned(),
        content: content.to_owned(),
    }
}

#[tokio::test]
async fn exec_returns_output_and_exit_code() {
    let sb = sandbox("exec").await;
    let _c = cleanup(&sb);
    let out = run(&sb, "echo hello; echo oops >&2; exit 3", 30).await;
    assert_eq!(out.exit_code, Some(3));
    assert!(!out.timed_out);
    assert_eq!(out.output, "hello\noops\n");
    assert_eq!(out.output_bytes, 11);
    let out = run(&sb, "pwd; id -u; echo $HOME; env | sort", 30).await;
    assert_eq!(out.exit_code, Some(0));
    let lines: Vec<_> = out.output.lines().collect();
    assert_eq!(lines[0], "/workspace");
    assert_eq!(lines[1], "1000");
    assert_eq!(lines[2], "/workspace");
    assert!(out.output.contains("LC_ALL=C.UTF-8"), "{}", out.output);
    assert!(out.output.contains("TERM=dumb"), "{}", out.output);
    // cwd inside the workspace works; one that leaves it is refused.
    run(&sb, "mkdir -p sub/dir", 30).await;
    let out = sb
        .exec(ShellRequest {
            command: "pwd".into(),
            timeout: None,
            cwd: Some("sub/dir".into()),
        })
        .await
        .unwrap();
    assert_eq!(out.output, "/workspace/sub/dir\n");
    let err = sb
        .exec(ShellRequest {
            command: "pwd".into(),
            timeout: None,
            cwd: Some("../etc".into()),
        })
        .await
        .unwrap_err();
    assert!(err.refused, "{err:?}");
    run(&sb, "ln -s /etc etclink", 30).await;
    let err = sb
        .exec(ShellRequest {
            command: "pwd".into(),
            timeout: None,
            cwd: Some("etclink".into()),
        })
        .await
        .unwrap_err();
    assert!(err.refused, "{err:?}");
    assert!(out.to_tool_text().ends_with("[exit code 0]"));
}

#[tokio::test]
async fn the_container_is_reused_across_sandboxes() {
    let first = sandbox("reuse").await;
    let _c = cleanup(&first);
    run(&first, "echo kept > note.txt", 30).await;
    let id1 = first.container().await.unwrap();
    let second = DockerSandbox::new(
        common::engine().await,
        DockerConfig::with_image(TEST_IMAGE),
        first.key(),
    )
    .unwrap();
    let id2 = second.container().await.unwrap();
    assert_eq!(id1, id2);
    assert_eq!(run(&second, "cat note.txt", 30).await.output, "kept\n");

    // A stopped container is started again, with the workspace intact.
    first
        .engine()
        .client()
        .stop_container(&id1, None)
        .await
        .unwrap();
    let third = DockerSandbox::new(
        common::engine().await,
        DockerConfig::with_image(TEST_IMAGE),
        first.key(),
    )
    .unwrap();
    assert_eq!(run(&third, "cat note.txt", 30).await.output, "kept\n");
    assert_eq!(third.container().await.unwrap(), id1);
    // The first sandbox's cached id still works (same container, running again).
    assert_eq!(run(&first, "echo again", 30).await.output, "again\n");

    // Removed behind its back: the next call recreates it, on the same volume.
    first
        .engine()
        .remove_conversation(first.key(), false)
        .await
        .unwrap();
    assert_eq!(run(&first, "cat note.txt", 30).await.output, "kept\n");
    assert_ne!(first.container().await.unwrap(), id1);
}

#[tokio::test]
async fn the_container_is_locked_down() {
    let sb = sandbox("locked").await;
    let _c = cleanup(&sb);
    let id = sb.container().await.unwrap();
    let info = sb
        .engine()
        .client()
        .inspect_container(&id, None::<InspectContainerOptions>)
        .await
        .unwrap();
    let hc = info.host_config.unwrap();
    assert_eq!(hc.network_mode.as_deref(), Some("none"));
    assert_eq!(hc.readonly_rootfs, Some(true));
    assert_eq!(hc.memory, Some(1024 * 1024 * 1024));
    assert_eq!(hc.nano_cpus, Some(1_000_000_000));
    assert_eq!(hc.pids_limit, Some(256));
    assert_eq!(hc.cap_drop, Some(vec!["ALL".to_owned()]));
    assert!(
        hc.security_opt
            .unwrap_or_default()
            .iter()
            .any(|o| o.starts_with("no-new-privileges"))
    );
    let config = info.config.unwrap();
    assert_eq!(config.user.as_deref(), Some("1000:1000"));
    let labels = config.labels.unwrap();
    assert_eq!(labels.get("decima.sandbox").map(String::as_str), Some("1"));
    assert_eq!(
        labels.get("decima.conversation").map(String::as_str),
        Some(sb.key())
    );
    assert_eq!(
        labels.get("decima.instance").map(String::as_str),
        Some(common::TEST_INSTANCE)
    );

    let out = run(&sb, "echo x > /etc/x", 30).await;
    assert_ne!(out.exit_code, Some(0), "{}", out.output);
    let out = run(
        &sb,
        "echo x > /workspace/x && cat /workspace/x && echo t > /tmp/t && cat /tmp/t",
        30,
    )
    .await;
    assert_eq!(out.exit_code, Some(0), "{}", out.output);
    assert_eq!(out.output, "x\nt\n");
    let out = run(&sb, "id -u; cat /proc/self/status | grep CapEff", 30).await;
    assert!(out.output.starts_with("1000\n"), "{}", out.output);
    assert!(out.output.contains("0000000000000000"), "{}", out.output);
    let out = run(&sb, "ls /sys/class/net", 30).await;
    assert_eq!(out.output.trim(), "lo", "no network but loopback");
}

#[tokio::test]
async fn a_timeout_kills_the_command_and_its_children_inside_the_container() {
    let sb = sandbox("timeout").await;
    let _c = cleanup(&sb);
    let started = Instant::now();
    let out = run(&sb, "sleep 37 & echo started; sleep 38; echo never", 1).await;
    let took = started.elapsed();
    assert!(out.timed_out, "{out:?}");
    assert_eq!(out.signal, Some(9));
    assert_eq!(out.exit_code, None);
    assert!(out.output.starts_with("started"), "{}", out.output);
    assert!(!out.output.contains("never"));
    assert!(took < Duration::from_secs(6), "took {took:?}");
    assert!(out.to_tool_text().contains("timed out after 1 s"));
    // Nothing it started is left, not even as a zombie (the watchdog of this `ps` call
    // sleeps 20 s; the command's own sleeps are 37 and 38 s).
    let ps = run(&sb, "ps -o pid,stat,args", 20).await;
    assert!(!ps.output.contains("sleep 37"), "{}", ps.output);
    assert!(!ps.output.contains("sleep 38"), "{}", ps.output);
    assert!(!ps.output.contains(" Z "), "{}", ps.output);

    // A background child of a command that exits is killed at the end of the call.
    let out = run(&sb, "sleep 40 >/dev/null 2>&1 & echo bye", 30).await;
    assert_eq!(out.output, "bye\n");
    let ps = run(&sb, "ps -o pid,args", 20).await;
    assert!(!ps.output.contains("sleep 40"), "{}", ps.output);
    // The watchdogs of finished calls are gone too.
    assert!(!ps.output.contains("decima-watchdog 30"), "{}", ps.output);
}

#[tokio::test]
async fn read_and_write_files_round_trip_and_refuse_escapes() {
    let sb = sandbox("files").await;
    let _c = cleanup(&sb);
    let w = sb
        .write_file(write("dir/sub/a.txt", "one\ntwo\nthree\n"))
        .await
        .unwrap();
    assert!(w.created);
    assert_eq!(w.bytes, 14);
    assert_eq!(w.path.to_str(), Some("dir/sub/a.txt"));
    let w = sb
        .write_file(write("/workspace/dir/sub/a.txt", "one\ntwo\nthree\nfour\n"))
        .await
        .unwrap();
    assert!(!w.created);
    let r = sb.read_file(read("dir/sub/a.txt")).await.unwrap();
    assert_eq!(r.content, "one\ntwo\nthree\nfour\n");
    assert_eq!(r.lines, 4);
    let r = sb
        .read_file(ReadFileRequest {
            path: "dir/sub/a.txt".into(),
            offset: Some(2),
            limit: Some(2),
        })
        .await
        .unwrap();
    assert_eq!(r.content, "two\nthree\n");
    assert!(r.truncated);
    // Owned by the sandbox user.
    let out = run(&sb, "stat -c %u:%g dir/sub/a.txt dir/sub", 30).await;
    assert_eq!(out.output, "1000:1000\n1000:1000\n");
    // A big write goes as an archive, not through argv.
    let big = "x".repeat(300 * 1024) + "\n";
    sb.write_file(write("big.txt", &big)).await.unwrap();
    assert_eq!(
        run(&sb, "wc -c < big.txt", 30).await.output.trim(),
        "307201"
    );

    let refused = |e: ToolError| {
        assert!(e.refused, "{e:?}");
        assert_eq!(e.class, FailureClass::Permission);
    };
    refused(sb.read_file(read("../x")).await.unwrap_err());
    refused(sb.read_file(read("/etc/passwd")).await.unwrap_err());
    refused(sb.write_file(write("../x", "no")).await.unwrap_err());
    refused(sb.write_file(write("/etc/x", "no")).await.unwrap_err());
    run(
        &sb,
        "ln -s /etc etc && ln -s /etc/passwd pw && ln -s /nowhere dangling",
        30,
    )
    .await;
    refused(sb.read_file(read("etc/passwd")).await.unwrap_err());
    refused(sb.read_file(read("pw")).await.unwrap_err());
    refused(sb.write_file(write("etc/x", "no")).await.unwrap_err());
    refused(sb.write_file(write("etc/new/x", "no")).await.unwrap_err());
    refused(sb.write_file(write("pw", "no")).await.unwrap_err());
    refused(sb.write_file(write("dangling", "no")).await.unwrap_err());
    // A symlink that stays inside is followed.
    run(&sb, "ln -s dir/sub/a.txt inside", 30).await;
    assert_eq!(sb.read_file(read("inside")).await.unwrap().lines, 4);

    let e = sb.read_file(read("missing.txt")).await.unwrap_err();
    assert_eq!(e.class, FailureClass::Data);
    let e = sb.read_file(read("dir")).await.unwrap_err();
    assert_eq!(e.class, FailureClass::Data);
    assert!(e.message.contains("directory"));
}

#[tokio::test]
async fn a_50_mb_upload_arrives_intact() {
    let sb = sandbox("upload").await;
    let _c = cleanup(&sb);
    let mut rng = fastrand::Rng::with_seed(7);
    let mut data = vec![0u8; 50 * 1024 * 1024];
    rng.fill(&mut data);
    let want = format!("{:x}", Sha256::digest(&data));
    let started = Instant::now();
    let real = sb
        .upload_bytes("context/history.bin", data.clone())
        .await
        .unwrap();
    eprintln!("50 MB upload took {:?}", started.elapsed());
    assert_eq!(real, "/workspace/context/history.bin");
    let out = run(
        &sb,
        "sha256sum context/history.bin; stat -c %u:%s context/history.bin",
        60,
    )
    .await;
    assert!(out.output.starts_with(&want), "{} vs {want}", out.output);
    assert!(
        out.output.contains(&format!("1000:{}", data.len())),
        "{}",
        out.output
    );
    let back = sb.download_file("context/history.bin").await.unwrap();
    assert!(back == data, "the download differs");

    // A reader that ends short fails the upload instead of writing a short file.
    let short = std::io::Cursor::new(vec![1u8; 10]);
    assert!(sb.upload_file("short.bin", short, 20).await.is_err());
}

#[tokio::test]
async fn stale_containers_of_this_instance_are_removed() {
    let instance = format!("decimastale{}", fastrand::u32(..));
    let old = DockerEngine::connect(&instance).await.unwrap();
    let sb =
        DockerSandbox::new(old.clone(), DockerConfig::with_image(TEST_IMAGE), "conv1").unwrap();
    let _c = cleanup(&sb);
    run(&sb, "echo kept > f", 30).await;
    let other = common::sandbox("notstale").await;
    let _c2 = cleanup(&other);
    other.container().await.unwrap();

    // The same engine run removes nothing of its own.
    assert!(old.remove_stale(|_| false).await.unwrap().is_empty());
    // A later run of the same instance removes the earlier run's container...
    let new = DockerEngine::connect(&instance).await.unwrap();
    // ...unless that run is vouched for as live...
    assert!(
        new.remove_stale(|run| run == old.run_id())
            .await
            .unwrap()
            .is_empty()
    );
    let removed = new.remove_stale(|_| false).await.unwrap();
    assert_eq!(removed, vec![sb.container_name()]);
    let gone = new
        .client()
        .inspect_container(&sb.container_name(), None::<InspectContainerOptions>)
        .await;
    assert!(gone.is_err());
    // ...but not another instance's, and keeps the volume.
    other
        .engine()
        .client()
        .inspect_container(&other.container_name(), None::<InspectContainerOptions>)
        .await
        .unwrap();
    let again =
        DockerSandbox::new(new.clone(), DockerConfig::with_image(TEST_IMAGE), "conv1").unwrap();
    assert_eq!(run(&again, "cat f", 30).await.output, "kept\n");
    assert!(new.remove_stale(|_| false).await.unwrap().is_empty());
}

#[tokio::test]
async fn the_workspace_round_trips_through_a_host_mirror() {
    let sb = sandbox("mirror").await;
    let _c = cleanup(&sb);
    run(
        &sb,
        "mkdir -p a/b && echo one > a/b/one.txt && printf 'bin\\000ary' > bin && ln -s a/b/one.txt link && chmod 600 bin && touch .hidden",
        30,
    )
    .await;
    let mirror = tempfile::tempdir().unwrap();
    std::fs::write(mirror.path().join("stale.txt"), "old").unwrap();
    sb.download_workspace(mirror.path()).await.unwrap();
    let m = mirror.path();
    assert!(!m.join("stale.txt").exists());
    assert_eq!(
        std::fs::read_to_string(m.join("a/b/one.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(std::fs::read(m.join("bin")).unwrap(), b"bin\0ary");
    assert_eq!(
        std::fs::read_link(m.join("link")).unwrap().to_str(),
        Some("a/b/one.txt")
    );
    assert!(m.join(".hidden").exists());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(m.join("bin"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o600
        );
    }

    // Change the mirror, push it back: the container's workspace matches it exactly.
    std::fs::remove_file(m.join("a/b/one.txt")).unwrap();
    std::fs::write(m.join("a/two.txt"), "two").unwrap();
    std::fs::create_dir_all(m.join("new/dir")).unwrap();
    run(&sb, "echo extra > extra.txt && chmod 444 extra.txt", 30).await;
    sb.upload_workspace(m).await.unwrap();
    let out = run(
        &sb,
        "find . | sort; cat a/two.txt; echo; stat -c %u:%g a/two.txt new/dir",
        30,
    )
    .await;
    assert_eq!(
        out.output,
        ".\n./.hidden\n./a\n./a/b\n./a/two.txt\n./bin\n./link\n./new\n./new/dir\ntwo\n1000:1000\n1000:1000\n"
    );
}

#[tokio::test]
async fn big_single_line_and_binary_output_are_handled() {
    let sb = sandbox("bigout").await;
    let _c = cleanup(&sb);
    let out = run(
        &sb,
        "head -c 10485760 /dev/zero | tr '\\000' a; echo; echo end",
        60,
    )
    .await;
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.output_bytes, 10 * 1024 * 1024 + 5);
    assert!(out.truncated);
    assert!(out.output.len() < 64 * 1024, "{}", out.output.len());
    assert!(out.output.ends_with("end\n"));
    let saved = out.full_output_path.clone().expect("saved");
    let saved = saved.to_str().unwrap();
    assert!(saved.starts_with("/workspace/.decima/output/"), "{saved}");
    assert!(out.output.contains(saved));
    let wc = run(&sb, &format!("wc -c < {saved}; stat -c %u {saved}"), 30).await;
    assert_eq!(wc.output, format!("{}\n1000\n", 10 * 1024 * 1024 + 5));

    let out = run(&sb, "head -c 200000 /dev/urandom", 30).await;
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.output_bytes, 200_000);
    assert!(!out.truncated);
}

/// Unix sockets: Windows has Docker Desktop's pipe instead (`engine`'s own tests).
#[cfg(unix)]
#[tokio::test]
async fn an_unreachable_engine_is_a_system_error_with_what_to_do() {
    let check = |e: SandboxError, started: Instant| {
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "{:?}",
            started.elapsed()
        );
        let text = e.to_string();
        // `dockerd` on Linux, the desktop engines on macOS.
        let start = decima_sandbox::docker::address::HostOs::CURRENT.start_hint();
        assert!(
            text.contains(start) && text.contains("--sandbox host"),
            "{text}"
        );
        let tool: ToolError = e.into();
        assert_eq!(tool.class, FailureClass::System);
    };
    let dir = tempfile::tempdir().unwrap();

    // No socket at all.
    let started = Instant::now();
    let e = DockerEngine::connect_socket(&dir.path().join("nope.sock"), "x")
        .await
        .unwrap_err();
    check(e, started);

    // A socket nobody listens on (connection refused).
    let path = dir.path().join("refused.sock");
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    let started = Instant::now();
    check(
        DockerEngine::connect_socket(&path, "x").await.unwrap_err(),
        started,
    );

    // A socket that accepts and never answers (a wedged engine).
    let path = dir.path().join("silent.sock");
    let listener = tokio::net::UnixListener::bind(&path).unwrap();
    let hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((conn, _)) = listener.accept().await {
            held.push(conn);
        }
    });
    let started = Instant::now();
    check(
        DockerEngine::connect_socket(&path, "x").await.unwrap_err(),
        started,
    );
    hold.abort();
}

#[tokio::test]
async fn hostile_keys_and_bad_settings_are_refused() {
    let engine = common::engine().await;
    for key in [
        "",
        "../x",
        "a b",
        "a/b",
        "-x",
        "x;rm -rf /",
        &"k".repeat(65),
        "ünï",
    ] {
        let e = DockerSandbox::new(engine.clone(), DockerConfig::with_image(TEST_IMAGE), key)
            .unwrap_err();
        assert!(
            matches!(e, SandboxError::InvalidSandboxKey { .. }),
            "{key}: {e}"
        );
    }
    let mut config = DockerConfig::with_image(TEST_IMAGE);
    config.user = "decima".into();
    assert!(DockerSandbox::new(engine.clone(), config, "ok").is_err());
    // A missing image says how to get one.
    let sb = DockerSandbox::new(
        engine,
        DockerConfig::with_image("decima-no-such:image"),
        &common::unique_key("noimg"),
    )
    .unwrap();
    let _c = cleanup(&sb);
    let e = sb.exec(ShellRequest::new("true")).await.unwrap_err();
    assert_eq!(e.class, FailureClass::System);
    assert!(e.message.contains("decima-no-such:image"), "{}", e.message);
}

#[test]
fn the_config_round_trips_through_serde_with_defaults() {
    let config: DockerConfig = serde_json::from_str(r#"{"image":"x:y","network":true}"#).unwrap();
    assert_eq!(config.image, "x:y");
    assert!(config.network);
    assert_eq!(config.user, "1000:1000");
    assert_eq!(config.pids_limit, 256);
    let back: DockerConfig =
        serde_json::from_str(&serde_json::to_string(&config).unwrap()).unwrap();
    assert_eq!(back, config);
    assert_eq!(DockerConfig::default().image, DockerConfig::DEFAULT_IMAGE);
}

#[tokio::test]
async fn a_workspace_not_owned_by_the_user_is_given_to_them() {
    let mut config = DockerConfig::with_image(TEST_IMAGE);
    config.user = "2000:2000".into();
    let sb = common::sandbox_with("chown", config).await;
    let _c = cleanup(&sb);
    let out = run(
        &sb,
        "id -u; stat -c %u:%g /workspace; echo ok > f && cat f",
        30,
    )
    .await;
    assert_eq!(out.output, "2000\n2000:2000\nok\n");
    // The one-shot fixer container is gone.
    let filters = std::collections::HashMap::from([(
        "label",
        vec![format!("decima.conversation={}", sb.key())],
    )]);
    let list = sb
        .engine()
        .client()
        .list_containers(Some(
            bollard::query_parameters::ListContainersOptionsBuilder::new()
                .all(true)
                .filters(&filters)
                .build(),
        ))
        .await
        .unwrap();
    assert_eq!(list.len(), 1, "{list:?}");
}

#[tokio::test]
async fn appended_files_send_only_their_new_bytes_and_a_differing_copy_is_replaced() {
    use decima_sandbox::docker::AppendedFile;
    let sb = sandbox("append").await;
    let _c = cleanup(&sb);
    let host = tempfile::tempdir().unwrap();
    let small = host.path().join("history_a.txt");
    let big = host.path().join("history_b.txt");
    std::fs::write(&small, "### seq=1\nfirst\n").unwrap();
    // Above the size sent whole every time: this one travels by its new bytes.
    let mut big_bytes: Vec<u8> = (0..17 * 1024 * 1024u32)
        .map(|i| b'a' + (i % 26) as u8)
        .collect();
    std::fs::write(&big, &big_bytes).unwrap();
    let files = |us: u64, ub: u64| {
        vec![
            AppendedFile {
                name: "history_a.txt".into(),
                host: small.clone(),
                uploaded: us,
            },
            AppendedFile {
                name: "history_b.txt".into(),
                host: big.clone(),
                uploaded: ub,
            },
        ]
    };
    let sha = |bytes: &[u8]| format!("{:x}", Sha256::digest(bytes));
    let sum_in_container = |name: &'static str| {
        let sb = &sb;
        async move {
            let out = run(sb, &format!("sha256sum context/{name}"), 60)
                .await
                .output;
            out.split_whitespace().next().unwrap_or_default().to_owned()
        }
    };
    // Nothing in the container yet: both go whole.
    let sizes = sb.sync_appended("context", &files(0, 0)).await.unwrap();
    assert_eq!(sizes, vec![16, big_bytes.len() as u64]);
    assert_eq!(sum_in_container("history_b.txt").await, sha(&big_bytes));
    // Both grow by appending: the big one sends its new bytes only, and both copies match.
    let mut small_bytes = std::fs::read(&small).unwrap();
    small_bytes.extend_from_slice(b"### seq=2\nsecond\n");
    std::fs::write(&small, &small_bytes).unwrap();
    let had = big_bytes.len() as u64;
    big_bytes.extend_from_slice(b"\n### seq=99 role=tool\nthe new part\n");
    std::fs::write(&big, &big_bytes).unwrap();
    sb.sync_appended("context", &files(16, had)).await.unwrap();
    assert_eq!(
        sb.download_file("context/history_a.txt").await.unwrap(),
        small_bytes
    );
    assert_eq!(sum_in_container("history_b.txt").await, sha(&big_bytes));
    let listed = run(&sb, "ls -a context", 30).await.output;
    assert!(!listed.contains(".append-"), "no parts left over: {listed}");
    // The agent edits the big copy: the size check catches it and it is sent whole again.
    run(&sb, "echo tampered >> context/history_b.txt", 30).await;
    let had = big_bytes.len() as u64;
    big_bytes.extend_from_slice(b"### seq=100\nmore\n");
    std::fs::write(&big, &big_bytes).unwrap();
    sb.sync_appended("context", &files(small_bytes.len() as u64, had))
        .await
        .unwrap();
    assert_eq!(sum_in_container("history_b.txt").await, sha(&big_bytes));
    // The agent deletes a copy: it comes back whole.
    run(&sb, "rm context/history_a.txt", 30).await;
    sb.sync_appended(
        "context",
        &files(small_bytes.len() as u64, big_bytes.len() as u64),
    )
    .await
    .unwrap();
    assert_eq!(
        sb.download_file("context/history_a.txt").await.unwrap(),
        small_bytes
    );
    // The folder replaced by a symlink out of the workspace: the archive makes it a real
    // folder again, and nothing is written where the link pointed.
    run(&sb, "rm -r context && ln -s /tmp context", 30).await;
    sb.sync_appended("context", &files(0, 0)).await.unwrap();
    assert_eq!(run(&sb, "ls -A /tmp | wc -l", 30).await.output.trim(), "0");
    assert_eq!(
        run(&sb, "[ -d context ] && [ ! -L context ] && ls context", 30)
            .await
            .output,
        "history_a.txt\nhistory_b.txt\n"
    );
    // Names that are not plain file names, and nested folders, are refused.
    let bad = vec![AppendedFile {
        name: "../x".into(),
        host: small.clone(),
        uploaded: 0,
    }];
    assert!(sb.sync_appended("context", &bad).await.is_err());
    assert!(sb.sync_appended("a/b", &files(0, 0)).await.is_err());
}

/// A process that writes before anything else, killed at once: the kill must not be lost
/// for want of the group's report, and the report never reaches what the caller reads.
#[tokio::test]
async fn an_attached_process_killed_at_once_ends_even_when_it_writes_first() {
    use std::sync::Arc;
    use tokio::io::AsyncReadExt;

    let sb = Arc::new(sandbox("attached-early").await);
    let _c = cleanup(&sb);
    let script = "echo early >&2; echo out; exec sleep 43";
    let mut started = Vec::new();
    for _ in 0..6 {
        let p = sb
            .spawn_attached(&["sh".into(), "-c".into(), script.into()], &[], None)
            .await
            .unwrap();
        p.handle.kill().await.unwrap();
        started.push(p);
    }
    for mut p in started {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !p.handle.exited() {
            assert!(
                Instant::now() < deadline,
                "the exec did not end after the kill"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let mut err = String::new();
        p.stderr.read_to_string(&mut err).await.unwrap();
        assert!(!err.contains("decima:pgid"), "{err:?}");
        // What the command wrote, and the shell's word on how it ended.
        assert!(
            err.lines().all(|l| l == "early" || l == "Killed"),
            "{err:?}"
        );
    }
    let ps = run(&sb, "ps -o pid,args", 20).await;
    assert!(!ps.output.contains("sleep 43"), "{}", ps.output);
}

#[tokio::test]
async fn an_attached_process_talks_over_stdin_and_stdout_and_its_group_is_killed() {
    use std::sync::Arc;
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

    let sb = Arc::new(sandbox("attached").await);
    let _c = cleanup(&sb);
    // A child that outlives the server's own process unless the group is killed.
    let script = "sleep 41 & echo ready >&2; while read l; do echo \"got $l\"; done";
    let mut p = sb
        .spawn_attached(
            &["sh".into(), "-c".into(), script.into()],
            &[("ANALYST_VAR".into(), "1".into())],
            None,
        )
        .await
        .unwrap();
    p.stdin.write_all(b"one\n").await.unwrap();
    p.stdin.flush().await.unwrap();
    let mut lines = BufReader::new(p.stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(line.as_deref(), Some("got one"));
    let mut err = BufReader::new(p.stderr);
    let mut first = String::new();
    tokio::time::timeout(Duration::from_secs(10), err.read_line(&mut first))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first, "ready\n", "the wrapper's own report is taken out");
    assert!(!p.handle.exited());

    p.handle.kill().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !p.handle.exited() {
        assert!(
            Instant::now() < deadline,
            "the exec did not end after the kill"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut rest = String::new();
    let _ = err.read_to_string(&mut rest).await;
    let ps = run(&sb, "ps -o pid,args", 20).await;
    assert!(!ps.output.contains("sleep 41"), "{}", ps.output);
    assert!(!ps.output.contains("got $l"), "{}", ps.output);

    // A directory outside the workspace is refused before anything starts.
    let refused = sb
        .spawn_attached(&["true".into()], &[], Some("../etc"))
        .await;
    assert!(refused.is_err());
}
