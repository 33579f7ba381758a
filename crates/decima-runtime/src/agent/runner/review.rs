//! The tenth man inside a run: the `tenth_man_review` tool and the final review when the run
//! ends with an answer. The quick review before a risky call is one of the gates (gates.rs).

use super::Runner;
use crate::error::{Result, RuntimeError};
use crate::events::Event;
use crate::review::{self, ReviewContext, ReviewMode, ReviewRequest, ReviewTrigger, ReviewType};
use serde_json::json;
use tracing::warn;

impl Runner<'_, '_> {
    /// What every review of this run needs: the store, the data folder, the events and the
    /// agent's provider.
    pub(super) fn review_ctx(&self) -> ReviewContext<'_> {
        ReviewContext {
            store: self.store(),
            data_dir: self.session.data_dir,
            events: self.session.events,
            agent_provider: self.options.provider.as_deref(),
        }
    }

    /// A review of this run's conversation by its reviewer.
    pub(super) fn review_request(
        &self,
        mode: ReviewMode,
        review_type: ReviewType,
        focus: Option<String>,
        trigger: ReviewTrigger,
    ) -> ReviewRequest {
        ReviewRequest {
            conversation: self.conversation.id,
            execution: Some(self.execution.id),
            mode,
            review_type,
            focus,
            trigger,
            reviewer: self.options.reviewer_provider.clone(),
            final_review: false,
            figures: Vec::new(),
        }
    }

    /// The final review of a run that answered: a high or critical one contests the result in
    /// the execution's record and in the events; the answer itself is left as it is. A failed
    /// review is a warning, never a failed run.
    pub(super) async fn final_review(&mut self) -> Result<()> {
        // A subagent runs tool-only (see spawn.rs), so it never reaches this.
        // A quick chat is answered as a chat: no review follows.
        if !self.options.tenth_man.system() || self.options.quick {
            return Ok(());
        }
        let mut request = self.review_request(
            ReviewMode::FullHistory,
            ReviewType::Full,
            Some("The run's final answer: is it supported by the work shown?".into()),
            ReviewTrigger::System,
        );
        request.final_review = true;
        // Ctrl-C during the review, or the analyst's Skip, stops it: the answer stands,
        // unreviewed, and says so.
        let ctx = self.review_ctx();
        let skip = crate::agent::review_skip::Skippable::register(self.execution.id);
        let stop = self.session.cancel.child_token();
        let reviewed = tokio::select! {
            biased;
            () = self.session.cancel.cancelled() => Err("cancelled"),
            () = skip.skipped() => Err("skipped"),
            reviewed = review::review_until(&ctx, request, &stop) => Ok(reviewed),
        };
        drop(skip);
        let reviewed = match reviewed {
            Ok(reviewed) => reviewed,
            Err(how) => {
                stop.cancel();
                warn!(
                    how,
                    "the final review was stopped; the answer stands unreviewed"
                );
                self.log_event(
                    "review.cancelled",
                    &json!({ "trigger": "system", "how": how }),
                )
                .await?;
                self.emit(Event::Warning {
                    message: format!(
                        "the final tenth-man review was {how}: the answer stands, unreviewed"
                    ),
                });
                return Ok(());
            }
        };
        match reviewed {
            Ok(outcome) => {
                if outcome.review.risk_level.contests() {
                    self.execution.contested = true;
                }
            }
            Err(e @ RuntimeError::Store(_)) => return Err(e),
            Err(e) => {
                warn!(error = %e, "the final review failed");
                self.log_event(
                    "review.failed",
                    &json!({ "trigger": "system", "error": e.to_string() }),
                )
                .await?;
                self.emit(Event::Warning {
                    message: format!("the final tenth-man review failed: {e}"),
                });
            }
        }
        Ok(())
    }
}
