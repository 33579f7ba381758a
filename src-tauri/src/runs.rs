//! The runs the window started: the token that stops each, and the choice a run that hit a
//! failure waits for. The runtime does the work; this only connects it to the webview.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use decima_runtime::agent::{self, BoxFuture, CancellationToken, Choice, ChoiceSource};
use decima_runtime::mcp::{Approval, ApprovalRequest};
use decima_runtime::{Event, EventSink};
use decima_store::Failure;
use tauri::ipc::Channel;
use tokio::sync::oneshot;

use crate::dto::RunUpdate;

/// Live runs by run id.
#[derive(Default)]
pub struct Runs {
    live: Mutex<HashMap<String, Arc<LiveRun>>>,
}

/// One run in progress.
pub struct LiveRun {
    /// Stops it: the stream is dropped and the command's process group killed.
    pub cancel: CancellationToken,
    /// Where its failure choices come from.
    pub choices: WindowChoices,
}

impl Runs {
    /// Registers a new run and returns its id and handle.
    pub fn start(&self) -> (String, Arc<LiveRun>) {
        let id = uuid::Uuid::now_v7().to_string();
        let cancel = CancellationToken::new();
        let run = Arc::new(LiveRun {
            choices: WindowChoices {
                pending: Mutex::default(),
                approval: Mutex::default(),
                cancel: cancel.clone(),
            },
            cancel,
        });
        self.lock().insert(id.clone(), Arc::clone(&run));
        (id, run)
    }

    /// The run, while it lives.
    pub fn get(&self, id: &str) -> Option<Arc<LiveRun>> {
        self.lock().get(id).cloned()
    }

    /// Forgets an ended run.
    pub fn end(&self, id: &str) {
        self.lock().remove(id);
    }

    /// Stops every live run, as the Stop button does, and waits up to `within` for them to
    /// end: a run stopped this way shuts its MCP servers down and records itself cancelled,
    /// where an app that just exited would leave them running. Returns how many were left.
    pub fn stop_all(&self, within: std::time::Duration) -> usize {
        let live: Vec<Arc<LiveRun>> = self.lock().values().cloned().collect();
        if live.is_empty() {
            return 0;
        }
        tracing::info!(
            runs = live.len(),
            "stopping the live runs before the app exits"
        );
        for run in &live {
            run.cancel.cancel();
        }
        let deadline = std::time::Instant::now() + within;
        while !self.lock().is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<LiveRun>>> {
        // A poisoned map is still a consistent map: each operation is one insert or remove.
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Choices made in the recovery panel: a run that hit a failure waits here until the analyst
/// picks one the failure offers, or until it is stopped (then the execution stays
/// `awaiting_user`).
pub struct WindowChoices {
    pending: Mutex<Option<Waiting>>,
    /// Where the answer to an MCP call waiting for approval goes.
    approval: Mutex<Option<oneshot::Sender<Approval>>>,
    cancel: CancellationToken,
}

/// A run waiting on a failure: where its answer goes, and what the failure offers.
struct Waiting {
    answer: oneshot::Sender<Choice>,
    failure: Failure,
}

/// Why a choice was not handed to the run.
pub enum ChoiceRefused {
    /// The run is not waiting (it was answered already, or never asked).
    NotWaiting,
    /// The failure does not offer this choice; the run keeps waiting.
    NotOffered(decima_runtime::RuntimeError),
}

impl WindowChoices {
    /// Hands the analyst's answer to the MCP call waiting for approval.
    pub fn approve(&self, answer: Approval) -> Result<(), ChoiceRefused> {
        let waiting = self
            .approval
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        match waiting {
            Some(tx) => tx.send(answer).map_err(|_| ChoiceRefused::NotWaiting),
            None => Err(ChoiceRefused::NotWaiting),
        }
    }

    /// Hands the analyst's choice to the waiting run, if its failure offers it; otherwise the
    /// run keeps waiting and nothing changes.
    pub fn choose(&self, choice: Choice) -> Result<(), ChoiceRefused> {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(waiting) = pending.take() else {
            return Err(ChoiceRefused::NotWaiting);
        };
        if let Err(refused) = agent::offered_choice(&waiting.failure, choice.resolution) {
            *pending = Some(waiting);
            return Err(ChoiceRefused::NotOffered(refused));
        }
        waiting
            .answer
            .send(choice)
            .map_err(|_| ChoiceRefused::NotWaiting)
    }
}

impl ChoiceSource for WindowChoices {
    fn approve<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, Option<Approval>> {
        let (tx, rx) = oneshot::channel();
        *self.approval.lock().unwrap_or_else(PoisonError::into_inner) = Some(tx);
        Box::pin(async move {
            tokio::select! {
                answer = rx => answer.ok(),
                () = self.cancel.cancelled() => None,
            }
        })
    }

    fn choose<'a>(&'a self, failure: &'a Failure) -> BoxFuture<'a, Option<Choice>> {
        let (tx, rx) = oneshot::channel();
        *self.pending.lock().unwrap_or_else(PoisonError::into_inner) = Some(Waiting {
            answer: tx,
            failure: failure.clone(),
        });
        Box::pin(async move {
            tokio::select! {
                choice = rx => choice.ok(),
                () = self.cancel.cancelled() => None,
            }
        })
    }
}

/// Runs shorter than this end without a notification: the analyst is still looking.
const LONG_RUN: std::time::Duration = std::time::Duration::from_secs(20);

/// Sends a run's events to the webview, in order, through the channel the command was given,
/// and tells the analyst through a native notification when the window is not focused and the
/// run waits for a choice or ends after a long time.
pub struct ChannelSink {
    channel: Channel<RunUpdate>,
    app: tauri::AppHandle,
    started: std::time::Instant,
}

impl ChannelSink {
    /// A sink over the webview's channel.
    pub fn new(channel: Channel<RunUpdate>, app: tauri::AppHandle) -> Self {
        Self {
            channel,
            app,
            started: std::time::Instant::now(),
        }
    }

    /// A native notification, unless the window has the focus. The text says what happened,
    /// never what the conversation holds.
    pub fn notify_unless_focused(&self, title: &str, body: &str) {
        use tauri::Manager;
        use tauri_plugin_notification::NotificationExt;
        let focused = self
            .app
            .get_webview_window("main")
            .and_then(|w| w.is_focused().ok())
            .unwrap_or(false);
        if focused {
            return;
        }
        if let Err(e) = self
            .app
            .notification()
            .builder()
            .title(title)
            .body(body)
            .show()
        {
            tracing::debug!(error = %e, "no notification");
        }
    }

    /// Whether the run has been going long enough to notify its end.
    pub fn was_long(&self) -> bool {
        self.started.elapsed() >= LONG_RUN
    }

    /// Sends an update: an event, or the run's end.
    pub fn send(&self, event: RunUpdate) {
        if let Err(e) = self.channel.send(event) {
            tracing::debug!(error = %e, "the window no longer listens to this run");
        }
    }
}

impl EventSink for ChannelSink {
    fn emit(&self, event: Event) {
        if matches!(event, Event::AwaitingChoice { .. }) {
            self.notify_unless_focused(
                "Decima: a run waits for you",
                "It stopped at a failure and waits for your choice.",
            );
        }
        self.send(RunUpdate::event(event));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use decima_core::{ExecutionId, FailureClass, Timestamp};
    use decima_store::Resolution;

    fn failure(offered: &[&str]) -> Failure {
        Failure {
            id: "f1".into(),
            execution_id: ExecutionId::new(),
            todo_id: None,
            class: FailureClass::Logic,
            message: "the step budget of 50 model calls is used up".into(),
            details: serde_json::json!({"trigger": "step_budget"}),
            snapshot_id: None,
            rolled_back: serde_json::json!({}),
            suggested_actions: serde_json::json!(offered),
            resolution: None,
            resolved_at: None,
            resolved_by: None,
            created_at: Timestamp(0),
        }
    }

    #[tokio::test]
    async fn the_panel_hands_over_only_a_choice_the_failure_offers() {
        let choices = WindowChoices {
            pending: Mutex::default(),
            approval: Mutex::default(),
            cancel: CancellationToken::new(),
        };
        assert!(matches!(
            choices.choose(Resolution::Retry.into()),
            Err(ChoiceRefused::NotWaiting)
        ));
        let failure = failure(&["retry", "replan", "rollback", "abort"]);
        let waiting = ChoiceSource::choose(&choices, &failure);
        // Skip is not offered: refused, and the run still waits for a valid answer.
        match choices.choose(Resolution::Skip.into()) {
            Err(ChoiceRefused::NotOffered(e)) => {
                let text = e.to_string();
                assert!(text.contains("retry, replan, rollback, abort"), "{text}");
            }
            _ => panic!("skip was handed to the run"),
        }
        let guided = Choice::new(Resolution::Rollback, Some("keep q3")).unwrap();
        assert!(choices.choose(guided.clone()).is_ok());
        assert_eq!(waiting.await, Some(guided));
        assert!(matches!(
            choices.choose(Resolution::Abort.into()),
            Err(ChoiceRefused::NotWaiting)
        ));
    }

    #[tokio::test]
    async fn an_approval_is_handed_to_the_waiting_call_once() {
        use decima_runtime::mcp::{Approval, ApprovalRequest};
        let choices = WindowChoices {
            pending: Mutex::default(),
            approval: Mutex::default(),
            cancel: CancellationToken::new(),
        };
        assert!(matches!(
            choices.approve(Approval::Once),
            Err(ChoiceRefused::NotWaiting)
        ));
        let request = ApprovalRequest {
            server: "db".into(),
            tool: "query".into(),
            offered: "mcp__db__query".into(),
            arguments: "{}".into(),
            read_only: Some(true),
            destructive: None,
        };
        let waiting = ChoiceSource::approve(&choices, &request);
        assert!(choices.approve(Approval::Conversation).is_ok());
        assert_eq!(waiting.await, Some(Approval::Conversation));
        assert!(matches!(
            choices.approve(Approval::Deny),
            Err(ChoiceRefused::NotWaiting)
        ));
    }
}
