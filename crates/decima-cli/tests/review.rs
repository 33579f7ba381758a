//! The tenth man through the real binary and a real SQLite file, against the wire-level test
//! server: each mode and type, the input of a 2,000-message conversation worded by the
//! independent generator, the cache, incremental reviews with open findings, the repair of an
//! invalid answer, refused evidence, the tool during a run and the final review at its end, and
//! the review before a write over an existing file, on the host and in a Docker container.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Env, execution_id, text};
use decima_core::{ConversationId, Role};
use decima_testkit::ConversationBuilder;
use decima_testkit::analyst_conversation::{AnalystConversationBuilder, AnalystFactKind, Language};
use serde_json::{Value, json};

/// A valid review answer citing `seqs`.
pub(super) fn answer(risk: &str, seqs: &[i64]) -> String {
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
pub(super) fn clean_answer() -> String {
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
pub(super) fn say_fenced_in_pieces(env: &Env, json: &str) {
    let text = format!("```json\n{json}\n```\n");
    let chars: Vec<char> = text.chars().collect();
    env.server
        .enqueue(decima_testkit::Reply::Stream(decima_testkit::Turn {
            text: chars.chunks(3).map(|c| c.iter().collect()).collect(),
            ..Default::default()
        }));
}

/// Answers every request with a valid review citing the first seq it shows verbatim.
pub(super) fn answer_every_request(env: &Env, risk: &'static str) {
    env.server.respond_with(move |request| {
        let input = request
            .json
            .as_ref()
            .and_then(|j| j["messages"][1]["content"].as_str())
            .unwrap_or_default();
        let seq = first_seq(input).unwrap_or(1);
        decima_testkit::Reply::Stream(decima_testkit::Turn {
            text: vec![answer(risk, &[seq])],
            ..Default::default()
        })
    });
}

/// The seq of the first `### seq=N` header line in `input`.
pub(super) fn first_seq(input: &str) -> Option<i64> {
    shown_seqs(input).first().copied()
}

/// Every request from the `from`-th on stays within the reviewer's window as its model counts
/// it: each message's text (the store's counter, times the calibration `factor`) with its
/// framing, and the room asked for the answer.
pub(super) fn assert_every_request_within(env: &Env, from: usize, window: u32, factor: f64) {
    let counter = decima_llm::tokens::store_counter();
    for (i, r) in env.server.requests().iter().enumerate().skip(from) {
        let json = r.json.as_ref().unwrap();
        let text: u32 = json["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| counter.count_text(&content(m)) + counter.message_overhead())
            .sum();
        let answer = json["max_tokens"].as_u64().unwrap_or(0);
        let used = (f64::from(text) * factor).ceil() as u64 + answer;
        assert!(
            used <= u64::from(window),
            "request {i}: {used} tokens ({text} of text, {answer} for the answer) in a \
             {window}-token window"
        );
    }
}

/// Everything the reviewer was sent from request `from` on: every user message's text.
pub(super) fn inputs_since(env: &Env, from: usize) -> String {
    let mut all = String::new();
    for r in env.server.requests().iter().skip(from) {
        for m in r.json.as_ref().unwrap()["messages"].as_array().unwrap() {
            if m["role"] == "user" {
                all.push_str(&content(m));
                all.push('\n');
            }
        }
    }
    all
}

/// What an input must never say again: that messages were dropped.
pub(super) fn assert_nothing_left_out(input: &str) {
    for phrase in [
        "left out",
        "neither summarised nor shown",
        "not shown",
        "budget ran out",
    ] {
        assert!(!input.contains(phrase), "the input says {phrase:?}");
    }
}

/// An uncompressed analyst session of `len` messages, imported.
pub(super) async fn analyst_session(
    env: &Env,
    seed: u64,
    len: usize,
    language: Language,
) -> (
    ConversationId,
    decima_testkit::analyst_conversation::AnalystConversation,
) {
    let session = AnalystConversationBuilder::new(seed, len, language).build();
    let store = env.store().await;
    let c = store
        .conversations()
        .import("analyst session", None, &session.messages)
        .await
        .unwrap();
    store.close().await;
    (c.id, session)
}

/// The planted facts that did not reach `input`, by where they were planted (early, middle,
/// late third of the session), for the user's and for the others.
pub(super) fn lost_facts(
    session: &decima_testkit::analyst_conversation::AnalystConversation,
    input: &str,
) -> (Vec<String>, usize, usize) {
    let len = session.messages.len();
    let mut lost_user = Vec::new();
    let (mut others, mut others_kept) = (0, 0);
    for f in &session.facts {
        let kept = input.contains(&f.text);
        let when = match f.position * 3 / (len + 1) {
            0 => "early",
            1 => "middle",
            _ => "late",
        };
        if f.by_user {
            if !kept {
                lost_user.push(format!("{when} #{} {:?} {}", f.position, f.kind, f.text));
            }
        } else {
            others += 1;
            others_kept += usize::from(kept);
        }
    }
    (lost_user, others_kept, others)
}

pub(super) async fn small_conversation(env: &Env, len: usize) -> ConversationId {
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
pub(super) fn sent(env: &Env, i: usize) -> Vec<Value> {
    env.server.requests()[i].json.as_ref().unwrap()["messages"]
        .as_array()
        .unwrap()
        .clone()
}

pub(super) fn content(message: &Value) -> String {
    message["content"].as_str().unwrap_or_default().to_owned()
}

pub(super) async fn review(env: &Env, args: &[&str]) -> std::process::Output {
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

/// A run that writes `report.txt`, then writes over it, with risky-call reviews on: the second
/// write is reviewed before it runs (the file exists as the sandbox sees it), the first is not.
pub(super) async fn a_risky_write_is_reviewed_first(env: &Env, extra: &[&str]) {
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

/// The seqs shown verbatim (`### seq=N` headers) in `input`.
pub(super) fn shown_seqs(input: &str) -> std::collections::BTreeSet<i64> {
    input
        .lines()
        .filter_map(|l| l.strip_prefix("### seq="))
        .filter_map(|rest| rest.split(' ').next()?.parse().ok())
        .collect()
}

/// `(from, through)` of a stored pass's range field, if set.
pub(super) fn range_of(value: &Value) -> Option<(i64, i64)> {
    let pair = value.as_array()?;
    Some((pair.first()?.as_i64()?, pair.get(1)?.as_i64()?))
}

/// A full review of an uncompressed history far above the reviewer's budget reads it in passes,
/// each within the window, that together cover every message; every planted fact reaches the
/// reviewer, and one merged review is stored that lists its passes.
pub(super) async fn a_full_review_reads_it_all_in_passes(
    len: usize,
    window: u32,
    language: Language,
) {
    let env = Env::new().await;
    let (c, session) = analyst_session(&env, 29, len, language).await;
    answer_every_request(&env, "medium");
    let mut cmd = env.command(&["review", &c.to_string(), "--json"]);
    cmd.env("DECIMA_CONTEXT_WINDOW", window.to_string());
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stored: Value = serde_json::from_slice(&out.stdout).unwrap();
    let passes = stored["passes"].as_array().unwrap();
    assert!((2..=12).contains(&passes.len()), "{} passes", passes.len());
    assert_eq!(
        env.server.requests().len(),
        passes.len(),
        "one request a pass"
    );
    assert_every_request_within(&env, 0, window, 1.0);
    let input = inputs_since(&env, 0);
    assert_nothing_left_out(&input);
    for (k, r) in env.server.requests().iter().enumerate() {
        let text = content(&r.json.as_ref().unwrap()["messages"][1]);
        assert!(
            text.contains(&format!("pass {} of {}", k + 1, passes.len())),
            "pass {} does not say which it is",
            k + 1
        );
        // Where the history stands now is in every pass.
        assert!(
            text.contains(&format!("### seq={len} ")),
            "pass {} lacks the newest",
            k + 1
        );
    }
    // Every message reaches the reviewer: verbatim in some pass, or within a summarised range.
    let shown = shown_seqs(&input);
    let summarised: Vec<(i64, i64)> = passes
        .iter()
        .filter_map(|p| range_of(&p["summarised"]))
        .collect();
    let missing: Vec<i64> = (1..=len as i64)
        .filter(|s| !shown.contains(s) && !summarised.iter().any(|(a, b)| a <= s && s <= b))
        .collect();
    assert!(
        missing.is_empty(),
        "{} messages reach no pass: {:?}",
        missing.len(),
        &missing[..missing.len().min(20)]
    );
    let (lost_user, kept, others) = lost_facts(&session, &input);
    assert!(lost_user.is_empty(), "user facts lost: {lost_user:?}");
    if summarised.is_empty() {
        assert_eq!(kept, others, "facts stated by the agent or tools lost");
    } else {
        assert!(kept * 100 >= others * 90, "{kept} of {others} other facts");
    }
    eprintln!(
        "{len} messages, {window}-token window: {} passes, {} of {} user facts, {kept} of {others} \
         other facts, {} messages summarised",
        passes.len(),
        session.facts.iter().filter(|f| f.by_user).count(),
        session.facts.iter().filter(|f| f.by_user).count(),
        summarised.iter().map(|(a, b)| b - a + 1).sum::<i64>()
    );
    // One review: every pass cited its first seq under the same title, so the merge made one
    // finding whose evidence holds each pass's seq, and the risk every pass gave.
    assert_eq!(stored["risk_level"], "medium");
    let findings = stored["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{findings:?}");
    let evidence = findings[0]["evidence_seqs"].as_array().unwrap();
    assert!(evidence.len() >= 2, "{evidence:?}");
    assert!(passes.iter().all(|p| p["risk_level"] == "medium"));
}

/// A quick review makes one request: the newest messages verbatim and the rest through the
/// summary made for the review, within a quarter of the budget. Every fact the user stated
/// arrives, early, middle or late.
pub(super) async fn a_quick_review_carries_the_rest_in_a_summary(
    len: usize,
    window: u32,
    language: Language,
) {
    let env = Env::new().await;
    let (c, session) = analyst_session(&env, 31, len, language).await;
    answer_every_request(&env, "low");
    let mut cmd = env.command(&["review", &c.to_string(), "--type", "quick", "--json"]);
    cmd.env("DECIMA_CONTEXT_WINDOW", window.to_string());
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stored: Value = serde_json::from_slice(&out.stdout).unwrap();
    let passes = stored["passes"].as_array().unwrap();
    assert_eq!(passes.len(), 1);
    assert_eq!(env.server.requests().len(), 1);
    assert_every_request_within(&env, 0, window, 1.0);
    let input = inputs_since(&env, 0);
    assert_nothing_left_out(&input);
    let (from, through) = range_of(&passes[0]["summarised"]).expect("a summary for the review");
    let shown = shown_seqs(&input);
    assert_eq!(from, 1);
    assert_eq!(
        shown.first().copied(),
        Some(through + 1),
        "the summary ends where the messages start"
    );
    assert_eq!(shown.last().copied(), Some(len as i64));
    // The input says how each part reaches the reviewer.
    let summarised = decima_runtime::review::history::seqs(1, through);
    assert!(
        input.contains(&format!("## {summarised}, summarised for this review")),
        "{summarised}"
    );
    assert!(input.contains(&format!(
        "## {}, verbatim",
        decima_runtime::review::history::seqs(through + 1, len as i64)
    )));
    let (lost_user, kept, others) = lost_facts(&session, &input);
    assert!(lost_user.is_empty(), "user facts lost: {lost_user:?}");
    eprintln!(
        "quick review of {len} messages, {window}-token window: {through} summarised, {} verbatim; \
         every user fact; {kept} of {others} other facts ({:.0}%)",
        shown.len(),
        kept as f64 * 100.0 / others.max(1) as f64
    );
}

/// `summary_read` of each "asking the reviewer" line the binary logged, in order: how many
/// messages each review read from the store to make its summaries.
pub(super) fn summary_reads(env: &Env) -> Vec<u64> {
    let mut files: Vec<_> = std::fs::read_dir(env.data_dir().join("logs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        for line in std::fs::read_to_string(path).unwrap().lines() {
            if line.contains("asking the reviewer")
                && let Some(at) = line.find("summary_read=")
            {
                let digits: String = line[at + "summary_read=".len()..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                out.push(digits.parse().unwrap());
            }
        }
    }
    out
}

/// The statements of the second independent generator (`fact_sessions`), scored by subject and
/// value together. A full review in passes shows every statement as it was made (a correction
/// with its current value). A quick review makes one request within the window that covers
/// every message, the old ones through the summary made for it; its statement recall is the
/// extract strategy's and is reported, and with `strict_quick` every value the user stated
/// must be in it.
pub(super) async fn statements_reach_the_reviewer(
    len: usize,
    window: u32,
    language: Language,
    strict_quick: bool,
) {
    use decima_testkit::fact_sessions::{Fact, Verdict, generate, score, statement_kept};
    let session = generate(43, len, language);
    let env = Env::new().await;
    let store = env.store().await;
    let c = store
        .conversations()
        .import("statements", None, &session.messages)
        .await
        .unwrap();
    store.close().await;
    answer_every_request(&env, "low");
    let review = |extra: &[&str]| {
        let id = c.id.to_string();
        let mut args = vec!["review", id.as_str(), "--json"];
        args.extend_from_slice(extra);
        let mut cmd = env.command(&args);
        cmd.env("DECIMA_CONTEXT_WINDOW", window.to_string());
        async move {
            let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
                .await
                .unwrap();
            assert!(out.status.success(), "{}", text(&out.stderr));
            serde_json::from_slice::<Value>(&out.stdout).unwrap()
        }
    };
    let current = |f: &Fact| Fact {
        replaced: None,
        ..f.clone()
    };

    let full = review(&[]).await;
    let passes = full["passes"].as_array().unwrap().len();
    assert!(passes > 1, "{passes} passes");
    assert_every_request_within(&env, 0, window, 1.0);
    let input = inputs_since(&env, 0);
    assert_nothing_left_out(&input);
    let plain: Vec<Fact> = session
        .facts
        .iter()
        .filter(|f| f.replaced.is_none())
        .cloned()
        .collect();
    let card = score(&input, &plain);
    assert_eq!(
        card.kept, card.total,
        "full review, {passes} passes\n{card}"
    );
    for f in session.facts.iter().filter(|f| f.replaced.is_some()) {
        assert_eq!(statement_kept(&input, &current(f)), Verdict::Kept, "{f:?}");
    }
    eprintln!(
        "statements, {len} messages, {window}-token window, full review in {passes} passes: {} of \
         {} plain statements kept, every correction's current value",
        card.kept, card.total
    );

    let asked = env.server.requests().len();
    let quick = review(&["--type", "quick"]).await;
    assert_eq!(env.server.requests().len(), asked + 1);
    assert_every_request_within(&env, asked, window, 1.0);
    let input = inputs_since(&env, asked);
    assert_nothing_left_out(&input);
    let summarised = range_of(&quick["passes"][0]["summarised"]).expect("a summary");
    let missing: Vec<String> = session
        .facts
        .iter()
        .filter(|f| f.by == Role::User)
        .filter(|f| {
            matches!(
                statement_kept(&input, &current(f)),
                Verdict::ValueMissing | Verdict::Truncated
            )
        })
        .map(|f| format!("#{} {} {:?}", f.position, f.kind.name(), f.value))
        .collect();
    let card = score(&input, &session.facts);
    eprintln!(
        "statements, {len} messages, quick review (seqs {}–{} summarised): {} user values \
         missing {missing:?}\n{card}",
        summarised.0,
        summarised.1,
        missing.len()
    );
    if strict_quick {
        assert!(
            missing.is_empty(),
            "values the user stated never reached the reviewer: {missing:?}"
        );
    }
}
