//! The `decima` binary end to end: real processes, a real SQLite file in a temp data dir.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use decima_testkit::ConversationBuilder;

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

    fn file(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, contents).unwrap();
        path
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_decima"))
            .arg("--data-dir")
            .arg(self.data())
            .args(args)
            .env_remove("DECIMA_DATA_DIR")
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn import(&self, path: &Path) -> String {
        self.ok(&["conversation", "import", path.to_str().unwrap()])
            .trim()
            .to_string()
    }
}

/// Asserts a failure with the given exit code and one stderr line containing `needle`.
fn assert_fails(out: &Output, code: i32, needle: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "stderr: {stderr}");
    assert!(stderr.contains(needle), "expected {needle:?} in {stderr:?}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr:?}");
    assert!(stderr.starts_with("error: "), "{stderr:?}");
}

#[test]
fn import_prints_only_the_id_and_list_shows_it() {
    let env = Env::new();
    let built = ConversationBuilder::new(1, 40).build();
    let path = env.file("q3 review.jsonl", built.to_jsonl());
    let out = env.ok(&["conversation", "import", path.to_str().unwrap()]);
    let id = out.trim();
    assert_eq!(out, format!("{id}\n"), "stdout is the id alone");
    assert_eq!(id.len(), 36);

    let list: serde_json::Value =
        serde_json::from_str(&env.ok(&["conversation", "list", "--json"])).unwrap();
    let rows = list.as_array().unwrap();
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row["id"], id);
    assert_eq!(row["title"], "q3 review", "title defaults to the file name");
    assert_eq!(row["message_count"], 40);
    assert!(row["tokens"].as_u64().unwrap() > 40);
    let keys: Vec<&String> = row.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "created_at",
            "id",
            "message_count",
            "title",
            "tokens",
            "updated_at"
        ]
    );

    let table = env.ok(&["conversation", "list"]);
    assert!(table.contains(id) && table.contains("q3 review"), "{table}");
}

#[test]
fn an_imported_history_is_digested_for_reviews_block_by_block() {
    let env = Env::new();
    let built = ConversationBuilder::new(3, 2_100)
        .content_chars(160)
        .build();
    let id = env.import(&env.file("long.jsonl", built.to_jsonl()));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let rows = rt.block_on(async {
        let store =
            decima_store::Store::open_in_dir(&env.data(), decima_llm::tokens::store_counter())
                .await
                .unwrap();
        store
            .review_digests()
            .within(
                id.parse().unwrap(),
                decima_runtime::review::digest_cache::DIGEST_VERSION,
                1,
                2_100,
                0,
            )
            .await
            .unwrap()
    });
    let mut blocks: Vec<(i64, i64)> = rows.iter().map(|r| (r.from_seq, r.through_seq)).collect();
    blocks.sort_unstable();
    // The two full blocks; the third, still filling, is left to the first review.
    assert_eq!(blocks, [(1, 1_024), (1_025, 2_048)]);
    assert!(rows.iter().all(|r| r.text.contains("## ")), "{rows:?}");
}

#[test]
fn jsonl_export_round_trips_byte_for_byte() {
    let env = Env::new();
    let built = ConversationBuilder::new(2, 300).build();
    let first = env.import(&env.file("a.jsonl", built.to_jsonl()));
    let exported = env.ok(&["export", &first, "--format", "jsonl"]);
    assert_eq!(
        exported,
        built.to_jsonl(),
        "export reproduces the imported file"
    );
    let second = env.import(&env.file("b.jsonl", &exported));
    assert_ne!(first, second);
    assert_eq!(env.ok(&["export", &second, "--format", "jsonl"]), exported);
}

#[test]
fn text_and_markdown_exports_are_greppable_and_written_to_files() {
    let env = Env::new();
    let id = env.import(&env.file(
        "t.jsonl",
        concat!(
            r#"{"role":"user","content":"列出文件"}"#, "\n",
            r#"{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"shell","arguments":"{\"cmd\":\"ls\"}"}}],"reasoning_content":"Need a listing."}"#, "\n",
            r#"{"role":"tool","content":"a.csv","tool_call_id":"call_1"}"#, "\n",
        ),
    ));
    let text = env.ok(&["export", &id]);
    let headers: Vec<&str> = text.lines().filter(|l| l.starts_with("### seq=")).collect();
    assert_eq!(headers.len(), 3, "{text}");
    assert!(
        headers[0].starts_with("### seq=1 role=user time=20"),
        "{}",
        headers[0]
    );
    assert!(headers[2].contains("role=tool") && headers[2].contains("tool_call_id=call_1"));
    assert!(text.contains("@tool_call id=call_1 name=shell arguments={\"cmd\":\"ls\"}"));
    assert!(text.contains("@reasoning\nNeed a listing."));

    let out = env.dir.path().join("out.md");
    env.ok(&["export", &id, "--format", "md", "-o", out.to_str().unwrap()]);
    let md = std::fs::read_to_string(&out).unwrap();
    assert!(md.starts_with("# t\n"), "{md}");
    assert!(md.contains("## #2 · assistant"));
    assert!(md.contains("<details><summary>Reasoning</summary>"));
}

#[test]
fn show_rename_delete_restore() {
    let env = Env::new();
    let id = env.import(&env.file("s.jsonl", "{\"role\":\"user\",\"content\":\"hello\"}\n"));
    let show: serde_json::Value =
        serde_json::from_str(&env.ok(&["conversation", "show", &id, "--json"])).unwrap();
    assert_eq!(show["messages"][0]["content"], "hello");
    assert_eq!(show["messages"][0]["seq"], 1);
    assert!(
        env.ok(&["conversation", "show", &id])
            .contains("### seq=1 role=user")
    );

    env.ok(&["conversation", "rename", &id, "Renamed 重命名"]);
    assert!(env.ok(&["conversation", "list"]).contains("Renamed 重命名"));

    let out = env.run(&["conversation", "delete", &id]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("restore"));
    assert!(!env.ok(&["conversation", "list"]).contains(&id));
    assert!(env.ok(&["conversation", "list", "--deleted"]).contains(&id));
    assert_fails(&env.run(&["conversation", "show", &id]), 3, "was not found");

    env.ok(&["conversation", "restore", &id]);
    assert!(env.ok(&["conversation", "list"]).contains(&id));
}

#[test]
fn a_malformed_line_names_its_number_and_imports_nothing() {
    let env = Env::new();
    let cases: [(&[u8], &str); 5] = [
        (b"{\"role\":\"user\",\"content\":\"ok\"}\n{\"role\":\"user\",\"content\":\n", "line 2: not a valid chat message"),
        (b"{\"role\":\"user\",\"content\":\"ok\"}\n\n{\"role\":\"wizard\",\"content\":\"x\"}\n", "line 3: unknown role 'wizard'"),
        (b"{\"role\":\"tool\",\"content\":\"x\"}\n", "line 1: a tool message needs a non-empty tool_call_id"),
        (b"{\"role\":\"user\",\"content\":\"ok\"}\n{\"role\":\"user\",\"content\":\"caf\xe9\"}\n", "line 2: not valid UTF-8"),
        (b"[1,2,3]\n", "line 1: not a valid chat message"),
    ];
    for (contents, needle) in cases {
        let path = env.file("bad.jsonl", contents);
        let out = env.run(&["conversation", "import", path.to_str().unwrap()]);
        assert_fails(&out, 2, needle);
        assert!(out.stdout.is_empty());
    }
    assert_eq!(
        env.ok(&["conversation", "list", "--json"]).trim(),
        "[]",
        "nothing was imported"
    );
}

#[test]
fn unknown_and_hostile_ids_get_clear_errors() {
    let env = Env::new();
    let ghost = "0190f3e2-7c1a-7d3e-9a4b-1c2d3e4f5a6b";
    assert_fails(
        &env.run(&["conversation", "show", ghost]),
        3,
        &format!("conversation {ghost} was not found"),
    );
    assert_fails(&env.run(&["export", ghost]), 3, "was not found");
    assert_fails(
        &env.run(&["conversation", "rename", ghost, "x"]),
        3,
        "was not found",
    );
    assert_fails(
        &env.run(&["conversation", "delete", ghost]),
        3,
        "was not found",
    );
    for hostile in ["../../etc/passwd", "1' OR '1'='1", "x\ny"] {
        assert_fails(
            &env.run(&["conversation", "show", hostile]),
            2,
            "is not a valid conversation id",
        );
    }
    let id = env.import(&env.file("ok.jsonl", "{\"role\":\"user\",\"content\":\"hi\"}\n"));
    assert_fails(
        &env.run(&["conversation", "rename", &id, "a\nb"]),
        2,
        "control characters",
    );
}

#[test]
fn unusable_storage_gets_exit_code_four_and_is_left_alone() {
    let env = Env::new();
    // A data dir below a regular file cannot be created, even by root.
    let blocker = env.file("blocker", "I am a file");
    let out = Command::new(env!("CARGO_BIN_EXE_decima"))
        .args([
            "--data-dir",
            blocker.join("data").to_str().unwrap(),
            "conversation",
            "list",
        ])
        .output()
        .unwrap();
    assert_fails(&out, 4, "cannot use the data directory");

    // A database file that is not SQLite.
    std::fs::create_dir_all(env.data()).unwrap();
    let db = env.data().join("decima.db");
    let garbage = b"definitely not a database\n".repeat(100);
    std::fs::write(&db, &garbage).unwrap();
    assert_fails(
        &env.run(&["conversation", "list"]),
        4,
        "cannot open the database",
    );
    assert_eq!(std::fs::read(&db).unwrap(), garbage);

    // A missing input file.
    let env = Env::new();
    assert_fails(
        &env.run(&["conversation", "import", "/nonexistent/x.jsonl"]),
        1,
        "cannot read /nonexistent/x.jsonl",
    );
}

#[test]
fn data_dir_comes_from_the_environment() {
    let env = Env::new();
    let dir = env.dir.path().join("from-env");
    let path = env.file("e.jsonl", "{\"role\":\"user\",\"content\":\"hi\"}\n");
    let out = Command::new(env!("CARGO_BIN_EXE_decima"))
        .args(["conversation", "import", path.to_str().unwrap()])
        .env("DECIMA_DATA_DIR", &dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.join("decima.db").is_file());
}

#[test]
fn a_ten_megabyte_message_imports_and_exports() {
    let env = Env::new();
    let big = "数据,value\n".repeat(800_000);
    assert!(big.len() > 10_000_000);
    let line = format!(
        r#"{{"role":"user","content":{}}}"#,
        serde_json::to_string(&big).unwrap()
    );
    let id = env.import(&env.file("big.jsonl", format!("{line}\n")));
    let exported = env.ok(&["export", &id, "--format", "jsonl"]);
    assert_eq!(exported, format!("{line}\n"));
}

#[test]
fn exporting_to_the_same_file_appends_only_what_is_new() {
    let env = Env::new();
    let id = env.import(&env.file(
        "inc.jsonl",
        ConversationBuilder::new(4, 3).build().to_jsonl(),
    ));
    let file = env.dir.path().join("history.txt");
    let export = |extra: &[&str]| {
        let mut args = vec!["export", id.as_str(), "-o", file.to_str().unwrap()];
        args.extend_from_slice(extra);
        let out = env.run(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let full_text = || env.ok(&["export", &id]);
    assert!(export(&[]).starts_with("wrote 3 messages"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), full_text());

    // Two more messages, written by another process through the store.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let conversation: decima_core::ConversationId = id.parse().unwrap();
    let store = runtime
        .block_on(decima_store::Store::open_in_dir(
            &env.data(),
            Arc::new(decima_core::EstimateCounter),
        ))
        .unwrap();
    for text in ["fourth", "fifth"] {
        runtime
            .block_on(store.messages().append(
                conversation,
                decima_core::NewMessage::new(decima_core::Role::User, text),
            ))
            .unwrap();
    }
    let before = std::fs::read(&file).unwrap();
    assert!(export(&[]).starts_with("appended 2 messages"));
    let after = std::fs::read(&file).unwrap();
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "the old part is untouched"
    );
    assert_eq!(String::from_utf8(after).unwrap(), full_text());
    assert!(export(&[]).contains("is up to date"));

    // A file changed behind our back is rewritten, not appended to.
    std::fs::write(&file, "someone edited this\n").unwrap();
    assert!(export(&[]).starts_with("wrote 5 messages"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), full_text());

    // A rollback since the last export forces a rewrite without the rolled-back messages.
    runtime
        .block_on(store.messages().soft_delete_after(conversation, 3))
        .unwrap();
    assert!(export(&[]).starts_with("wrote 3 messages"));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        !text.contains("fourth") && !text.contains("seq=4 "),
        "{text}"
    );
    assert_eq!(text, full_text());
    assert!(export(&["--full"]).starts_with("wrote 3 messages"));
}

#[test]
fn pin_and_unpin_by_seq() {
    let env = Env::new();
    let id = env.import(
        &env.file(
            "p.jsonl",
            ConversationBuilder::new(5, 4)
                .pin_every(0)
                .build()
                .to_jsonl(),
        ),
    );
    let pinned = |env: &Env| -> Vec<bool> {
        let show: serde_json::Value =
            serde_json::from_str(&env.ok(&["conversation", "show", &id, "--json"])).unwrap();
        show["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["pinned"].as_bool().unwrap())
            .collect()
    };
    let before = pinned(&env);
    env.ok(&["conversation", "pin", &id, "3"]);
    let after = pinned(&env);
    assert!(after[2]);
    assert_eq!(
        after.iter().filter(|p| **p).count(),
        before.iter().filter(|p| **p).count() + usize::from(!before[2])
    );
    env.ok(&["conversation", "unpin", &id, "3"]);
    assert!(!pinned(&env)[2]);
    assert_fails(&env.run(&["conversation", "pin", &id, "99"]), 3, "seq 99");
}

#[test]
fn conversations_can_be_created_with_a_preset() {
    let env = Env::new();
    let created = env.ok(&["conversation", "create", "--title", "Empty one"]);
    let id = created.trim();
    assert_eq!(created, format!("{id}\n"));
    assert!(env.ok(&["conversation", "list"]).contains("Empty one"));

    // A preset stored through the store (the importer adds them from cards and presets).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let store = runtime
        .block_on(decima_store::Store::open_in_dir(
            &env.data(),
            Arc::new(decima_core::EstimateCounter),
        ))
        .unwrap();
    let preset = runtime
        .block_on(store.presets().create(
            "Analyst",
            "native",
            None,
            &serde_json::json!({"entries": []}),
        ))
        .unwrap();
    let list: serde_json::Value =
        serde_json::from_str(&env.ok(&["preset", "list", "--json"])).unwrap();
    assert_eq!(list[0]["id"], preset.id.as_str());
    assert_eq!(list[0]["kind"], "native");
    let shown: serde_json::Value =
        serde_json::from_str(&env.ok(&["preset", "show", &preset.id])).unwrap();
    assert_eq!(shown["body"], serde_json::json!({"entries": []}));

    let with_preset = env.ok(&[
        "conversation",
        "create",
        "--preset",
        &preset.id,
        "--title",
        "With preset",
    ]);
    let stored = runtime
        .block_on(
            store
                .conversations()
                .get(with_preset.trim().parse().unwrap()),
        )
        .unwrap();
    assert_eq!(stored.preset_id.as_deref(), Some(preset.id.as_str()));
    let path = env.file("pre.jsonl", "{\"role\":\"user\",\"content\":\"hi\"}\n");
    let imported = env.ok(&[
        "conversation",
        "import",
        path.to_str().unwrap(),
        "--preset",
        &preset.id,
    ]);
    let stored = runtime
        .block_on(store.conversations().get(imported.trim().parse().unwrap()))
        .unwrap();
    assert_eq!(stored.preset_id.as_deref(), Some(preset.id.as_str()));

    assert_fails(
        &env.run(&["conversation", "create", "--preset", "no-such-preset"]),
        3,
        "preset no-such-preset was not found",
    );
    assert_fails(
        &env.run(&["preset", "show", "../../etc"]),
        3,
        "was not found",
    );
}

/// A bug report quotes `decima --version`; it must name the release, the exact commit and the
/// day, or nobody can tell which code it is about.
#[test]
fn version_names_the_release_the_commit_and_the_build_date() {
    let env = Env::new();
    let out = env.run(&["--version"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8(out.stdout).unwrap();
    let rest = line
        .trim_end()
        .strip_prefix(&format!("decima {} (commit ", env!("CARGO_PKG_VERSION")))
        .unwrap_or_else(|| panic!("{line}"));
    let (commit, date) = rest
        .strip_suffix(')')
        .and_then(|r| r.split_once(", built "))
        .unwrap_or_else(|| panic!("{line}"));
    let head = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let head = String::from_utf8(head.stdout).unwrap();
    assert!(
        commit.len() >= 7 && head.starts_with(commit),
        "{commit} is not the checkout's commit {head}"
    );
    let today = time::OffsetDateTime::now_utc().date();
    let built = time::Date::parse(
        date,
        time::macros::format_description!("[year]-[month]-[day]"),
    )
    .unwrap_or_else(|e| panic!("{date}: {e}"));
    assert!(
        built <= today && today - built < time::Duration::days(60),
        "{date}"
    );
}
