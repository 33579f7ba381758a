//! `decima provider …` and `decima chat` against the wire-level test server.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use decima_testkit::{LlmServer, Reply, Turn};

const CANARY: &str = "sk-canary-7f3c9e1d2b4a6085";

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

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_decima"));
        cmd.arg("--data-dir")
            .arg(self.data())
            .args(args)
            .env_remove("DECIMA_DATA_DIR")
            .env("DECIMA_SECRET_BACKEND", "file")
            .env("CANARY_KEY", CANARY);
        for var in [
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

    /// Runs in a blocking thread, so the test server on this runtime keeps serving.
    async fn run(&self, args: &[&str]) -> Output {
        self.run_with(self.command(args)).await
    }

    async fn run_with(&self, mut cmd: Command) -> Output {
        tokio::task::spawn_blocking(move || cmd.stdin(Stdio::null()).output().unwrap())
            .await
            .unwrap()
    }

    async fn ok(&self, args: &[&str]) -> Output {
        let out = self.run(args).await;
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn turn(text: &[&str]) -> Reply {
    Reply::Stream(Turn {
        text: text.iter().map(|s| s.to_string()).collect(),
        usage: Some((30, 4)),
        ..Turn::default()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn presets_add_list_and_remove() {
    let env = Env::new();
    env.ok(&[
        "provider",
        "add",
        "ds",
        "--preset",
        "deepseek",
        "--api-key-env",
        "CANARY_KEY",
    ])
    .await;
    env.ok(&["provider", "add", "local", "--preset", "ollama"])
        .await;
    let list: serde_json::Value =
        serde_json::from_str(&stdout(&env.ok(&["provider", "list", "--json"]).await)).unwrap();
    let rows = list.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let ds = rows.iter().find(|r| r["name"] == "ds").unwrap();
    assert_eq!(ds["kind"], "openai");
    assert_eq!(ds["preset"], "deepseek");
    assert_eq!(ds["has_api_key"], true);
    assert!(ds["context_window"].as_u64().unwrap() > 0);
    let local = rows.iter().find(|r| r["name"] == "local").unwrap();
    assert_eq!(local["has_api_key"], false);

    let missing_key = env
        .run(&["provider", "add", "oa", "--preset", "openai"])
        .await;
    assert_eq!(missing_key.status.code(), Some(2));
    assert!(
        stderr(&missing_key).contains("needs an API key"),
        "{}",
        stderr(&missing_key)
    );
    let unknown = env.run(&["provider", "add", "x", "--preset", "nope"]).await;
    assert!(
        stderr(&unknown).contains("unknown preset 'nope'"),
        "{}",
        stderr(&unknown)
    );
    let duplicate = env
        .run(&["provider", "add", "local", "--preset", "ollama"])
        .await;
    assert!(
        stderr(&duplicate).contains("already exists"),
        "{}",
        stderr(&duplicate)
    );

    env.ok(&["provider", "remove", "ds"]).await;
    let list = stdout(&env.ok(&["provider", "list"]).await);
    assert!(!list.contains("ds ") && list.contains("local"), "{list}");
    let gone = env.run(&["provider", "remove", "ds"]).await;
    assert_eq!(gone.status.code(), Some(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_test_reports_latency_and_usage() {
    let server = LlmServer::start().await;
    server.enqueue(turn(&["pong"]));
    // The structured-output check: Anthropic answers through the tool it is made to call.
    server.enqueue(Reply::Stream(Turn {
        tool_calls: vec![decima_testkit::ScriptedToolCall {
            id: "toolu_1".into(),
            name: "connection_check".into(),
            argument_chunks: vec![r#"{"answer":"pong","#.into(), r#""count":3}"#.into()],
        }],
        ..Turn::default()
    }));
    let env = Env::new();
    let base = server.anthropic_base_url();
    env.ok(&[
        "provider",
        "add",
        "claude",
        "--kind",
        "anthropic",
        "--base-url",
        &base,
        "--model",
        "claude-test",
        "--api-key-env",
        "CANARY_KEY",
    ])
    .await;
    let out = env.ok(&["provider", "test", "claude"]).await;
    let text = stdout(&out);
    assert!(text.starts_with("ok: claude answered in "), "{text}");
    assert!(
        text.contains("prompt 30 tokens, completion 4 tokens"),
        "{text}"
    );
    assert!(
        text.contains("structured output: answers held to a JSON schema"),
        "{text}"
    );
    let requests = server.requests();
    let request = &requests[0];
    assert_eq!(request.header("x-api-key"), Some(CANARY));
    assert_eq!(request.json.as_ref().unwrap()["max_tokens"], 16);
    let check = requests[1].json.as_ref().unwrap();
    assert_eq!(
        check["tool_choice"],
        serde_json::json!({"type": "tool", "name": "connection_check"})
    );
    // Checked once: a second test sends the ping alone.
    server.enqueue(turn(&["pong"]));
    let out = env.ok(&["provider", "test", "claude"]).await;
    assert!(stdout(&out).contains("answers held to a JSON schema"));
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_streams_persists_and_continues_with_env_provider() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        reasoning: vec!["Counting rows. ".into()],
        text: vec!["There are ".into(), "42 rows.".into()],
        usage: Some((50, 6)),
        ..Turn::default()
    }));
    server.enqueue(turn(&["Yes, 42."]));
    let env = Env::new();
    let with_env = |args: &[&str]| {
        let mut cmd = env.command(args);
        cmd.env("DECIMA_PROVIDER_KIND", "openai")
            .env("DECIMA_BASE_URL", server.openai_base_url())
            .env("DECIMA_MODEL", "gpt-4o")
            .env("DECIMA_API_KEY", CANARY)
            .env("DECIMA_CONTEXT_WINDOW", "128000");
        cmd
    };
    let out = env
        .run_with(with_env(&["chat", "How many rows are in a.csv?"]))
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "There are 42 rows.\n");
    let id = stderr(&out)
        .lines()
        .find_map(|l| l.strip_prefix("conversation "))
        .unwrap()
        .trim()
        .to_string();

    let out = env
        .run_with(with_env(&["chat", "--conversation", &id, "Sure?"]))
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Yes, 42.\n");
    let history = server.requests()[1].json.clone().unwrap();
    let roles: Vec<&str> = history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"], "the history is sent");

    let show: serde_json::Value = serde_json::from_str(&stdout(
        &env.ok(&["conversation", "show", &id, "--json"]).await,
    ))
    .unwrap();
    let messages = show["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[1]["content"], "There are 42 rows.");
    assert_eq!(messages[1]["reasoning"], "Counting rows. ");
    assert_eq!(show["title"], "How many rows are in a.csv?");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_request_names_its_class_and_stores_no_half_answer() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::unauthorized());
    let env = Env::new();
    let base = server.openai_base_url();
    env.ok(&[
        "provider",
        "add",
        "oa",
        "--kind",
        "openai",
        "--base-url",
        &base,
        "--model",
        "gpt-4o",
        "--api-key-env",
        "CANARY_KEY",
    ])
    .await;
    let out = env.run(&["chat", "hello"]).await;
    assert_eq!(out.status.code(), Some(5));
    let err = stderr(&out);
    let last = err.lines().last().unwrap();
    assert!(
        last.starts_with("error: [permission] oa answered HTTP 401: "),
        "{err}"
    );
    let id = err
        .lines()
        .find_map(|l| l.strip_prefix("conversation "))
        .unwrap()
        .trim()
        .to_string();
    let show: serde_json::Value = serde_json::from_str(&stdout(
        &env.ok(&["conversation", "show", &id, "--json"]).await,
    ))
    .unwrap();
    let messages = show["messages"].as_array().unwrap();
    assert_eq!(
        messages.len(),
        1,
        "the user's message is kept, no partial answer: {messages:?}"
    );
}

/// Reads every file under `dir` (recursively) except the keyring fallback file, which is where the
/// key is meant to be.
fn files_without_the_secret_store(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                stack.push(path);
            } else if !name.starts_with("secrets.json") {
                out.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_canary_key_never_reaches_sqlite_logs_exports_or_errors() {
    let server = LlmServer::start().await;
    server.enqueue(turn(&["pong"]));
    server.enqueue(turn(&["fine, thanks"]));
    server.enqueue(Reply::unauthorized());
    server.enqueue(Reply::bad_request(&format!(
        "echoing your key back: {CANARY}"
    )));
    let env = Env::new();
    let base = server.openai_base_url();
    let mut outputs = Vec::new();
    outputs.push(
        env.ok(&[
            "provider",
            "add",
            "oa",
            "--kind",
            "openai",
            "--base-url",
            &base,
            "--model",
            "gpt-4o",
            "--api-key-env",
            "CANARY_KEY",
        ])
        .await,
    );
    outputs.push(env.ok(&["provider", "test", "oa"]).await);
    let chat = env.ok(&["chat", "how are you?"]).await;
    let id = stderr(&chat)
        .lines()
        .find_map(|l| l.strip_prefix("conversation "))
        .unwrap()
        .trim()
        .to_string();
    outputs.push(chat);
    outputs.push(env.run(&["chat", "--conversation", &id, "again"]).await);
    outputs.push(env.run(&["chat", "--conversation", &id, "and again"]).await);
    outputs.push(env.ok(&["provider", "list", "--json"]).await);
    outputs.push(env.ok(&["provider", "list"]).await);
    for format in ["text", "jsonl", "md"] {
        let file = env.dir.path().join(format!("export.{format}"));
        outputs.push(
            env.ok(&[
                "export",
                &id,
                "--format",
                format,
                "-o",
                file.to_str().unwrap(),
            ])
            .await,
        );
        outputs.push(env.ok(&["export", &id, "--format", format]).await);
    }
    outputs.push(env.ok(&["conversation", "show", &id, "--json"]).await);

    // The key did go to the provider, so the canary is live.
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.header("authorization") == Some(format!("Bearer {CANARY}").as_str()))
    );
    // A provider echoing the key back gets it redacted.
    assert!(
        stderr(outputs.last().unwrap()).is_empty()
            || !stderr(outputs.last().unwrap()).contains(CANARY)
    );

    for (i, out) in outputs.iter().enumerate() {
        assert!(!stdout(out).contains(CANARY), "stdout of command {i}");
        assert!(
            !stderr(out).contains(CANARY),
            "stderr of command {i}: {}",
            stderr(out)
        );
    }
    let echoed = &outputs[4];
    assert!(
        stderr(echoed).contains("echoing your key back: ***"),
        "{}",
        stderr(echoed)
    );

    let files = files_without_the_secret_store(env.dir.path());
    assert!(
        files.iter().any(|(p, _)| p.ends_with("decima.db")),
        "the database was checked"
    );
    assert!(
        files
            .iter()
            .any(|(p, _)| p.to_string_lossy().ends_with("export.md"))
    );
    for (path, bytes) in &files {
        let found = bytes.windows(CANARY.len()).any(|w| w == CANARY.as_bytes());
        assert!(!found, "the key leaked into {}", path.display());
    }
    // And the fallback file that does hold it is private (on Windows, through an ACL that
    // decima-llm's own tests read back).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(env.data().join("secrets.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_learns_the_calibration_and_refuses_what_cannot_fit() {
    let server = LlmServer::start().await;
    server.enqueue(Reply::Stream(Turn {
        text: vec!["Noted.".into()],
        usage: Some((260, 2)),
        ..Turn::default()
    }));
    let env = Env::new();
    let base = server.openai_base_url();
    env.ok(&[
        "provider",
        "add",
        "oa",
        "--kind",
        "openai",
        "--base-url",
        &base,
        "--model",
        "gpt-4o",
        "--context-window",
        "400",
        "--api-key-env",
        "CANARY_KEY",
    ])
    .await;
    let long =
        "Reconcile the March ledger against invoices for every store in the northern region. "
            .repeat(10);
    env.ok(&["chat", &long]).await;

    let db = env.data().join("decima.db");
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}?mode=ro", db.display()))
        .await
        .unwrap();
    let (factor, samples): (f64, i64) =
        sqlx::query_as("SELECT factor, samples FROM token_calibrations WHERE model = 'gpt-4o'")
            .fetch_one(&pool)
            .await
            .unwrap();
    pool.close().await;
    assert_eq!(samples, 1);
    assert!(
        factor > 1.0 && factor <= 2.0,
        "the provider counted more than we estimated: {factor}"
    );

    // A message larger than the whole 400-token window cannot fit even after the history is
    // compressed: refused before anything is sent, and the user's message is kept.
    let huge = long.repeat(4);
    let out = env
        .run(&[
            "chat",
            "--provider",
            "oa",
            "--conversation",
            &last_conversation(&env).await,
            &huge,
        ])
        .await;
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("error: [context_overflow]"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.requests().len(), 1, "nothing was sent");
}

async fn last_conversation(env: &Env) -> String {
    let list: serde_json::Value =
        serde_json::from_str(&stdout(&env.ok(&["conversation", "list", "--json"]).await)).unwrap();
    list[0]["id"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_tokenizer_json_is_checked_when_added() {
    let env = Env::new();
    let bad = env.dir.path().join("broken.json");
    std::fs::write(&bad, "{ not a tokenizer").unwrap();
    let out = env
        .run(&[
            "provider",
            "add",
            "q",
            "--preset",
            "ollama",
            "--tokenizer-json",
            bad.to_str().unwrap(),
        ])
        .await;
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is not a valid tokenizer.json"),
        "{}",
        stderr(&out)
    );

    let good = env.dir.path().join("tokenizer.json");
    let json = serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
        "normalizer": null, "pre_tokenizer": {"type": "Whitespace"}, "post_processor": null, "decoder": null,
        "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "hello": 1}, "unk_token": "[UNK]"}
    });
    std::fs::write(&good, json.to_string()).unwrap();
    env.ok(&[
        "provider",
        "add",
        "q",
        "--preset",
        "ollama",
        "--tokenizer-json",
        good.to_str().unwrap(),
    ])
    .await;
}
