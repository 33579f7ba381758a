//! The step's context from the store up: windowed loading, thresholds that agree with the
//! budget on any window, calibration in the budget, and everything sent counted.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use decima_core::context::{
    CompressionLevel, HistoryBudget, Strategy, ThresholdState, pinned_units, select,
};
use decima_core::prompt::{LoreEntry, Lorebook, Position, Preset};
use decima_core::{NewMessage, Role};
use decima_runtime::NoEvents;
use decima_runtime::compression::{
    CompressContext, CompressOutcome, CompressRequest, compress, compress_if_needed,
};
use decima_runtime::context::{Scale, build, preset_of};
use decima_runtime::settings::WindowSettings;
use decima_store::{CompactionTrigger, Conversation, Store};
use decima_testkit::ConversationBuilder;

async fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(
        &dir.path().join("decima.db"),
        decima_llm::tokens::store_counter(),
    )
    .await
    .unwrap();
    (dir, store)
}

async fn seeded(store: &Store, seed: u64, n: usize) -> Conversation {
    let built = ConversationBuilder::new(seed, n).content_chars(200).build();
    let c = store.conversations().create("t", None).await.unwrap();
    store
        .messages()
        .append_many(c.id, &built.messages)
        .await
        .unwrap();
    store.conversations().get(c.id).await.unwrap()
}

fn ctx<'a>(
    store: &'a Store,
    conversation: &'a Conversation,
    preset: &'a Preset,
    window: &'a WindowSettings,
    scale: Scale,
) -> CompressContext<'a> {
    CompressContext {
        store,
        data_dir: std::path::Path::new("/nonexistent"),
        conversation,
        preset,
        window,
        scale,
        provider: None,
        events: &NoEvents,
    }
}

#[tokio::test]
async fn a_step_loads_the_window_not_the_history_and_sends_what_a_full_load_would() {
    let (_dir, store) = open().await;
    let conversation = seeded(&store, 11, 3_000).await;
    let preset = Preset::default();
    let window = WindowSettings::new(32_000);
    let outcome = compress(
        &ctx(&store, &conversation, &preset, &window, Scale::ONE),
        CompressRequest {
            level: Some(CompressionLevel::Standard),
            strategy: Strategy::Extract,
            dry_run: false,
            written: None,
        },
    )
    .await
    .unwrap();
    assert!(matches!(
        outcome,
        CompressOutcome::Planned {
            compaction_id: Some(_),
            ..
        }
    ));
    let built = build(&store, &conversation, &preset, &window, Scale::ONE)
        .await
        .unwrap();
    assert!(
        !built.compression_required(),
        "{:?} {:?}",
        built.history,
        built.budgeting
    );
    let sent = built.history.loaded_messages;
    assert!(
        sent < 600,
        "a compacted 3,000-message conversation loads {sent} messages"
    );

    // The reference: everything loaded, selected with the same budget.
    let all = store.messages().all(conversation.id).await.unwrap();
    let summaries = store
        .compactions()
        .live_summaries(conversation.id)
        .await
        .unwrap();
    let pinned = pinned_units(&all);
    let reference = select(&all, &pinned, &summaries, &built.budgeting.history).unwrap();
    let expected: Vec<i64> = reference.verbatim_seqs();
    let got: Vec<String> = built
        .assembled
        .messages
        .iter()
        .filter(|m| m.source == "history")
        .map(|m| m.message.content.clone())
        .collect();
    let expected_contents: Vec<String> = expected
        .iter()
        .map(|seq| all.iter().find(|m| m.seq == *seq).unwrap().content.clone())
        .collect();
    assert_eq!(got, expected_contents);
}

#[tokio::test]
async fn pending_totals_come_from_the_store_without_loading_them() {
    let (_dir, store) = open().await;
    let conversation = seeded(&store, 12, 2_000).await;
    let preset = Preset::default();
    let window = WindowSettings::new(8_000);
    let built = build(&store, &conversation, &preset, &window, Scale::ONE)
        .await
        .unwrap();
    let all = store.messages().all(conversation.id).await.unwrap();
    let total: u64 = all.iter().map(|m| u64::from(m.tokens)).sum();
    assert!(built.compression_required());
    assert_eq!(
        built.history.pending + u64::from(built.history.recent),
        total,
        "every uncovered token is accounted for"
    );
    assert!(
        built.history.loaded_messages < 400,
        "{}",
        built.history.loaded_messages
    );
    assert_eq!(built.report.state, ThresholdState::Deep);
}

/// Grows a conversation on several windows and checks, at every size, that the thresholds and
/// the budget tell the same story: nothing is pending below the compression threshold, and
/// whatever is pending shows as deep.
#[tokio::test]
async fn thresholds_and_the_budget_agree_on_any_window() {
    let built = ConversationBuilder::new(13, 400).content_chars(300).build();
    for window_tokens in [6_000u32, 20_000, 32_000, 128_000] {
        let (_dir, store) = open().await;
        let c = store.conversations().create("t", None).await.unwrap();
        let preset = Preset::simple("You are the analyst's agent. Cite your sources.");
        let window = WindowSettings::new(window_tokens);
        let mut saw_warn = false;
        for chunk in built.messages.chunks(3) {
            store.messages().append_many(c.id, chunk).await.unwrap();
            let conversation = store.conversations().get(c.id).await.unwrap();
            let b = build(&store, &conversation, &preset, &window, Scale::ONE)
                .await
                .unwrap();
            if b.report.usage < window.thresholds.compress {
                assert!(
                    !b.compression_required(),
                    "window {window_tokens}: usage {:.3} yet {} messages no longer fit",
                    b.report.usage,
                    b.history.pending_messages
                );
            }
            if b.compression_required() {
                assert_eq!(
                    b.report.state,
                    ThresholdState::Deep,
                    "window {window_tokens}"
                );
            }
            if b.report.state == ThresholdState::Warn {
                saw_warn = true;
                // The case: a warning is no reason to compress.
                let done = compress_if_needed(
                    &ctx(&store, &conversation, &preset, &window, Scale::ONE),
                    CompactionTrigger::Auto,
                )
                .await
                .unwrap();
                assert!(done.is_none(), "window {window_tokens}: compressed at warn");
            }
            if b.report.usage > 1.2 {
                break;
            }
        }
        if window_tokens < 128_000 {
            assert!(saw_warn, "window {window_tokens} never passed through warn");
        }
    }
}

#[tokio::test]
async fn a_calibration_above_one_shrinks_the_budget_and_compression_makes_room() {
    let (_dir, store) = open().await;
    let conversation = seeded(&store, 14, 600).await;
    let preset = Preset::default();
    let scale = Scale::new(1.6);
    let mut window = WindowSettings::new(1_000);
    // A window the raw counts fit at about 80%, but the model counts 1.6× that.
    let raw = build(
        &store,
        &conversation,
        &preset,
        &WindowSettings::new(10_000_000),
        Scale::ONE,
    )
    .await
    .unwrap();
    window.window = (f64::from(raw.assembled.total) / 0.8) as u32 + window.output_reserve;
    window.output_reserve = (window.window / 4).min(8_192);
    window.window = (f64::from(raw.assembled.total) / 0.8) as u32 + window.output_reserve;
    let unscaled = build(&store, &conversation, &preset, &window, Scale::ONE)
        .await
        .unwrap();
    assert!(!unscaled.compression_required(), "the raw counts fit");
    let scaled = build(&store, &conversation, &preset, &window, scale)
        .await
        .unwrap();
    assert!(scaled.compression_required(), "the model's counts do not");
    let done = compress_if_needed(
        &ctx(&store, &conversation, &preset, &window, scale),
        CompactionTrigger::Auto,
    )
    .await
    .unwrap();
    assert!(done.is_some(), "compression finds something to do");
    let after = build(&store, &conversation, &preset, &window, scale)
        .await
        .unwrap();
    assert!(!after.compression_required());
    assert!(
        scale.to_model(u64::from(after.assembled.total)) <= after.budgeting.input_room,
        "{} model tokens sent into a room of {}",
        scale.to_model(u64::from(after.assembled.total)),
        after.budgeting.input_room
    );
}

/// Pinned todos, summary headers, lorebook entries that keywords activate, and the output
/// reserve all take room: a request that fits must fit with all of them.
#[tokio::test]
async fn everything_sent_is_counted_against_the_window() {
    let (_dir, store) = open().await;
    let mut preset = Preset::simple("You are the analyst's agent.");
    preset.lorebook = Some(Lorebook {
        scan_depth: 50,
        entries: vec![LoreEntry {
            id: "ledger".into(),
            keys: vec!["ledger".into()],
            secondary_keys: Vec::new(),
            content: "The ledger is the source of truth for every total. ".repeat(60),
            constant: false,
            enabled: true,
            case_sensitive: false,
            position: Position::Depth(-2),
            order: 0,
            role: Role::System,
        }],
    });
    let record = store
        .presets()
        .create("p", "native", None, &serde_json::to_value(&preset).unwrap())
        .await
        .unwrap();
    let c = store
        .conversations()
        .create("t", Some(&record.id))
        .await
        .unwrap();
    let pool = store.sqlite_pool().expect("a SQLite store");
    sqlx::query("INSERT INTO executions (id, conversation_id, task, created_at, updated_at) VALUES ('e1', ?, 'reconcile', 0, 0)")
        .bind(c.id.to_string())
        .execute(pool)
        .await
        .unwrap();
    for i in 0..20 {
        sqlx::query("INSERT INTO todos (id, execution_id, position, title, status, pinned, created_at, updated_at) VALUES (?, 'e1', ?, ?, 'pending', 1, 0, 0)")
            .bind(format!("t{i}"))
            .bind(i)
            .bind(format!("Check the ledger totals of region R-{i} against the warehouse export"))
            .execute(pool)
            .await
            .unwrap();
    }
    let window = WindowSettings::new(12_000);
    let mut fits = 0;
    for i in 0..300 {
        let text = format!(
            "Row batch {i}: compare the ledger with export-{i}.csv and note drift. {}",
            "detail ".repeat(20)
        );
        store
            .messages()
            .append(
                c.id,
                NewMessage::new(
                    if i % 2 == 0 {
                        Role::User
                    } else {
                        Role::Assistant
                    },
                    text,
                ),
            )
            .await
            .unwrap();
        let conversation = store.conversations().get(c.id).await.unwrap();
        let preset = preset_of(&store, &conversation).await.unwrap();
        if i % 25 == 24 {
            compress_if_needed(
                &ctx(&store, &conversation, &preset, &window, Scale::ONE),
                CompactionTrigger::Auto,
            )
            .await
            .unwrap();
        }
        let b = build(&store, &conversation, &preset, &window, Scale::ONE)
            .await
            .unwrap();
        if !b.compression_required() {
            fits += 1;
            let counter = decima_llm::tokens::store_counter();
            let real: u32 = b
                .assembled
                .request()
                .iter()
                .map(|m| counter.count_message(m))
                .sum();
            assert!(
                real + b.budgeting.output_reserve <= window.window,
                "step {i}: {real} tokens sent + {} reserved > window {}",
                b.budgeting.output_reserve,
                window.window
            );
        }
    }
    assert!(fits > 100, "{fits}");
    let _ = HistoryBudget::new(0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirming_a_preview_stores_the_summary_it_showed_unless_the_range_changed() {
    use decima_runtime::compression::WrittenSummary;
    use decima_testkit::{LlmServer, Reply, Turn};

    let answer = |text: &str| {
        Reply::Stream(Turn {
            text: vec![text.to_string()],
            ..Turn::default()
        })
    };
    let server = LlmServer::start().await;
    let (dir, store) = open().await;
    store
        .providers()
        .create(decima_store::NewProvider {
            name: "local".into(),
            kind: "openai".into(),
            preset: None,
            base_url: server.openai_base_url(),
            model: "qwen3".into(),
            context_window: 32_000,
            settings: serde_json::json!({}),
        })
        .await
        .unwrap();
    let conversation = seeded(&store, 5, 1_500).await;
    let preset = Preset::default();
    let window = WindowSettings::new(32_000);
    let ctx = CompressContext {
        provider: Some("local"),
        data_dir: dir.path(),
        ..ctx(&store, &conversation, &preset, &window, Scale::ONE)
    };
    let request = |dry_run, written| CompressRequest {
        level: Some(CompressionLevel::Standard),
        strategy: Strategy::Llm,
        dry_run,
        written,
    };

    // The preview: the model writes a summary; nothing is stored.
    server.enqueue(answer("## Goal\nThe previewed summary."));
    let CompressOutcome::Planned {
        written: Some(previewed),
        compaction_id: None,
        ..
    } = compress(&ctx, request(true, None)).await.unwrap()
    else {
        panic!("a preview with a written summary");
    };
    assert!(previewed.text.contains("The previewed summary."));
    assert_eq!(server.requests().len(), 1);

    // Confirming with it asks the model nothing and stores the previewed text.
    server.enqueue(answer("## Goal\nA second, different summary."));
    let CompressOutcome::Planned {
        compaction_id: Some(_),
        written: Some(stored),
        ..
    } = compress(&ctx, request(false, Some(previewed.clone())))
        .await
        .unwrap()
    else {
        panic!("a stored compaction");
    };
    assert_eq!(stored, previewed);
    assert_eq!(server.requests().len(), 1, "no second model call");
    let live = store
        .compactions()
        .live_summaries(conversation.id)
        .await
        .unwrap();
    assert!(
        live.iter()
            .any(|s| s.text.contains("The previewed summary.")),
        "the stored summary is the previewed one"
    );
    assert!(!live.iter().any(|s| s.text.contains("second, different")));
    store
        .compactions()
        .undo(
            &store.compactions().in_force(conversation.id).await.unwrap()[0]
                .0
                .id,
        )
        .await
        .unwrap();

    // A summary written for other messages is not reused: the model writes a new one.
    let stale = WrittenSummary {
        covers: (previewed.covers.0, previewed.covers.1 - 1),
        ..previewed.clone()
    };
    let CompressOutcome::Planned {
        written: Some(fresh),
        ..
    } = compress(&ctx, request(false, Some(stale))).await.unwrap()
    else {
        panic!("a stored compaction");
    };
    assert!(fresh.text.contains("second, different"), "{}", fresh.text);
    assert_eq!(server.requests().len(), 2);
}

/// The meter's breakdown shows a conversation's own system message with the system layer,
/// where a person looks for the system prompt, and the total stays what is sent.
#[tokio::test]
async fn a_conversations_own_system_message_is_counted_with_the_system_layer() {
    let (_dir, store) = open().await;
    let system = "You are the ledger agent. Answer in EUR and cite the invoice numbers you used.";
    let plain = store
        .conversations()
        .import(
            "plain",
            None,
            &[NewMessage::new(Role::User, "How many invoices are unpaid?")],
        )
        .await
        .unwrap();
    let with_system = store
        .conversations()
        .import(
            "with system",
            None,
            &[
                NewMessage::new(Role::System, system),
                NewMessage::new(Role::User, "How many invoices are unpaid?"),
            ],
        )
        .await
        .unwrap();
    let preset = Preset::default();
    let window = WindowSettings::new(32_000);
    let layer = |built: &decima_runtime::context::Built, name: &str| {
        built
            .report
            .layers
            .iter()
            .find(|l| l.name == name)
            .map(|l| l.tokens)
            .unwrap()
    };
    let a = build(&store, &plain, &preset, &window, Scale::ONE)
        .await
        .unwrap();
    let b = build(&store, &with_system, &preset, &window, Scale::ONE)
        .await
        .unwrap();
    let added = b.report.total - a.report.total;
    assert!(added > 10, "the system message is sent: +{added}");
    assert_eq!(
        layer(&b, "system_constants") - layer(&a, "system_constants"),
        added,
        "all of it shows with the system layer"
    );
    assert_eq!(layer(&b, "working_context"), layer(&a, "working_context"));
}

/// The compression dialog's preview is what the compression then does, as the meter counts it:
/// the whole request after, predicted from the plan, is what the meter reads once it is
/// applied, on a long history and a short one, at both levels.
#[tokio::test]
async fn a_preview_predicts_the_meter_after_the_compression() {
    for (seed, messages, level) in [
        (21, 3_000, CompressionLevel::Standard),
        (22, 3_000, CompressionLevel::Deep),
        (23, 160, CompressionLevel::Standard),
        (24, 160, CompressionLevel::Deep),
    ] {
        let (_dir, store) = open().await;
        let conversation = seeded(&store, seed, messages).await;
        let preset = Preset::default();
        let window = WindowSettings::new(16_000);
        let before = build(&store, &conversation, &preset, &window, Scale::ONE)
            .await
            .unwrap()
            .report
            .total;
        let request = |dry_run| CompressRequest {
            level: Some(level),
            strategy: Strategy::Extract,
            dry_run,
            written: None,
        };
        let ctx = ctx(&store, &conversation, &preset, &window, Scale::ONE);
        let CompressOutcome::Planned { plan, .. } = compress(&ctx, request(true)).await.unwrap()
        else {
            panic!("nothing planned for {messages} messages");
        };
        let promised = decima_runtime::compression::request_after(before, &plan, Scale::ONE);
        let CompressOutcome::Planned { compaction_id, .. } =
            compress(&ctx, request(false)).await.unwrap()
        else {
            panic!("nothing applied");
        };
        assert!(
            compaction_id.is_some(),
            "{messages} {level:?}: nothing stored"
        );
        let built_after = build(&store, &conversation, &preset, &window, Scale::ONE)
            .await
            .unwrap();
        let after = built_after.report.total;
        let off = f64::from(promised.abs_diff(after)) / f64::from(after.max(1));
        assert!(
            off <= 0.02,
            "{messages} messages, {level:?}: promised {promised}, the meter reads {after} \
             (before {before}; the plan's history {} -> {})",
            plan.tokens_before,
            plan.tokens_after
        );
        assert!(
            promised < before,
            "{messages} {level:?}: {promised} >= {before}"
        );
    }
}
