//! The agent loop's context and wire, end to end against the test server: compression between
//! calls and on an overflow, a sandbox that is gone, phase and checkpoint compression turned off,
//! Anthropic, Gemini and every server profile, a run killed before its task was stored, history
//! blocks digested for reviews, and the model calls a run keeps.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{Fixture, todos};
use decima_core::{FailureClass, Role};
use decima_runtime::Event;
use decima_runtime::agent::{self, RunOptions, RunRequest, StopOnFailure};
use decima_store::CompactionTrigger;
use decima_store::ExecutionStatus;
use decima_testkit::{Reply, ScriptedToolCall, Turn};
use serde_json::{Value, json};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_threshold_crossed_between_model_calls_compresses_there() {
    let f = Fixture::new().await;
    f.add_provider("small", "openai", "qwen3", 8_000).await;
    for i in 0..6 {
        f.call(
            "shell",
            json!({"command": format!("seq {} {}", i * 1000, i * 1000 + 350)}),
        );
    }
    f.say("Read them all.");
    let outcome = f.run_with("small", "Print some numbers").await;
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    let events = f.events.take();
    let first_tool = events
        .iter()
        .position(|e| matches!(e, Event::ToolFinished { .. }))
        .unwrap();
    let compaction = events
        .iter()
        .position(|e| {
            matches!(
                e,
                Event::Compacted {
                    trigger: CompactionTrigger::Auto,
                    ..
                }
            )
        })
        .expect("an automatic compaction during the run");
    assert!(
        compaction > first_tool,
        "it happened between model calls, after tools ran"
    );
    // Every request after it fits the input room.
    for e in &events[compaction..] {
        if let Event::ContextUsage { usage, .. } = e {
            assert!(*usage <= 1.0, "{usage}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_context_overflow_from_the_server_is_compressed_and_retried_once() {
    let f = Fixture::new().await;
    f.server.enqueue(Reply::context_overflow());
    f.say("Fits now.");
    let outcome = f.run("Answer", RunOptions::default()).await;
    assert_eq!(outcome.answer.as_deref(), Some("Fits now."));
    assert_eq!(f.server.requests().len(), 2);
    assert!(
        f.store
            .failures()
            .list(outcome.execution.id)
            .await
            .unwrap()
            .is_empty()
    );

    // Twice in a row is a context_overflow failure that waits.
    f.server.enqueue(Reply::context_overflow());
    f.server.enqueue(Reply::context_overflow());
    let outcome = f.run("Answer again", RunOptions::default()).await;
    assert_eq!(outcome.execution.status, ExecutionStatus::AwaitingUser);
    assert_eq!(
        outcome.waiting_on.unwrap().class,
        FailureClass::ContextOverflow
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_that_is_gone_is_a_system_failure_that_alerts_and_restores_it() {
    let f = Fixture::new().await;
    let ws = f.workspace();
    std::fs::write(ws.join("input.csv"), "x,y\n").unwrap();
    f.call("todo_write", todos(&[("load", "in_progress")]));
    f.call("shell", json!({"command": "cd / && rm -rf \"$OLDPWD\""}));
    f.call("read_file", json!({"path": "input.csv"}));
    let outcome = f.run("Load the input", RunOptions::default()).await;
    assert_eq!(outcome.execution.status, ExecutionStatus::AwaitingUser);
    let failure = outcome.waiting_on.unwrap();
    assert_eq!(failure.class, FailureClass::System, "{}", failure.message);
    assert_eq!(failure.details["trigger"], "tool_failure");
    assert_eq!(
        std::fs::read_to_string(ws.join("input.csv")).unwrap(),
        "x,y\n"
    );
    let events = f.events.take();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Failure { alert: true, .. }))
    );
    assert!(events.iter().any(|e| matches!(e, Event::RolledBack { .. })));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::AwaitingChoice { .. }))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn phase_and_checkpoint_compressions_can_be_turned_off() {
    let f = Fixture::new().await;
    f.call(
        "todo_write",
        json!({"todos": [{"title": "dump", "status": "in_progress", "phase": "p", "checkpoint": true}]}),
    );
    f.call("shell", json!({"command": "seq 100000 100600"}));
    f.call(
        "todo_write",
        json!({"todos": [{"title": "dump", "status": "completed", "phase": "p", "checkpoint": true}]}),
    );
    f.say("done");
    let outcome = f
        .run(
            "Dump numbers",
            RunOptions {
                phase_compression: false,
                checkpoint_compression: false,
                ..RunOptions::default()
            },
        )
        .await;
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    let events = f.events.take();
    assert!(!events.iter().any(|e| matches!(e, Event::Compacted { .. })));
    let view = agent::view(&f.store, outcome.execution.id).await.unwrap();
    let reasons: Vec<&str> = view.snapshots.iter().map(|s| s.reason).collect();
    assert_eq!(reasons, ["run_start", "todo_start"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loop_speaks_anthropic_too_tool_results_and_all() {
    let f = Fixture::new().await;
    f.add_provider("claude", "anthropic", "claude-sonnet-4-5", 200_000)
        .await;
    f.calls(&[
        (
            "write_file",
            json!({"path": "notes/a.txt", "content": "{\"k\": {}}"}),
        ),
        ("shell", json!({"command": "cat notes/a.txt"})),
    ]);
    f.say("The note holds an empty object.");
    let outcome = f.run_with("claude", "Write a note and read it back").await;
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    let second = f.server.requests()[1].json.clone().unwrap();
    assert_eq!(f.server.requests()[1].path, "/v1/messages");
    let blocks: Vec<Value> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .collect();
    let uses = blocks.iter().filter(|b| b["type"] == "tool_use").count();
    let results: Vec<&Value> = blocks
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .collect();
    assert_eq!(uses, 2);
    assert_eq!(results.len(), 2);
    assert!(
        results[1].to_string().contains("{\\\"k\\\": {}}"),
        "{}",
        results[1]
    );
    assert!(
        second["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "todo_write")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_before_its_task_was_stored_stores_it_when_resumed() {
    let f = Fixture::new().await;
    let conversation = f.store.conversations().create("t", None).await.unwrap();
    let execution = f
        .store
        .executions()
        .create(&decima_store::NewExecution {
            conversation_id: conversation.id,
            parent_id: None,
            depth: 0,
            task: "Say hi to the ledger".into(),
            sandbox: decima_store::SandboxKind::Host,
            provider_id: None,
            workspace: Some(f.workspace().to_string_lossy().into_owned()),
            options: RunOptions::default().to_stored(),
        })
        .await
        .unwrap();
    f.store
        .executions()
        .set_status(execution.id, ExecutionStatus::Running)
        .await
        .unwrap();
    assert_eq!(
        agent::interrupt_orphans(&f.store, f.dir.path())
            .await
            .unwrap(),
        vec![execution.id]
    );
    f.say("Hi, ledger.");
    let done = agent::resume(&f.session(&StopOnFailure), execution.id)
        .await
        .unwrap();
    assert_eq!(done.execution.status, ExecutionStatus::Succeeded);
    let first = f.request_text(0);
    assert!(first.contains("Say hi to the ledger"), "{first}");
    let stored = f.store.messages().all(conversation.id).await.unwrap();
    assert_eq!(stored[0].role, Role::User);
    assert_eq!(stored[0].execution_id, Some(execution.id));
}

/// Gemini 3 refuses a step whose calls come back without the `thought_signature` it sent with
/// them (decima-testkit's `gemini` check, after Google's thought-signatures guide). A run of two
/// tool steps and an answer: each step's signature goes through SQLite and back to Gemini.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gemini_run_sends_each_steps_thought_signature_back() {
    use decima_testkit::llm_server::{Profile, gemini};
    let f = Fixture::new().await;
    f.add_provider("gemini", "openai", "gemini-3-pro-preview", 64_000)
        .await;
    f.server.refuse_with(gemini::refuses_unsigned_calls);
    for (id, command) in [("call_one", "echo one"), ("call_two", "echo two")] {
        f.server
            .enqueue(Reply::Stream(Profile::GeminiOpenAi.apply(Turn {
                tool_calls: vec![ScriptedToolCall {
                    id: id.into(),
                    name: "shell".into(),
                    argument_chunks: vec![format!(r#"{{"command": "{command}"}}"#)],
                }],
                ..Turn::default()
            })));
    }
    f.server
        .enqueue(Reply::Stream(Profile::GeminiOpenAi.apply(Turn {
            text: vec!["Echoed twice.".into()],
            ..Turn::default()
        })));
    let outcome = f.run_with("gemini", "Echo one, then two").await;
    assert_eq!(
        outcome.execution.status,
        ExecutionStatus::Succeeded,
        "{:?}",
        f.store.failures().list(outcome.execution.id).await
    );
    assert_eq!(outcome.answer.as_deref(), Some("Echoed twice."));
    let stored = f.messages_of(&outcome).await;
    let signatures: Vec<Option<&str>> = stored
        .iter()
        .flat_map(|m| m.tool_calls.iter())
        .map(|c| c.signature.as_deref())
        .collect();
    assert_eq!(signatures, [Some("c2lnbmF0dXJl0"), Some("c2lnbmF0dXJl0")]);
    let last = f.server.requests()[2].json.clone().unwrap();
    let sent: Vec<&Value> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["tool_calls"].get(0))
        .map(|c| &c["extra_content"]["google"]["thought_signature"])
        .collect();
    assert_eq!(sent, [&json!("c2lnbmF0dXJl0"), &json!("c2lnbmF0dXJl0")]);
}

/// The loop against the stream shapes of the servers analysts run (Ollama's empty finish
/// reasons and calls sharing index 0, vLLM's missing call ids, Gemini's missing indexes, ...;
/// the profiles and their sources are in decima-testkit): two calls in one answer are both run,
/// in order, and each result is paired with its call on the way back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loop_runs_two_calls_per_answer_against_every_server_profile() {
    use decima_testkit::llm_server::Profile;
    for profile in Profile::ALL {
        let f = Fixture::new().await;
        f.server.enqueue(Reply::Stream(profile.apply(Turn {
            tool_calls: vec![
                ScriptedToolCall {
                    id: "call_w".into(),
                    name: "write_file".into(),
                    argument_chunks: vec![
                        r#"{"path": "q3/totals.csv", "#.into(),
                        r#""content": "region,total\nnorth,{12}\n"}"#.into(),
                    ],
                },
                ScriptedToolCall {
                    id: "call_s".into(),
                    name: "shell".into(),
                    argument_chunks: vec![r#"{"command": "cat q3/totals.csv"}"#.into()],
                },
            ],
            ..Turn::default()
        })));
        f.server.enqueue(Reply::Stream(profile.apply(Turn {
            text: vec!["North totals ".into(), "{12}.".into()],
            ..Turn::default()
        })));
        let outcome = f.run("Total the regions", RunOptions::default()).await;
        let name = profile.name();
        assert_eq!(
            outcome.execution.status,
            ExecutionStatus::Succeeded,
            "{name}: {:?}",
            f.store.failures().list(outcome.execution.id).await
        );
        assert_eq!(
            outcome.answer.as_deref(),
            Some("North totals {12}."),
            "{name}"
        );
        let live = f.messages_of(&outcome).await;
        let calls: Vec<&decima_core::ToolCall> =
            live.iter().flat_map(|m| m.tool_calls.iter()).collect();
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["write_file", "shell"], "{name}");
        let answered: Vec<&str> = live
            .iter()
            .filter_map(|m| m.tool_call_id.as_deref())
            .collect();
        let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(answered, ids, "{name}: each call answered once, in order");
        let shell_result = f.last_tool_result(1);
        assert!(
            shell_result.contains("north,{12}") && shell_result.contains("[exit code 0]"),
            "{name}: {shell_result}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_fills_a_history_block_has_it_digested_for_reviews_in_the_background() {
    use decima_runtime::review::digest_cache::{BLOCK_SEQS, DIGEST_VERSION};
    let f = Fixture::new().await;
    // Two short of a full block: the run's task and its answer fill it.
    let built = decima_testkit::ConversationBuilder::new(9, BLOCK_SEQS as usize - 2)
        .content_chars(40)
        .build();
    let conversation = f
        .store
        .conversations()
        .import("growing", None, &built.messages)
        .await
        .unwrap();
    f.say("Both sources agree.");
    let outcome = agent::run(
        &f.session(&StopOnFailure),
        RunRequest {
            conversation: Some(conversation.id),
            workspace: Some(f.workspace()),
            task: "Check that both sources agree".into(),
            options: RunOptions {
                tenth_man: decima_runtime::review::TenthManMode::Off,
                ..RunOptions::default()
            },
            ..RunRequest::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    let last = f.messages_of(&outcome).await.last().unwrap().seq;
    assert!(last >= BLOCK_SEQS, "the run filled the block: {last}");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let rows = f
            .store
            .review_digests()
            .within(conversation.id, DIGEST_VERSION, 1, BLOCK_SEQS, 0)
            .await
            .unwrap();
        if rows
            .iter()
            .any(|r| r.budget == 0 && r.from_seq == 1 && r.through_seq == BLOCK_SEQS)
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the full block was never digested"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_block_no_trigger_saw_fill_is_digested_when_a_run_ends() {
    use decima_runtime::review::digest_cache::{BLOCK_SEQS, DIGEST_VERSION};
    let f = Fixture::new().await;
    // A whole block imported through the store: no message of the run lands on its boundary.
    let built = decima_testkit::ConversationBuilder::new(13, BLOCK_SEQS as usize)
        .content_chars(40)
        .build();
    let conversation = f
        .store
        .conversations()
        .import("imported", None, &built.messages)
        .await
        .unwrap();
    f.say("Checked.");
    let outcome = agent::run(
        &f.session(&StopOnFailure),
        RunRequest {
            conversation: Some(conversation.id),
            workspace: Some(f.workspace()),
            task: "Check it".into(),
            options: RunOptions {
                tenth_man: decima_runtime::review::TenthManMode::Off,
                ..RunOptions::default()
            },
            ..RunRequest::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let rows = f
            .store
            .review_digests()
            .within(conversation.id, DIGEST_VERSION, 1, BLOCK_SEQS, 0)
            .await
            .unwrap();
        if rows
            .iter()
            .any(|r| r.budget == 0 && r.from_seq == 1 && r.through_seq == BLOCK_SEQS)
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the full block was never digested"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The run history's cost: each answered model call is counted with the tokens the provider
/// reported, cache reads among them, and a call that reported none still counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_keeps_its_model_calls_and_the_tokens_they_carried() {
    let f = Fixture::new().await;
    f.server.enqueue(Reply::Stream(Turn {
        tool_calls: vec![ScriptedToolCall {
            id: "call_usage_0".into(),
            name: "shell".into(),
            argument_chunks: vec![json!({"command": "echo 42"}).to_string()],
        }],
        usage: Some((1_200, 30)),
        ..Turn::default()
    }));
    f.server.enqueue(Reply::Stream(Turn {
        text: vec!["It printed 42.".into()],
        usage: Some((1_500, 12)),
        // The second request repeated the first as its prefix: the server read it from its cache.
        cached: Some((1_024, 0)),
        ..Turn::default()
    }));
    let outcome = f.run("Print 42", RunOptions::default()).await;
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);
    let stored = f
        .store
        .executions()
        .get(outcome.execution.id)
        .await
        .unwrap();
    assert_eq!(f.server.requests().len(), 2);
    assert_eq!(stored.usage.model_calls, 2);
    assert_eq!(stored.usage.tokens_in, 2_700);
    assert_eq!(stored.usage.tokens_out, 42);
    assert_eq!(stored.usage.cache_read_tokens, 1_024);
    // `decima execution show --json` carries the sums and each call.
    let view = serde_json::to_value(
        decima_runtime::agent::view(&f.store, outcome.execution.id)
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(view["usage"]["cache_read_tokens"], 1_024, "{view}");
    assert_eq!(view["usage"]["cached_percent"], 37, "{view}");
    let calls = view["usage"]["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2, "{view}");
    assert_eq!(calls[0]["cache_read_tokens"], 0);
    assert_eq!(calls[1]["tokens_in"], 1_500);
    assert_eq!(calls[1]["cache_read_tokens"], 1_024);
    // The provider has no prices: no estimate, rather than a cost of zero.
    assert!(view["usage"]["cost_usd"].is_null(), "{view}");
    assert_eq!(view["usage"]["compressions"], 0, "{view}");
}
