//! Running a step's tool calls in order, storing each result, and what a plan change sets off:
//! snapshots, phase and checkpoint compressions, the failure of a todo.

use super::step::Step;
use super::{CallsEnd, Runner, first_line};
use crate::agent::dangling;
use crate::agent::failure::{Pending, Trigger};
use crate::compression::compress_at;
use crate::error::Result;
use crate::events::Event;
use crate::plan;
use crate::plan::Transitions;
use crate::tools::ToolOutcome;
use decima_core::context::{CompressionLevel, StepKind};
use decima_core::{FailureClass, Message, NewMessage, ToolCall};
use decima_store::{CompactionTrigger, SnapshotReason, Todo};
use serde_json::json;
use std::collections::HashMap;
use std::time::Instant;

use futures_util::future::join_all;

use crate::agent::stuck::Observed;
use crate::tools::ToolEffect;

/// What the calls of one step gather as they run, for the calls after them and the step's end.
#[derive(Default)]
struct StepCalls {
    /// The first call that started the failure path: the calls after it are not run.
    failure: Option<Pending>,
    /// Phase and checkpoint compressions the plan's changes call for, run at the step's end.
    deferred: Vec<(CompressionLevel, CompactionTrigger)>,
    /// Each call's status, for the step's supervision record.
    supervision: Vec<String>,
    /// Whether the supervision record went to the store with the last call's result.
    supervision_written: bool,
    /// The results of calls that ran as a group, waiting for their turn to be stored.
    ran_together: HashMap<String, ToolOutcome>,
}

/// How a call run on its own ended.
enum Alone {
    /// It ran, to this outcome.
    Ran(Box<ToolOutcome>),
    /// It was answered as not run (an earlier failure, or a cancel before it).
    NotRun,
    /// The run was cancelled while it ran: it and every call after it are answered.
    Cancelled,
}

impl Runner<'_, '_> {
    /// Runs the answer's calls in order, each through the same gates and the registry, and
    /// stores each result. Consecutive calls of a tool that runs side by side (subagents) run
    /// as a group. The first call that starts the failure path stops the rest, which are
    /// answered as not run.
    pub(super) async fn run_calls(
        &mut self,
        step: &mut Step,
        answer: &Message,
    ) -> Result<CallsEnd> {
        let mut calls = StepCalls::default();
        for (index, call) in answer.tool_calls.iter().enumerate() {
            if !calls.ran_together.contains_key(&call.id)
                && calls.failure.is_none()
                && !self.session.cancel.is_cancelled()
                && self.registry.is_concurrent(&call.name)
            {
                let group: Vec<&ToolCall> = answer.tool_calls[index..]
                    .iter()
                    .take_while(|c| self.registry.is_concurrent(&c.name))
                    .collect();
                self.run_group(step, &group, &mut calls.ran_together)
                    .await?;
            }
            let outcome = if let Some(outcome) = calls.ran_together.remove(&call.id) {
                outcome
            } else {
                match self
                    .run_alone(step, answer, call, calls.failure.as_ref())
                    .await?
                {
                    Alone::Ran(outcome) => *outcome,
                    Alone::NotRun => continue,
                    Alone::Cancelled => return Ok(CallsEnd::Cancelled),
                }
            };
            let last = index + 1 == answer.tool_calls.len();
            let stored = self.store_result(call, &outcome, last, &mut calls).await?;
            self.follow_result(call, &outcome, stored.seq, &mut calls)
                .await?;
        }
        self.end_calls(calls).await
    }

    /// Runs a group of calls side by side, keeping their results for their turn to be stored.
    async fn run_group(
        &mut self,
        step: &mut Step,
        group: &[&ToolCall],
        ran_together: &mut HashMap<String, ToolOutcome>,
    ) -> Result<()> {
        // Each call of the group gets its marker before any runs; the tools stop on the run's
        // cancellation themselves, so the group is waited for whole.
        for c in group {
            self.mark_started(step, c).await?;
        }
        let ran = Instant::now();
        let outcomes = join_all(group.iter().map(|c| self.call_tool(c))).await;
        step.tools_wait += ran.elapsed();
        ran_together.extend(group.iter().map(|c| c.id.clone()).zip(outcomes));
        Ok(())
    }

    /// Runs one call on its own, unless an earlier failure or a cancel stops it first; a cancel
    /// while it runs kills it and answers it and every call after it in `answer`.
    async fn run_alone(
        &mut self,
        step: &mut Step,
        answer: &Message,
        call: &ToolCall,
        failure: Option<&Pending>,
    ) -> Result<Alone> {
        if let Some(pending) = failure {
            let text = format!(
                "[not run] an earlier call in this step failed ({}); this call was not run",
                pending.message
            );
            self.answer_unrun(call, text, None).await?;
            return Ok(Alone::NotRun);
        }
        if self.session.cancel.is_cancelled() {
            self.answer_unrun(
                call,
                "[not run] the run was cancelled before this call".into(),
                Some(FailureClass::Cancelled),
            )
            .await?;
            return Ok(Alone::NotRun);
        }
        self.mark_started(step, call).await?;
        let ran = Instant::now();
        let outcome = tokio::select! {
            biased;
            () = self.session.cancel.cancelled() => None,
            outcome = self.call_tool(call) => Some(outcome),
        };
        step.tools_wait += ran.elapsed();
        if let Some(outcome) = outcome {
            return Ok(Alone::Ran(Box::new(outcome)));
        }
        // Dropping the call's future killed its process group.
        self.answer_unrun(
            call,
            "[cancelled] the run was cancelled while this call ran; the command was killed and \
             its effect may be partial"
                .into(),
            Some(FailureClass::Cancelled),
        )
        .await?;
        for rest in answer
            .tool_calls
            .iter()
            .skip_while(|c| c.id != call.id)
            .skip(1)
        {
            self.answer_unrun(
                rest,
                "[not run] the run was cancelled before this call".into(),
                Some(FailureClass::Cancelled),
            )
            .await?;
        }
        Ok(Alone::Cancelled)
    }

    /// Stores a call's result, noting its status for the supervision record; the step's `last`
    /// call's result and that record go to the store together.
    async fn store_result(
        &mut self,
        call: &ToolCall,
        outcome: &ToolOutcome,
        last: bool,
        step: &mut StepCalls,
    ) -> Result<Message> {
        step.supervision
            .push(format!("{} {}", call.name, status_word(outcome)));
        if !last {
            return self.answer_outcome(call, outcome).await;
        }
        step.supervision_written = true;
        self.answer_call_noting(
            call,
            outcome,
            vec![(StepKind::Supervision, step.supervision.join("; "))],
        )
        .await
    }

    /// What a stored result sets off: a plan change's snapshots and compressions, the failure
    /// it ends in, and a stuck loop; the first failure of the step is the one kept.
    async fn follow_result(
        &mut self,
        call: &ToolCall,
        outcome: &ToolOutcome,
        seq: i64,
        step: &mut StepCalls,
    ) -> Result<()> {
        if let Some(ToolEffect::PlanChanged(transitions)) = &outcome.effect {
            let (pending, compress) = self.after_plan_change(transitions, seq).await?;
            step.deferred.extend(compress);
            step.failure = step.failure.take().or(pending);
        } else if let Some(class) = outcome.class
            && call.name != plan::TODO_WRITE
        {
            // A plan the model wrote wrong is not what a failed todo failed of.
            self.todo.call_failed(class);
        }
        // The same call, plan included, sent again and again is a loop like any other; a todo
        // that starts resets the streak first, so only an unchanged plan counts.
        let stuck = self.note_repeat(call, outcome);
        if step.failure.is_none() {
            step.failure = stuck.or_else(|| match outcome.class {
                Some(class @ (FailureClass::Permission | FailureClass::System))
                    if !outcome.refused =>
                {
                    Some(Pending {
                        class,
                        trigger: Trigger::ToolFailure,
                        message: first_line(&outcome.text),
                        call: Some((call.name.clone(), call.arguments.clone())),
                        todo: None,
                    })
                }
                _ => None,
            });
        }
        Ok(())
    }

    /// Ends the step's calls: the supervision record when no result carried it, then, when no
    /// call failed, the compressions the plan's changes called for.
    async fn end_calls(&mut self, step: StepCalls) -> Result<CallsEnd> {
        if !step.supervision_written {
            self.record(StepKind::Supervision, step.supervision.join("; "))
                .await?;
        }
        if step.failure.is_none() {
            // Phase and checkpoint compressions run once every call of the step has its
            // result, so no compaction splits a call from its answer.
            for (level, trigger) in step.deferred {
                let built = self.build_context().await?;
                if compress_at(&self.compress_ctx(), &built, level, trigger)
                    .await?
                    .is_some()
                {
                    self.window_cache.forget();
                }
            }
        }
        Ok(CallsEnd::Done(step.failure))
    }

    /// Notes a call's result for the stuck-loop check, and returns the failure when this same
    /// call has now come back the same way `stuck_after` times in a row.
    fn note_repeat(&mut self, call: &ToolCall, outcome: &ToolOutcome) -> Option<Pending> {
        let repeats = self.todo.repeated(
            Observed {
                name: &call.name,
                arguments: &call.arguments,
                result: &outcome.text,
                exit_code: outcome.exit_code,
                failed: outcome.is_failure(),
            },
            self.options.stuck_after.max(2),
        )?;
        let how = if outcome.is_failure() {
            "failing"
        } else {
            "unchanged"
        };
        Some(Pending {
            class: FailureClass::Logic,
            trigger: Trigger::StuckLoop,
            message: format!(
                "stuck loop: the same {} call came back {how} {repeats} times in a row, with \
                 nothing else in between",
                call.name
            ),
            call: Some((call.name.clone(), call.arguments.clone())),
            todo: None,
        })
    }

    /// The `tool.started` marker, written before a call runs: resume answers a call that has
    /// one but no result as interrupted, and never runs it again.
    async fn mark_started(&self, step: &mut Step, call: &ToolCall) -> Result<()> {
        // Written with the answer already when it is the answer's first call.
        if !step.marked_with_answer(&call.id) {
            self.log_event(
                "tool.started",
                &json!({ "call_id": call.id, "name": call.name }),
            )
            .await?;
        }
        self.emit(Event::ToolStarted {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        });
        Ok(())
    }

    /// Answers a call that ran with its outcome: its text and the images it returned.
    async fn answer_outcome(&mut self, call: &ToolCall, outcome: &ToolOutcome) -> Result<Message> {
        let stored = self.store_message(self.result_of(call, outcome)).await?;
        self.finished(call, outcome);
        Ok(stored)
    }

    /// Answers a call that ran, storing `records` with its result in one exchange.
    async fn answer_call_noting(
        &mut self,
        call: &ToolCall,
        outcome: &ToolOutcome,
        records: Vec<(StepKind, String)>,
    ) -> Result<Message> {
        let message = self.result_of(call, outcome);
        let stored = self.store_noting(message, records, None).await?;
        self.finished(call, outcome);
        Ok(stored)
    }

    /// The message that answers a call that ran: its text, and the images it returned.
    fn result_of(&self, call: &ToolCall, outcome: &ToolOutcome) -> NewMessage {
        let mut message = dangling::result_message(self.execution.id, call, outcome.text.clone());
        message.images = outcome.images.clone();
        message
    }

    /// After a call's result is stored: its images noted for later requests, and its end
    /// reported.
    fn finished(&mut self, call: &ToolCall, outcome: &ToolOutcome) {
        self.note_images(call, &outcome.images);
        self.emit(Event::ToolFinished {
            call_id: call.id.clone(),
            name: call.name.clone(),
            exit_code: outcome.exit_code,
            duration_ms: ms(outcome),
            class: outcome.class,
            ran: true,
            images: u32::try_from(outcome.images.len()).unwrap_or(u32::MAX),
        });
    }

    /// Answers a call that was not run (or not to its end): cancelled, interrupted, rolled
    /// back, or skipped after an earlier failure.
    pub(super) async fn answer_unrun(
        &self,
        call: &ToolCall,
        text: String,
        class: Option<FailureClass>,
    ) -> Result<Message> {
        self.answer(call, text, None, 0, class, false).await
    }

    pub(super) async fn answer(
        &self,
        call: &ToolCall,
        text: String,
        exit_code: Option<i32>,
        duration_ms: u64,
        class: Option<FailureClass>,
        ran: bool,
    ) -> Result<Message> {
        let stored = dangling::answer(
            self.store(),
            self.conversation.id,
            self.execution.id,
            call,
            text,
        )
        .await?;
        self.stored(&stored);
        self.emit(Event::ToolFinished {
            call_id: call.id.clone(),
            name: call.name.clone(),
            exit_code,
            duration_ms,
            class,
            ran,
            images: 0,
        });
        Ok(stored)
    }

    /// Snapshots for started todos and passed checkpoints (now, before the next call changes
    /// the workspace), the compressions they call for (deferred to the end of the step), and
    /// the failure of a todo the model marked failed.
    pub(super) async fn after_plan_change(
        &mut self,
        transitions: &Transitions,
        seq: i64,
    ) -> Result<(Option<Pending>, Vec<(CompressionLevel, CompactionTrigger)>)> {
        let plan = self.plan().await?;
        let mut compress = Vec::new();
        if !transitions.completed.is_empty() {
            self.todo.todo_completed();
        }
        for todo in &transitions.started {
            self.take_snapshot(Some(todo), SnapshotReason::TodoStart, seq, &plan)
                .await?;
            self.todo.todo_started();
        }
        for todo in &transitions.checkpoints {
            if self.options.checkpoint_compression {
                self.take_snapshot(Some(todo), SnapshotReason::Checkpoint, seq, &plan)
                    .await?;
                compress.push((CompressionLevel::Checkpoint, CompactionTrigger::Checkpoint));
            }
        }
        if self.options.phase_compression && !transitions.phases_done.is_empty() {
            compress.push((CompressionLevel::Phase, CompactionTrigger::Phase));
        }
        let pending = transitions.failed.first().map(|(todo, reason)| {
            let title = plan
                .iter()
                .find(|t| &t.id == todo)
                .map(|t| t.title.clone())
                .unwrap_or_default();
            Pending {
                class: self.todo.failed_todo_class(),
                trigger: Trigger::TodoFailed,
                message: format!("the model marked \"{title}\" failed: {reason}"),
                call: None,
                todo: Some(todo.clone()),
            }
        });
        Ok((pending, compress))
    }

    pub(super) async fn take_snapshot(
        &self,
        todo: Option<&str>,
        reason: SnapshotReason,
        seq: i64,
        plan: &[Todo],
    ) -> Result<()> {
        let snapshot = self
            .checkpoints
            .take(self.store(), todo, reason, seq, plan)
            .await?;
        self.emit(Event::SnapshotTaken {
            snapshot_id: snapshot.id,
            todo_id: snapshot.todo_id,
            reason,
            message_seq: seq,
        });
        Ok(())
    }
}

fn ms(outcome: &ToolOutcome) -> u64 {
    u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX)
}

fn status_word(outcome: &ToolOutcome) -> String {
    let status = match (outcome.class, outcome.exit_code) {
        (Some(class), _) => format!("failed ({class})"),
        (None, Some(0)) => "exit 0".to_owned(),
        (None, Some(code)) => format!("exit {code}"),
        (None, None) => "ok".to_owned(),
    };
    match outcome.files.as_slice() {
        [] => status,
        files => {
            let named: Vec<&str> = files.iter().take(FILES_NAMED).map(String::as_str).collect();
            let more = files.len().saturating_sub(FILES_NAMED);
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            format!("{status}, wrote {}{more}", named.join(", "))
        }
    }
}

/// Files named in a call's supervision record; the rest are counted.
const FILES_NAMED: usize = 3;
