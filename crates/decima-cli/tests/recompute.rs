//! `decima review --type recompute`: the tenth man works an answer's figures out again from the
//! run's inputs as they were when it started, in a fresh sandbox that holds neither the files
//! the agent made nor its code, and keeps its code as each figure's receipt. On the host and in
//! a Docker container.

use serde_json::{Value, json};

use crate::common::{self, Env, execution_id, text};

const SALES: &str = "region,revenue\nNorth,1234567\nSouth,2345678\n";

/// A first run leaves `sales.csv` in the workspace; the second run writes `made.csv`, reads the
/// sales and answers with a sum it derived and a figure no output holds. Returns the second
/// run's id.
async fn two_runs(env: &Env, extra: &[&str]) -> String {
    env.call("write_file", json!({"path": "sales.csv", "content": SALES}));
    env.say("Saved sales.csv.");
    let out = env.run(extra, "Save the sales figures").await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    env.call(
        "write_file",
        json!({"path": "made.csv", "content": "agent,scratch\n1,2\n"}),
    );
    env.call("read_file", json!({"path": "sales.csv"}));
    env.say("Revenue was 3,580,245 in total, and West made 987,654.");
    let out = env.run(extra, "What was the revenue?").await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    execution_id(&out.stderr)
}

/// The reviewer's script: for the headline sum it looks for the agent's file (not there), reads
/// the input and reports the same sum; for the unlinked figure it reports another value.
fn script_reviewer(env: &Env) {
    env.call("read_file", json!({"path": "made.csv"}));
    env.call("read_file", json!({"path": "sales.csv"}));
    env.call(
        "report_value",
        json!({"value": "3580245", "derivation": "North 1234567 + South 2345678 in sales.csv"}),
    );
    env.call(
        "report_value",
        json!({"value": 0, "derivation": "sales.csv has no West row"}),
    );
}

fn figure<'a>(report: &'a Value, written: &str) -> &'a Value {
    report["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["text"] == written)
        .unwrap_or_else(|| panic!("{written} not among {report:#}"))
}

async fn recomputes(env: &Env, extra: &[&str]) {
    let id = two_runs(env, extra).await;
    let view = env.show(&id).await;
    let reasons: Vec<&str> = view["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["reason"].as_str().unwrap())
        .collect();
    assert_eq!(reasons, ["run_start"], "{view:#}");
    let conversation = view["conversation_id"].as_str().unwrap().to_owned();
    let before = env.server.requests().len();

    script_reviewer(env);
    let out = env
        .decima(&[
            "review",
            &conversation,
            "--type",
            "recompute",
            "--execution",
            &id,
            "--json",
        ])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let review: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(review["review_type"], "recompute");
    assert_eq!(review["risk_level"], "high", "{review:#}");
    let findings = review["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{review:#}");
    let finding = &findings[0];
    assert!(
        finding["title"]
            .as_str()
            .unwrap()
            .starts_with("987,654 does not recompute: the run's inputs give 0"),
        "{finding:#}"
    );
    assert!(
        finding["argument"]
            .as_str()
            .unwrap()
            .contains("sales.csv has no West row"),
        "{finding:#}"
    );
    assert!(
        review["summary"]
            .as_str()
            .unwrap()
            .contains("2 figures of the answer"),
        "{review:#}"
    );

    // The reviewer saw the question, the figure in its sentence and the inputs as they were:
    // sales.csv, never made.csv, and none of the agent's calls.
    let first = env.request_text(before);
    assert!(
        first.contains("The figure to recompute: 3,580,245"),
        "{first}"
    );
    assert!(first.contains("- sales.csv ("), "{first}");
    assert!(!first.contains("made.csv"), "{first}");
    assert!(!first.contains("agent,scratch"), "{first}");
    assert!(first.contains("report_value"), "{first}");
    let looked = common::last_tool_result(env, before + 1);
    assert!(looked.contains("tool error"), "{looked}");

    // Each figure keeps its receipt; the one that agreed is verified, the other differs.
    let answer_seq = findings[0]["evidence_seqs"][0].to_string();
    let out = env
        .decima(&["numbers", &conversation, "--message", &answer_seq, "--json"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sum = figure(&report, "3,580,245");
    // The answer names no operand of the sum, so the ledger alone leaves it unlinked: the
    // recomputation is what verifies it.
    assert_eq!(sum["status"], "verified", "{sum:#}");
    assert_eq!(sum["recomputed"]["agrees"], true, "{sum:#}");
    let code = sum["recomputed"]["code"].as_str().unwrap();
    assert!(code.contains("# read made.csv (not read:"), "{code}");
    assert!(code.contains("# read sales.csv\n"), "{code}");
    let made_up = figure(&report, "987,654");
    assert_eq!(made_up["status"], "unlinked", "{made_up:#}");
    assert_eq!(made_up["recomputed"]["value"], "0");
    assert_eq!(made_up["recomputed"]["agrees"], false);

    // The table a person reads says the same.
    let out = env
        .decima(&["numbers", &conversation, "--message", &answer_seq])
        .await;
    let table = text(&out.stdout);
    assert!(table.contains("recomputed 3580245: agrees"), "{table}");
    assert!(table.contains("recomputed 0: DIFFERS"), "{table}");

    // The workspace itself was never touched: the agent's file is still there.
    assert!(extra.contains(&"docker") || env.ws().join("made.csv").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_host_the_figures_are_recomputed_from_the_inputs_the_run_started_with() {
    let env = Env::new().await;
    recomputes(&env, &[]).await;
    // The reviewer's folder is gone.
    let tmp = env.data_dir().join("tmp");
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(
        left.iter()
            .all(|n| !n.to_string_lossy().starts_with("recompute-")),
        "{left:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_docker_the_figures_are_recomputed_in_a_container_of_their_own() {
    let env = Env::new().await;
    let (conversation, _cleanup) = common::docker_conversation(&env).await;
    recomputes(
        &env,
        &["--conversation", &conversation, "--sandbox", "docker"],
    )
    .await;
    let listed = std::process::Command::new("docker")
        .args(["ps", "-a", "--format", "{{.Names}}"])
        .output()
        .unwrap();
    let names = text(&listed.stdout);
    assert!(!names.contains("recompute-"), "{names}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn figures_that_are_not_there_and_marks_without_a_recompute_are_refused() {
    let env = Env::new().await;
    let id = two_runs(&env, &[]).await;
    let view = env.show(&id).await;
    let conversation = view["conversation_id"].as_str().unwrap();
    let out = env
        .decima(&[
            "review",
            conversation,
            "--type",
            "recompute",
            "--figure",
            "7",
        ])
        .await;
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("figure 7 is not in the answer, which states 2 figures"),
        "{}",
        text(&out.stderr)
    );
    let out = env.decima(&["review", conversation, "--figure", "1"]).await;
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("add --type recompute"),
        "{}",
        text(&out.stderr)
    );
    // Nothing was asked of the model, nothing stored.
    let store = env.store().await;
    let reviews = store
        .reviews()
        .list(conversation.parse().unwrap())
        .await
        .unwrap();
    assert!(reviews.is_empty());
}
