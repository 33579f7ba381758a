//! The failure path: the report, the rollback its class calls for, the automatic replan, and
//! the analyst's choice, which must be one the failure offers.

use super::todo_state::ReplanWatch;
use super::{Flow, Runner, clip};
use crate::agent::Choice;
use crate::agent::checkpoint::{RolledBack, rollback_target};
use crate::agent::failure::Options;
use crate::agent::failure::{Pending, Place, Trigger};
use crate::agent::report::{FailedCall, FailureDetails, FailureReport, TodoChanges};
use crate::agent::{RunOutcome, dangling, failure};
use crate::error::{Result, RuntimeError};
use crate::events::Event;
use crate::plan;
use decima_core::FailureClass;
use decima_store::{EndedBy, ExecutionStatus, Failure, NewFailure, Resolution, TodoStatus};
use serde_json::json;
use tracing::warn;

/// What applying a choice leaves the loop to do.
pub(super) enum Chosen {
    /// Go on, or stop, as the choice says.
    Go(Flow),
    /// The choice rolled back and left a new failure to answer: ask again.
    AskAgain(Box<Failure>),
}

impl Runner<'_, '_> {
    /// The failure path: record, roll back when the class says so, and wait for a choice (or
    /// take the one automatic replan a logic failure gets).
    pub(super) async fn fail(&mut self, pending: Pending) -> Result<Flow> {
        let replannable =
            pending.class == FailureClass::Logic && pending.trigger.allows_auto_replan();
        let auto_replan = self.todo.failed(replannable);
        let plan = self.plan().await?;
        let place = Place::of(&plan, pending.todo.as_deref());
        let causes = failure::likely_causes(&pending);
        warn!(
            class = %pending.class,
            trigger = pending.trigger.as_str(),
            todo = place.todo_id.as_deref().unwrap_or("-"),
            "failure"
        );
        if auto_replan {
            return self.auto_replan(&pending, &place, &causes).await;
        }
        let rolls_back = matches!(
            pending.class,
            FailureClass::Data
                | FailureClass::Permission
                | FailureClass::System
                | FailureClass::Logic
        ) && pending.trigger != Trigger::StepBudget;
        let target = rollback_target(self.store(), place.todo_id.as_deref()).await?;
        let rolled = match (&target, rolls_back) {
            (Some(snapshot), true) => Some(self.roll_back_to(snapshot).await?),
            _ => None,
        };
        // What stays in place is what a rollback on request would undo: the analyst sees it.
        let changes = match (&target, &rolled) {
            (Some(snapshot), None) => Some(
                self.checkpoints
                    .changes_since(self.store(), self.conversation.id, snapshot)
                    .await?,
            ),
            _ => None,
        };
        let recorded = self
            .record_failure(&pending, &place, &causes, rolled.as_ref(), changes)
            .await?;
        if let Some(rolled) = &rolled {
            self.emit_rolled_back(&recorded, rolled);
        }
        self.wait_for_choice(recorded).await
    }

    /// The one automatic replan of a logic failure: the report goes to the model as the instant
    /// context, and the failed todo is watched.
    async fn auto_replan(
        &mut self,
        pending: &Pending,
        place: &Place,
        causes: &[String],
    ) -> Result<Flow> {
        let recorded = self
            .record_failure(pending, place, causes, None, None)
            .await?;
        let resolved = self
            .store()
            .failures()
            .resolve_automatically(&recorded.id, Resolution::Replan)
            .await?;
        self.log_event("failure.auto_replan", &json!({ "failure_id": resolved.id }))
            .await?;
        self.carried.instant_context = Some(failure::render_for_model(
            pending,
            place,
            causes,
            None,
            Resolution::Replan,
        ));
        let watch = match (&pending.trigger, &place.todo_id) {
            (Trigger::TodoFailed, Some(todo)) => Some(ReplanWatch {
                todo: todo.clone(),
                class: pending.class,
            }),
            _ => None,
        };
        self.todo.replanned(watch);
        self.emit(Event::Recovered {
            failure_id: resolved.id,
            choice: Resolution::Replan,
        });
        Ok(Flow::Continue)
    }

    /// After the model acted following the automatic replan: the failure when the todo it was
    /// given for is still failed. A failure is a state, not a transition: a model that marks
    /// the same todo failed again, or leaves it failed and does something else, is caught here.
    pub(super) async fn replan_not_taken(&mut self) -> Result<Option<Pending>> {
        let Some(watch) = self.todo.take_watch() else {
            return Ok(None);
        };
        let plan = self.plan().await?;
        let Some(todo) = plan
            .iter()
            .find(|t| t.id == watch.todo && t.status == TodoStatus::Failed)
        else {
            return Ok(None);
        };
        Ok(Some(Pending {
            class: watch.class,
            trigger: Trigger::StillFailed,
            message: format!(
                "\"{}\" is still failed after the automatic replan{}",
                clip(&todo.title, 120),
                todo.reason
                    .as_deref()
                    .map(|r| format!(": {}", clip(r, 200)))
                    .unwrap_or_default()
            ),
            call: None,
            todo: Some(todo.id.clone()),
        }))
    }

    /// Rolls back to `snapshot` and answers the calls whose results the rollback removed.
    async fn roll_back_to(&mut self, snapshot: &decima_store::Snapshot) -> Result<RolledBack> {
        let rolled = self
            .checkpoints
            .roll_back(self.store(), self.conversation.id, snapshot)
            .await?;
        self.emit_plan(&self.plan().await?);
        for call in dangling::unanswered(self.store(), self.conversation.id).await? {
            let text = "[rolled back] this call's effects were undone by a rollback to the \
                        start of the todo"
                .to_owned();
            self.answer_unrun(&call, text, None).await?;
        }
        // The history changed under the cached window.
        self.window_cache.forget();
        Ok(rolled)
    }

    fn emit_rolled_back(&self, failure: &Failure, rolled: &RolledBack) {
        self.emit(Event::RolledBack {
            failure_id: failure.id.clone(),
            snapshot_id: rolled.snapshot_id.clone(),
            files_restored: rolled.files_restored,
            files_removed: rolled.files_removed,
            messages_removed: rolled.messages_removed,
        });
    }

    /// Waits for the analyst's choice on `failure` and applies it. A choice the failure does
    /// not offer is refused: the execution keeps waiting, the failure unresolved.
    pub(super) async fn wait_for_choice(&mut self, mut failure: Failure) -> Result<Flow> {
        loop {
            if self.execution.status != ExecutionStatus::AwaitingUser {
                self.set_status(ExecutionStatus::AwaitingUser).await?;
            }
            let report = FailureReport::of(&failure);
            self.emit(Event::AwaitingChoice {
                execution_id: self.execution.id,
                failure_id: failure.id.clone(),
                suggestions: report.offered(),
            });
            let choice = match self.session.choices.choose(&failure).await {
                Some(choice) if report.offers(choice.resolution) => choice,
                Some(choice) => {
                    warn!(
                        choice = choice.resolution.as_str(),
                        offered = ?report.suggestions,
                        "a choice this failure does not offer was refused; the run waits"
                    );
                    return Ok(self.stop_waiting(failure));
                }
                None => return Ok(self.stop_waiting(failure)),
            };
            match self.apply_choice(&failure, &choice).await? {
                Chosen::Go(flow) => return Ok(flow),
                Chosen::AskAgain(next) => failure = *next,
            }
        }
    }

    /// Leaves the execution waiting on `failure`, for `recover` to continue later.
    fn stop_waiting(&self, failure: Failure) -> Flow {
        self.emit(Event::Finished {
            execution_id: self.execution.id,
            status: ExecutionStatus::AwaitingUser,
        });
        Flow::Stop(Box::new(RunOutcome {
            execution: self.execution.clone(),
            answer: None,
            waiting_on: Some(failure),
        }))
    }

    pub(super) async fn record_failure(
        &self,
        pending: &Pending,
        place: &Place,
        causes: &[String],
        rolled: Option<&RolledBack>,
        changes: Option<TodoChanges>,
    ) -> Result<Failure> {
        let options = Options {
            rolled_back: rolled.is_some(),
            has_todo: place.todo_id.is_some(),
            can_roll_back: changes.is_some(),
        };
        let suggestions: Vec<&str> = failure::suggestions(&pending.trigger, pending.class, options)
            .into_iter()
            .map(Resolution::as_str)
            .collect();
        let recorded = self
            .store()
            .failures()
            .record(&NewFailure {
                execution_id: self.execution.id,
                todo_id: place.todo_id.clone(),
                class: pending.class,
                message: pending.message.clone(),
                details: serde_json::to_value(FailureDetails {
                    trigger: Some(pending.trigger.as_str().to_owned()),
                    place: place.clone(),
                    likely_causes: causes.to_vec(),
                    call: pending.call.as_ref().map(|(name, arguments)| FailedCall {
                        name: name.clone(),
                        arguments: arguments.clone(),
                    }),
                    step: self.steps_taken,
                    changes,
                    served_window: (pending.class == FailureClass::ContextOverflow)
                        .then(|| decima_llm::served_limit(&pending.message))
                        .flatten(),
                    figures: if pending.class == FailureClass::Unlinked {
                        self.carried.unlinked.clone()
                    } else {
                        Vec::new()
                    },
                })
                .unwrap_or_default(),
                snapshot_id: rolled.map(|r| r.snapshot_id.clone()),
                rolled_back: rolled
                    .map(|r| serde_json::to_value(r).unwrap_or_default())
                    .unwrap_or_else(|| json!({})),
                suggested_actions: json!(suggestions),
            })
            .await?;
        self.emit(Event::Failure {
            failure_id: recorded.id.clone(),
            class: recorded.class,
            message: recorded.message.clone(),
            alert: recorded.class == FailureClass::System,
        });
        Ok(recorded)
    }

    /// Applies the analyst's choice to a waiting failure, and says whether the loop goes on.
    /// A choice the failure does not offer is refused before anything is stored.
    pub(super) async fn apply_choice(
        &mut self,
        failure: &Failure,
        answer: &Choice,
    ) -> Result<Chosen> {
        let choice = answer.resolution;
        let report = FailureReport::of(failure);
        if !report.offers(choice) {
            return Err(not_offered(failure, choice));
        }
        if failure.class == FailureClass::Unlinked {
            return self.decide_figures(failure, &report, answer).await;
        }
        if choice == Resolution::Rollback {
            let next = self.roll_back_on_request(failure).await?;
            // After the rollback, which would otherwise undo it.
            self.store_guidance(answer).await?;
            return Ok(Chosen::AskAgain(Box::new(next)));
        }
        if choice == Resolution::Compress {
            // Before the answer is stored: a compression that fails leaves the failure
            // waiting for another choice.
            self.compress_to_fit(report.details.served_window).await?;
        }
        let resolved = self.store().failures().resolve(&failure.id, choice).await?;
        self.log_event(
            "failure.resolved",
            &json!({ "failure_id": resolved.id, "choice": choice.as_str() }),
        )
        .await?;
        self.emit(Event::Recovered {
            failure_id: resolved.id.clone(),
            choice,
        });
        self.store_guidance(answer).await?;
        if choice == Resolution::Abort && self.execution.parent_id.is_some() {
            // A subagent ends at its first failure: failed, with the reason its parent reads.
            return self
                .finish_failed(&format!("[{}] {}", failure.class, failure.message))
                .await
                .map(|o| Chosen::Go(Flow::Stop(Box::new(o))));
        }
        if choice == Resolution::Abort {
            return self
                .finish_cancelled(EndedBy::Abort)
                .await
                .map(|o| Chosen::Go(Flow::Stop(Box::new(o))));
        }
        if self.execution.status != ExecutionStatus::Running {
            self.set_status(ExecutionStatus::Running).await?;
        }
        self.todo.chosen();
        let FailureReport {
            details,
            rolled_back: rolled,
            ..
        } = report;
        let pending = Pending {
            class: failure.class,
            trigger: details.trigger(),
            message: failure.message.clone(),
            call: None,
            todo: failure.todo_id.clone(),
        };
        let place = details.place;
        let causes = details.likely_causes;
        if pending.trigger == Trigger::StepBudget {
            // Whatever the analyst chose, going on needs steps.
            self.step_limit = self.steps_taken + self.options.max_steps.max(1);
        }
        if choice == Resolution::Skip
            && let Some(todo) = &failure.todo_id
        {
            let mut inputs = plan::as_inputs(&self.plan().await?);
            for input in inputs.iter_mut().filter(|i| i.id.as_deref() == Some(todo)) {
                input.status = TodoStatus::Skipped;
                input.reason = None;
            }
            let after = self
                .store()
                .todos()
                .replace_plan(self.execution.id, &inputs)
                .await?;
            self.emit_plan(&after);
        }
        let mut report =
            failure::render_for_model(&pending, &place, &causes, rolled.as_ref(), choice);
        if answer.guidance.is_some() {
            report.push_str(
                "The analyst's guidance with this choice is their last message: follow it.\n",
            );
        }
        self.carried.instant_context = Some(report);
        Ok(Chosen::Go(Flow::Continue))
    }

    /// The analyst's guidance with a choice, as their message in the conversation: the model
    /// reads it with the rest of the history, and the transcript shows it where it was given.
    async fn store_guidance(&mut self, answer: &Choice) -> Result<()> {
        let Some(guidance) = &answer.guidance else {
            return Ok(());
        };
        let mut message = decima_core::NewMessage::new(decima_core::Role::User, guidance.clone());
        message.execution_id = Some(self.execution.id);
        self.store_message(message).await?;
        self.window_cache.forget();
        Ok(())
    }

    /// The analyst asked to roll a failure back that did not roll back on its own: the
    /// workspace, the plan and the history go back to the todo's snapshot, the failure is
    /// resolved `rollback`, and a new failure with what was undone waits for the next choice.
    async fn roll_back_on_request(&mut self, failure: &Failure) -> Result<Failure> {
        let report = FailureReport::of(failure);
        let snapshot = rollback_target(self.store(), failure.todo_id.as_deref())
            .await?
            .ok_or_else(|| {
                RuntimeError::Conflict(format!(
                    "failure {} has no snapshot to roll back to any more",
                    failure.id
                ))
            })?;
        let rolled = self.roll_back_to(&snapshot).await?;
        let resolved = self
            .store()
            .failures()
            .resolve(&failure.id, Resolution::Rollback)
            .await?;
        self.log_event(
            "failure.resolved",
            &json!({ "failure_id": resolved.id, "choice": Resolution::Rollback.as_str() }),
        )
        .await?;
        self.emit(Event::Recovered {
            failure_id: resolved.id.clone(),
            choice: Resolution::Rollback,
        });
        let pending = Pending {
            class: failure.class,
            trigger: report.details.trigger(),
            message: failure.message.clone(),
            call: report
                .details
                .call
                .as_ref()
                .map(|c| (c.name.clone(), c.arguments.clone())),
            todo: failure.todo_id.clone(),
        };
        let place = Place::of(&self.plan().await?, failure.todo_id.as_deref());
        let next = self
            .record_failure(
                &pending,
                &place,
                &report.details.likely_causes,
                Some(&rolled),
                None,
            )
            .await?;
        self.emit_rolled_back(&next, &rolled);
        Ok(next)
    }
}

/// The refusal of a choice the failure does not offer, naming those it does.
pub(crate) fn not_offered(failure: &Failure, choice: Resolution) -> RuntimeError {
    let offered: Vec<&str> = FailureReport::of(failure)
        .offered()
        .into_iter()
        .map(Resolution::as_str)
        .collect();
    RuntimeError::ChoiceNotOffered(format!(
        "{} is not a choice for failure {} of execution {}: it offers {}; nothing was changed",
        choice.as_str(),
        failure.id,
        failure.execution_id,
        offered.join(", ")
    ))
}
