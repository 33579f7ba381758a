//! What the runtime's loop tests share: a real SQLite file in a temp directory, the wire-level
//! test server scripted per request, and a choice source that answers from a list.

// Test code: a failed setup step should panic right where it happened. Each test binary uses a
// part of this module.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use decima_runtime::CollectEvents;
use decima_runtime::agent::{
    self, CancellationToken, ChoiceSource, RunOptions, RunOutcome, RunRequest, Session,
    StopOnFailure,
};
use decima_sandbox::host::BoxFuture;
use decima_store::{Failure, NewProvider, Resolution, Store};
use decima_testkit::{LlmServer, Reply, ScriptedToolCall, Turn};
use serde_json::{Value, json};

pub struct Fixture {
    pub server: LlmServer,
    pub dir: tempfile::TempDir,
    pub store: Store,
    pub events: CollectEvents,
}

impl Fixture {
    pub async fn new() -> Self {
        let server = LlmServer::start().await;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(
            &dir.path().join("decima.db"),
            decima_llm::tokens::store_counter(),
        )
        .await
        .unwrap();
        let fixture = Self {
            server,
            dir,
            store,
            events: CollectEvents::default(),
        };
        fixture
            .add_provider("local", "openai", "qwen3", 64_000)
            .await;
        fixture
    }

    /// Adds a provider row pointing at the test server.
    pub async fn add_provider(&self, name: &str, kind: &str, model: &str, window: u32) {
        let base_url = match kind {
            "anthropic" => self.server.anthropic_base_url(),
            _ => self.server.openai_base_url(),
        };
        self.store
            .providers()
            .create(NewProvider {
                name: name.into(),
                kind: kind.into(),
                preset: None,
                base_url,
                model: model.into(),
                context_window: window,
                settings: json!({}),
            })
            .await
            .unwrap();
    }

    /// Runs `task` in the workspace with the named provider.
    pub async fn run_with(&self, provider: &str, task: &str) -> RunOutcome {
        self.run_in(provider, None, task).await
    }

    /// [`Self::run_with`] in a conversation that exists already (`None` starts one).
    pub async fn run_in(
        &self,
        provider: &str,
        conversation: Option<decima_core::ConversationId>,
        task: &str,
    ) -> RunOutcome {
        let session = Session {
            provider: Some(provider),
            ..self.session(&StopOnFailure)
        };
        agent::run(
            &session,
            RunRequest {
                conversation,
                workspace: Some(self.workspace()),
                task: task.into(),
                options: RunOptions {
                    tenth_man: decima_runtime::review::TenthManMode::Off,
                    // The loop's tests, not the figures': their answers' numbers are scripted.
                    check_figures: false,
                    ..RunOptions::default()
                },
                ..RunRequest::default()
            },
        )
        .await
        .unwrap()
    }

    /// Runs `task` with the "local" provider in `conversation`, where its run options put it
    /// (its own workspace folder, or its container), the tenth man off.
    pub async fn run_here(
        &self,
        conversation: decima_core::ConversationId,
        task: &str,
        sandbox: decima_store::SandboxKind,
    ) -> RunOutcome {
        agent::run(
            &Session {
                provider: Some("local"),
                ..self.session(&StopOnFailure)
            },
            RunRequest {
                conversation: Some(conversation),
                workspace: None,
                task: task.into(),
                sandbox,
                options: RunOptions {
                    tenth_man: decima_runtime::review::TenthManMode::Off,
                    // The loop's tests, not the figures': their answers' numbers are scripted.
                    check_figures: false,
                    ..RunOptions::default()
                },
            },
        )
        .await
        .unwrap()
    }

    pub fn workspace(&self) -> std::path::PathBuf {
        let ws = self.dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        ws
    }

    pub fn session<'a>(&'a self, choices: &'a dyn ChoiceSource) -> Session<'a> {
        Session {
            store: &self.store,
            data_dir: self.dir.path(),
            provider: None,
            events: &self.events,
            choices,
            cancel: CancellationToken::new(),
        }
    }

    /// Runs a task. These tests are about the loop, so the tenth man is off (its final review
    /// would ask the scripted model for one more answer; the CLI's review tests cover it).
    pub async fn run(&self, task: &str, options: RunOptions) -> RunOutcome {
        let options = RunOptions {
            tenth_man: decima_runtime::review::TenthManMode::Off,
            // The loop's tests, not the figures': their answers' numbers are scripted.
            check_figures: false,
            ..options
        };
        agent::run(
            &self.session(&StopOnFailure),
            RunRequest {
                conversation: None,
                workspace: Some(self.workspace()),
                task: task.into(),
                sandbox: decima_store::SandboxKind::Host,
                options,
            },
        )
        .await
        .unwrap()
    }

    pub fn say(&self, text: &str) {
        self.server.enqueue(Reply::Stream(Turn {
            text: vec![text.into()],
            ..Turn::default()
        }));
    }

    pub fn call(&self, name: &str, args: Value) {
        self.calls(&[(name, args)]);
    }

    pub fn calls(&self, calls: &[(&str, Value)]) {
        let n = self.server.requests().len() + self.server.pending_replies();
        self.server.enqueue(Reply::Stream(Turn {
            tool_calls: calls
                .iter()
                .enumerate()
                .map(|(i, (name, args))| ScriptedToolCall {
                    id: format!("call_{n}_{i}"),
                    name: (*name).into(),
                    argument_chunks: vec![args.to_string()],
                })
                .collect(),
            ..Turn::default()
        }));
    }

    pub fn raw_call(&self, name: &str, raw: &str) {
        let n = self.server.requests().len() + self.server.pending_replies();
        self.server.enqueue(Reply::Stream(Turn {
            tool_calls: vec![ScriptedToolCall {
                id: format!("call_raw_{n}"),
                name: name.into(),
                argument_chunks: vec![raw.into()],
            }],
            ..Turn::default()
        }));
    }

    /// The tool results the model got in request `i` (0-based), by call id order.
    pub fn tool_results(&self, i: usize) -> Vec<String> {
        let request = &self.server.requests()[i];
        request.json.as_ref().unwrap()["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    pub fn last_tool_result(&self, i: usize) -> String {
        self.tool_results(i).pop().unwrap()
    }

    /// What the store holds for the run's conversation, in order.
    pub async fn messages_of(&self, outcome: &RunOutcome) -> Vec<decima_core::Message> {
        self.store
            .messages()
            .all(outcome.execution.conversation_id)
            .await
            .unwrap()
    }

    /// The stored tool result whose text holds `needle`, and the images kept with it.
    pub async fn result_with_images(
        &self,
        outcome: &RunOutcome,
        needle: &str,
    ) -> (decima_core::Message, Vec<decima_core::ImagePart>) {
        let result = self
            .messages_of(outcome)
            .await
            .into_iter()
            .find(|m| m.content.contains(needle))
            .unwrap_or_else(|| panic!("no stored result holds {needle:?}"));
        let kept = self
            .store
            .messages()
            .result_images(
                outcome.execution.conversation_id,
                result.tool_call_id.as_deref().unwrap(),
            )
            .await
            .unwrap();
        (result, kept)
    }

    pub fn request_text(&self, i: usize) -> String {
        self.server.requests()[i].json.as_ref().unwrap().to_string()
    }
}

pub fn todos(list: &[(&str, &str)]) -> Value {
    json!({ "todos": list.iter().map(|(title, status)| json!({"title": title, "status": status})).collect::<Vec<_>>() })
}

/// Answers each failure with the next choice of a list (popped from its end); `None` once it
/// is empty, which leaves the execution waiting.
pub struct Choices(pub std::sync::Mutex<Vec<Resolution>>);

impl ChoiceSource for Choices {
    fn choose<'a>(&'a self, _failure: &'a Failure) -> BoxFuture<'a, Option<agent::Choice>> {
        let next = self.0.lock().unwrap().pop().map(agent::Choice::from);
        Box::pin(async move { next })
    }
}
