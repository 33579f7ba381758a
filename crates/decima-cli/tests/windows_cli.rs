//! The Windows build end to end through `decima.exe`, against the testkit's model server: a run
//! whose tools run in Windows' own shell, the model told which shell that is, a rollback that
//! puts the workspace back (a changed file, a new one, a removed one with a name that is not
//! ASCII, a read-only one), a call that times out and one whose `decima.exe` is killed, each
//! ending every process the call started. Import, context, export, compress and chat are the
//! tests of `cli.rs`, `context.rs`, `compress.rs` and `chat_*.rs`, which run here unchanged.
//!
//! The workspace sits below a folder whose name has spaces and letters that are not ASCII, as an
//! analyst's profile folder often does. A child that must end with its call is a `ping` that
//! takes seconds and then writes `late.txt`: that file never appearing is the proof.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Env, execution_id, last_tool_result, text, tool_result, wait_for_file};

/// The command for this system's shell: `cmd` for `cmd.exe`, `ps` for PowerShell.
fn script(cmd: &str, ps: &str) -> String {
    match decima_sandbox::HostShell::system().unwrap().kind() {
        decima_sandbox::ShellKind::PowerShell => ps.to_owned(),
        _ => cmd.to_owned(),
    }
}

/// A child, started in the background, that writes `late.txt` after about three seconds.
fn late_child() -> String {
    script(
        r#"start /b cmd /d /c "ping -n 4 127.0.0.1 >nul & echo late> late.txt""#,
        r#"Start-Process -NoNewWindow cmd.exe -ArgumentList '/d /c "ping -n 4 127.0.0.1 >nul & echo late> late.txt"'"#,
    )
}

/// Whether `late.txt` appears in `ws` before the child would have written it twice over.
async fn late_child_wrote(ws: &Path) -> bool {
    let until = Instant::now() + Duration::from_secs(7);
    while Instant::now() < until {
        if ws.join("late.txt").exists() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

/// An analyst's folder: spaces and letters that are not ASCII.
fn analysts_workspace(env: &Env) -> PathBuf {
    let ws = env.dir.path().join("Zoë Müller – Analysen").join("Q3 北区");
    std::fs::create_dir_all(&ws).unwrap();
    ws
}

/// `decima run --workspace WS EXTRA… TASK` to its end.
async fn run_in(env: &Env, ws: &Path, extra: &[&str], task: &str) -> std::process::Output {
    let ws = ws.to_str().unwrap().to_owned();
    let mut args = vec!["run", "--workspace", ws.as_str()];
    args.extend_from_slice(extra);
    args.push(task);
    env.decima(&args).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_works_in_windows_shell_and_a_rollback_puts_the_workspace_back() {
    let env = Env::new().await;
    let ws = analysts_workspace(&env);
    std::fs::write(ws.join("sales.csv"), "region,total\r\nnorth,10\r\n").unwrap();
    std::fs::write(ws.join("Überblick – Q3.txt"), "the overview\r\n").unwrap();
    std::fs::write(ws.join("frozen.txt"), "do not touch\r\n").unwrap();
    let mut frozen = std::fs::metadata(ws.join("frozen.txt"))
        .unwrap()
        .permissions();
    frozen.set_readonly(true);
    std::fs::set_permissions(ws.join("frozen.txt"), frozen).unwrap();

    env.call(
        "todo_write",
        json!({"todos": [{"title": "clean the sales", "status": "in_progress"}]}),
    );
    let command = script(
        "echo south,7>> sales.csv& echo draft> notes.md& del \"Überblick – Q3.txt\"& attrib -r frozen.txt& echo changed> frozen.txt& type sales.csv",
        "Add-Content sales.csv 'south,7'; Set-Content notes.md draft; Remove-Item 'Überblick – Q3.txt'; Set-ItemProperty frozen.txt IsReadOnly $false; Set-Content frozen.txt changed; Get-Content sales.csv",
    );
    env.call("shell", json!({"command": command}));
    let out = run_in(&env, &ws, &["--max-steps", "2"], "Clean the sales").await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    let id = execution_id(&out.stderr);

    // The model was told to write in the shell that runs its commands.
    let tools = env.request_text(0);
    assert!(
        tools.contains("this is Windows") && !tools.contains("sh -c"),
        "{tools}"
    );
    let view: Value = env.show(&id).await;
    let messages = env.messages(&view).await;
    let result = tool_result(&messages, "call_1");
    assert!(
        result.contains("south,7") && result.ends_with("[exit code 0]"),
        "{result}"
    );
    assert!(ws.join("notes.md").exists());
    assert!(!ws.join("Überblick – Q3.txt").exists());

    let out = env.decima(&["recover", &id, "--choice", "rollback"]).await;
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(ws.join("sales.csv")).unwrap(),
        "region,total\r\nnorth,10\r\n"
    );
    assert!(!ws.join("notes.md").exists(), "the new file is gone");
    assert_eq!(
        std::fs::read_to_string(ws.join("Überblick – Q3.txt")).unwrap(),
        "the overview\r\n",
        "the removed file is back under its own name"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("frozen.txt")).unwrap(),
        "do not touch\r\n"
    );
    assert!(
        std::fs::metadata(ws.join("frozen.txt"))
            .unwrap()
            .permissions()
            .readonly(),
        "and read-only again"
    );
    let view: Value = env.show(&id).await;
    assert_eq!(view["failures"][0]["resolution"], "rollback");
    let out = env.decima(&["recover", &id, "--choice", "abort"]).await;
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_times_out_ends_with_every_process_it_started() {
    let env = Env::new().await;
    let ws = analysts_workspace(&env);
    let command = match decima_sandbox::HostShell::system().unwrap().kind() {
        decima_sandbox::ShellKind::PowerShell => {
            format!("{}; Start-Sleep -Seconds 600", late_child())
        }
        _ => format!("{} & ping -n 600 127.0.0.1 >nul", late_child()),
    };
    env.call("shell", json!({"command": command, "timeout_s": 1}));
    env.say("It timed out.");
    let started = Instant::now();
    let out = run_in(&env, &ws, &[], "Wait a while").await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(started.elapsed() < Duration::from_secs(60));
    let result = last_tool_result(&env, 1);
    assert!(
        result.contains("timed out after 1 s; the command and its children were killed"),
        "{result}"
    );
    assert!(
        !late_child_wrote(&ws).await,
        "a child of the timed-out call lived on"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_decima_mid_call_ends_the_calls_processes_and_the_next_command_says_so() {
    let env = Env::new().await;
    let ws = analysts_workspace(&env);
    let command = match decima_sandbox::HostShell::system().unwrap().kind() {
        decima_sandbox::ShellKind::PowerShell => format!(
            "{}; Set-Content started.txt yes; Start-Sleep -Seconds 600",
            late_child()
        ),
        _ => format!(
            "{} & echo yes> started.txt& ping -n 600 127.0.0.1 >nul",
            late_child()
        ),
    };
    env.call("shell", json!({"command": command}));
    let ws_arg = ws.to_str().unwrap().to_owned();
    let mut child = env
        .command(&["run", "--tenth-man", "off", "--workspace", &ws_arg, "Wait"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_file(&ws.join("started.txt"), Duration::from_secs(60), &mut child).await;
    // TerminateProcess: decima runs nothing on its way out, so only the job object, closed
    // with the process's last handle, can end the call's processes.
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    let id = execution_id(&out.stderr);
    assert!(
        !late_child_wrote(&ws).await,
        "a child of the killed run's call lived on"
    );

    let shown = env.decima(&["execution", "show", &id, "--json"]).await;
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    assert!(
        text(&shown.stderr).contains(&format!("execution {id} was interrupted")),
        "{}",
        text(&shown.stderr)
    );
    let view: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(view["status"], "interrupted", "{view}");
}

/// A host MCP server that never answers: it starts a child that would write `late.txt` in
/// `dir` after about five seconds (past the startup timeout and the two seconds' grace a server
/// gets after it), notes `started.txt`, and waits. A batch file, so that no
/// quoting stands between the test and `cmd.exe`.
fn silent_server(env: &Env, dir: &Path) -> PathBuf {
    let script = env.dir.path().join("silent-server.cmd");
    let dir = dir.display();
    std::fs::write(
        &script,
        format!(
            "@echo off\r\n\
             start /b cmd /d /c \"ping -n 6 127.0.0.1 >nul & echo late> \"{dir}\\late.txt\"\"\r\n\
             echo yes> \"{dir}\\started.txt\"\r\n\
             ping -n 600 127.0.0.1 >nul\r\n"
        ),
    )
    .unwrap();
    script
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_mcp_server_that_never_answers_ends_with_its_children_in_time() {
    let env = Env::new().await;
    // ASCII only: cmd.exe reads a batch file in the console's code page, not UTF-8.
    let ws = env.dir.path().join("server-notes");
    std::fs::create_dir_all(&ws).unwrap();
    let script = silent_server(&env, &ws);
    let script = script.to_str().unwrap();
    env.mcp_add(&[
        "hung",
        "--where",
        "host",
        "--startup-timeout",
        "1",
        "--",
        "cmd.exe",
        "/d",
        "/c",
        script,
    ])
    .await;
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
    assert!(ws.join("started.txt").exists(), "the server ran");
    assert!(
        !late_child_wrote(&ws).await,
        "the server's child outlived it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_decima_ends_its_host_mcp_servers_and_their_children() {
    let env = Env::new().await;
    // ASCII only: cmd.exe reads a batch file in the console's code page, not UTF-8.
    let ws = env.dir.path().join("server-notes");
    std::fs::create_dir_all(&ws).unwrap();
    let script = silent_server(&env, &ws);
    let script = script.to_str().unwrap();
    env.mcp_add(&[
        "hung",
        "--where",
        "host",
        "--startup-timeout",
        "120",
        "--",
        "cmd.exe",
        "/d",
        "/c",
        script,
    ])
    .await;
    let mut child = env
        .command(&["mcp", "tools", "hung"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_file(&ws.join("started.txt"), Duration::from_secs(60), &mut child).await;
    // TerminateProcess: only the server's job object, closed with decima's last handle to it,
    // can end the server.
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !late_child_wrote(&ws).await,
        "the server's child outlived decima"
    );
}
