//! The host sandbox's `shell` tool against real processes in temporary workspaces.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use decima_core::FailureClass;
use decima_sandbox::host::{HostLimits, HostSandbox, Sandbox, ShellOutcome, ShellRequest};

fn sandbox(dir: &Path) -> HostSandbox {
    HostSandbox::new(dir.to_path_buf(), HostLimits::default())
}

async fn run(sb: &HostSandbox, command: &str, timeout_s: u64) -> ShellOutcome {
    sb.exec(ShellRequest::new(command).with_timeout(Duration::from_secs(timeout_s)))
        .await
        .unwrap()
}

/// True once `pid` is gone or a zombie (killed, waiting for whoever inherited it to reap it).
fn dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

fn wait_dead(pid: u32) -> bool {
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        if dead(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// The process's peak resident set size so far (VmHWM), in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn read_pid(path: &Path) -> u32 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn reports_exit_code_and_interleaves_stdout_and_stderr_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let sb = sandbox(dir.path());
    let out = run(&sb, "echo one; echo two >&2; echo three; exit 3", 10).await;
    assert_eq!(out.exit_code, Some(3));
    assert_eq!(out.signal, None);
    assert_eq!(out.output, "one\ntwo\nthree\n");
    assert!(!out.truncated && !out.timed_out);
    assert_eq!(out.full_output_path, None);
    assert!(out.to_tool_text().ends_with("[exit code 3]"));
}

#[tokio::test]
async fn runs_in_the_workspace_with_home_there_and_stdin_closed() {
    let dir = tempfile::tempdir().unwrap();
    let sb = sandbox(dir.path());
    // `cat` with stdin from /dev/null ends at once instead of waiting for input.
    let out = run(&sb, "pwd; echo \"$HOME\"; cat; echo end", 10).await;
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let root = root.display();
    assert_eq!(out.output, format!("{root}\n{root}\nend\n"));
}

#[tokio::test]
async fn reports_the_signal_that_ended_the_shell() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&sandbox(dir.path()), "kill -TERM $$", 10).await;
    assert_eq!(out.exit_code, None);
    assert_eq!(out.signal, Some(15));
}

#[tokio::test]
async fn invalid_utf8_output_is_converted_lossily() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&sandbox(dir.path()), r"printf '\377\376ok'", 10).await;
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.output, "\u{FFFD}\u{FFFD}ok");
}

#[test]
fn environment_is_scrubbed_of_decima_variables_and_keys() {
    // Setting the parent's environment needs `unsafe` (denied), so this test re-runs itself
    // as a child process with canaries in its environment.
    const CHILD: &str = "DECIMA_SANDBOX_TEST_ENV_CHILD";
    if std::env::var_os(CHILD).is_none() {
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                &decima_testkit::processes::test_name(
                    module_path!(),
                    "environment_is_scrubbed_of_decima_variables_and_keys",
                ),
            ])
            .args(["--test-threads", "1", "--nocapture"])
            .env(CHILD, "1")
            .env("DECIMA_API_KEY", "canary-decima-3f9a")
            .env("OPENAI_API_KEY", "canary-openai-3f9a")
            .env("AWS_SECRET_ACCESS_KEY", "canary-aws-3f9a")
            .status()
            .unwrap();
        assert!(status.success(), "the child run of this test failed");
        return;
    }
    assert_eq!(
        std::env::var("DECIMA_API_KEY").unwrap(),
        "canary-decima-3f9a"
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = rt.block_on(run(&sandbox(dir.path()), "env", 10));
    assert_eq!(out.exit_code, Some(0));
    assert!(
        !out.output.contains("canary"),
        "a canary leaked: {}",
        out.output
    );
    assert!(
        !out.output.contains("DECIMA"),
        "a DECIMA_ variable leaked: {}",
        out.output
    );
    let names: Vec<&str> = out
        .output
        .lines()
        .filter_map(|l| l.split('=').next())
        .collect();
    for name in &names {
        assert!(
            [
                "PATH", "HOME", "LANG", "LC_ALL", "TERM", "PWD", "OLDPWD", "SHLVL", "_"
            ]
            .contains(name),
            "unexpected variable {name} in {names:?}"
        );
    }
    for name in ["PATH", "HOME", "LANG", "LC_ALL", "TERM"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    assert!(out.output.contains("LC_ALL=C.UTF-8"));
    assert!(out.output.contains("TERM=dumb"));
}

#[tokio::test]
async fn a_command_that_never_ends_is_killed_at_the_timeout_with_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let sb = sandbox(dir.path());
    let started = Instant::now();
    let out = run(
        &sb,
        "sleep 1000 & echo $! > child.pid; echo started; sleep 1000",
        1,
    )
    .await;
    let took = started.elapsed();
    assert!(out.timed_out);
    assert_eq!(out.signal, Some(9));
    assert_eq!(out.exit_code, None);
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert_eq!(out.output, "started\n");
    assert!(out.to_tool_text().contains("timed out after 1 s"));
    let child = read_pid(&dir.path().join("child.pid"));
    assert!(
        wait_dead(child),
        "the background child {child} survived the timeout"
    );
}

#[tokio::test]
async fn a_command_that_forks_a_child_and_exits_returns_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let sb = sandbox(dir.path());
    let started = Instant::now();
    let out = run(&sb, "(sleep 30 & echo $! > bg.pid) ; echo done", 60).await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "took {took:?}");
    assert_eq!(out.exit_code, Some(0));
    assert!(!out.timed_out);
    assert_eq!(out.output, "done\n");
    let bg = read_pid(&dir.path().join("bg.pid"));
    assert!(wait_dead(bg), "the background child {bg} outlived the call");
}

#[tokio::test]
async fn a_background_child_with_its_output_redirected_is_killed_too() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = run(
        &sandbox(dir.path()),
        "sleep 30 >/dev/null 2>&1 & echo $! > bg.pid",
        60,
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(out.exit_code, Some(0));
    let bg = read_pid(&dir.path().join("bg.pid"));
    assert!(wait_dead(bg), "the background child {bg} outlived the call");
}

#[tokio::test]
async fn a_hundred_megabytes_of_output_is_saved_to_a_file_and_previewed() {
    let dir = tempfile::tempdir().unwrap();
    let sb = sandbox(dir.path());
    let peak_before = peak_rss_kib();
    let started = Instant::now();
    let out = run(
        &sb,
        "yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 100000000; echo tail-marker",
        120,
    )
    .await;
    let took = started.elapsed();
    assert_eq!(out.exit_code, Some(0));
    assert!(out.truncated);
    assert_eq!(out.output_bytes, 100_000_012);
    // The preview is the 16 KiB head and tail plus a note, not the output.
    assert!(
        out.output.len() < 40 * 1024,
        "preview is {} bytes",
        out.output.len()
    );
    assert!(
        out.output
            .starts_with("0123456789abcdefghijklmnopqrstuvwxyz\n")
    );
    assert!(out.output.ends_with("tail-marker\n"));
    let path = out
        .full_output_path
        .clone()
        .expect("the full output is saved");
    let root = std::fs::canonicalize(dir.path()).unwrap();
    assert!(
        path.starts_with(root.join(".decima/output")),
        "{}",
        path.display()
    );
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 100_000_012);
    assert!(out.output.contains(&format!(
        "full output (100000012 bytes) saved to {}",
        path.display()
    )));
    assert!(
        out.output
            .contains(&format!("`grep -n PATTERN {}`", path.display()))
    );
    // Memory stays bounded: the process's peak RSS grows by far less than the output.
    let grew = peak_rss_kib().saturating_sub(peak_before);
    assert!(grew < 40 * 1024, "peak RSS grew by {grew} KiB");
    println!("100 MB through the shell tool took {took:?}; peak RSS grew by {grew} KiB");
}

#[tokio::test]
async fn output_over_the_cap_is_truncated_even_when_it_cannot_be_saved() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    // The agent plants `.decima` as a symlink out of the workspace: the log must not go there.
    std::os::unix::fs::symlink(outside.path(), ws.join(".decima")).unwrap();
    let limits = HostLimits {
        output_cap: 1000,
        preview_head: 100,
        preview_tail: 100,
        ..HostLimits::default()
    };
    let sb = HostSandbox::new(ws, limits);
    let out = run(&sb, "yes | head -c 5000", 10).await;
    assert!(out.truncated);
    assert_eq!(out.output_bytes, 5000);
    assert_eq!(out.full_output_path, None);
    assert!(out.output.contains("not saved"), "{}", out.output);
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

#[tokio::test]
async fn output_just_under_the_cap_is_returned_whole() {
    let dir = tempfile::tempdir().unwrap();
    let limits = HostLimits {
        output_cap: 1000,
        ..HostLimits::default()
    };
    let sb = HostSandbox::new(dir.path().to_path_buf(), limits);
    let out = run(&sb, "head -c 1000 /dev/zero | tr '\\0' x", 10).await;
    assert!(!out.truncated);
    assert_eq!(out.output, "x".repeat(1000));
    assert!(!dir.path().join(".decima").exists());
}

#[tokio::test]
async fn a_cwd_outside_the_workspace_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sb = sandbox(dir.path());
    let mut req = ShellRequest::new("pwd");
    req.cwd = Some("../".to_owned());
    let err = sb.exec(req).await.unwrap_err();
    assert_eq!(err.class, FailureClass::Permission);
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let mut req = ShellRequest::new("pwd");
    req.cwd = Some("sub".to_owned());
    let out = sb.exec(req).await.unwrap();
    assert!(out.output.trim_end().ends_with("/sub"));
}

#[tokio::test]
async fn a_workspace_that_is_gone_is_a_system_failure() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let sb = sandbox(&ws);
    std::fs::remove_dir(&ws).unwrap();
    let err = sb.exec(ShellRequest::new("true")).await.unwrap_err();
    assert_eq!(err.class, FailureClass::System);
    assert!(err.message.contains("is gone"), "{}", err.message);
}

#[tokio::test]
async fn an_empty_command_is_a_data_failure() {
    let dir = tempfile::tempdir().unwrap();
    let err = sandbox(dir.path())
        .exec(ShellRequest::new("  "))
        .await
        .unwrap_err();
    assert_eq!(err.class, FailureClass::Data);
}

#[tokio::test]
async fn the_sandbox_is_usable_as_a_trait_object() {
    let dir = tempfile::tempdir().unwrap();
    let sb: Box<dyn Sandbox> = Box::new(sandbox(dir.path()));
    let out = sb.exec(ShellRequest::new("echo hi")).await.unwrap();
    assert_eq!(out.output, "hi\n");
}

#[tokio::test]
async fn dropping_the_call_part_way_kills_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let sb = sandbox(dir.path());
    let call = sb.exec(ShellRequest::new(
        "sleep 1000 & echo $! > child.pid; sleep 1000",
    ));
    assert!(
        tokio::time::timeout(Duration::from_millis(500), call)
            .await
            .is_err()
    );
    let child = read_pid(&dir.path().join("child.pid"));
    assert!(
        wait_dead(child),
        "the background child {child} survived a dropped call"
    );
}
