//! The log file: what `decima` writes to DATA_DIR/logs/, at which level, and what it never
//! writes (API keys, message text, answers), checked on the real binary against the wire-level
//! test server.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use decima_testkit::{LlmServer, Reply, Turn};

/// The API key: it goes to the provider in a header and nowhere else.
const KEY_CANARY: &str = "sk-logcanary-5e1f0a9c3d7b2468";
/// Text the user typed.
const MESSAGE_CANARY: &str = "message-canary-c0ffee91a7";
/// Text the model answered.
const ANSWER_CANARY: &str = "answer-canary-b16b00b5";

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// `decima` with nothing inherited that changes logging, secrets or the provider.
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_decima"));
        cmd.arg("--data-dir")
            .arg(self.data())
            .args(args)
            .stdin(Stdio::null())
            .env("DECIMA_SECRET_BACKEND", "file")
            .env("CANARY_KEY", KEY_CANARY);
        for var in [
            "DECIMA_DATA_DIR",
            "DECIMA_LOG",
            "RUST_LOG",
            "DECIMA_PROVIDER_KIND",
            "DECIMA_BASE_URL",
            "DECIMA_MODEL",
            "DECIMA_API_KEY",
            "DECIMA_CONTEXT_WINDOW",
        ] {
            cmd.env_remove(var);
        }
        cmd
    }

    /// Runs on a blocking thread, so the test server on this runtime keeps serving.
    async fn run(&self, mut cmd: Command) -> Output {
        tokio::task::spawn_blocking(move || cmd.output().unwrap())
            .await
            .unwrap()
    }

    async fn ok(&self, args: &[&str]) -> Output {
        let out = self.run(self.command(args)).await;
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Adds provider `oa` on the test server, with the canary as its key.
    async fn add_provider(&self, server: &LlmServer) {
        self.ok(&[
            "provider",
            "add",
            "oa",
            "--kind",
            "openai",
            "--base-url",
            &server.openai_base_url(),
            "--model",
            "gpt-4o",
            "--api-key-env",
            "CANARY_KEY",
        ])
        .await;
    }

    /// Every log file's text, concatenated; the files themselves must exist and not be empty.
    fn log(&self) -> String {
        let files = self.log_files();
        assert!(
            !files.is_empty(),
            "no log file in {}",
            self.logs().display()
        );
        let mut text = String::new();
        for path in &files {
            text.push_str(&String::from_utf8(std::fs::read(path).unwrap()).unwrap());
        }
        text
    }

    fn logs(&self) -> PathBuf {
        self.data().join("logs")
    }

    fn log_files(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(self.logs()) else {
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        files.sort();
        for path in &files {
            let name = path.file_name().unwrap().to_string_lossy();
            assert!(name.starts_with("decima.log"), "unexpected file {name}");
        }
        files
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn answer(text: &str) -> Reply {
    Reply::Stream(Turn {
        text: vec![text.to_string()],
        usage: Some((30, 4)),
        ..Turn::default()
    })
}

/// The level of each line: the field after the timestamp.
fn levels(log: &str) -> Vec<&str> {
    log.lines()
        .filter_map(|line| line.split_whitespace().nth(1))
        .collect()
}

fn assert_no_canary(log: &str) {
    for canary in [KEY_CANARY, MESSAGE_CANARY, ANSWER_CANARY] {
        assert!(!log.contains(canary), "{canary} reached the log:\n{log}");
    }
    assert!(!log.contains("Bearer"), "a header reached the log:\n{log}");
}

fn assert_lines(log: &str, needles: &[&str]) {
    for needle in needles {
        assert!(log.contains(needle), "{needle:?} is not in the log:\n{log}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_level_logs_commands_requests_and_retries_but_no_key_or_text() {
    let server = LlmServer::start().await;
    // One transient failure and its retry, one answer, then a refusal that echoes the key and the
    // message back (providers do quote requests in their errors).
    server.enqueue(Reply::rate_limited(0));
    server.enqueue(answer(&format!("Three rows. {ANSWER_CANARY}")));
    server.enqueue(Reply::bad_request(&format!(
        "your key {KEY_CANARY} cannot say {MESSAGE_CANARY}"
    )));
    let env = Env::new();
    env.add_provider(&server).await;
    let chat = env
        .ok(&["chat", &format!("How many rows? {MESSAGE_CANARY}")])
        .await;
    let id = stderr(&chat)
        .lines()
        .find_map(|l| l.strip_prefix("conversation "))
        .unwrap()
        .trim()
        .to_string();
    let refused = env
        .run(env.command(&[
            "chat",
            "--conversation",
            &id,
            &format!("Again: {MESSAGE_CANARY}"),
        ]))
        .await;
    assert_eq!(refused.status.code(), Some(5), "{}", stderr(&refused));
    env.ok(&["export", &id]).await;

    // The key and the text really went over the wire, so the canaries are live.
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY_CANARY}").as_str())
    );

    let log = env.log();
    assert_no_canary(&log);
    assert_lines(
        &log,
        &[
            "command{name=\"provider add\"}: decima::commands: command finished duration_ms=",
            "command{name=\"chat\"}: decima::commands: command finished duration_ms=",
            "command{name=\"export\"}: decima::commands: command finished duration_ms=",
            "llm_attempt{attempt=1}",
            "llm_attempt{attempt=2}",
            "llm_request{provider=oa model=gpt-4o protocol=openai}",
            // The rate limit: logged with its class, kind and status, then retried with a wait.
            "request failed class=transient kind=http_status status=429",
            "retrying after a transient failure class=transient",
            "wait_ms=0",
            // The answer: status, timings and usage.
            "request finished status=200",
            "prompt_tokens=30 completion_tokens=4 finish=stop",
            // The refusal: its class and status, not the provider's text.
            "request failed class=data kind=http_status status=400",
            "command failed exit_code=5",
        ],
    );
    let levels = levels(&log);
    assert!(
        levels.contains(&"INFO") && levels.contains(&"WARN"),
        "{log}"
    );
    assert!(!levels.contains(&"DEBUG"), "info is the default:\n{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debug_level_adds_detail_but_still_no_key_or_text() {
    let server = LlmServer::start().await;
    server.enqueue(answer(&format!("Fine. {ANSWER_CANARY}")));
    let env = Env::new();
    env.add_provider(&server).await;
    env.ok(&[
        "--log-level",
        "debug",
        "chat",
        &format!("Hello {MESSAGE_CANARY}"),
    ])
    .await;
    let log = env.log();
    assert_no_canary(&log);
    assert_lines(
        &log,
        &[
            "sending request messages=",
            "response headers status=200",
            "store opened",
        ],
    );
    assert!(levels(&log).contains(&"DEBUG"), "{log}");
    // Decima's own code only: third-party crates (HTTP, SQL) stay at warn.
    for line in log.lines().filter(|l| l.contains(" DEBUG ")) {
        assert!(
            line.contains(" decima"),
            "a dependency logged at debug: {line}"
        );
    }
}

/// Runs `conversation list` in a fresh data directory with the given extra flags and
/// environment, and returns the levels of the lines it logged.
fn levels_for(flags: &[&str], vars: &[(&str, &str)]) -> Vec<String> {
    let env = Env::new();
    let mut args = flags.to_vec();
    args.extend(["conversation", "list"]);
    let mut cmd = env.command(&args);
    for (name, value) in vars {
        cmd.env(name, value);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        out.stderr.is_empty(),
        "logging never writes to the terminal: {}",
        stderr(&out)
    );
    let files = env.log_files();
    assert!(!files.is_empty(), "the log file is created at every level");
    let log: String = files
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    levels(&log).into_iter().map(str::to_string).collect()
}

#[test]
fn the_level_comes_from_the_flag_then_rust_log_then_info() {
    let has = |levels: &[String], level: &str| levels.iter().any(|l| l == level);

    let default = levels_for(&[], &[]);
    assert!(
        has(&default, "INFO") && !has(&default, "DEBUG"),
        "{default:?}"
    );

    let error = levels_for(&["--log-level", "error"], &[]);
    assert!(error.is_empty(), "error logs nothing here: {error:?}");

    let rust_log = levels_for(&[], &[("RUST_LOG", "debug")]);
    assert!(
        has(&rust_log, "DEBUG"),
        "RUST_LOG is honoured: {rust_log:?}"
    );

    let rust_log_warn = levels_for(&[], &[("RUST_LOG", "warn")]);
    assert!(
        !has(&rust_log_warn, "INFO"),
        "RUST_LOG=warn silences info: {rust_log_warn:?}"
    );

    let flag_wins = levels_for(&["--log-level", "warn"], &[("RUST_LOG", "debug")]);
    assert!(
        !has(&flag_wins, "INFO") && !has(&flag_wins, "DEBUG"),
        "--log-level wins over RUST_LOG: {flag_wins:?}"
    );

    let variable = levels_for(&[], &[("DECIMA_LOG", "debug"), ("RUST_LOG", "error")]);
    assert!(
        has(&variable, "DEBUG"),
        "DECIMA_LOG is the flag's variable and wins over RUST_LOG too: {variable:?}"
    );
}

#[test]
fn a_log_directory_that_cannot_be_created_costs_one_warning_not_the_command() {
    let env = Env::new();
    std::fs::create_dir_all(env.data()).unwrap();
    std::fs::write(env.logs(), "a file where the folder should be").unwrap();
    let out = env.command(&["conversation", "list"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stderr(&out);
    assert_eq!(text.lines().count(), 1, "one warning: {text}");
    assert!(
        text.starts_with("warning: cannot create the log directory")
            && text.contains("continuing without a log file"),
        "{text}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("ID "));
}

#[test]
fn an_unusable_data_directory_is_reported_once_by_the_command_itself() {
    let env = Env::new();
    std::fs::create_dir_all(env.dir.path()).unwrap();
    let blocker = env.dir.path().join("blocker");
    std::fs::write(&blocker, "I am a file").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_decima"))
        .arg("--data-dir")
        .arg(blocker.join("data"))
        .args(["conversation", "list"])
        .env_remove("DECIMA_LOG")
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    let text = stderr(&out);
    assert_eq!(text.lines().count(), 1, "no extra logging warning: {text}");
    assert!(text.starts_with("error: "), "{text}");
}
