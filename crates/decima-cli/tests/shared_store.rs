//! The CLI on a team's shared PostgreSQL database: it is migrated on purpose with
//! `decima db migrate`, refused before that with the command to run, and then holds what
//! several processes import at once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Env, text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_database_is_migrated_then_shared_by_processes() {
    let env = Env::new().await;
    let url = decima_testkit::postgres::fresh_database("cli_shared").await;

    let before = env
        .decima(&["--database-url", &url, "conversation", "list"])
        .await;
    assert!(!before.status.success());
    let err = text(&before.stderr);
    assert!(err.contains("decima db migrate"), "{err}");

    let migrated = env.decima(&["--database-url", &url, "db", "migrate"]).await;
    let out = text(&migrated.stdout);
    assert!(migrated.status.success(), "{}", text(&migrated.stderr));
    assert!(out.contains("before     empty"), "{out}");
    assert!(out.contains("applied    1 migration(s)"), "{out}");
    let again = env.decima(&["--database-url", &url, "db", "migrate"]).await;
    assert!(
        text(&again.stdout).contains("nothing to do"),
        "{}",
        text(&again.stdout)
    );

    // Three processes import at once, through DECIMA_DATABASE_URL.
    let mut children = Vec::new();
    for i in 0..3 {
        let file = env.dir.path().join(format!("s{i}.jsonl"));
        let lines: String = (0..40)
            .map(|n| {
                let role = if n % 2 == 0 { "user" } else { "assistant" };
                format!("{{\"role\":\"{role}\",\"content\":\"process {i} line {n}\"}}\n")
            })
            .collect();
        std::fs::write(&file, lines).unwrap();
        let mut cmd = env.command(&["conversation", "import", file.to_str().unwrap()]);
        cmd.env("DECIMA_DATABASE_URL", &url)
            .stdout(std::process::Stdio::null());
        children.push(cmd.spawn().unwrap());
    }
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let list = env
        .decima(&["--database-url", &url, "conversation", "list", "--json"])
        .await;
    assert!(list.status.success(), "{}", text(&list.stderr));
    let listed: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let counts: Vec<u64> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["message_count"].as_u64().unwrap())
        .collect();
    assert_eq!(counts, vec![40, 40, 40], "{listed}");
    // The local SQLite file of the data directory was not used.
    assert!(!env.data_dir().join("decima.db").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_database_is_named_without_its_password() {
    let env = Env::new().await;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let url = format!("postgres://ana:s3cret@127.0.0.1:{port}/decima");
    let out = env
        .decima(&["--database-url", &url, "conversation", "list"])
        .await;
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("postgres://ana:***@127.0.0.1:{port}/decima")),
        "{err}"
    );
    assert!(!err.contains("s3cret"), "{err}");
    let bad = env
        .decima(&["--database-url", "mysql://h/db", "conversation", "list"])
        .await;
    assert!(
        text(&bad.stderr).contains("\"mysql://\" is neither"),
        "{}",
        text(&bad.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_store_is_copied_in_verified_and_a_second_copy_changes_nothing() {
    let env = Env::new().await;
    let file = env.dir.path().join("local.jsonl");
    std::fs::write(
        &file,
        "{\"role\":\"user\",\"content\":\"the EU threshold is 3.9%\"}\n\
         {\"role\":\"assistant\",\"content\":\"noted: 3.9% for the EU cohort\"}\n",
    )
    .unwrap();
    let local = env
        .decima(&["conversation", "import", file.to_str().unwrap()])
        .await;
    assert!(local.status.success(), "{}", text(&local.stderr));
    let id = text(&local.stdout).trim().to_owned();

    let url = decima_testkit::postgres::fresh_database("cli_copy").await;
    let refused = env.decima(&["db", "copy", "--to", &url]).await;
    assert!(!refused.status.success());
    assert!(text(&refused.stderr).contains("decima db migrate"));
    assert!(
        env.decima(&["--database-url", &url, "db", "migrate"])
            .await
            .status
            .success()
    );

    let copied = env.decima(&["db", "copy", "--to", &url]).await;
    let out = text(&copied.stdout);
    assert!(copied.status.success(), "{out}{}", text(&copied.stderr));
    assert!(
        out.contains("copied     1 conversation(s); 0 already there"),
        "{out}"
    );
    assert!(out.contains("messages   2 here, 2 there"), "{out}");
    assert!(out.contains("verified"), "{out}");
    let shown = env
        .decima(&[
            "--database-url",
            &url,
            "conversation",
            "show",
            &id,
            "--json",
        ])
        .await;
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    assert!(text(&shown.stdout).contains("3.9% for the EU cohort"));

    let again = env.decima(&["db", "copy", "--to", &url]).await;
    let out = text(&again.stdout);
    assert!(again.status.success(), "{out}");
    assert!(
        out.contains("copied     0 conversation(s); 1 already there"),
        "{out}"
    );
}
