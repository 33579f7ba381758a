//! How an execution ends: succeeded with its answer (and the final review), failed with its
//! reason, or cancelled with every open call answered. Each is stored before it is reported.

use super::Runner;
use crate::agent::{RunOutcome, dangling};
use crate::error::Result;
use crate::events::Event;
use decima_core::FailureClass;
use decima_store::{EndedBy, ExecutionStatus};
use tracing::info;

impl Runner<'_, '_> {
    pub(super) async fn finish_succeeded(&mut self, answer: String) -> Result<RunOutcome> {
        // The final review is part of the run: it runs before the run is marked finished, so
        // the run's duration includes it and the window shows the run as working meanwhile.
        self.final_review().await?;
        self.execution = self
            .store()
            .executions()
            .finish(
                self.execution.id,
                ExecutionStatus::Succeeded,
                Some(&answer),
                None,
            )
            .await?;
        info!(steps = self.steps_taken, "execution succeeded");
        self.emit(Event::Finished {
            execution_id: self.execution.id,
            status: ExecutionStatus::Succeeded,
        });
        Ok(RunOutcome {
            execution: self.execution.clone(),
            answer: Some(answer),
            waiting_on: None,
        })
    }

    pub(super) async fn finish_failed(&mut self, error: &str) -> Result<RunOutcome> {
        self.execution = self
            .store()
            .executions()
            .finish(
                self.execution.id,
                ExecutionStatus::Failed,
                None,
                Some(error),
            )
            .await?;
        info!(steps = self.steps_taken, "execution failed");
        self.emit(Event::Finished {
            execution_id: self.execution.id,
            status: ExecutionStatus::Failed,
        });
        Ok(RunOutcome {
            execution: self.execution.clone(),
            answer: None,
            waiting_on: None,
        })
    }

    /// Ends the run at the analyst's word (`by`: Stop, or Abort after a failure): open calls
    /// are answered, the todo in progress becomes cancelled, and where it ended is recorded
    /// for the conversation to show.
    pub(super) async fn finish_cancelled(&mut self, by: EndedBy) -> Result<RunOutcome> {
        // A cancellation between a stored answer and its results leaves calls open.
        for call in dangling::unanswered(self.store(), self.conversation.id).await? {
            self.answer_unrun(
                &call,
                "[not run] the run was cancelled before this call".into(),
                Some(FailureClass::Cancelled),
            )
            .await?;
        }
        let step = self.steps_taken;
        let reason = match by {
            EndedBy::Stop => format!("stopped by the analyst at step {step}"),
            EndedBy::Abort => format!("aborted by the analyst after a failure, at step {step}"),
        };
        let todos = self.store().todos();
        if todos.cancel_open(self.execution.id, &reason).await? > 0 {
            let plan = self.plan().await?;
            self.emit_plan(&plan);
        }
        self.store()
            .executions()
            .record_ending(self.execution.id, by, step)
            .await?;
        self.execution = self
            .store()
            .executions()
            .finish(
                self.execution.id,
                ExecutionStatus::Cancelled,
                None,
                Some(&reason),
            )
            .await?;
        info!(steps = self.steps_taken, "execution cancelled");
        self.emit(Event::Finished {
            execution_id: self.execution.id,
            status: ExecutionStatus::Cancelled,
        });
        Ok(RunOutcome {
            execution: self.execution.clone(),
            answer: None,
            waiting_on: None,
        })
    }
}
