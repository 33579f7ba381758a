//! The CLI on a team's shared PostgreSQL database: it is migrated on purpose with
//! `decima db migrate`, refused before that with the command to run, and then holds what
//! several processes import at once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

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
    let migrations = std::fs::read_dir(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../migrations/postgres"
    ))
    .unwrap()
    .count();
    assert!(
        out.contains(&format!("applied    {migrations} migration(s)")),
        "{out}"
    );
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

/// A run on the shared store whose process stalls (SIGSTOP: a laptop's lid closed, a network
/// cut) keeps it while its lease lives, is taken over by another process once the lease
/// lapsed, and never runs a stored call twice. When the stalled process wakes up, its next
/// write is refused and it stops, with nothing of it stored after the takeover.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_run_is_taken_over_and_the_stalled_process_cannot_write() {
    use std::time::Duration;

    use common::{
        call_ids, kill_group, read_pid, script_long_call_then_another, tool_result, wait_for_file,
    };

    let env = Env::on_postgres("cli_lease").await;
    let ws = env.ws();
    script_long_call_then_another(&env);
    let ws_arg = ws.to_string_lossy().into_owned();
    let mut stalled = env
        .command(&["run", "--workspace", &ws_arg, "Do it once"])
        .env("DECIMA_LEASE_TTL_SECS", "2")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_file(&ws.join("effects"), Duration::from_secs(60), &mut stalled).await;
    let pgid = read_pid(&ws.join("pid"));
    let store = env.store().await;
    let running = store
        .executions()
        .list_by_status(decima_store::ExecutionStatus::Running)
        .await
        .unwrap();
    assert_eq!(running.len(), 1, "{running:?}");
    let id = running[0].id.to_string();
    let signal = |name: &str| {
        let sent = std::process::Command::new("kill")
            .args([name, &stalled.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    };
    signal("-STOP");

    // While its lease lives, nobody else may take the run; the refusal names the holder.
    let early = env.decima(&["resume", &id]).await;
    let err = text(&early.stderr);
    assert!(!early.status.success(), "{err}");
    assert!(
        err.contains("is being run by process") && err.contains("lease lapses in"),
        "{err}"
    );

    // Its heartbeat stopped with it: the lease lapses, and another process takes over.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    env.say("Taken over; the first call may have run.");
    let mut resume = env.command(&["resume", &id]);
    resume.env("DECIMA_LEASE_TTL_SECS", "2");
    let resumed = tokio::task::spawn_blocking(move || resume.output().unwrap())
        .await
        .unwrap();
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed.stderr));
    assert_eq!(
        text(&resumed.stdout),
        "Taken over; the first call may have run.\n"
    );
    let view = env.show(&id).await;
    assert_eq!(view["status"], "succeeded", "{view}");
    let before_wake = env.messages(&view).await;

    // The stalled process wakes: its command is killed, it tries to store the result, and
    // the store refuses it.
    kill_group(pgid);
    signal("-CONT");
    let out = tokio::task::spawn_blocking(move || stalled.wait_with_output().unwrap())
        .await
        .unwrap();
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("taken over by another process"), "{err}");

    assert_eq!(
        std::fs::read_to_string(ws.join("effects")).unwrap(),
        "ran\n",
        "no call ran twice"
    );
    let view = env.show(&id).await;
    assert_eq!(view["status"], "succeeded", "{view}");
    let messages = env.messages(&view).await;
    assert_eq!(
        messages.iter().map(|m| m.seq).collect::<Vec<_>>(),
        before_wake.iter().map(|m| m.seq).collect::<Vec<_>>(),
        "the woken process stored nothing"
    );
    assert_eq!(call_ids(&messages), ["call_0", "call_1"]);
    let results = messages
        .iter()
        .filter(|m| m.tool_call_id.as_deref() == Some("call_0"))
        .count();
    assert_eq!(results, 1, "one result for the first call");
    assert!(
        tool_result(&messages, "call_0").contains("effect is unknown"),
        "{}",
        tool_result(&messages, "call_0")
    );
    let seqs: Vec<i64> = messages.iter().map(|m| m.seq).collect();
    let first = seqs[0];
    assert_eq!(
        seqs,
        (first..first + seqs.len() as i64).collect::<Vec<_>>(),
        "gapless"
    );
}

/// The shared database chosen in the desktop's Settings is what the CLI opens for the same data
/// directory too. Saving checks the server first and keeps the password out of the saved file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_database_chosen_in_settings_is_opened_and_its_password_kept_out_of_the_file() {
    use decima_runtime::database;

    let env = Env::new().await;
    let url = decima_testkit::postgres::fresh_database("cli_settings").await;
    let migrated = env.decima(&["--database-url", &url, "db", "migrate"]).await;
    assert!(migrated.status.success(), "{}", text(&migrated.stderr));
    let data = env.data_dir();

    // A server that does not answer is refused, and nothing is saved.
    let refused = database::save(
        &data,
        "postgres://postgres@127.0.0.1:1/decima",
        Some("pw"),
        decima_llm::tokens::store_counter(),
    )
    .await
    .unwrap_err();
    assert!(refused.to_string().contains("127.0.0.1:1"), "{refused}");
    assert_eq!(database::saved(&data), database::DatabaseChoice::default());

    // The tests' cluster trusts loopback, so any password connects; it must not be written
    // where the choice is.
    let with_password = url.replacen(
        "postgres://postgres@",
        "postgres://postgres:hunter2%40x@",
        1,
    );
    database::save(
        &data,
        &with_password,
        None,
        decima_llm::tokens::store_counter(),
    )
    .await
    .unwrap();
    let file = std::fs::read_to_string(data.join("database.json")).unwrap();
    assert!(!file.contains("hunter2"), "{file}");
    assert_eq!(database::saved(&data).url.as_deref(), Some(url.as_str()));
    let (location, source) = database::location(&data, None).await.unwrap();
    assert_eq!(source, database::Source::Settings);
    assert!(
        matches!(&location, decima_store::StoreLocation::Postgres(u) if u.contains("hunter2")),
        "the password comes back from the secret store"
    );
    assert!(!location.to_string().contains("hunter2"));
    // Saving again with no password (Settings' blank field) keeps the one saved.
    database::save(&data, &url, None, decima_llm::tokens::store_counter())
        .await
        .unwrap();
    let (location, _) = database::location(&data, None).await.unwrap();
    assert!(
        matches!(&location, decima_store::StoreLocation::Postgres(u) if u.contains("hunter2")),
        "a blank password keeps the saved one"
    );

    // The CLI, with no URL given, works in the saved database.
    let file = env.dir.path().join("one.jsonl");
    std::fs::write(
        &file,
        "{\"role\":\"user\",\"content\":\"kept in the team's database\"}\n",
    )
    .unwrap();
    let imported = env
        .decima(&["conversation", "import", file.to_str().unwrap()])
        .await;
    assert!(imported.status.success(), "{}", text(&imported.stderr));
    let shared = decima_store::Store::connect(
        &decima_store::StoreLocation::parse(&url).unwrap(),
        decima_llm::tokens::store_counter(),
    )
    .await
    .unwrap();
    assert_eq!(shared.conversations().list().await.unwrap().len(), 1);
    assert!(
        !data.join("decima.db").exists(),
        "the local file was not used"
    );

    // An explicit URL still wins; forgetting goes back to the local file.
    database::forget(&data).await.unwrap();
    let (location, source) = database::location(&data, None).await.unwrap();
    assert_eq!(source, database::Source::Local);
    assert_eq!(location, decima_store::StoreLocation::in_data_dir(&data));
}
