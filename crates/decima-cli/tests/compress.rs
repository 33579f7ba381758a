//! `decima compress`: preview, apply, undo, and the level that follows usage.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Command, Output};

use decima_testkit::{ConversationBuilder, LlmServer, Reply, Turn};

use crate::window_env;

use window_env::Env;

fn setup() -> (Env, String, u64) {
    let env = Env {
        dir: tempfile::tempdir().unwrap(),
    };
    let built = ConversationBuilder::new(31, 500).build();
    let file: PathBuf = env.dir.path().join("long.jsonl");
    std::fs::write(&file, built.to_jsonl()).unwrap();
    let id = env
        .ok(
            "100000",
            &["conversation", "import", file.to_str().unwrap()],
        )
        .trim()
        .to_string();
    let list = env.json("100000", &["conversation", "list", "--json"]);
    let tokens = list[0]["tokens"].as_u64().unwrap();
    (env, id, tokens)
}

#[test]
fn preview_apply_and_undo() {
    let (env, id, tokens) = setup();
    // A window the history overflows.
    let window = (tokens * 9 / 10).to_string();

    let preview = env.json(
        &window,
        &[
            "compress",
            &id,
            "--level",
            "standard",
            "--dry-run",
            "--json",
        ],
    );
    assert_eq!(preview["compaction_id"], serde_json::Value::Null);
    assert_eq!(preview["dry_run"], true);
    let before = preview["tokens_before"].as_u64().unwrap();
    let after = preview["tokens_after"].as_u64().unwrap();
    assert!(after < before, "{before} -> {after}");
    let summaries = preview["summaries"].as_array().unwrap();
    assert!(!summaries.is_empty());
    assert!(
        summaries[0]["text"].as_str().unwrap().contains("Goal"),
        "{}",
        summaries[0]["text"]
    );
    assert!(!preview["kept_verbatim"].as_array().unwrap().is_empty());
    // Previewing stored nothing: the same preview again.
    let again = env.json(
        &window,
        &[
            "compress",
            &id,
            "--level",
            "standard",
            "--dry-run",
            "--json",
        ],
    );
    assert_eq!(again["tokens_after"], preview["tokens_after"]);

    let applied = env.json(&window, &["compress", &id, "--level", "standard", "--json"]);
    let compaction = applied["compaction_id"].as_str().unwrap().to_string();
    assert_eq!(applied["tokens_after"], preview["tokens_after"]);
    // After it, a standard preview has less (or nothing) left to do.
    let next = env.json(
        &window,
        &[
            "compress",
            &id,
            "--level",
            "standard",
            "--dry-run",
            "--json",
        ],
    );
    assert!(next["tokens_before"].as_u64().unwrap() <= after, "{next}");

    env.ok(&window, &["compress", "undo", &compaction]);
    let restored = env.json(
        &window,
        &[
            "compress",
            &id,
            "--level",
            "standard",
            "--dry-run",
            "--json",
        ],
    );
    assert_eq!(
        restored["tokens_before"], preview["tokens_before"],
        "undo restores the previous state"
    );
    let twice = env.run(&window, &["compress", "undo", &compaction]);
    assert_eq!(twice.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&twice.stderr).contains("already undone"));
}

#[test]
fn the_level_follows_usage_and_bad_requests_are_refused() {
    let (env, id, tokens) = setup();
    let roomy = (tokens * 4).to_string();
    let out = env.run(&roomy, &["compress", &id]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("below the compression threshold"));

    let tight = (tokens / 2).to_string();
    let chosen = env.json(&tight, &["compress", &id, "--json", "--dry-run"]);
    assert_eq!(chosen["level"], "deep", "usage over 90% picks deep");

    let llm = env.run(&tight, &["compress", &id, "--strategy", "llm"]);
    assert_eq!(llm.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&llm.stderr).contains("no provider configured"),
        "{}",
        String::from_utf8_lossy(&llm.stderr)
    );
    let ghost = env.run(
        &tight,
        &["compress", "0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a6b"],
    );
    assert_eq!(ghost.status.code(), Some(3));
    let no_window = Command::new(env!("CARGO_BIN_EXE_decima"))
        .arg("--data-dir")
        .arg(env.dir.path().join("data"))
        .args(["compress", &id])
        .env_remove("DECIMA_CONTEXT_WINDOW")
        .env_remove("DECIMA_PROVIDER_KIND")
        .output()
        .unwrap();
    assert_eq!(no_window.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&no_window.stderr)
            .contains("no provider to take a context window from")
    );
}

fn with_model(env: &Env, server: &LlmServer, window: &str, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_decima"));
    cmd.arg("--data-dir")
        .arg(env.dir.path().join("data"))
        .args(args)
        .env_remove("DECIMA_DATA_DIR")
        .env("DECIMA_CONTEXT_WINDOW", window)
        .env("DECIMA_PROVIDER_KIND", "openai")
        .env("DECIMA_BASE_URL", server.openai_base_url())
        .env("DECIMA_MODEL", "gpt-4o")
        .env("DECIMA_API_KEY", "sk-test");
    cmd.output().unwrap()
}

fn answer(text: &str) -> Reply {
    Reply::Stream(Turn {
        text: vec![text.to_string()],
        usage: Some((900, 120)),
        ..Turn::default()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_writes_llm_and_structured_summaries() {
    let (env, id, tokens) = tokio::task::spawn_blocking(setup).await.unwrap();
    let window = (tokens * 9 / 10).to_string();
    let server = LlmServer::start().await;
    server.enqueue(answer("## Goal\nReconcile Q3.\n\n## Completed work\n- Listed batches.\n\n## Current state\nChecking.\n\n## Key decisions\n- None.\n\n## Next step\nCompare.\n\n## Constraints\n- None."));
    let structured = serde_json::json!({
        "goal": "Reconcile Q3 invoices", "completed_work": ["listed batches"], "current_state": "comparing",
        "key_decisions": ["exclude duplicates"], "next_step": "report", "constraints": ["read-only"], "literals": []
    });
    server.enqueue(answer(&structured.to_string()));
    server.enqueue(answer("this is not JSON at all"));

    let run = |args: Vec<String>| {
        let (env, server_url) = (&env, &server);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        with_model(env, server_url, &window, &args)
    };
    let json = |out: Output| -> serde_json::Value {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    // Previews, so each strategy sees the same uncompressed history.
    let base = |strategy: &str| {
        vec![
            "compress".into(),
            id.clone(),
            "--level".into(),
            "standard".into(),
            "--strategy".into(),
            strategy.into(),
            "--json".into(),
            "--dry-run".into(),
        ]
    };

    let llm = json(tokio::task::block_in_place(|| run(base("llm"))));
    assert_eq!(llm["strategy"], "llm");
    let text = llm["summaries"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("## Goal\nReconcile Q3."), "{text}");
    assert!(
        text.contains("## Literals"),
        "literals the model left out are appended: {text}"
    );
    let request = server.requests()[0].json.clone().unwrap();
    assert!(
        request["messages"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with("SYSTEM OPERATION")
    );
    assert!(
        request["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("### seq=1 role=")
    );
    assert!(
        request.get("tools").is_none(),
        "no tools in a system operation"
    );

    let structured = json(tokio::task::block_in_place(|| run(base("structured"))));
    assert_eq!(structured["strategy"], "structured");
    let text = structured["summaries"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("## Goal\nReconcile Q3 invoices"), "{text}");
    assert!(
        text.contains("## Key decisions\n- exclude duplicates"),
        "{text}"
    );

    let fallback = tokio::task::block_in_place(|| run(base("structured")));
    assert!(
        String::from_utf8_lossy(&fallback.stderr).contains("falling back to the extract strategy")
    );
    let fallback = json(fallback);
    assert_eq!(fallback["strategy"], "extract");
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn thresholds_are_configured_per_provider() {
    let (env, id, tokens) = setup();
    let provider_cmd = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_decima"))
            .arg("--data-dir")
            .arg(env.dir.path().join("data"))
            .args(args)
            .env_remove("DECIMA_DATA_DIR")
            .env_remove("DECIMA_CONTEXT_WINDOW")
            .env("DECIMA_SECRET_BACKEND", "file")
            .output()
            .unwrap()
    };
    // A window the history fills to about 65%: ok by default, "compress" at 0.5/0.6/0.7.
    let window = (tokens * 100 / 65).to_string();
    let add = provider_cmd(&[
        "provider",
        "add",
        "eager",
        "--preset",
        "ollama",
        "--context-window",
        &window,
        "--thresholds",
        "0.5,0.6,0.7",
    ]);
    assert!(
        add.status.success(),
        "{}",
        String::from_utf8_lossy(&add.stderr)
    );
    let add = provider_cmd(&[
        "provider",
        "add",
        "calm",
        "--preset",
        "ollama",
        "--context-window",
        &(tokens / 2).to_string(),
        "--no-compression",
    ]);
    assert!(
        add.status.success(),
        "{}",
        String::from_utf8_lossy(&add.stderr)
    );

    let context = provider_cmd(&["context", &id, "--provider", "eager", "--json"]);
    assert!(
        context.status.success(),
        "{}",
        String::from_utf8_lossy(&context.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&context.stdout).unwrap();
    let usage = report["usage"].as_f64().unwrap();
    assert!(usage > 0.6 && usage < 0.9, "{usage}");
    assert_ne!(
        report["state"], "ok",
        "the provider's thresholds apply: {report}"
    );

    // Far over the window, but compression is off for this provider: it never picks a level.
    let calm = provider_cmd(&["compress", &id, "--provider", "calm"]);
    assert!(
        calm.status.success(),
        "{}",
        String::from_utf8_lossy(&calm.stderr)
    );
    assert!(String::from_utf8_lossy(&calm.stderr).contains("below the compression threshold"));

    let bad = provider_cmd(&[
        "provider",
        "add",
        "odd",
        "--preset",
        "ollama",
        "--thresholds",
        "0.9,0.8,0.7",
    ]);
    assert_eq!(
        bad.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_compresses_on_its_own_before_sending() {
    let (env, id, tokens) = tokio::task::spawn_blocking(setup).await.unwrap();
    let server = LlmServer::start().await;
    server.enqueue(answer("Next: compare March with last year."));
    let window = (tokens * 9 / 10).to_string();
    let out = tokio::task::block_in_place(|| {
        with_model(
            &env,
            &server,
            &window,
            &["chat", "--conversation", &id, "What next?"],
        )
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("[compressed the history before sending"),
        "{stderr}"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Next: compare March with last year.\n"
    );

    let request = server.requests()[0].json.clone().unwrap();
    let sent = request["messages"].as_array().unwrap();
    assert!(
        sent.len() < 500,
        "the summarised history is not resent: {}",
        sent.len()
    );
    assert!(sent.iter().any(|m| {
        m["content"]
            .as_str()
            .unwrap_or_default()
            .contains("summary of messages")
    }));
    assert_eq!(sent.last().unwrap()["content"], "What next?");
}
