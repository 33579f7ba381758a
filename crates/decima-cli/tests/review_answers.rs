//! The tenth man's cache and answers through the real binary: a cache hit that makes no request,
//! an incremental review that sends only what is new with the open findings, an invalid answer
//! repaired once then refused, and evidence that is not a message of the conversation refused.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::review::*;
use crate::common;
use common::{Env, text};
use decima_core::{NewMessage, Role};
use serde_json::{Value, json};

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
