//! The tenth man inside runs, through the real binary: the tool during a run and the final
//! review at its end, another reviewer per run and per conversation, the budget counted in the
//! reviewer's tokens, and the review before a risky write on the host, in a Docker container
//! and through a destructive MCP tool.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::review::*;
use crate::common;
use common::{Env, execution_id, text};
use decima_core::{NewMessage, Role};
use decima_testkit::analyst_conversation::Language;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tool_runs_during_a_run_and_a_high_final_review_contests_the_result() {
    let env = Env::new().await;
    env.call(
        "tenth_man_review",
        json!({"review_type": "quick", "focus_area": "the refund totals"}),
    );
    // The tool's review: the first user message (the task) is seq 1, the call seq 2.
    env.say(&answer("low", &[1]));
    env.say("The difference is 42 EUR.");
    // The final review.
    env.say(&answer("critical", &[2]));
    let out = env
        .run(&["--tenth-man", "hybrid"], "Find the refund difference")
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "The difference is 42 EUR.");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("CONTESTS"), "{stderr}");
    let requests = env.server.requests();
    assert_eq!(requests.len(), 4);
    // The tool is offered, and the runtime, not the model, names the execution.
    let tools = requests[0].json.as_ref().unwrap()["tools"].to_string();
    assert!(tools.contains("tenth_man_review"));
    assert!(content(&sent(&env, 1)[0]).contains("QUICK"));
    assert!(content(&sent(&env, 1)[1]).contains("the refund totals"));
    // The digest went back as the tool's result.
    let third = sent(&env, 2);
    let result = third.iter().find(|m| m["role"] == "tool").unwrap();
    assert!(content(result).contains("risk low"), "{result}");

    let execution = env.show(&execution_id(&out.stderr)).await;
    assert_eq!(execution["contested"], true);
    assert_eq!(execution["result"], "The difference is 42 EUR.");
    assert_eq!(execution["reviews"][1]["risk_level"], "critical");
    assert_eq!(
        execution["reviews"][1]["findings"][0]["evidence_seqs"],
        json!([2])
    );
    let store = env.store().await;
    let conversation = execution["conversation_id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let reviews = store.reviews().list(conversation).await.unwrap();
    let triggers: Vec<_> = reviews.iter().map(|r| r.trigger.as_str()).collect();
    assert_eq!(triggers, ["tool", "system"]);
    assert!(reviews.iter().all(|r| r.execution_id.is_some()));

    // Off: no tool, no final review.
    let env = Env::new().await;
    env.say("Done.");
    let out = env.run(&["--tenth-man", "off"], "Say done").await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = env.server.requests();
    assert_eq!(requests.len(), 1);
    assert!(
        !requests[0].json.as_ref().unwrap()["tools"]
            .to_string()
            .contains("tenth_man_review")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reviewer_can_be_another_provider_per_run_and_per_conversation() {
    let env = Env::new().await;
    let critic = decima_testkit::LlmServer::start().await;
    for (name, url) in [
        ("agent", env.server.openai_base_url()),
        ("critic", critic.openai_base_url()),
    ] {
        let out = env
            .decima(&[
                "provider",
                "add",
                name,
                "--kind",
                "openai",
                "--base-url",
                &url,
                "--model",
                "m",
                "--api-key-env",
                "DECIMA_API_KEY",
            ])
            .await;
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    // The run's final review goes to the critic, not to the agent's model.
    env.say("The difference is 42 EUR.");
    critic.enqueue(decima_testkit::Reply::Stream(decima_testkit::Turn {
        text: vec![answer("medium", &[2])],
        ..Default::default()
    }));
    let out = env
        .run(
            &[
                "--provider",
                "agent",
                "--tenth-man",
                "system_only",
                "--reviewer-provider",
                "critic",
            ],
            "Find the refund difference",
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(env.server.requests().len(), 1);
    assert_eq!(critic.requests().len(), 1);
    assert!(
        content(&critic.requests()[0].json.as_ref().unwrap()["messages"][0]).contains("tenth man")
    );
    let execution = env.show(&execution_id(&out.stderr)).await;
    assert_eq!(execution["contested"], false);
    // system_only offers no tool.
    let tools = env.server.requests()[0].json.as_ref().unwrap()["tools"].to_string();
    assert!(!tools.contains("tenth_man_review"));

    // The conversation's own setting: `review` without --reviewer-provider asks the critic.
    let conversation = execution["conversation_id"].as_str().unwrap().to_owned();
    let out = env
        .decima(&["conversation", "reviewer", &conversation, "critic"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "critic");
    critic.enqueue(decima_testkit::Reply::Stream(decima_testkit::Turn {
        text: vec![clean_answer()],
        ..Default::default()
    }));
    let out = review(&env, &[&conversation, "--type", "quick", "--json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stored: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(stored["provider"], "critic");
    assert_eq!(critic.requests().len(), 2);
    assert_eq!(env.server.requests().len(), 1);
    // A reviewer that is not configured is refused when it is set, not at the first review.
    let out = env
        .decima(&["conversation", "reviewer", &conversation, "nosuch"])
        .await;
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_budget_is_in_the_reviewers_tokens_through_its_calibration() {
    // 2,000 uncompressed messages are far above a 32k reviewer's budget, so a full review reads
    // them in passes: each pass's input is what the budget bounds (it used to be the one
    // request's).
    let env = Env::new().await;
    let id = small_conversation(&env, 2_000).await.to_string();
    const WINDOW: u32 = 32_000;
    answer_every_request(&env, "low");
    let mut inputs = Vec::new();
    // First uncalibrated, then with the reviewer's model counting twice the store's tokens.
    for factor in [None, Some(2.0)] {
        if let Some(factor) = factor {
            let store = env.store().await;
            store
                .calibrations()
                .save("gpt-4o", factor, 20)
                .await
                .unwrap();
            store.close().await;
        }
        let focus = format!("calibration {factor:?}");
        let mut cmd = env.command(&["review", &id, "--focus", &focus, "--json"]);
        cmd.env("DECIMA_CONTEXT_WINDOW", WINDOW.to_string());
        let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
            .await
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let stored: Value = serde_json::from_slice(&out.stdout).unwrap();
        let passes: Vec<u64> = stored["passes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["input_tokens"].as_u64().unwrap())
            .collect();
        assert!(passes.len() > 1, "{passes:?}");
        assert_eq!(
            stored["input_tokens"].as_u64().unwrap(),
            passes.iter().sum::<u64>()
        );
        let asked = env.server.requests().len();
        assert_every_request_within(&env, asked - passes.len(), WINDOW, factor.unwrap_or(1.0));
        inputs.push(passes);
    }
    let room = u64::from(WINDOW - 4_096);
    let largest = |p: &[u64]| p.iter().copied().max().unwrap();
    assert!(inputs[0].iter().all(|&t| t <= room), "{inputs:?}");
    assert!(largest(&inputs[0]) > room * 3 / 4, "{inputs:?}");
    assert!(inputs[1].iter().all(|&t| t <= room / 2), "{inputs:?}");
    assert!(largest(&inputs[1]) > room * 3 / 8, "{inputs:?}");
    // Half the budget per request: more passes.
    assert!(inputs[1].len() > inputs[0].len(), "{inputs:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_over_an_existing_file_is_reviewed_before_it_runs() {
    let env = Env::new().await;
    a_risky_write_is_reviewed_first(&env, &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_docker_a_write_over_a_file_of_the_container_is_reviewed_before_it_runs() {
    // The file exists only in the container's workspace volume, never on the host: the check
    // must ask the sandbox the call runs in.
    let env = Env::new().await;
    let (conversation, _cleanup) = common::docker_conversation(&env).await;
    a_risky_write_is_reviewed_first(
        &env,
        &["--conversation", &conversation, "--sandbox", "docker"],
    )
    .await;
}

/// An MCP tool whose server says it may destroy data (`destructiveHint`, as the reference
/// filesystem server says of `write_file`) is reviewed before it runs, as a risky shell call is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destructive_mcp_tool_is_reviewed_before_it_runs() {
    let env = Env::new().await;
    let server = decima_testkit::mcp_servers::reference_server("server-filesystem")
        .display()
        .to_string();
    std::fs::create_dir_all(env.ws()).unwrap();
    let ws = env.ws().display().to_string();
    env.mcp_add(&["files", "--where", "host", "--", "node", &server, &ws])
        .await;
    env.call(
        "mcp__files__write_file",
        json!({"path": format!("{ws}/report.txt"), "content": "totals"}),
    );
    env.say(&answer("low", &[1]));
    env.say("Written.");
    env.say(&answer("low", &[1]));
    let out = env
        .run(
            &[
                "--tenth-man",
                "system_only",
                "--review-risky",
                "--allow-tool",
                "mcp__files__*",
            ],
            "Write the report",
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        env.server.requests().len(),
        4,
        "the write was not reviewed first"
    );
    let asked = sent(&env, 1)
        .iter()
        .map(content)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        asked.contains("its server files says write_file may destroy data"),
        "{asked}"
    );
    assert_eq!(
        std::fs::read_to_string(env.ws().join("report.txt")).unwrap(),
        "totals",
        "a low-risk review lets the call run"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_review_of_2000_uncompressed_messages_reads_every_one_in_passes() {
    a_full_review_reads_it_all_in_passes(2_000, 32_000, Language::English).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_review_of_10000_uncompressed_messages_reads_every_one_in_passes() {
    a_full_review_reads_it_all_in_passes(10_000, 128_000, Language::Chinese).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quick_review_of_2000_uncompressed_messages_gets_every_user_fact_through_the_summary() {
    a_quick_review_carries_the_rest_in_a_summary(2_000, 32_000, Language::English).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quick_review_of_10000_uncompressed_messages_gets_every_user_fact_through_the_summary() {
    a_quick_review_carries_the_rest_in_a_summary(10_000, 128_000, Language::Chinese).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_review_summary_is_cached_reused_when_the_conversation_grows_and_dropped_by_a_rollback()
{
    const WINDOW: &str = "32000";
    let env = Env::new().await;
    let (c, _) = analyst_session(&env, 37, 2_000, Language::English).await;
    let id = c.to_string();
    answer_every_request(&env, "low");
    let quick = |extra: &[&str]| {
        let mut args = vec!["review", id.as_str(), "--type", "quick", "--json"];
        args.extend_from_slice(extra);
        let mut cmd = env.command(&args);
        cmd.env("DECIMA_CONTEXT_WINDOW", WINDOW);
        async move {
            let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
                .await
                .unwrap();
            assert!(out.status.success(), "{}", text(&out.stderr));
            serde_json::from_slice::<Value>(&out.stdout).unwrap()
        }
    };
    let first = quick(&[]).await;
    let (_, through) = range_of(&first["passes"][0]["summarised"]).unwrap();
    let store = env.store().await;
    let rows = store.review_digests().count(c).await.unwrap();
    assert!(rows >= 2, "block digests and a rendering: {rows}");
    // Never a compaction.
    assert!(
        store
            .compactions()
            .live_summaries(c)
            .await
            .unwrap()
            .is_empty()
    );
    // The conversation grows; the next review of another scope (a run of it) summarises a
    // longer range, and reads only the messages its cached summary did not cover.
    let drafts: Vec<NewMessage> = (0..40)
        .map(|i| NewMessage::new(Role::User, format!("Also check the batch GROWN-{i}.")))
        .collect();
    store.messages().append_many(c, &drafts).await.unwrap();
    let run = store
        .executions()
        .create(&decima_store::NewExecution {
            conversation_id: c,
            parent_id: None,
            depth: 0,
            task: "Check the churn breakdown before the finance review".into(),
            sandbox: decima_store::SandboxKind::Host,
            provider_id: None,
            workspace: None,
            options: json!({}),
        })
        .await
        .unwrap();
    store.close().await;
    let second = quick(&["--execution", &run.id.to_string()]).await;
    let (_, grown) = range_of(&second["passes"][0]["summarised"]).unwrap();
    assert!(grown > through, "{grown} <= {through}");
    let reads = summary_reads(&env);
    assert_eq!(reads.len(), 2, "{reads:?}");
    assert!(
        reads[0] as i64 >= through - 1,
        "the first summary read {reads:?}"
    );
    assert_eq!(
        reads[1] as i64,
        grown - through,
        "the second summary read more than the messages it added to the cached one"
    );
    // A rollback into the summarised range: the rows past it go, and the next review reads
    // the block again rather than trust a summary of messages that are gone.
    let store = env.store().await;
    let before = store.review_digests().count(c).await.unwrap();
    let cut = through - 300;
    store.messages().soft_delete_after(c, cut).await.unwrap();
    assert!(store.review_digests().count(c).await.unwrap() < before);
    store.close().await;
    let asked = env.server.requests().len();
    let third = quick(&[]).await;
    let input = inputs_since(&env, asked);
    assert!(
        !input.contains("GROWN-"),
        "rolled-back messages reached the reviewer"
    );
    assert_eq!(third["reviewed_through_seq"], cut);
    let reads = summary_reads(&env);
    assert!(reads[2] > 0, "{reads:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_review_beyond_the_pass_cap_summarises_the_oldest_part_in_pass_one() {
    // 10,000 messages need about 30 passes of a 32k reviewer: 12 are made, and pass 1 carries
    // the oldest part through the summary made for the review.
    a_full_review_reads_it_all_in_passes(10_000, 32_000, Language::English).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statements_of_a_2000_message_session_reach_the_reviewer() {
    statements_reach_the_reviewer(2_000, 32_000, Language::English, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statements_of_a_10000_message_session_reach_the_reviewer() {
    statements_reach_the_reviewer(10_000, 128_000, Language::Chinese, false).await;
}

/// Every value a user states reaches a quick review through the summary made for it: plain
/// integers, spaced literals whole, decisions and rules phrased outside the usual cue words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_value_the_user_stated_reaches_a_quick_review_through_the_summary() {
    statements_reach_the_reviewer(2_000, 32_000, Language::English, true).await;
    statements_reach_the_reviewer(10_000, 128_000, Language::Chinese, true).await;
}
