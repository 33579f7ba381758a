//! The host sandbox's `shell` tool on Windows, against real processes: the same promises as
//! `host_shell.rs` makes on Unix (exit code, output cap and spill, timeout, nothing a call
//! started outliving it), in whichever shell this system chose. A real Windows has PowerShell;
//! Wine has only `cmd.exe` (its `powershell.exe` is a stand-in that runs nothing), so each
//! command is written in both languages.
//!
//! A child that must die with the call is a `ping` that takes seconds and then writes a file:
//! the file never appearing is the proof that the child was ended, without reading process ids
//! that `cmd.exe` cannot print.

use std::path::Path;
use std::time::{Duration, Instant};

use decima_core::FailureClass;
use decima_sandbox::ShellKind;
use decima_sandbox::host::{
    HostLimits, HostSandbox, Sandbox, ShellOutcome, ShellRequest, WriteFileRequest,
};

fn sandbox(dir: &Path) -> HostSandbox {
    HostSandbox::new(dir.to_path_buf(), HostLimits::default())
}

/// The command for this system's shell: `cmd` for `cmd.exe`, `ps` for PowerShell.
fn script(sb: &HostSandbox, cmd: &str, ps: &str) -> String {
    match sb.shell_kind() {
        ShellKind::Cmd => cmd.to_owned(),
        ShellKind::PowerShell => ps.to_owned(),
        ShellKind::Posix => panic!("a Windows build chose sh"),
    }
}

async fn run(sb: &HostSandbox, command: &str, timeout_s: u64) -> ShellOutcome {
    sb.exec(ShellRequest::new(command).with_timeout(Duration::from_secs(timeout_s)))
        .await
        .unwrap()
}

/// A child, started in the background, that writes `late.txt` after about three seconds.
fn late_child(sb: &HostSandbox) -> String {
    script(
        sb,
        r#"start /b cmd /d /c "ping -n 4 127.0.0.1 >nul & echo late> late.txt""#,
        r#"Start-Process -NoNewWindow cmd.exe -ArgumentList '/d /c "ping -n 4 127.0.0.1 >nul & echo late> late.txt"'"#,
    )
}

/// Whether `late.txt` appears before the child would have written it twice over.
fn late_child_wrote(dir: &Path) -> bool {
    let until = Instant::now() + Duration::from_secs(7);
    while Instant::now() < until {
        if dir.join("late.txt").exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

#[tokio::test]
async fn the_chosen_shell_is_windows_own() {
    let dir = tempfile::tempdir().unwrap();
    let sb = sandbox(dir.path());
    assert_ne!(sb.shell_kind(), ShellKind::Posix);
    let shell = decima_process::HostShell::system().unwrap();
    assert!(shell.program().is_file(), "{}", shell.describe());
}

#[tokio::test]
async fn reports_the_exit_code_and_both_streams() {
    let dir = tempfile::tempdir().unwrap();
    let sb = sandbox(dir.path());
    let command = script(
        &sb,
        "echo out& echo err 1>&2& exit /b 3",
        "Write-Output out; [Console]::Error.WriteLine('err'); exit 3",
    );
    let out = run(&sb, &command, 30).await;
    assert_eq!(out.exit_code, Some(3), "{out:?}");
    assert_eq!(out.signal, None);
    assert!(
        out.output.contains("out") && out.output.contains("err"),
        "{out:?}"
    );
    assert!(out.to_tool_text().ends_with("[exit code 3]"));
}

#[tokio::test]
async fn runs_in_the_workspace_and_a_folder_inside_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub").join("data.csv"), "APAC,870\r\n").unwrap();
    let sb = sandbox(dir.path());
    let mut req = ShellRequest::new(script(&sb, "type data.csv", "Get-Content data.csv"));
    req.cwd = Some("sub".to_owned());
    let out = sb.exec(req).await.unwrap();
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert!(out.output.contains("APAC,870"), "{out:?}");

    let mut req = ShellRequest::new("cd");
    req.cwd = Some("..\\".to_owned());
    let err = sb.exec(req).await.unwrap_err();
    assert_eq!(err.class, FailureClass::Permission, "{}", err.message);
}

#[tokio::test]
async fn a_script_of_several_lines_runs_whole_and_leaves_no_file_behind() {
    let dir = tempfile::tempdir().unwrap();
    let sb = sandbox(dir.path());
    let out = run(&sb, "echo one\necho two\r\necho three", 30).await;
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    let lines: Vec<&str> = out.output.lines().map(str::trim).collect();
    assert_eq!(lines, ["one", "two", "three"], "{out:?}");
    let scratch = dir.path().join(".decima").join("output");
    let left = std::fs::read_dir(&scratch).map_or(0, Iterator::count);
    assert_eq!(left, 0, "the call's batch file outlived it");
}

#[tokio::test]
async fn a_command_that_never_ends_is_ended_at_the_timeout_with_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let sb = sandbox(dir.path());
    let command = format!(
        "{} & echo started& ping -n 1000 127.0.0.1 >nul",
        late_child(&sb)
    );
    let command = match sb.shell_kind() {
        ShellKind::PowerShell => format!(
            "{}; Write-Output started; Start-Sleep -Seconds 1000",
            late_child(&sb)
        ),
        _ => command,
    };
    let started = Instant::now();
    let out = run(&sb, &command, 1).await;
    let took = started.elapsed();
    assert!(out.timed_out, "{out:?}");
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert!(out.output.contains("started"), "{out:?}");
    assert!(out.to_tool_text().contains("timed out after 1 s"));
    assert!(
        !late_child_wrote(dir.path()),
        "the background child survived the timeout"
    );
}

#[tokio::test]
async fn a_shell_that_exits_ends_the_children_it_left_and_returns_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let sb = sandbox(dir.path());
    let command = match sb.shell_kind() {
        ShellKind::PowerShell => format!("{}; Write-Output done", late_child(&sb)),
        _ => format!("{} & echo done", late_child(&sb)),
    };
    let started = Instant::now();
    let out = run(&sb, &command, 60).await;
    assert!(started.elapsed() < Duration::from_secs(3), "{out:?}");
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert!(!out.timed_out);
    assert_eq!(out.output.trim(), "done");
    assert!(
        !late_child_wrote(dir.path()),
        "the background child outlived the call"
    );
}

#[tokio::test]
async fn dropping_the_call_part_way_ends_its_whole_tree() {
    let dir = tempfile::tempdir().unwrap();
    let sb = sandbox(dir.path());
    let command = match sb.shell_kind() {
        ShellKind::PowerShell => format!("{}; Start-Sleep -Seconds 1000", late_child(&sb)),
        _ => format!("{} & ping -n 1000 127.0.0.1 >nul", late_child(&sb)),
    };
    let call = sb.exec(ShellRequest::new(command));
    assert!(
        tokio::time::timeout(Duration::from_millis(800), call)
            .await
            .is_err()
    );
    assert!(
        !late_child_wrote(dir.path()),
        "the background child survived a dropped call"
    );
}

#[tokio::test]
async fn output_over_the_cap_is_saved_whole_and_previewed() {
    let dir = tempfile::tempdir().unwrap();
    let limits = HostLimits {
        output_cap: 1000,
        preview_head: 100,
        preview_tail: 100,
        ..HostLimits::default()
    };
    let sb = HostSandbox::new(dir.path().to_path_buf(), limits);
    let command = script(
        &sb,
        "for /L %i in (1,1,2000) do @echo line %i",
        "1..2000 | ForEach-Object { \"line $_\" }",
    );
    let out = run(&sb, &command, 60).await;
    assert!(out.truncated, "{out:?}");
    assert_eq!(out.exit_code, Some(0));
    let saved = out.full_output_path.clone().unwrap();
    let whole = std::fs::read_to_string(&saved).unwrap();
    assert_eq!(whole.lines().count(), 2000);
    assert_eq!(whole.lines().last().map(str::trim), Some("line 2000"));
    assert_eq!(out.output_bytes, whole.len() as u64);
    assert!(out.output.contains("line 1"), "the head: {}", out.output);
    assert!(out.output.contains("line 2000"), "the tail: {}", out.output);
    assert!(
        out.output.contains(&saved.display().to_string()),
        "names the file: {}",
        out.output
    );
    assert!(saved.starts_with(dir.path().join(".decima").join("output")));
}

#[tokio::test]
async fn a_program_that_does_not_exist_is_an_exit_code_not_a_failure_of_decima() {
    let dir = tempfile::tempdir().unwrap();
    let sb = sandbox(dir.path());
    let out = run(&sb, "no-such-program-anywhere", 30).await;
    assert!(matches!(out.exit_code, Some(code) if code != 0), "{out:?}");
    assert!(!out.output.is_empty(), "the shell says why: {out:?}");
}

#[tokio::test]
async fn a_workspace_past_windows_folder_limit_is_refused_with_what_to_do() {
    // 259 characters: one past the limit, and short of the lengths at which Wine's
    // GetFinalPathNameByHandleW (behind `canonicalize`) fails with ERROR_MORE_DATA.
    let dir = tempfile::tempdir().unwrap();
    let mut ws = dunce::canonicalize(dir.path()).unwrap();
    while ws.as_os_str().len() + 41 < 259 {
        ws.push("a-folder-name-of-forty-characters-long-x");
    }
    let rest = 259 - ws.as_os_str().len() - 1;
    ws.push("y".repeat(rest));
    assert_eq!(ws.as_os_str().len(), 259);
    std::fs::create_dir_all(&ws).unwrap();
    let sb = sandbox(&ws);
    let err = sb.exec(ShellRequest::new("echo hi")).await.unwrap_err();
    assert_eq!(err.class, FailureClass::System, "{}", err.message);
    assert!(
        err.message.contains("characters") && err.message.contains("closer to the drive's root"),
        "{}",
        err.message
    );
    // The files of such a workspace are still read and written.
    sb.write_file(WriteFileRequest {
        path: "notes.md".into(),
        content: "kept".into(),
    })
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.md")).unwrap(),
        "kept"
    );
}
