//! `decima compress`: preview, apply, undo, and the level that follows usage.

use std::path::PathBuf;
use std::process::{Command, Output};

use decima_testkit::ConversationBuilder;

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn run(&self, window: &str, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_decima"))
            .arg("--data-dir")
            .arg(self.dir.path().join("data"))
            .args(args)
            .env_remove("DECIMA_DATA_DIR")
            .env("DECIMA_CONTEXT_WINDOW", window)
            .output()
            .unwrap()
    }

    fn ok(&self, window: &str, args: &[&str]) -> String {
        let out = self.run(window, args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn json(&self, window: &str, args: &[&str]) -> serde_json::Value {
        serde_json::from_str(&self.ok(window, args)).unwrap()
    }
}

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
    assert!(String::from_utf8_lossy(&llm.stderr).contains("only --strategy extract"));
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
    assert!(String::from_utf8_lossy(&no_window.stderr).contains("no context window"));
}
