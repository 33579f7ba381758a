//! The failure path: the report, the rollback its class calls for, the automatic replan, and
//! the analyst's choice.

use super::*;
use crate::agent::report::{FailedCall, FailureDetails, FailureReport};

impl Runner<'_, '_> {
    /// The failure path: record, roll back when the class says so, and wait for a choice (or
    /// take the one automatic replan a logic failure gets).
    pub(super) async fn fail(&mut self, pending: Pending) -> Result<Flow> {
        let plan = self.plan().await?;
        let failed_todo = match pending.trigger {
            Trigger::TodoFailed => plan
                .iter()
                .find(|t| t.status == TodoStatus::Failed)
                .map(|t| t.id.clone()),
            _ => None,
        };
        let place = Place::of(&plan, failed_todo.as_deref());
        let causes = failure::likely_causes(&pending);
        warn!(
            class = %pending.class,
            trigger = pending.trigger.as_str(),
            todo = place.todo_id.as_deref().unwrap_or("-"),
            "failure"
        );
        let auto_replan = pending.class == FailureClass::Logic
            && pending.trigger != Trigger::StepBudget
            && !std::mem::replace(&mut self.auto_replan_used, true);
        if auto_replan {
            let recorded = self.record_failure(&pending, &place, &causes, None).await?;
            let resolved = self
                .store()
                .failures()
                .resolve(&recorded.id, Resolution::Replan)
                .await?;
            self.log_event("failure.auto_replan", &json!({ "failure_id": resolved.id }))
                .await?;
            self.instant = Some(failure::render_for_model(
                &pending,
                &place,
                &causes,
                None,
                Resolution::Replan,
            ));
            self.stuck.reset();
            self.emit(Event::Recovered {
                failure_id: resolved.id,
                choice: Resolution::Replan.as_str(),
            });
            return Ok(Flow::Continue);
        }
        let rolls_back = matches!(
            pending.class,
            FailureClass::Data
                | FailureClass::Permission
                | FailureClass::System
                | FailureClass::Logic
        ) && pending.trigger != Trigger::StepBudget;
        let target = if rolls_back {
            rollback_target(self.store(), place.todo_id.as_deref()).await?
        } else {
            None
        };
        let rolled = match &target {
            Some(snapshot) => {
                let rolled = self
                    .checkpoints
                    .roll_back(self.store(), self.conversation.id, snapshot)
                    .await?;
                self.emit_plan(&self.plan().await?);
                Some(rolled)
            }
            None => None,
        };
        // Calls whose results the rollback removed get an answer that says so.
        for call in dangling::unanswered(self.store(), self.conversation.id).await? {
            let text = "[rolled back] this call's effects were undone by a rollback to the \
                        start of the todo"
                .to_owned();
            self.answer_unrun(&call, text, None).await?;
        }
        let recorded = self
            .record_failure(&pending, &place, &causes, rolled.as_ref())
            .await?;
        if let Some(rolled) = &rolled {
            self.emit(Event::RolledBack {
                failure_id: recorded.id.clone(),
                snapshot_id: rolled.snapshot_id.clone(),
                files_restored: rolled.files_restored,
                files_removed: rolled.files_removed,
                messages_removed: rolled.messages_removed,
            });
        }
        self.set_status(ExecutionStatus::AwaitingUser).await?;
        self.emit(Event::AwaitingChoice {
            failure_id: recorded.id.clone(),
            suggestions: FailureReport::of(&recorded).suggestions,
        });
        match self.session.choices.choose(&recorded).await {
            Some(choice) => self.apply_choice(&recorded, choice).await,
            None => {
                self.emit(Event::Finished {
                    execution_id: self.execution.id,
                    status: ExecutionStatus::AwaitingUser.as_str(),
                });
                Ok(Flow::Stop(Box::new(RunOutcome {
                    execution: self.execution.clone(),
                    answer: None,
                    waiting_on: Some(recorded),
                })))
            }
        }
    }

    pub(super) async fn record_failure(
        &self,
        pending: &Pending,
        place: &Place,
        causes: &[String],
        rolled: Option<&RolledBack>,
    ) -> Result<Failure> {
        let suggestions: Vec<&str> = failure::suggestions(pending, rolled.is_some())
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
    pub(super) async fn apply_choice(
        &mut self,
        failure: &Failure,
        choice: Resolution,
    ) -> Result<Flow> {
        let resolved = self.store().failures().resolve(&failure.id, choice).await?;
        self.log_event(
            "failure.resolved",
            &json!({ "failure_id": resolved.id, "choice": choice.as_str() }),
        )
        .await?;
        self.emit(Event::Recovered {
            failure_id: resolved.id.clone(),
            choice: choice.as_str(),
        });
        if choice == Resolution::Abort && self.execution.parent_id.is_some() {
            // A subagent ends at its first failure: failed, with the reason its parent reads.
            return self
                .finish_failed(&format!("[{}] {}", failure.class, failure.message))
                .await
                .map(|o| Flow::Stop(Box::new(o)));
        }
        if choice == Resolution::Abort {
            return self
                .finish_cancelled()
                .await
                .map(|o| Flow::Stop(Box::new(o)));
        }
        if self.execution.status != ExecutionStatus::Running {
            self.set_status(ExecutionStatus::Running).await?;
        }
        self.stuck.reset();
        let FailureReport {
            details,
            rolled_back: rolled,
            ..
        } = FailureReport::of(failure);
        let pending = Pending {
            class: failure.class,
            trigger: details.trigger(),
            message: failure.message.clone(),
            call: None,
        };
        let place = details.place;
        let causes = details.likely_causes;
        match choice {
            Resolution::Retry => {
                if pending.trigger == Trigger::StepBudget {
                    self.step_limit = self.steps_taken + self.options.max_steps.max(1);
                }
            }
            Resolution::Skip => {
                if let Some(todo) = &failure.todo_id {
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
                if pending.trigger == Trigger::StepBudget {
                    self.step_limit = self.steps_taken + self.options.max_steps.max(1);
                }
            }
            Resolution::Replan => {
                if pending.trigger == Trigger::StepBudget {
                    self.step_limit = self.steps_taken + self.options.max_steps.max(1);
                }
            }
            Resolution::Abort => {}
        }
        self.instant = Some(failure::render_for_model(
            &pending,
            &place,
            &causes,
            rolled.as_ref(),
            choice,
        ));
        Ok(Flow::Continue)
    }
}
