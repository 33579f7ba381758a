//! What a step writes besides its tool results: the answer, and the analysis, action and
//! supervision records that feed the step history.

use super::step::Step;
use super::{RECORD_CHARS, Runner, clip};
use crate::agent::failure::{Pending, Trigger};
use crate::error::Result;
use crate::events::Event;
use decima_core::context::{StepKind, StepRecord};
use decima_core::{FailureClass, Message, NewMessage};
use decima_llm::Completion;
use decima_store::AnswerEnd;

/// What becomes of an answer the model did not finish.
pub(super) enum Unfinished {
    /// It ended whole, or it can stand (a cut answer's whole calls run).
    No,
    /// A cut answer without calls: the model is asked again, told why.
    AskAgain,
    /// The failure path.
    Failed(Box<Pending>),
}

impl Runner<'_, '_> {
    /// Stores the answer and its analysis and action records. `None` when there was nothing to
    /// store (an empty answer, or one whose only call was cut off): the model is told next step.
    pub(super) async fn store_answer(
        &mut self,
        step: &mut Step,
        completion: &Completion,
    ) -> Result<Option<Message>> {
        let mut notes = Vec::new();
        if !completion.cut_off_tool_calls.is_empty() {
            let names: Vec<&str> = completion
                .cut_off_tool_calls
                .iter()
                .map(|c| c.name.as_str())
                .collect();
            let note = format!(
                "Your last answer hit the output limit while writing a call to {}; that call \
                 was not run. Make the step smaller (write big files in parts).",
                names.join(", ")
            );
            self.emit(Event::Warning {
                message: note.clone(),
            });
            notes.push(note);
        }
        if completion.text.trim().is_empty() && completion.tool_calls.is_empty() {
            if notes.is_empty() {
                notes.push(
                    "Your last answer was empty. Answer the task, or call a tool.".to_owned(),
                );
            }
            self.record(StepKind::Analysis, "(empty answer)".into())
                .await?;
            self.carried.instant_context = Some(notes.join("\n"));
            return Ok(None);
        }
        if !notes.is_empty() {
            self.carried.instant_context = Some(notes.join("\n"));
        }
        let mut message = completion.to_message();
        message.execution_id = Some(self.execution.id);
        let analysis = match (&completion.reasoning, completion.text.trim()) {
            (Some(r), _) if !r.trim().is_empty() => r.clone(),
            (_, "") => "(no analysis)".to_owned(),
            (_, text) => text.to_owned(),
        };
        let mut action = if message.tool_calls.is_empty() {
            "answered without a tool call".to_owned()
        } else {
            message
                .tool_calls
                .iter()
                .map(|c| decima_core::context::describe_call(&c.name, &c.arguments))
                .collect::<Vec<_>>()
                .join("; ")
        };
        if let Some(form) = step.calls_from_text {
            action.push_str(&format!(
                " (recovered from text: the server left the call in {} form)",
                form.as_str()
            ));
        }
        // The first call's marker goes with the answer.
        let first = message
            .tool_calls
            .first()
            .map(|c| (c.id.clone(), c.name.clone()));
        let records = vec![(StepKind::Analysis, analysis), (StepKind::Action, action)];
        let answer = self
            .store_noting(
                message,
                records,
                first
                    .as_ref()
                    .map(|(id, name)| (id.as_str(), name.as_str())),
            )
            .await?;
        step.started_marker_call = first.map(|(id, _)| id);
        self.step_answers
            .insert(self.steps_taken.max(1), answer.seq);
        self.record_answer(step, &answer, completion).await?;
        Ok(Some(answer))
    }

    /// Records how the answer ended and what it cost, beside it.
    async fn record_answer(
        &self,
        step: &Step,
        answer: &Message,
        completion: &Completion,
    ) -> Result<()> {
        let record = crate::answer::record(
            completion,
            self.link.prices,
            step.prompt_truncated,
            step.calls_from_text.map(|form| form.as_str()),
        );
        self.store()
            .answers()
            .record(self.conversation.id, answer.id, &record)
            .await?;
        if let Some(note) = crate::answer::ending_note(record.ended, step.output_cap) {
            self.emit(Event::Warning { message: note });
        }
        if record.prompt_truncated {
            self.emit(Event::Warning {
                message: format!(
                    "{} counted fewer prompt tokens than were sent: the server dropped part of \
                     the request without saying so; its window is read again before the next \
                     request",
                    self.link.config.name
                ),
            });
        }
        Ok(())
    }

    /// Keeps what a stopped answer had said, marked as stopped, so the conversation shows
    /// where the run was stopped and the analyst can continue from it. Its calls never run and
    /// are not kept: a call without a result would break every later request.
    pub(super) async fn store_stopped(
        &mut self,
        step: &Step,
        mut completion: Completion,
    ) -> Result<()> {
        completion.tool_calls.clear();
        completion.cut_off_tool_calls.clear();
        if completion.text.trim().is_empty() {
            return Ok(());
        }
        let mut message = completion.to_message();
        message.execution_id = Some(self.execution.id);
        let answer = self
            .store_noting(
                message,
                vec![(StepKind::Analysis, "(stopped while answering)".to_owned())],
                None,
            )
            .await?;
        self.record_answer(step, &answer, &completion).await
    }

    /// Whether an answer the model did not finish can stand: a looping answer goes to the
    /// failure path at once; a cut one without calls is asked again once, with what happened,
    /// and the second cut in a row goes to the failure path.
    pub(super) fn unfinished(
        &mut self,
        step: &Step,
        ended: AnswerEnd,
        answer: &Message,
    ) -> Unfinished {
        let cut = ended == AnswerEnd::Cut;
        self.carried.cut_in_a_row = if cut {
            self.carried.cut_in_a_row + 1
        } else {
            0
        };
        match ended {
            AnswerEnd::Looping => Unfinished::Failed(Box::new(Pending {
                class: FailureClass::Degenerate,
                trigger: Trigger::LoopingAnswer,
                message: "the model's answer kept repeating the same words and was ended; \
                          try again, replan with a clearer step, or use a larger model"
                    .to_owned(),
                call: None,
                todo: None,
            })),
            AnswerEnd::Cut if self.carried.cut_in_a_row >= 2 => {
                Unfinished::Failed(Box::new(Pending {
                    class: FailureClass::Logic,
                    trigger: Trigger::CutTwice,
                    message: format!(
                        "two answers in a row were cut by the output cap{}; replan with smaller \
                     steps, or raise the provider's output reserve",
                        step.output_cap
                            .map(|cap| format!(" of {cap} tokens"))
                            .unwrap_or_default()
                    ),
                    call: None,
                    todo: None,
                }))
            }
            AnswerEnd::Cut if answer.tool_calls.is_empty() => {
                self.carried.instant_context = Some(
                    "Your last answer was cut by the output limit before you finished it. \
                     Finish it in fewer words, or do the work in smaller steps."
                        .to_owned(),
                );
                Unfinished::AskAgain
            }
            _ => Unfinished::No,
        }
    }

    /// Stores a message with the step records and the call marker that go with it, in one
    /// exchange with the store (see [`decima_store::Messages::append_noting`]).
    pub(super) async fn store_noting(
        &mut self,
        message: NewMessage,
        records: Vec<(StepKind, String)>,
        started_call: Option<(&str, &str)>,
    ) -> Result<Message> {
        let records = clipped(records);
        let rows = store_rows(&records);
        let (stored, _) = self
            .store()
            .messages()
            .append_noting(
                self.conversation.id,
                message,
                decima_store::StepNotes {
                    execution: self.execution.id,
                    records: &rows,
                    started_call,
                },
            )
            .await?;
        self.stored(&stored);
        self.remember(records);
        Ok(stored)
    }

    pub(super) async fn record(&mut self, kind: StepKind, content: String) -> Result<()> {
        self.record_all(vec![(kind, content)]).await
    }

    /// Stores step records in one statement and feeds them to the step history.
    pub(super) async fn record_all(&mut self, records: Vec<(StepKind, String)>) -> Result<()> {
        let records = clipped(records);
        let rows = store_rows(&records);
        match rows.as_slice() {
            // One record is one statement: no transaction round trips.
            [(kind, content)] => {
                self.store()
                    .steps()
                    .record(self.execution.id, *kind, content)
                    .await?;
            }
            rows => {
                self.store()
                    .steps()
                    .record_all(self.execution.id, rows)
                    .await?;
            }
        }
        self.remember(records);
        Ok(())
    }

    /// Feeds stored records to the step history.
    fn remember(&mut self, records: Vec<(StepKind, String)>) {
        for (kind, content) in records {
            self.history.push(StepRecord {
                step: self.steps_taken.max(1),
                kind,
                content,
            });
        }
    }
}

/// Records are notes, not transcripts: each is clipped.
fn clipped(records: Vec<(StepKind, String)>) -> Vec<(StepKind, String)> {
    records
        .into_iter()
        .map(|(kind, content)| (kind, clip(&content, RECORD_CHARS)))
        .collect()
}

/// The records as the store takes them.
fn store_rows(records: &[(StepKind, String)]) -> Vec<(decima_store::StepKind, &str)> {
    records
        .iter()
        .map(|(kind, content)| {
            let kind = match kind {
                StepKind::Analysis => decima_store::StepKind::Analysis,
                StepKind::Action => decima_store::StepKind::Action,
                StepKind::Supervision => decima_store::StepKind::Supervision,
            };
            (kind, content.as_str())
        })
        .collect()
}
