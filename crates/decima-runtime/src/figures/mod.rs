//! The figures of an answer checked against the conversation's ledger: each linked to the tool
//! output that holds its value, derived from linked figures, or unlinked.
//!
//! The ledger is an index over what the store already holds, never a copy: it is read from the
//! tool outputs and the analyst's messages before the answer, in one pass (a megabyte of output
//! in a few milliseconds, see `docs/PERFORMANCE.md`), each time an answer is checked. A
//! compression summarises the context a model sees; it removes no message, so the ledger keeps
//! every figure however often the conversation was compressed.

pub mod files;

use std::collections::HashMap;

use decima_core::{ConversationId, ExecutionId, Message, Role};
use decima_figures::{Check, Derivation, Ledger, LedgerBuilder, Operation, Origin, Source, Status};
use decima_store::Store;
use decima_store::{FigureDecision, FigureReceipt, Resolution};
use serde::Serialize;
use tracing::instrument;

pub use files::ReportCheck;

use crate::error::RuntimeError;

/// Where a figure's value was found: a span of a tool's output or an analyst's message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureSource {
    /// The message that holds it.
    pub message_seq: i64,
    /// The tool call that output it (or wrote its file).
    pub tool_call_id: Option<String>,
    /// The workspace file that holds it, when a command wrote it there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Byte span of the value in that message's text.
    pub start: u32,
    /// End of the span.
    pub end: u32,
    /// The value as the source wrote it.
    pub text: String,
    /// What the source says it is about.
    pub subject: String,
}

/// What supports a figure of an answer: a source, a derivation, nothing, or the analyst's word.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, strum::IntoStaticStr, strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum FigureStatus {
    /// A tool output holds its value.
    Linked,
    /// Linked figures give it.
    Derived,
    /// Nothing the run saw supports it.
    Unlinked,
    /// Unlinked, and the analyst had the answer mark it an estimate.
    Estimate,
    /// Unlinked, and the analyst typed the right value.
    Corrected,
    /// Unlinked, and the analyst vouched for it.
    Accepted,
    /// Unsupported, and the tenth man worked out the same value from the run's inputs.
    Verified,
}

impl From<Status> for FigureStatus {
    fn from(s: Status) -> Self {
        match s {
            Status::Linked => Self::Linked,
            Status::Derived => Self::Derived,
            Status::Unlinked => Self::Unlinked,
        }
    }
}

/// How a derived figure is computed from sources.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureDerivation {
    /// The operation.
    pub operation: Operation,
    /// Its operands, in order.
    pub operands: Vec<FigureSource>,
    /// The derivation written out, "(150 − 120) ÷ 120 = 0.25".
    pub formula: String,
}

/// One figure of an answer, what supports it, and the sentence it stands in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureCheck {
    /// The figure as written.
    pub text: String,
    /// Byte span in the answer.
    pub start: u32,
    /// End of the span.
    pub end: u32,
    /// Its sentence.
    pub sentence: String,
    /// What the answer says it is about.
    pub subject: String,
    /// Linked, derived, unlinked, or what the analyst decided about an unlinked one.
    pub status: FigureStatus,
    /// The source that holds its value, when linked.
    pub source: Option<FigureSource>,
    /// How sources give it, when derived.
    pub derivation: Option<FigureDerivation>,
    /// What the tenth man got when it last recomputed it, with its receipt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recomputed: Option<Recomputation>,
}

/// A figure worked out again by a recompute review, from the run's inputs in a fresh sandbox.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recomputation {
    /// The review that did it.
    pub review_id: String,
    /// The value it reached, as it wrote it; none when it could not compute one.
    pub value: Option<String>,
    /// Whether that agrees with the figure within the figure's precision.
    pub agrees: bool,
    /// How it got there, or why it could not.
    pub derivation: String,
    /// Its commands and the files it wrote: the receipt.
    pub code: String,
}

impl From<&FigureReceipt> for Recomputation {
    fn from(r: &FigureReceipt) -> Self {
        Self {
            review_id: r.review_id.clone(),
            value: r.recomputed.clone(),
            agrees: r.agrees,
            derivation: r.derivation.clone(),
            code: r.code.clone(),
        }
    }
}

/// Every figure of one answer, checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NumbersReport {
    /// The conversation.
    pub conversation_id: String,
    /// The answer's message.
    pub message_seq: i64,
    /// Its figures, in the answer's order. Years, dates, list numbers, ids and the analyst's
    /// own figures are not claims and are not listed.
    pub figures: Vec<FigureCheck>,
    /// The reports the run wrote itself, each checked as the answer is (runs only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reports: Vec<ReportCheck>,
    /// Figures the ledger held when the answer was checked.
    pub ledger_entries: u32,
    /// Tool outputs and analyst messages it read them from.
    pub ledger_sources: u32,
}

impl NumbersReport {
    /// How many figures have each status.
    #[must_use]
    pub fn count(&self, status: FigureStatus) -> usize {
        self.figures.iter().filter(|f| f.status == status).count()
    }
}

/// Checks the figures of the assistant's message `seq` against the tool outputs and analyst
/// messages before it, and, for an answer of a run, the files that run's commands wrote (so the
/// window and `decima numbers` say what the run's own check said).
#[instrument(skip(store, data_dir), fields(conversation = %conversation))]
pub async fn check_message(
    store: &Store,
    data_dir: &std::path::Path,
    conversation: ConversationId,
    seq: i64,
) -> Result<NumbersReport, RuntimeError> {
    let messages = store.messages().range(conversation, 1, seq).await?;
    let Some(answer) = messages.iter().find(|m| m.seq == seq) else {
        return Err(RuntimeError::Config(format!(
            "conversation {conversation} has no live message {seq}: `decima conversation show \
             {conversation}` lists its messages"
        )));
    };
    if answer.role != Role::Assistant {
        return Err(RuntimeError::Config(format!(
            "message {seq} is a {} message: figures are checked in the assistant's answers",
            answer.role.as_str()
        )));
    }
    let files = match answer.execution_id {
        Some(run) => {
            let record = store.executions().get(run).await?;
            run_files_of(store, data_dir, &record, run_start_seq(&messages, run)).await?
        }
        None => files::RunFiles::default(),
    };
    let mut report = check_with(conversation, &messages, answer, files);
    overlay(store, conversation, &mut report).await?;
    Ok(report)
}

/// The files `record` wrote, read through its workspace: its own folder on the host, its
/// conversation's container in Docker, and the inputs it started with, from its first
/// snapshot. The workspace is not reached when the run wrote nothing.
async fn run_files_of(
    store: &Store,
    data_dir: &std::path::Path,
    record: &decima_store::Execution,
    first_seq: i64,
) -> Result<files::RunFiles, RuntimeError> {
    let written = files::written_by(store, record.id).await?;
    let snapshots = std::sync::Arc::new(crate::agent::snapshot_store(data_dir)?);
    let inputs = files::run_inputs(store, snapshots, record.id, &written, first_seq).await?;
    if written.is_empty() {
        return Ok(files::RunFiles {
            sources: inputs,
            reports: Vec::new(),
        });
    }
    let sandbox: std::sync::Arc<dyn decima_sandbox::Sandbox> =
        match (&record.sandbox, &record.workspace) {
            (decima_store::SandboxKind::Host, Some(folder)) => {
                std::sync::Arc::new(decima_sandbox::HostSandbox::new(
                    std::path::PathBuf::from(folder),
                    decima_sandbox::HostLimits::default(),
                ))
            }
            _ => {
                crate::workspace::place::place(store, data_dir, record.conversation_id)
                    .await?
                    .sandbox
            }
        };
    let mut files = files::run_files(sandbox.as_ref(), written).await;
    files.sources.extend(inputs);
    Ok(files)
}

/// The files every run of `messages` read or wrote that the ledger reads as sources: an
/// export's footnotes link a figure to the CSV a script wrote, as the run's own check did. A
/// run whose workspace cannot be reached any more is left out (logged), its files with it.
pub async fn conversation_files(
    store: &Store,
    data_dir: &std::path::Path,
    messages: &[Message],
) -> Result<Vec<(files::WrittenFile, String)>, RuntimeError> {
    let mut runs: Vec<ExecutionId> = Vec::new();
    for m in messages {
        if let Some(run) = m.execution_id
            && !runs.contains(&run)
        {
            runs.push(run);
        }
    }
    let mut sources = Vec::new();
    for run in runs {
        let record = match store.executions().get(run).await {
            Ok(record) if record.parent_id.is_none() => record,
            Ok(_) => continue,
            Err(e) => {
                tracing::warn!(execution = %run, error = %e, "a run of the export's messages was not found");
                continue;
            }
        };
        match run_files_of(store, data_dir, &record, run_start_seq(messages, run)).await {
            Ok(files) => sources.extend(files.sources),
            Err(e) => {
                tracing::warn!(execution = %run, error = %e, "a run's files were not read for the export's footnotes")
            }
        }
    }
    Ok(sources)
}

/// The seq of a run's first message (its task): where its inputs enter the ledger.
#[must_use]
pub fn run_start_seq(messages: &[Message], execution: ExecutionId) -> i64 {
    messages
        .iter()
        .find(|m| m.execution_id == Some(execution))
        .map_or(0, |m| m.seq)
}

/// Checks the figures of an execution's answer (its last assistant message with text) and of
/// the reports it wrote, against the conversation's ledger and the files the run's commands
/// wrote, read through the conversation's workspace.
#[instrument(skip(store, data_dir), fields(execution = %execution))]
pub async fn check_execution(
    store: &Store,
    data_dir: &std::path::Path,
    execution: ExecutionId,
) -> Result<NumbersReport, RuntimeError> {
    let record = store.executions().get(execution).await?;
    let messages = store.messages().all(record.conversation_id).await?;
    let answer = messages
        .iter()
        .rev()
        .find(|m| {
            m.execution_id == Some(execution)
                && m.role == Role::Assistant
                && !m.content.trim().is_empty()
        })
        .ok_or_else(|| {
            RuntimeError::Conflict(format!(
                "execution {execution} has no answer yet: its figures are checked once the \
                 model has written one"
            ))
        })?;
    let before: Vec<Message> = messages
        .iter()
        .filter(|m| m.seq <= answer.seq)
        .cloned()
        .collect();
    let files = run_files_of(
        store,
        data_dir,
        &record,
        run_start_seq(&messages, execution),
    )
    .await?;
    let mut report = check_with(record.conversation_id, &before, answer, files);
    overlay(store, record.conversation_id, &mut report).await?;
    Ok(report)
}

/// The analyst's decisions on the report's unlinked figures, and the tenth man's receipts.
async fn overlay(
    store: &Store,
    conversation: ConversationId,
    report: &mut NumbersReport,
) -> Result<(), RuntimeError> {
    let decisions = store
        .figure_decisions()
        .of_message(conversation, report.message_seq)
        .await?;
    apply_decisions(&mut report.figures, &decisions, None);
    for r in &mut report.reports {
        apply_decisions(&mut r.figures, &decisions, Some(&r.path));
    }
    let receipts = store
        .figure_receipts()
        .of_message(conversation, report.message_seq)
        .await?;
    apply_receipts(&mut report.figures, &receipts);
    Ok(())
}

/// Gives each figure the newest receipt of a recompute review; an unsupported figure whose
/// recomputation agrees is verified.
pub fn apply_receipts(figures: &mut [FigureCheck], receipts: &[FigureReceipt]) {
    for f in figures.iter_mut() {
        let Some(r) = receipts.iter().rev().find(|r| r.start == f.start) else {
            continue;
        };
        f.recomputed = Some(Recomputation::from(r));
        if r.agrees && !matches!(f.status, FigureStatus::Linked | FigureStatus::Derived) {
            f.status = FigureStatus::Verified;
        }
    }
}

/// Gives each unlinked figure the status its decision says (a figure to verify stays unlinked
/// until a tool gives it). `report` is the report the figures are of, none for the answer's.
pub fn apply_decisions(
    figures: &mut [FigureCheck],
    decisions: &[FigureDecision],
    report: Option<&str>,
) {
    for f in figures
        .iter_mut()
        .filter(|f| f.status == FigureStatus::Unlinked)
    {
        let Some(d) = decisions
            .iter()
            .find(|d| d.start == f.start && d.path.as_deref() == report)
        else {
            continue;
        };
        f.status = match d.decision {
            Resolution::Estimate => FigureStatus::Estimate,
            Resolution::Correct => FigureStatus::Corrected,
            Resolution::Accept => FigureStatus::Accepted,
            _ => FigureStatus::Unlinked,
        };
    }
}

/// The ledger of the messages before `answer` and of the files a run wrote (its commands' as
/// sources), the answer checked against it, and the run's reports checked too.
fn check_with(
    conversation: ConversationId,
    messages: &[Message],
    answer: &Message,
    files: files::RunFiles,
) -> NumbersReport {
    let ledger = ConversationLedger::with_files(messages, files.sources);
    let figures = ledger.check(answer);
    NumbersReport {
        conversation_id: conversation.to_string(),
        message_seq: answer.seq,
        figures,
        reports: ledger.check_reports(&files.reports),
        ledger_entries: u32::try_from(ledger.ledger.len()).unwrap_or(u32::MAX),
        ledger_sources: u32::try_from(ledger.ledger.sources().len()).unwrap_or(u32::MAX),
    }
}

/// A conversation's ledger: every tool output and analyst message, and the files a run's
/// commands wrote, read once, against which each answer is checked with the sources stored
/// before it.
pub struct ConversationLedger<'m> {
    ledger: Ledger,
    texts: Texts<'m>,
}

/// The texts the ledger's spans point into: messages by seq, files by path.
#[derive(Default)]
struct Texts<'m> {
    messages: HashMap<i64, &'m str>,
    files: HashMap<String, String>,
}

impl Texts<'_> {
    fn of(&self, source: &Source) -> Option<&str> {
        match &source.path {
            Some(path) => self.files.get(path).map(String::as_str),
            None => self.messages.get(&source.message_seq).copied(),
        }
    }
}

impl<'m> ConversationLedger<'m> {
    /// Reads the tool outputs and analyst messages of `messages`.
    #[must_use]
    pub fn new(messages: &'m [Message]) -> Self {
        Self::with_files(messages, Vec::new())
    }

    /// Reads the tool outputs and analyst messages of `messages`, and the files commands and
    /// tools of a run wrote (`files::run_files`), each a source as of the answer that made its
    /// call.
    #[must_use]
    pub fn with_files(messages: &'m [Message], files: Vec<(files::WrittenFile, String)>) -> Self {
        let mut builder = LedgerBuilder::new();
        let mut texts = Texts::default();
        for m in messages {
            let origin = match m.role {
                Role::Tool => Origin::Tool,
                Role::User => Origin::Analyst,
                Role::Assistant | Role::System => continue,
            };
            builder.add_text(
                Source {
                    origin,
                    message_seq: m.seq,
                    tool_call_id: m.tool_call_id.clone(),
                    path: None,
                },
                &m.content,
            );
            texts.messages.insert(m.seq, m.content.as_str());
        }
        for (file, text) in files {
            builder.add_text(
                Source {
                    origin: Origin::File,
                    message_seq: file.message_seq,
                    // An input was written by no call of the run.
                    tool_call_id: (!file.call_id.is_empty()).then_some(file.call_id),
                    path: Some(file.path.clone()),
                },
                &text,
            );
            texts.files.insert(file.path, text);
        }
        Self {
            ledger: builder.build(),
            texts,
        }
    }

    /// The figures of an assistant's message, each checked against what came before it.
    #[must_use]
    pub fn check(&self, answer: &Message) -> Vec<FigureCheck> {
        decima_figures::check_answer_before(&answer.content, &self.ledger, answer.seq)
            .iter()
            .map(|c| view(c, &answer.content, &self.ledger, &self.texts))
            .collect()
    }

    /// The figures of a report the run wrote, each checked against every source.
    #[must_use]
    pub fn check_report(&self, text: &str) -> Vec<FigureCheck> {
        decima_figures::check_answer(text, &self.ledger)
            .iter()
            .map(|c| view(c, text, &self.ledger, &self.texts))
            .collect()
    }

    /// The reports a run wrote, each checked, or named with why it was not.
    #[must_use]
    pub fn check_reports(
        &self,
        reports: &[(files::WrittenFile, files::FileText)],
    ) -> Vec<ReportCheck> {
        reports
            .iter()
            .map(|(file, text)| match text {
                files::FileText::Text { text, cut } => ReportCheck {
                    path: file.path.clone(),
                    figures: self.check_report(text),
                    note: cut.then(|| {
                        format!(
                            "only its first {} MiB were checked",
                            files::MAX_FILE_BYTES / (1024 * 1024)
                        )
                    }),
                },
                files::FileText::Unread(why) => ReportCheck {
                    path: file.path.clone(),
                    figures: Vec::new(),
                    note: Some(why.clone()),
                },
            })
            .collect()
    }
}

/// An answer's text with a Markdown footnote mark after each figure, and the footnotes that
/// name each figure's source or derivation (or say that nothing holds it). Marks are
/// `[^f{seq}-{n}]`, unique in a conversation's export.
#[must_use]
pub fn footnoted(answer: &Message, figures: &[FigureCheck]) -> (String, String) {
    let mut text = answer.content.clone();
    let mut notes = String::new();
    for (n, f) in figures.iter().enumerate().rev() {
        let mark = format!("[^f{}-{}]", answer.seq, n + 1);
        if text.is_char_boundary(f.end as usize) {
            text.insert_str(f.end as usize, &mark);
        }
    }
    for (n, f) in figures.iter().enumerate() {
        notes.push_str(&format!(
            "[^f{}-{}]: {} — {}\n",
            answer.seq,
            n + 1,
            f.text,
            note(f)
        ));
    }
    (text, notes)
}

fn note(f: &FigureCheck) -> String {
    if let Some(s) = &f.source {
        let call = s
            .tool_call_id
            .as_deref()
            .map(|c| format!(" (tool call `{c}`)"))
            .unwrap_or_default();
        let about = if s.subject.is_empty() {
            String::new()
        } else {
            format!(", {}", s.subject)
        };
        return match (&s.path, &s.tool_call_id) {
            (Some(path), None) => format!(
                "linked: input file `{path}` as the run started, \"{}\"{about}",
                s.text
            ),
            (Some(path), Some(_)) => format!(
                "linked: file `{path}`, written at message #{}{call}, \"{}\"{about}",
                s.message_seq, s.text
            ),
            (None, _) => format!(
                "linked: message #{}{call}, \"{}\"{about}",
                s.message_seq, s.text
            ),
        };
    }
    if let Some(d) = &f.derivation {
        let seqs: Vec<String> = d
            .operands
            .iter()
            .map(|o| format!("#{}", o.message_seq))
            .collect();
        return format!(
            "derived ({}): {} from messages {}",
            d.operation,
            d.formula,
            seqs.join(", ")
        );
    }
    "unlinked: no tool output before it holds this value".to_owned()
}

fn view(c: &Check, answer: &str, ledger: &Ledger, texts: &Texts<'_>) -> FigureCheck {
    let source = c.entry.and_then(|e| source(ledger, texts, e));
    let derivation = c.derivation.as_ref().map(|d| derivation(d, ledger, texts));
    FigureCheck {
        text: c.text.clone(),
        start: u32::try_from(c.figure.start).unwrap_or(u32::MAX),
        end: u32::try_from(c.figure.end).unwrap_or(u32::MAX),
        sentence: answer
            .get(c.sentence.0..c.sentence.1)
            .unwrap_or("")
            .trim()
            .to_owned(),
        subject: c.subject.clone(),
        status: c.status.into(),
        source,
        derivation,
        recomputed: None,
    }
}

fn source(ledger: &Ledger, texts: &Texts<'_>, index: u32) -> Option<FigureSource> {
    let entry = ledger.entry(index)?;
    let src = ledger.source_of(entry)?;
    let text = texts
        .of(src)
        .and_then(|t| t.get(entry.start as usize..entry.end as usize))
        .unwrap_or("")
        .to_owned();
    Some(FigureSource {
        message_seq: src.message_seq,
        tool_call_id: src.tool_call_id.clone(),
        path: src.path.clone(),
        start: entry.start,
        end: entry.end,
        text,
        subject: entry.subject.to_string(),
    })
}

fn derivation(d: &Derivation, ledger: &Ledger, texts: &Texts<'_>) -> FigureDerivation {
    FigureDerivation {
        operation: d.operation,
        operands: d
            .operands
            .iter()
            .filter_map(|i| source(ledger, texts, *i))
            .collect(),
        formula: d.describe(ledger),
    }
}
