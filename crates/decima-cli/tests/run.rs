//! `decima run|recover|resume|execution` without a model: the argument forms, ids refused
//! before they reach the store or a lock file name, unknown executions, and an empty list.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output, Stdio};

const GHOST: &str = "0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a6b";
const HOSTILE: [&str; 4] = ["../x", "../../etc/passwd", "x\ny", "not-a-uuid"];

/// Runs `decima ARGS` in a fresh data directory, with no provider in the environment and
/// nothing on stdin.
fn decima(args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_decima"));
    cmd.arg("--data-dir")
        .arg(dir.path().join("data"))
        .args(args);
    for var in [
        "DECIMA_DATA_DIR",
        "DECIMA_PROVIDER_KIND",
        "DECIMA_BASE_URL",
        "DECIMA_MODEL",
        "DECIMA_API_KEY",
        "DECIMA_CONTEXT_WINDOW",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("DECIMA_SECRET_BACKEND", "file")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts the exit code, an empty stdout, and `needle` on stderr.
fn assert_fails(out: &Output, code: i32, needle: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(code), "stderr: {err}");
    assert!(err.contains(needle), "expected {needle:?} in {err:?}");
    assert!(out.stdout.is_empty(), "nothing on stdout: {out:?}");
}

/// A one-line error, as every refused id gets.
fn assert_one_line(out: &Output) {
    let err = stderr(out);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err:?}");
    assert!(err.starts_with("error: "), "{err:?}");
}

#[test]
fn bad_argument_forms_exit_2() {
    assert_fails(
        &decima(&["run", "--on-failure", "bogus", "task"]),
        2,
        "--on-failure",
    );
    assert_fails(&decima(&["run", "--max-steps", "0", "task"]), 2, "0");
    assert_fails(&decima(&["run", "--max-steps", "x", "task"]), 2, "x");
    assert_fails(&decima(&["run"]), 2, "TASK");
    assert_fails(
        &decima(&["recover", GHOST, "--choice", "maybe"]),
        2,
        "--choice",
    );
    assert_fails(&decima(&["recover", GHOST]), 2, "--choice");
    assert_fails(&decima(&["execution", "show"]), 2, "ID");
}

#[test]
fn hostile_execution_ids_exit_2_with_a_clear_message() {
    for id in HOSTILE {
        for args in [
            vec!["execution", "show", id],
            vec!["execution", "show", id, "--json"],
            vec!["recover", id, "--choice", "retry"],
            vec!["resume", id],
            vec!["resume", id, "--json"],
        ] {
            let out = decima(&args);
            assert_fails(&out, 2, "is not a valid execution id");
            assert_one_line(&out);
        }
    }
}

#[test]
fn hostile_conversation_ids_exit_2() {
    for id in HOSTILE {
        for args in [
            vec!["run", "--conversation", id, "task"],
            vec!["execution", "list", "--conversation", id],
        ] {
            let out = decima(&args);
            assert_fails(&out, 2, "is not a valid conversation id");
            assert_one_line(&out);
        }
    }
}

#[test]
fn unknown_executions_exit_3() {
    for args in [
        vec!["execution", "show", GHOST],
        vec!["execution", "show", GHOST, "--json"],
        vec!["recover", GHOST, "--choice", "skip"],
        vec!["resume", GHOST],
    ] {
        let out = decima(&args);
        assert_fails(&out, 3, &format!("execution {GHOST} was not found"));
        assert_one_line(&out);
    }
}

#[test]
fn an_empty_data_dir_lists_no_executions() {
    let out = decima(&["execution", "list", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows, serde_json::json!([]));

    let out = decima(&["execution", "list", "--conversation", GHOST, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows, serde_json::json!([]));

    let out = decima(&["execution", "list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "the header alone: {text:?}");
    assert!(text.starts_with("ID"), "{text:?}");
}

#[test]
fn a_run_without_a_provider_is_refused_before_anything_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_decima"))
            .arg("--data-dir")
            .arg(&data)
            .args(args)
            .env_remove("DECIMA_DATA_DIR")
            .env_remove("DECIMA_PROVIDER_KIND")
            .env_remove("DECIMA_BASE_URL")
            .env_remove("DECIMA_MODEL")
            .env_remove("DECIMA_API_KEY")
            .env_remove("DECIMA_CONTEXT_WINDOW")
            .env("DECIMA_SECRET_BACKEND", "file")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = run(&["run", "--on-failure", "stop", "Count the rows"]);
    assert_fails(&out, 2, "no provider");
    let out = run(&["execution", "list", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap(),
        serde_json::json!([])
    );
}
