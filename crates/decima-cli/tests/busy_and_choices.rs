//! Through the real binary, as two terminals would use it: while one `decima run` works in a
//! conversation, another process's run, chat turn and compression in it are refused before they
//! store anything, with the running execution named. And a failure accepts only the choices it
//! offers: the exit message lists them, `recover` refuses any other with exit 2 and leaves the
//! failure waiting, and `rollback` puts a step-budget failure's work back before asking again.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::{Env, execution_id, text};
use serde_json::{Value, json};

async fn count(env: &Env, sql: &'static str) -> i64 {
    let store = env.store().await;
    let n = sqlx::query_scalar(sql)
        .fetch_one(store.sqlite_pool().expect("a SQLite store"))
        .await
        .unwrap();
    store.close().await;
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_process_cannot_run_chat_or_compress_in_a_conversation_that_a_run_holds() {
    let env = Env::new().await;
    let out = env
        .decima(&["conversation", "create", "--title", "busy"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let conversation = text(&out.stdout).trim().to_owned();
    // The run's one tool call takes long enough for the other process to try.
    env.call("shell", json!({"command": "sleep 4"}));
    env.say("Slept.");
    let first = env.spawn_run_with(&["--conversation", &conversation], "Sleep a while");
    env.server
        .wait_for_requests(1, Duration::from_secs(20))
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = [
        count(&env, "SELECT COUNT(*) FROM messages").await,
        count(&env, "SELECT COUNT(*) FROM executions").await,
        count(&env, "SELECT COUNT(*) FROM compactions").await,
    ];

    let ws = env.ws().to_string_lossy().into_owned();
    for args in [
        vec![
            "run",
            "--workspace",
            ws.as_str(),
            "--conversation",
            &conversation,
            "Another task",
        ],
        vec!["chat", "--conversation", &conversation, "What did it find?"],
        vec!["compress", &conversation, "--level", "deep"],
    ] {
        let out = env.decima(&args).await;
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("conversation {conversation} is busy"))
                && stderr.contains("is running")
                && stderr.contains("nothing was stored"),
            "{args:?}: {stderr}"
        );
    }
    assert_eq!(
        [
            count(&env, "SELECT COUNT(*) FROM messages").await,
            count(&env, "SELECT COUNT(*) FROM executions").await,
            count(&env, "SELECT COUNT(*) FROM compactions").await,
        ],
        before,
        "a refused command stored something"
    );
    // A preview reads only, and is allowed.
    let out = env
        .decima(&["compress", &conversation, "--level", "deep", "--dry-run"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));

    let out = tokio::task::spawn_blocking(move || first.wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let id = execution_id(&out.stderr);
    // Free again: a chat turn now goes through.
    env.say("It slept four seconds.");
    let out = env
        .decima(&["chat", "--conversation", &conversation, "What did it find?"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(env.show(&id).await["status"], "succeeded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recover_accepts_only_what_the_failure_offers_and_rollback_asks_again() {
    let env = Env::new().await;
    std::fs::write(env.ws().join("sales.csv"), "region,total\nnorth,10\n").unwrap();
    env.call(
        "todo_write",
        json!({"todos": [{"title": "clean the sales", "status": "in_progress"}]}),
    );
    env.call(
        "shell",
        json!({"command": "echo south,7 >> sales.csv && echo draft > notes.md"}),
    );
    let out = env.run(&["--max-steps", "2"], "Clean the sales").await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    let id = execution_id(&out.stderr);
    let last = stderr.lines().last().unwrap();
    assert!(
        last.contains(&format!(
            "decima recover {id} --choice retry|replan|rollback|abort`"
        )),
        "{last}"
    );

    // Skip is not offered: exit 2, the offered ones named, nothing changed.
    let out = env.decima(&["recover", &id, "--choice", "skip"]).await;
    let refused = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{refused}");
    assert!(
        refused.contains("skip is not a choice")
            && refused.contains("it offers retry, replan, rollback, abort")
            && refused.contains("nothing was changed"),
        "{refused}"
    );
    let view: Value = env.show(&id).await;
    assert_eq!(view["status"], "awaiting_user");
    assert!(view["failures"][0]["resolution"].is_null());
    assert_eq!(
        std::fs::read_to_string(env.ws().join("sales.csv")).unwrap(),
        "region,total\nnorth,10\nsouth,7\n"
    );
    // The report says what the todo changed, so the analyst can decide on a rollback.
    let out = env.decima(&["execution", "show", &id]).await;
    let shown = text(&out.stdout);
    assert!(
        shown.contains("since the todo started: 1 paths created, 1 changed, 0 removed"),
        "{shown}"
    );
    assert!(
        shown.contains("created: notes.md") && shown.contains("changed: sales.csv"),
        "{shown}"
    );
    assert!(
        shown.contains("choices: retry, replan, rollback, abort"),
        "{shown}"
    );
    // What the run cost so far: the test provider has no prices, so no estimate is made up.
    assert!(
        shown.contains("% of input from cache")
            && shown.contains("0 compressions")
            && shown.contains("no prices set, so no cost estimate"),
        "{shown}"
    );

    // Rollback puts the work back and asks again, now without rollback.
    let out = env.decima(&["recover", &id, "--choice", "rollback"]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    assert!(
        stderr
            .lines()
            .last()
            .unwrap()
            .contains(&format!("decima recover {id} --choice retry|replan|abort`")),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(env.ws().join("sales.csv")).unwrap(),
        "region,total\nnorth,10\n"
    );
    assert!(!env.ws().join("notes.md").exists());
    let view: Value = env.show(&id).await;
    assert_eq!(view["failures"][0]["resolution"], "rollback");
    assert!(view["failures"][1]["resolution"].is_null());

    let out = env.decima(&["recover", &id, "--choice", "abort"]).await;
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    assert_eq!(env.show(&id).await["status"], "cancelled");
}
