//! The tenth man through the real binary and a real SQLite file, against the wire-level test
//! server: each mode and type, the input of a 2,000-message conversation worded by the
//! independent generator, the cache, incremental reviews with open findings, the repair of an
//! invalid answer, refused evidence, the tool during a run and the final review at its end, and
//! the review before a write over an existing file, on the host and in a Docker container.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Env, execution_id, text};
use decima_core::{ConversationId, NewMessage, Role};
use decima_testkit::ConversationBuilder;
use decima_testkit::analyst_conversation::{AnalystConversationBuilder, AnalystFactKind, Language};
use serde_json::{Value, json};

/// A valid review answer citing `seqs`.
fn answer(risk: &str, seqs: &[i64]) -> String {
    json!({
        "risk_level": risk,
        "summary": "The conclusion rests on a total that ignores refunds.",
        "findings": [{
            "title": "Refunds are not subtracted",
            "severity": if risk == "none" { "low" } else { risk },
            "argument": "The sum in the cited messages adds sales only.",
            "evidence_seqs": seqs,
            "recommendation": "Subtract the refunds and recompute the difference."
        }],
        "open_questions": ["Which exchange rate was used?"]
    })
    .to_string()
}

/// An answer with no findings.
fn clean_answer() -> String {
    json!({
        "risk_level": "none",
        "summary": "Nothing found against the conclusion.",
        "findings": [],
        "open_questions": []
    })
    .to_string()
}

/// An answer as chat models often stream one: in a ```json fence, a few characters per delta,
/// the deltas cutting through keys, numbers and escapes.
fn say_fenced_in_pieces(env: &Env, json: &str) {
    let text = format!("```json\n{json}\n```\n");
    let chars: Vec<char> = text.chars().collect();
    env.server
        .enqueue(decima_testkit::Reply::Stream(decima_testkit::Turn {
            text: chars.chunks(3).map(|c| c.iter().collect()).collect(),
            ..Default::default()
        }));
}

async fn small_conversation(env: &Env, len: usize) -> ConversationId {
    let built = ConversationBuilder::new(11, len).content_chars(120).build();
    let store = env.store().await;
    let c = store
        .conversations()
        .import("review test", None, &built.messages)
        .await
        .unwrap();
    store.close().await;
    c.id
}

/// The messages of request `i`, as sent.
fn sent(env: &Env, i: usize) -> Vec<Value> {
    env.server.requests()[i].json.as_ref().unwrap()["messages"]
        .as_array()
        .unwrap()
        .clone()
}

fn content(message: &Value) -> String {
    message["content"].as_str().unwrap_or_default().to_owned()
}

async fn review(env: &Env, args: &[&str]) -> std::process::Output {
    let mut all = vec!["review"];
    all.extend_from_slice(args);
    env.decima(&all).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2000_message_review_holds_the_goal_the_literals_and_the_recent_messages_within_budget() {
    let env = Env::new().await;
    let session = AnalystConversationBuilder::new(2026, 2_000, Language::English).build();
    let store = env.store().await;
    let c = store
        .conversations()
        .import("churn", None, &session.messages)
        .await
        .unwrap();
    store.close().await;
    let id = c.id.to_string();
    const WINDOW: u32 = 32_000;
    let window = WINDOW.to_string();
    // The history does not fit the reviewer's window: it is compressed first, as a long run's is.
    let out = env
        .command(&["compress", &id])
        .env("DECIMA_CONTEXT_WINDOW", &window)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    env.server
        .enqueue(decima_testkit::Reply::Stream(decima_testkit::Turn {
            text: vec![answer("high", &[1_999, 2_000])],
            ..Default::default()
        }));
    let mut cmd = env.command(&["review", &id, "--json"]);
    cmd.env("DECIMA_CONTEXT_WINDOW", &window);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stored: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(stored["risk_level"], "high");
    assert_eq!(stored["mode"], "full_history");
    assert_eq!(stored["reviewed_through_seq"], 2_000);
    assert_eq!(
        stored["findings"][0]["evidence_seqs"],
        json!([1_999, 2_000])
    );
    assert_eq!(stored["language"], "eng");

    let messages = sent(&env, 0);
    assert_eq!(messages.len(), 2);
    assert!(content(&messages[0]).contains("You are the tenth man"));
    let input = content(&messages[1]);
    // The goal: the person's first message.
    let goal = session
        .messages
        .iter()
        .find(|m| m.role == Role::User)
        .unwrap()
        .content
        .clone();
    assert!(input.contains(goal.trim()), "the goal is missing");
    // The planted literals: every one the person stated, and nearly all the others.
    let literals: Vec<_> = session
        .facts
        .iter()
        .filter(|f| f.kind == AnalystFactKind::Literal)
        .collect();
    let lost_user: Vec<_> = literals
        .iter()
        .filter(|f| f.by_user && !input.contains(&f.text))
        .map(|f| f.text.clone())
        .collect();
    assert!(lost_user.is_empty(), "user literals lost: {lost_user:?}");
    let others: Vec<_> = literals.iter().filter(|f| !f.by_user).collect();
    let kept = others.iter().filter(|f| input.contains(&f.text)).count();
    assert!(
        kept * 100 >= others.len() * 95,
        "only {kept} of {} other literals reached the reviewer",
        others.len()
    );
    // The recent messages, verbatim with their seqs.
    for seq in [1_998, 1_999, 2_000] {
        assert!(
            input.contains(&format!("### seq={seq} ")),
            "seq {seq} missing"
        );
    }
    // Within the budget: the reviewer's window less its answer's room.
    let counter = decima_llm::tokens::store_counter();
    let used: u32 = messages
        .iter()
        .map(|m| counter.count_text(&content(m)))
        .sum();
    assert!(
        used <= WINDOW - 4_096,
        "{used} tokens sent to a {WINDOW}-token window"
    );
    assert!(
        used > WINDOW / 3,
        "{used} tokens: the budget was barely used"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_mode_and_type_sends_what_it_names() {
    let env = Env::new().await;
    let id = small_conversation(&env, 30).await.to_string();

    env.say(&answer("medium", &[28]));
    let out = review(
        &env,
        &[&id, "--mode", "recent:5", "--type", "quick", "--json"],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stored: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (stored["mode"].as_str(), stored["mode_argument"].as_str()),
        (Some("recent_messages"), Some("5"))
    );
    assert_eq!(stored["review_type"], "quick");
    let m = sent(&env, 0);
    assert!(content(&m[0]).contains("QUICK review"));
    let input = content(&m[1]);
    for seq in 26..=30 {
        assert!(
            input.contains(&format!("### seq={seq} ")),
            "seq {seq} missing"
        );
    }
    assert!(!input.contains("### seq=25 "), "more than 5 messages sent");

    // Specific content: the text itself, no history; findings may cite nothing.
    let draft = "Draft conclusion: churn rose 4.2% because of the March price change.";
    env.say(
        &json!({"risk_level":"low","summary":"Plausible but untested.","findings":[{"title":"Causation assumed","severity":"low","argument":"A rise after a change is not caused by it.","evidence_seqs":[],"recommendation":"Compare with a control cohort."}],"open_questions":[]})
            .to_string(),
    );
    let out = review(
        &env,
        &[&id, "--mode", &format!("content:{draft}"), "--json"],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let m = sent(&env, 1);
    assert!(content(&m[0]).contains("FULL review"));
    let input = content(&m[1]);
    assert!(input.contains(draft));
    assert!(!input.contains("### seq="), "content mode sent history");

    // Full history of a short conversation: all of it, and the focus.
    env.say(&answer("low", &[3]));
    let out = review(&env, &[&id, "--focus", "the currency conversion", "--json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let input = content(&sent(&env, 2)[1]);
    assert!(input.contains("the currency conversion"));
    for seq in 1..=30 {
        assert!(
            input.contains(&format!("### seq={seq} ")),
            "seq {seq} missing"
        );
    }

    // Bad arguments are refused before any request.
    let before = env.server.requests().len();
    for bad in [
        ["--mode", "recent:0"],
        ["--mode", "everything"],
        ["--type", "deep"],
    ] {
        let out = review(&env, &[&id, bad[0], bad[1]]).await;
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", text(&out.stderr));
    }
    assert_eq!(env.server.requests().len(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cache_hit_makes_no_request() {
    let env = Env::new().await;
    let id = small_conversation(&env, 12).await.to_string();
    say_fenced_in_pieces(&env, &answer("medium", &[4]));
    let first = review(&env, &[&id, "--json"]).await;
    assert!(first.status.success(), "{}", text(&first.stderr));
    let second = review(&env, &[&id, "--json"]).await;
    assert!(second.status.success(), "{}", text(&second.stderr));
    assert_eq!(
        env.server.requests().len(),
        1,
        "the second review asked the model"
    );
    let a: Value = serde_json::from_slice(&first.stdout).unwrap();
    let b: Value = serde_json::from_slice(&second.stdout).unwrap();
    assert_eq!(a, b);
    assert_eq!(a["findings"][0]["evidence_seqs"], json!([4]));
    // A different type is a different question.
    env.say(&clean_answer());
    let out = review(&env, &[&id, "--type", "quick", "--json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(env.server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_incremental_review_sends_only_what_is_new_and_the_open_findings() {
    let env = Env::new().await;
    let conversation = small_conversation(&env, 20).await;
    let id = conversation.to_string();
    env.say(&answer("high", &[7]));
    let out = review(&env, &[&id, "--json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let first: Value = serde_json::from_slice(&out.stdout).unwrap();
    let finding = first["findings"][0]["id"].as_str().unwrap().to_owned();

    let store = env.store().await;
    for i in 0..3 {
        store
            .messages()
            .append(
                conversation,
                NewMessage::new(
                    Role::User,
                    format!("Refunds are now subtracted, batch NEW-{i}."),
                ),
            )
            .await
            .unwrap();
    }
    store.close().await;
    env.say(
        &json!({"risk_level":"none","summary":"The refunds finding is resolved.","findings":[],
                "open_questions":[],"closed_findings":[{"id": finding, "reason": "seq 21 subtracts them"}]})
            .to_string(),
    );
    let out = review(&env, &[&id, "--json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let input = content(&sent(&env, 1)[1]);
    assert!(input.contains("seq > 20"), "not incremental: {input}");
    for seq in 21..=23 {
        assert!(input.contains(&format!("### seq={seq} ")));
    }
    assert!(
        !input.contains("### seq=20 "),
        "old messages were sent again"
    );
    assert!(
        input.contains(&format!("id={finding}")),
        "the open finding was not carried"
    );
    let second: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(second["reviewed_from_seq"], 21);
    let store = env.store().await;
    assert!(
        store
            .reviews()
            .open_findings(conversation, None)
            .await
            .unwrap()
            .is_empty()
    );
    let closed = store
        .reviews()
        .get(first["id"].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(
        closed.findings[0].closed_by.as_deref(),
        second["id"].as_str()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_json_is_repaired_once_then_refused_and_nothing_is_stored() {
    let env = Env::new().await;
    let conversation = small_conversation(&env, 10).await;
    let id = conversation.to_string();
    // Risk guessed in prose: refused, repaired.
    env.say("Overall the risk looks HIGH to me because the totals are off.");
    env.say(&answer("high", &[5]));
    let out = review(&env, &[&id, "--json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let repair = sent(&env, 1);
    assert_eq!(repair.len(), 4);
    assert_eq!(repair[2]["role"], "assistant");
    assert!(content(&repair[3]).contains("could not be used"));

    env.say("{\"risk_level\": \"high\", \"summary\": ");
    env.say("still not a review");
    let out = review(&env, &[&id, "--type", "quick"]).await;
    assert_eq!(out.status.code(), Some(5), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("invalid review twice"));
    assert_eq!(env.server.requests().len(), 4, "more than one repair");
    let store = env.store().await;
    assert_eq!(store.reviews().list(conversation).await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evidence_that_is_not_a_message_of_the_conversation_is_refused() {
    let env = Env::new().await;
    let conversation = small_conversation(&env, 10).await;
    let id = conversation.to_string();
    env.say(&answer("high", &[4, 99_999]));
    env.say(&answer("high", &[0]));
    let out = review(&env, &[&id]).await;
    assert_eq!(out.status.code(), Some(5), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("[0]"), "{stderr}");
    assert!(content(&sent(&env, 1)[3]).contains("99999"));
    let store = env.store().await;
    assert!(store.reviews().list(conversation).await.unwrap().is_empty());
}

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
    let env = Env::new().await;
    let id = small_conversation(&env, 2_000).await.to_string();
    const WINDOW: u32 = 32_000;
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
        env.say(&answer("low", &[2_000]));
        let focus = format!("calibration {factor:?}");
        let mut cmd = env.command(&["review", &id, "--focus", &focus, "--json"]);
        cmd.env("DECIMA_CONTEXT_WINDOW", WINDOW.to_string());
        let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
            .await
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let stored: Value = serde_json::from_slice(&out.stdout).unwrap();
        inputs.push(stored["input_tokens"].as_u64().unwrap());
    }
    let room = u64::from(WINDOW - 4_096);
    assert!(inputs[0] <= room && inputs[0] > room * 3 / 4, "{inputs:?}");
    assert!(
        inputs[1] <= room / 2 && inputs[1] > room * 3 / 8,
        "{inputs:?}"
    );
}

/// A run that writes `report.txt`, then writes over it, with risky-call reviews on: the second
/// write is reviewed before it runs (the file exists as the sandbox sees it), the first is not.
async fn a_risky_write_is_reviewed_first(env: &Env, extra: &[&str]) {
    env.call(
        "write_file",
        json!({"path": "report.txt", "content": "totals v1"}),
    );
    env.call(
        "write_file",
        json!({"path": "report.txt", "content": "totals v2"}),
    );
    // The quick review before the second write.
    env.say(&answer("low", &[1]));
    env.say("Report written.");
    // The final review.
    env.say(&answer("low", &[1]));
    let mut args = vec!["--tenth-man", "system_only", "--review-risky"];
    args.extend_from_slice(extra);
    let out = env.run(&args, "Write the report twice").await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Report written.");
    let requests = env.server.requests();
    assert_eq!(requests.len(), 5, "the second write was not reviewed first");
    let review = sent(env, 2);
    let asked = review.iter().map(content).collect::<Vec<_>>().join("\n");
    assert!(
        asked.contains("writes over the existing file report.txt"),
        "{asked}"
    );
    // The first write was not reviewed: the request after it is the model's next step.
    assert!(
        sent(env, 1).iter().any(|m| m["role"] == "tool"),
        "{:?}",
        sent(env, 1)
    );
    let execution = env.show(&execution_id(&out.stderr)).await;
    let triggers: Vec<&str> = execution["reviews"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["trigger"].as_str().unwrap())
        .collect();
    // Both are the runtime's own: the review before the risky call, then the final one.
    assert_eq!(triggers, ["system", "system"], "{execution}");
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
