//! A release opens the data folder of the release before it. `fixtures/data-v0.1.0/decima.db`
//! was written by the previous release's own `decima` CLI (the `make.sh` beside it says how and
//! with which commit); this build migrates a copy of it and must find everything in it. A
//! database that a newer Decima migrated is refused with what to do, and its file is not touched.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use decima_core::{ConversationId, EstimateCounter, Role};
use decima_store::{SearchQuery, Store, known_versions};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/data-v0.1.0/decima.db"
);

/// A copy of the previous release's data folder, so the fixture itself is never migrated.
fn previous_release_data() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::copy(FIXTURE, data.join("decima.db")).unwrap();
    (dir, data)
}

fn decima(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_decima"))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .env_remove("DECIMA_DATA_DIR")
        .env_remove("DECIMA_DATABASE_URL")
        .output()
        .unwrap()
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The migrations recorded in a database file, read without Decima's store.
async fn applied(db: &Path) -> Vec<(i64, bool)> {
    let pool = sqlx::SqlitePool::connect(&format!("sqlite:{}", db.display()))
        .await
        .unwrap();
    let rows: Vec<(i64, bool)> =
        sqlx::query_as("SELECT version, success FROM _sqlx_migrations ORDER BY version")
            .fetch_all(&pool)
            .await
            .unwrap();
    pool.close().await;
    rows
}

fn list(data: &Path, extra: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec!["conversation", "list", "--json"];
    args.extend_from_slice(extra);
    serde_json::from_str(&ok(decima(data, &args))).unwrap()
}

#[tokio::test]
async fn the_previous_release_s_data_folder_opens_with_everything_in_it() {
    let (_dir, data) = previous_release_data();
    let db = data.join("decima.db");
    let before = applied(&db).await;
    let (newest, _) = known_versions();
    let old_newest = before.last().unwrap().0;
    assert!(
        old_newest < newest,
        "the fixture must be older than this build's schema ({old_newest} against {newest}), \
         or this test migrates nothing"
    );

    // The CLI opens it: the store migrates it on the way.
    let live = list(&data, &[]);
    assert_eq!(live.len(), 1, "{live:?}");
    assert_eq!(live[0]["title"], "Q4 supplier review 第四季度");
    assert_eq!(live[0]["message_count"], 243);
    let trash = list(&data, &["--deleted"]);
    assert_eq!(trash.len(), 1, "{trash:?}");
    assert_eq!(trash[0]["title"], "Discarded draft");
    let id: ConversationId = live[0]["id"].as_str().unwrap().parse().unwrap();

    // Every migration of this build is now recorded and succeeded; the old ones are untouched.
    let after = applied(&db).await;
    assert_eq!(after.last().unwrap().0, newest);
    assert!(after.iter().all(|(_, success)| *success), "{after:?}");
    assert_eq!(&after[..before.len()], &before[..]);
    assert!(after.len() > before.len());

    // The next step's context is built from the old compaction, the pin and the recent messages.
    let context = ok(decima(&data, &["context", &id.to_string()]));
    assert!(
        context.contains("[segment summary of messages"),
        "{context}"
    );
    assert!(
        context.contains("flag every supplier whose late-payment rate is above 4.5%"),
        "the pinned request is kept verbatim: {context}"
    );
    assert!(context.contains("Nordwind GmbH"), "{context}");

    let store = Store::open(&db, Arc::new(EstimateCounter)).await.unwrap();
    let pool = store.sqlite_pool().unwrap();
    let integrity: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(integrity, "ok");
    let dangling: Vec<(String,)> = sqlx::query_as("PRAGMA foreign_key_check")
        .fetch_all(pool)
        .await
        .unwrap();
    assert!(dangling.is_empty(), "{dangling:?}");

    // Messages read back as they were written: text, Chinese, tool calls, the pin.
    let first = store.messages().get(id, 1).await.unwrap();
    assert_eq!(first.role, Role::User);
    assert!(first.pinned);
    assert!(
        first
            .content
            .ends_with("供应商名单以财务部 11 月 3 日的版本为准。")
    );
    let call = store.messages().get(id, 2).await.unwrap();
    assert_eq!(call.tool_calls.len(), 1);
    assert_eq!(call.tool_calls[0].name, "shell");
    assert_eq!(
        call.tool_calls[0].arguments,
        r#"{"command": "python3 rate.py --batch 1"}"#
    );
    let result = store.messages().get(id, 3).await.unwrap();
    assert_eq!(result.tool_call_id.as_deref(), Some("call_001"));
    let correction = store.messages().get(id, 242).await.unwrap();
    assert_eq!(
        correction.content,
        "Correction: the threshold is 5.2%, not 4.5%. Keep IBAN DE89 3704 0044 0532 0130 00 out \
         of the report."
    );

    // Search finds old messages, in both languages.
    for (words, seq) in [("Nordwind", 243), ("华东物流", 243), ("IBAN", 242)] {
        let page = store
            .search()
            .messages(&SearchQuery {
                text: words,
                conversation: Some(id),
                before: None,
                limit: 10,
            })
            .await
            .unwrap();
        let seqs: Vec<i64> = page.hits.iter().map(|h| h.seq).collect();
        assert_eq!(seqs, vec![seq], "{words}");
    }

    // The compaction, the preset and the provider survive.
    let compactions = store.compactions().in_force(id).await.unwrap();
    assert_eq!(compactions.len(), 1, "{compactions:?}");
    let presets = store.presets().list().await.unwrap();
    assert!(
        presets
            .iter()
            .any(|p| p.kind == "st_preset"
                && p.body.to_string().contains("Answer as a terse analyst.")),
        "{presets:?}"
    );
    let providers = store.providers().list().await.unwrap();
    assert_eq!(providers.len(), 1);
    assert_eq!(
        (providers[0].name.as_str(), providers[0].model.as_str()),
        ("lab", "qwen3-32b")
    );
    assert_eq!(providers[0].context_window, 16_000);
    store.close().await;

    // A second start finds nothing to migrate and the same data.
    assert_eq!(list(&data, &[]), live);
    assert_eq!(applied(&db).await, after);
}

#[tokio::test]
async fn a_database_from_a_newer_decima_is_refused_and_never_touched() {
    let (_dir, data) = previous_release_data();
    let db = data.join("decima.db");
    list(&data, &[]);
    {
        let pool = sqlx::SqlitePool::connect(&format!("sqlite:{}", db.display()))
            .await
            .unwrap();
        sqlx::query(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, \
             execution_time) VALUES (29991231000000, 'from the future', TRUE, x'', 1)",
        )
        .execute(&pool)
        .await
        .unwrap();
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
    }
    let bytes = std::fs::read(&db).unwrap();
    let files = |dir: &Path| {
        let mut names: Vec<(String, u64)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    e.metadata().unwrap().len(),
                )
            })
            .filter(|(name, _)| name.starts_with("decima.db"))
            .collect();
        names.sort();
        names
    };
    let before = files(&data);

    let out = decima(&data, &["conversation", "list"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("newer than this Decima knows") && stderr.contains("Update Decima"),
        "{stderr}"
    );
    assert!(stderr.contains("29991231000000"), "{stderr}");

    assert!(
        std::fs::read(&db).unwrap() == bytes,
        "the database file was written to"
    );
    assert_eq!(files(&data), before);
}
