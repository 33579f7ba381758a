//! `decima import` and `decima context`: a card becomes a preset, and the assembled request shows
//! its layers, usage and state before and after compression.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use decima_testkit::ConversationBuilder;

use crate::window_env;

use window_env::Env;

fn card() -> String {
    serde_json::json!({
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {
            "name": "Ada",
            "description": "{{char}} is a careful ledger analyst.",
            "personality": "precise",
            "scenario": "{{user}} and {{char}} reconcile invoices.",
            "first_mes": "Hello {{user}}.",
            "mes_example": "",
            "system_prompt": "You are {{char}}, working with {{user}}.",
            "post_history_instructions": "Cite message seqs.",
            "character_book": { "entries": [] },
            "extensions": {}
        }
    })
    .to_string()
}

#[test]
fn a_card_preset_shapes_the_assembled_request() {
    let env = Env {
        dir: tempfile::tempdir().unwrap(),
    };
    let preset = env
        .ok("100000", &["import", &env.file("ada.json", card())])
        .trim()
        .to_string();
    let list = env.json("100000", &["preset", "list", "--json"]);
    assert_eq!(list[0]["id"], preset.as_str());
    assert_eq!(list[0]["kind"], "st_card");
    assert_eq!(list[0]["name"], "Ada");

    let built = ConversationBuilder::new(41, 400).build();
    let goal = built
        .facts
        .iter()
        .find(|f| f.kind == decima_testkit::FactKind::Goal)
        .unwrap()
        .text
        .clone();
    let id = env
        .ok(
            "100000",
            &[
                "conversation",
                "import",
                &env.file("c.jsonl", built.to_jsonl()),
                "--preset",
                &preset,
            ],
        )
        .trim()
        .to_string();

    let roomy = env.json("1000000", &["context", &id, "--json"]);
    assert_eq!(roomy["window"], 1_000_000);
    assert_eq!(roomy["state"], "ok");
    assert_eq!(roomy["compression_required"], false);
    let names: Vec<&str> = roomy["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "system_constants",
            "session_context",
            "working_context",
            "instant_context"
        ]
    );
    let messages = roomy["messages"].as_array().unwrap();
    assert!(
        messages[0]["content"]
            .as_str()
            .unwrap()
            .contains("You are Ada, working with"),
        "{}",
        messages[0]
    );
    let history: Vec<&serde_json::Value> = messages
        .iter()
        .filter(|m| m["layer"] == "working_context")
        .collect();
    assert_eq!(
        history.len(),
        400,
        "every message fits and is sent verbatim"
    );
    assert!(roomy["tokens"].as_u64().unwrap() > 0);

    // A window the history outgrows: the report says so, and compression fixes it.
    let total = roomy["tokens"].as_u64().unwrap();
    let tight = (total * 2 / 3).to_string();
    let out = env.run(&tight, &["context", &id, "--json"]);
    assert!(out.status.success());
    let over: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(over["usage"].as_f64().unwrap() > 1.0, "{}", over["usage"]);
    assert_eq!(over["state"], "deep");
    assert_eq!(over["compression_required"], true);
    assert!(String::from_utf8_lossy(&out.stderr).contains("decima compress"));

    // A pinned todo of one of the conversation's executions (the runtime writes these).
    let db = env.dir.path().join("data").join("decima.db");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display())).await.unwrap();
        sqlx::query("INSERT INTO executions (id, conversation_id, task, created_at, updated_at) VALUES ('e1', ?, 'reconcile', 0, 0)")
            .bind(&id)
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query("INSERT INTO todos (id, execution_id, position, title, status, pinned, created_at, updated_at) VALUES ('t1', 'e1', 1, 'Verify totals for region R-7 against ledger-2026-03', 'in_progress', 1, 0, 0), ('t2', 'e1', 2, 'unpinned step', 'pending', 0, 0, 0)")
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
    });

    env.ok(&tight, &["compress", &id]);
    let after = env.json(&tight, &["context", &id, "--json"]);
    assert_eq!(after["compression_required"], false, "{after}");
    assert!(after["usage"].as_f64().unwrap() < over["usage"].as_f64().unwrap());
    let session = after["layers"][1]["tokens"].as_u64().unwrap();
    assert!(session > 0, "the summaries are in the session context");
    let sent: String = after["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert!(sent.contains(&goal), "the goal survives compression");
    assert!(
        sent.contains("- [in_progress] Verify totals for region R-7 against ledger-2026-03"),
        "pinned todos stay verbatim"
    );
    assert!(!sent.contains("unpinned step"));
}

#[test]
fn malformed_cards_and_presets_are_refused() {
    let env = Env {
        dir: tempfile::tempdir().unwrap(),
    };
    for (name, contents) in [
        ("empty.json", b"".to_vec()),
        ("garbage.json", b"{ this is not json".to_vec()),
        ("fake.png", b"\x89PNG\r\n\x1a\nnot really".to_vec()),
        ("array.json", b"[1, 2, 3]".to_vec()),
    ] {
        let out = env.run("1000", &["import", &env.file(name, contents)]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("error: cannot import"), "{name}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1);
    }
    assert_eq!(
        env.json("1000", &["preset", "list", "--json"]),
        serde_json::json!([])
    );
}
