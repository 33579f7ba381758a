//! A run's log reads as a tree: the execution's span holds one span per step, and each step
//! holds its model call and its tool calls, each with the ids that tell them apart. Checked with
//! a tracing layer that records every span as it opens, with its parent, over a scripted run of
//! two steps (one shell call, then the answer).

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use common::Fixture;
use decima_runtime::agent::RunOptions;
use decima_store::ExecutionStatus;
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Level, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

/// A span as it opened: its name, its parent's name, its fields as `name=value` text.
#[derive(Debug, Clone)]
struct Opened {
    name: String,
    parent: Option<String>,
    fields: String,
}

#[derive(Clone, Default)]
struct Record(Arc<Mutex<Vec<Opened>>>);

struct FieldsText(String);

impl Visit for FieldsText {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, "{}={:?} ", field.name(), value);
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Record {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let span = ctx.span(id).unwrap();
        let mut fields = FieldsText(String::new());
        attrs.record(&mut fields);
        self.0.lock().unwrap().push(Opened {
            name: span.name().to_owned(),
            parent: span.parent().map(|p| p.name().to_owned()),
            fields: fields.0,
        });
    }
}

/// Set in the child process that records: it runs this test alone.
const CHILD: &str = "DECIMA_RUN_SPANS_CHILD";

// In a process of its own: the tests beside this one in the binary run runs of their own, and
// tracing's callsites are shared by the process (a span first met on another thread while no
// recording subscriber was there can stay off), so this test runs itself again as a child with
// the recording subscriber as the global one, and checks that the child passed.
#[test]
fn a_run_logs_its_steps_model_calls_and_tool_calls_as_a_tree() {
    if std::env::var_os(CHILD).is_some() {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
            .block_on(record_a_run());
        return;
    }
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &decima_testkit::processes::test_name(
                module_path!(),
                "a_run_logs_its_steps_model_calls_and_tool_calls_as_a_tree",
            ),
            "--test-threads=1",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .status()
        .unwrap();
    assert!(
        status.success(),
        "the recording child failed (its output is above)"
    );
}

async fn record_a_run() {
    let record = Record::default();
    let subscriber = tracing_subscriber::registry().with(record.clone().with_filter(
        tracing_subscriber::filter::LevelFilter::from_level(Level::INFO),
    ));
    tracing::subscriber::set_global_default(subscriber).unwrap();

    let f = Fixture::new().await;
    f.call("shell", json!({"command": "echo counted"}));
    f.say("Counted.");
    let outcome = f.run("Count it", RunOptions::default()).await;
    assert_eq!(outcome.execution.status, ExecutionStatus::Succeeded);

    let spans = record.0.lock().unwrap().clone();
    let named =
        |name: &str| -> Vec<Opened> { spans.iter().filter(|s| s.name == name).cloned().collect() };
    let execution = named("execution");
    assert_eq!(execution.len(), 1, "one execution span: {spans:#?}");
    assert!(
        execution[0]
            .fields
            .contains(&format!("execution={}", outcome.execution.id)),
        "the execution span carries its id: {:?}",
        execution[0].fields
    );

    let steps = named("step");
    assert_eq!(steps.len(), 2, "a span per step: {spans:#?}");
    for (i, step) in steps.iter().enumerate() {
        assert_eq!(step.parent.as_deref(), Some("execution"), "{step:?}");
        assert!(step.fields.contains(&format!("step={}", i + 1)), "{step:?}");
    }

    let calls = named("model.call");
    assert_eq!(calls.len(), 2, "a span per model call: {spans:#?}");
    for call in &calls {
        assert_eq!(call.parent.as_deref(), Some("step"), "{call:?}");
    }

    let tools = named("tool.call");
    assert_eq!(tools.len(), 1, "a span per tool call: {spans:#?}");
    assert_eq!(tools[0].parent.as_deref(), Some("step"), "{:?}", tools[0]);
    assert!(tools[0].fields.contains("tool=shell"), "{:?}", tools[0]);
    assert!(tools[0].fields.contains("call_id="), "{:?}", tools[0]);
}
