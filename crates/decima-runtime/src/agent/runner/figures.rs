//! The run's figures: before a run ends with an answer, each figure of it and of each report
//! it wrote (`report.md`) is matched against the conversation's ledger; figures no source holds
//! are a failure of their own class, and the analyst decides each: verify (the agent computes
//! it with a tool and answers again), estimate (the answer or report says so beside it),
//! correct (their value replaces it there) or accept.

use decima_core::{FailureClass, Message, NewMessage, Role};
use decima_store::{ExecutionStatus, Failure, FigureDecision, Resolution};
use serde_json::json;

use super::recovery::Chosen;
use super::{Flow, Runner};
use crate::agent::Choice;
use crate::agent::failure::{Pending, Place, Trigger};
use crate::agent::report::{FailureReport, UnlinkedFigure};
use crate::error::{Result, RuntimeError};
use crate::events::Event;
use crate::figures::files::{run_files, run_inputs, written_by};
use crate::figures::{ConversationLedger, FigureStatus, run_start_seq};

/// Unlinked figures named in a failure's one-line message; the report lists them all.
const NAMED_IN_MESSAGE: usize = 5;

impl Runner<'_, '_> {
    /// The failure an answer's unlinked figures make, if it has any that the analyst has not
    /// settled. A quick chat and a subagent are not checked: a subagent's answer reaches its
    /// parent as a tool output, and the parent's answer is checked against it.
    pub(super) async fn unlinked_figures(&mut self, answer: &Message) -> Result<Option<Pending>> {
        if !self.options.check_figures || self.options.quick || self.execution.parent_id.is_some() {
            return Ok(None);
        }
        let messages = self.store().messages().all(self.conversation.id).await?;
        // The files the run's commands wrote are sources too: a figure a script computed into
        // a CSV links to it.
        let sandbox = std::sync::Arc::clone(self.registry.sandbox());
        let written = written_by(self.store(), self.execution.id).await?;
        let mut files = run_files(sandbox.as_ref(), written.clone()).await;
        let reports = std::mem::take(&mut files.reports);
        // So are its inputs, as they were when it started.
        let first_seq = run_start_seq(&messages, self.execution.id);
        let snapshots = self.checkpoints.store();
        files.sources.extend(
            run_inputs(
                self.store(),
                snapshots,
                self.execution.id,
                &written,
                first_seq,
            )
            .await?,
        );
        let ledger = ConversationLedger::with_files(&messages, files.sources);
        let unlinked_of = |figures: Vec<crate::figures::FigureCheck>, path: Option<&str>| {
            figures
                .into_iter()
                .filter(|f| f.status == FigureStatus::Unlinked)
                .map(|f| UnlinkedFigure {
                    message_seq: answer.seq,
                    start: f.start,
                    end: f.end,
                    text: f.text,
                    sentence: f.sentence,
                    path: path.map(str::to_owned),
                })
                .collect::<Vec<_>>()
        };
        let mut unlinked = unlinked_of(ledger.check(answer), None);
        // A report the model wrote is handed on as the answer is: its figures are claims too.
        for report in ledger.check_reports(&reports) {
            unlinked.extend(unlinked_of(report.figures, Some(&report.path)));
        }
        if unlinked.is_empty() {
            return Ok(None);
        }
        let message = unlinked_message(&unlinked);
        self.carried.unlinked = unlinked;
        Ok(Some(Pending {
            class: FailureClass::Unlinked,
            trigger: Trigger::UnlinkedFigures,
            message,
            call: None,
            todo: None,
        }))
    }

    /// The analyst's decision on some or all of a failure's unlinked figures. The figures it
    /// does not cover wait in a new failure; once every figure is decided, the run either asks
    /// the agent to verify the ones so chosen or ends with the answer as decided.
    pub(super) async fn decide_figures(
        &mut self,
        failure: &Failure,
        report: &FailureReport,
        answer: &Choice,
    ) -> Result<Chosen> {
        let figures = &report.details.figures;
        let chosen = chosen_figures(failure, figures, answer)?;
        let choice = answer.resolution;
        if choice == Resolution::Abort {
            return self.abort_on_figures(failure).await;
        }
        for &k in &chosen {
            let f = &figures[k];
            self.store()
                .figure_decisions()
                .record(
                    self.conversation.id,
                    &FigureDecision {
                        message_seq: f.message_seq,
                        path: f.path.clone(),
                        start: f.start,
                        text: f.text.clone(),
                        decision: choice,
                        value: answer.value.clone(),
                        failure_id: Some(failure.id.clone()),
                    },
                )
                .await?;
        }
        let resolved = self.store().failures().resolve(&failure.id, choice).await?;
        self.log_event(
            "failure.resolved",
            &json!({ "failure_id": resolved.id, "choice": choice.as_str(), "figures": chosen.len() }),
        )
        .await?;
        self.emit(Event::Recovered {
            failure_id: resolved.id.clone(),
            choice,
        });
        // Guidance typed with a choice on some figures is kept too, not only the last one's.
        self.store_guidance_for_figures(answer).await?;
        let rest: Vec<UnlinkedFigure> = figures
            .iter()
            .enumerate()
            .filter(|(k, _)| !chosen.contains(k))
            .map(|(_, f)| f.clone())
            .collect();
        if !rest.is_empty() {
            return self.ask_about(rest).await;
        }
        self.figures_decided(figures).await
    }

    /// A new failure for the figures still undecided.
    async fn ask_about(&mut self, rest: Vec<UnlinkedFigure>) -> Result<Chosen> {
        let pending = Pending {
            class: FailureClass::Unlinked,
            trigger: Trigger::UnlinkedFigures,
            message: unlinked_message(&rest),
            call: None,
            todo: None,
        };
        self.carried.unlinked = rest;
        let place = Place::of(&self.plan().await?, None);
        let causes = crate::agent::failure::likely_causes(&pending);
        let next = self
            .record_failure(&pending, &place, &causes, None, None)
            .await?;
        Ok(Chosen::AskAgain(Box::new(next)))
    }

    /// Every figure of the answer and its reports is decided: the agent verifies those so
    /// chosen, or the run ends with the answer and reports as the analyst settled them.
    async fn figures_decided(&mut self, figures: &[UnlinkedFigure]) -> Result<Chosen> {
        let Some(seq) = figures.first().map(|f| f.message_seq) else {
            return Err(RuntimeError::Conflict(
                "the failure lists no figures".into(),
            ));
        };
        let decisions = self
            .store()
            .figure_decisions()
            .of_message(self.conversation.id, seq)
            .await?;
        if self.execution.status != ExecutionStatus::Running {
            self.set_status(ExecutionStatus::Running).await?;
        }
        let original = self
            .store()
            .messages()
            .get(self.conversation.id, seq)
            .await?;
        // Every decision on this answer counts, those of earlier choices on some of its figures
        // too.
        let mut to_verify: Vec<UnlinkedFigure> = Vec::new();
        // Each report the figures are in is read once, however many of its figures wait.
        let mut reports: std::collections::HashMap<&str, String> = std::collections::HashMap::new();
        for d in decisions
            .iter()
            .filter(|d| d.decision == Resolution::Verify)
        {
            let text = match d.path.as_deref() {
                None => &original.content,
                Some(path) => {
                    if !reports.contains_key(path) {
                        let read = self.report_text(path).await;
                        reports.insert(path, read);
                    }
                    &reports[path]
                }
            };
            to_verify.push(decided_figure(text, seq, d));
        }
        if !to_verify.is_empty() {
            self.carried.instant_context = Some(verify_request(&to_verify));
            return Ok(Chosen::Go(Flow::Continue));
        }
        let (in_answer, in_reports): (Vec<FigureDecision>, Vec<FigureDecision>) =
            decisions.into_iter().partition(|d| d.path.is_none());
        let (revised, moved) = settle(&original.content, &in_answer);
        let (final_text, final_seq) = if revised == original.content {
            (original.content, seq)
        } else {
            let mut message = NewMessage::new(Role::Assistant, revised.clone());
            message.execution_id = Some(self.execution.id);
            let stored = self.store_message(message).await?;
            for (d, start) in moved {
                self.record_moved(d, stored.seq, start).await?;
            }
            (revised, stored.seq)
        };
        self.settle_reports(in_reports, final_seq).await?;
        self.finish_succeeded(final_text)
            .await
            .map(|o| Chosen::Go(Flow::Stop(Box::new(o))))
    }

    /// A decision kept for the figure where it now stands: the answer stored anew, the figure
    /// moved by the estimates and corrections before it.
    async fn record_moved(&self, d: FigureDecision, seq: i64, start: u32) -> Result<()> {
        self.store()
            .figure_decisions()
            .record(
                self.conversation.id,
                &FigureDecision {
                    message_seq: seq,
                    start,
                    ..d
                },
            )
            .await?;
        Ok(())
    }

    /// The reports' estimates and corrections written into them, through the run's sandbox,
    /// and each decision kept with the answer the run ends with (`seq`). A report that changed
    /// since it was checked keeps its text where the figure is no longer found.
    async fn settle_reports(&mut self, decisions: Vec<FigureDecision>, seq: i64) -> Result<()> {
        let mut paths: Vec<String> = decisions.iter().filter_map(|d| d.path.clone()).collect();
        paths.sort();
        paths.dedup();
        for path in paths {
            let of_report: Vec<FigureDecision> = decisions
                .iter()
                .filter(|d| d.path.as_deref() == Some(path.as_str()))
                .cloned()
                .collect();
            // The file as it is, markup and all (an HTML report's spans are the same in its
            // text as read for the check): what is written back is this with the decisions in.
            let Some(text) = self.report_raw(&path).await else {
                continue;
            };
            let (revised, moved) = settle(&text, &of_report);
            if revised != text {
                let sandbox = std::sync::Arc::clone(self.registry.sandbox());
                sandbox
                    .write_file(decima_sandbox::host::WriteFileRequest {
                        path: path.clone(),
                        content: revised,
                    })
                    .await
                    .map_err(|e| {
                        RuntimeError::Conflict(format!(
                            "the analyst's decisions on {path} could not be written into it: {}",
                            e.message
                        ))
                    })?;
                self.log_event(
                    "figures.report_settled",
                    &json!({ "path": path, "decisions": moved.len() }),
                )
                .await?;
            }
            for (d, start) in moved {
                self.record_moved(d, seq, start).await?;
            }
        }
        Ok(())
    }

    /// A report's bytes as the run's sandbox holds them now, as text; none (logged) when it is
    /// gone, not UTF-8, or larger than the check reads: such a report is never rewritten.
    async fn report_raw(&self, path: &str) -> Option<String> {
        let sandbox = std::sync::Arc::clone(self.registry.sandbox());
        let max = crate::figures::files::MAX_FILE_BYTES;
        let why = match sandbox.read_head(path.to_owned(), max + 1).await {
            Ok(bytes) if bytes.len() as u64 > max => "it is larger than the check reads".to_owned(),
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => return Some(text),
                Err(_) => "it is not UTF-8 text".to_owned(),
            },
            Err(e) => e.message,
        };
        tracing::warn!(%path, %why, "the analyst's decisions were not written into a report");
        None
    }

    /// A report's text as the run's sandbox holds it now; empty when it cannot be read.
    async fn report_text(&self, path: &str) -> String {
        let sandbox = std::sync::Arc::clone(self.registry.sandbox());
        match crate::figures::files::read(sandbox.as_ref(), path, true).await {
            crate::figures::files::FileText::Text { text, .. } => text,
            crate::figures::files::FileText::Unread(why) => {
                tracing::warn!(%path, %why, "a report the analyst decided on could not be read");
                String::new()
            }
        }
    }

    async fn store_guidance_for_figures(&mut self, answer: &Choice) -> Result<()> {
        let Some(guidance) = &answer.guidance else {
            return Ok(());
        };
        let mut message = NewMessage::new(Role::User, guidance.clone());
        message.execution_id = Some(self.execution.id);
        self.store_message(message).await?;
        self.window_cache.forget();
        Ok(())
    }

    async fn abort_on_figures(&mut self, failure: &Failure) -> Result<Chosen> {
        let resolved = self
            .store()
            .failures()
            .resolve(&failure.id, Resolution::Abort)
            .await?;
        self.emit(Event::Recovered {
            failure_id: resolved.id,
            choice: Resolution::Abort,
        });
        self.finish_cancelled(decima_store::EndedBy::Abort)
            .await
            .map(|o| Chosen::Go(Flow::Stop(Box::new(o))))
    }
}

/// Which figures (0-based) a choice is for: those it names (1-based), or all. A correction is
/// for one figure and needs its value.
fn chosen_figures(
    failure: &Failure,
    figures: &[UnlinkedFigure],
    answer: &Choice,
) -> Result<Vec<usize>> {
    let count = figures.len();
    if let Some(bad) = answer.figures.iter().find(|&&n| n == 0 || n > count) {
        return Err(RuntimeError::ChoiceNotOffered(format!(
            "failure {} lists {count} figures: {bad} is not one of them; nothing was changed",
            failure.id
        )));
    }
    let mut chosen: Vec<usize> = if answer.figures.is_empty() {
        (0..count).collect()
    } else {
        answer.figures.iter().map(|n| n - 1).collect()
    };
    chosen.sort_unstable();
    chosen.dedup();
    if answer.resolution == Resolution::Correct {
        if chosen.len() != 1 {
            return Err(RuntimeError::ChoiceNotOffered(format!(
                "a correction is for one figure: failure {} lists {count}; name the one to \
                 correct (1 to {count}); nothing was changed",
                failure.id
            )));
        }
        if answer.value.is_none() {
            return Err(RuntimeError::ChoiceNotOffered(
                "a correction needs the right value: give it with the choice; nothing was \
                 changed"
                    .into(),
            ));
        }
    }
    Ok(chosen)
}

/// "2 figures of the answer are in no tool output: 987,654 (in “West made 987,654.”), …";
/// a report's figure names its report.
fn unlinked_message(figures: &[UnlinkedFigure]) -> String {
    let named: Vec<String> = figures
        .iter()
        .take(NAMED_IN_MESSAGE)
        .map(|f| {
            let report = f
                .path
                .as_deref()
                .map(|p| format!("{p}: "))
                .unwrap_or_default();
            format!(
                "{} (in {report}\u{201c}{}\u{201d})",
                f.text,
                clip(&f.sentence, 120)
            )
        })
        .collect();
    let more = figures.len().saturating_sub(NAMED_IN_MESSAGE);
    let tail = if more > 0 {
        format!(", and {more} more")
    } else {
        String::new()
    };
    let whose = if figures.iter().any(|f| f.path.is_some()) {
        "the answer and its reports"
    } else {
        "the answer"
    };
    let noun = if figures.len() == 1 {
        format!("1 figure of {whose} is")
    } else {
        format!("figures of {whose} are")
    };
    let count = if figures.len() == 1 {
        String::new()
    } else {
        format!("{} ", figures.len())
    };
    format!(
        "{count}{noun} in no tool output, and no sum, difference, ratio or mean of figures \
         that are gives them: {}{tail}",
        named.join("; ")
    )
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut s: String = text.chars().take(max - 1).collect();
    s.push('…');
    s
}

/// What the model is asked when the analyst chose to verify figures.
fn verify_request(figures: &[UnlinkedFigure]) -> String {
    let mut out = String::from(
        "# Figures to verify\nNo tool output holds these figures of your answer. Compute each \
         one with a tool from the data (print the value), then give your whole answer again \
         with the values the tools printed, or say which ones you could not compute:\n",
    );
    for f in figures {
        match &f.path {
            Some(path) => out.push_str(&format!(
                "- {} in your report {path} (correct the file too): {}\n",
                f.text, f.sentence
            )),
            None => out.push_str(&format!("- {} in: {}\n", f.text, f.sentence)),
        }
    }
    out
}

/// A decided figure with its sentence, read back from the text it is in (the answer `seq`, or
/// its report).
fn decided_figure(text: &str, seq: i64, d: &FigureDecision) -> UnlinkedFigure {
    let start = (d.start as usize).min(text.len());
    let (from, to) = if text.is_char_boundary(start) {
        decima_figures::sentence_bounds(text, start)
    } else {
        (0, 0)
    };
    UnlinkedFigure {
        message_seq: seq,
        start: d.start,
        end: d.start + u32::try_from(d.text.len()).unwrap_or(0),
        text: d.text.clone(),
        sentence: text.get(from..to).unwrap_or("").trim().to_owned(),
        path: d.path.clone(),
    }
}

/// The answer with the analyst's decisions applied: an estimate gets "(estimate)" after it, a
/// correction the analyst's value in its place. Returns the text and, for each decision, where
/// its figure starts in it. A decision whose figure is no longer where it was is left out.
fn settle(text: &str, decisions: &[FigureDecision]) -> (String, Vec<(FigureDecision, u32)>) {
    let mut out = String::with_capacity(text.len() + 32);
    let mut moved = Vec::new();
    let mut at = 0usize;
    let mut ordered: Vec<&FigureDecision> = decisions.iter().collect();
    ordered.sort_by_key(|d| d.start);
    for d in ordered {
        let start = d.start as usize;
        let end = start + d.text.len();
        if start < at || text.get(start..end) != Some(d.text.as_str()) {
            continue;
        }
        out.push_str(&text[at..start]);
        let new_start = u32::try_from(out.len()).unwrap_or(u32::MAX);
        match (d.decision, d.value.as_deref()) {
            (Resolution::Correct, Some(value)) => out.push_str(value),
            (Resolution::Estimate, _) => {
                out.push_str(&d.text);
                out.push_str(" (estimate)");
            }
            _ => out.push_str(&d.text),
        }
        moved.push((d.clone(), new_start));
        at = end;
    }
    out.push_str(&text[at..]);
    (out, moved)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(text: &str, answer: &str) -> UnlinkedFigure {
        let start = answer.find(text).unwrap();
        UnlinkedFigure {
            message_seq: 9,
            start: u32::try_from(start).unwrap(),
            end: u32::try_from(start + text.len()).unwrap(),
            text: text.into(),
            sentence: answer.into(),
            path: None,
        }
    }

    fn decided(f: &UnlinkedFigure, decision: Resolution, value: Option<&str>) -> FigureDecision {
        FigureDecision {
            message_seq: 9,
            path: None,
            start: f.start,
            text: f.text.clone(),
            decision,
            value: value.map(str::to_owned),
            failure_id: None,
        }
    }

    #[test]
    fn estimates_are_marked_corrections_replace_and_accepted_figures_stay() {
        let answer = "West made 987,654, East 12.5% and North 42 units.";
        let figures = [
            figure("987,654", answer),
            figure("12.5%", answer),
            figure("42", answer),
        ];
        let decisions = [
            decided(&figures[0], Resolution::Estimate, None),
            decided(&figures[1], Resolution::Correct, Some("13.1%")),
            decided(&figures[2], Resolution::Accept, None),
        ];
        let (text, moved) = settle(answer, &decisions);
        assert_eq!(
            text,
            "West made 987,654 (estimate), East 13.1% and North 42 units."
        );
        let starts: Vec<&str> = moved
            .iter()
            .map(|(d, s)| {
                &text[*s as usize..*s as usize + d.value.as_deref().unwrap_or(&d.text).len()]
            })
            .collect();
        assert_eq!(starts, ["987,654", "13.1%", "42"]);
    }

    #[test]
    fn the_message_names_the_figures_in_their_sentences() {
        let answer = "West made 987,654.";
        let one = unlinked_message(&[figure("987,654", answer)]);
        assert!(
            one.starts_with("1 figure of the answer is in no tool output"),
            "{one}"
        );
        assert!(
            one.contains("987,654 (in \u{201c}West made 987,654.\u{201d})"),
            "{one}"
        );
    }
}
