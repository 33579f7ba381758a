//! Long analyst sessions with planted *statements*, and a checker that asks whether a summary
//! kept each statement — what it is about together with its value — rather than its tokens.
//!
//! A summary that keeps `0.85`, `1204` and `DE89` has kept numbers, not facts: the reader cannot
//! tell which threshold `0.85` is, whether it replaced `0.8`, or which account `DE89` starts.
//! Every planted [`Fact`] therefore records its *subject* (the phrases that name what it is
//! about) and its *value* exactly as written, and [`statement_kept`] counts it only where both
//! survive on the same line (or the same bullet, or under a `Label:` line, or — for a table cell
//! — under the table's header).
//!
//! The sessions are written from how analysts and their tools actually talk, not from how any
//! summariser works: three analysts with different habits (terse chat, formal notes, rambling
//! asides), in English or Chinese, an agent running `shell`, `read_file`, `run_sql`, `python`
//! and `write_file`, and far more noise than signal — polled logs, `wc`/`grep`/`head` output,
//! CSV previews, stack traces, long reasoning, chit-chat and plenty of numbers that are not facts.
//!
//! Planted facts ([`FactKind`]): a value stated in a clause of a longer user message; a
//! correction that supersedes an earlier value; a labelled value in a tool's output; one cell of
//! a table; a value inside a code block; the assistant playing back a requirement the user only
//! stated loosely; literals with inner spaces (IBANs, phone numbers, names, money, dates); and
//! decisions and constraints as people phrase them.
//!
//! # API
//!
//! - [`generate`]`(seed, len, language) -> `[`FactSession`]: `len` messages exactly, the same for
//!   the same inputs, with its [`Fact`]s.
//! - [`statement_kept`]`(text, fact) -> `[`Verdict`]: one fact against a summary's text.
//! - [`score`]`(text, facts) -> `[`Scorecard`]: all of them, with recall per kind, the lost facts
//!   and why, printable as a table.
//!
//! # Example
//!
//! Build a 10,000-message English session, compress it with any function, score the result:
//!
//! ```
//! use decima_testkit::analyst_conversation::Language;
//! use decima_testkit::fact_sessions::{generate, score};
//!
//! let session = generate(7, 10_000, Language::English);
//! assert_eq!(session.messages.len(), 10_000);
//!
//! // Any compressor will do; this one keeps only the last 200 messages verbatim.
//! let compress = |messages: &[decima_core::NewMessage]| -> String {
//!     let tail = &messages[messages.len().saturating_sub(200)..];
//!     tail.iter().map(|m| m.content.as_str()).collect::<Vec<_>>().join("\n\n")
//! };
//! let summary = compress(&session.messages);
//!
//! let card = score(&summary, &session.facts);
//! println!("{card}");
//! assert!(card.recall() < 0.5, "a tail keeps the late facts only");
//! ```

mod artifacts;
mod beats;
mod check;
mod generator;
mod noise;
mod pools;
mod shapes;

use decima_core::{NewMessage, Role};

pub use crate::analyst_conversation::Language;
pub use check::{KindRecall, LostFact, Scorecard, Verdict, score, statement_kept};

/// What sort of statement a fact is, so recall can be reported per kind: a summariser that keeps
/// user clauses but drops tool labels has a specific, fixable blind spot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FactKind {
    /// The user states a value in a clause of a longer message ("btw the churn window we agreed
    /// on is 45 days — and can you also…").
    UserClause,
    /// The user replaces a value stated earlier ("sorry, 15, not 12", "改成 0.85"). The value is
    /// the new one; [`Fact::replaced`] holds the old one.
    Correction,
    /// A tool prints a value next to its label (`rows_dropped: 1204`, `"p95_latency_ms": 842`).
    /// The label is the subject.
    ToolLabel,
    /// One cell of a table (markdown, CSV, psql, pandas): the subject is the column header and
    /// [`Fact::row`] the row key.
    TableCell,
    /// A value inside a code block: a config key, a SQL threshold, a Python constant.
    CodeValue,
    /// The assistant plays back a requirement the user only stated loosely; no user message
    /// repeats the value.
    Restatement,
    /// A literal with inner spaces: an IBAN, a phone number, a name with spaces, money with
    /// space-separated thousands, a date written out.
    SpacedLiteral,
    /// A choice, made by the user or the assistant, in everyday words.
    Decision,
    /// A limit the user sets, in everyday words.
    Constraint,
}

impl FactKind {
    /// Every kind, in report order.
    pub const ALL: [FactKind; 9] = [
        FactKind::UserClause,
        FactKind::Correction,
        FactKind::ToolLabel,
        FactKind::TableCell,
        FactKind::CodeValue,
        FactKind::Restatement,
        FactKind::SpacedLiteral,
        FactKind::Decision,
        FactKind::Constraint,
    ];

    /// A short name for reports and fact ids.
    pub fn name(self) -> &'static str {
        match self {
            FactKind::UserClause => "user clause",
            FactKind::Correction => "correction",
            FactKind::ToolLabel => "tool label",
            FactKind::TableCell => "table cell",
            FactKind::CodeValue => "code value",
            FactKind::Restatement => "restatement",
            FactKind::SpacedLiteral => "spaced literal",
            FactKind::Decision => "decision",
            FactKind::Constraint => "constraint",
        }
    }
}

/// One statement planted in a session: what it is about and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    /// A stable name within the session, e.g. `f012-correction`, for reports.
    pub id: String,
    /// What sort of statement it is.
    pub kind: FactKind,
    /// The words or phrases, any one of which names what the fact is about, chosen so that a
    /// faithful summary has at least one of them next to the value (`["churn window"]`,
    /// `["rows_dropped", "rows dropped", "dropped rows"]`). Chinese facts have Chinese phrases,
    /// plus the label when the source uses a Latin one. For a table cell: the column header.
    pub subject: Vec<String>,
    /// For a table cell, the row key that must accompany the value (`DACH`, `2026-01`); `None`
    /// for a one-row result and for every other kind.
    pub row: Option<String>,
    /// The value exactly as written in the source, inner spaces included.
    pub value: String,
    /// For a correction, the value it replaces; a summary presenting it as current loses the fact.
    pub replaced: Option<String>,
    /// Who stated it: the user, the assistant, or a tool.
    pub by: Role,
    /// 1-based index of the message carrying the value (for a correction, the correcting one).
    pub position: usize,
    /// For a correction, the 1-based index of the message that stated the old value.
    pub stated_at: Option<usize>,
}

/// A generated session and the facts planted in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FactSession {
    /// The messages, in order: a system prompt, then user, assistant and tool messages, every
    /// tool call answered by the message right after it.
    pub messages: Vec<NewMessage>,
    /// The planted facts, in order of position.
    pub facts: Vec<Fact>,
}

impl FactSession {
    /// Every message's text (and its tool calls' arguments), separated by blank lines: the
    /// source itself as one text, for checking that each fact is recoverable from it.
    pub fn transcript(&self) -> String {
        let mut out = String::new();
        for m in &self.messages {
            out.push_str(&m.content);
            for call in &m.tool_calls {
                out.push('\n');
                out.push_str(&call.name);
                out.push(' ');
                out.push_str(&call.arguments);
            }
            out.push_str("\n\n");
        }
        out
    }
}

/// Generates a session of exactly `len` messages from `seed` in `language`; the same inputs
/// always give the same session, so a failing score reproduces.
///
/// Facts are spread evenly from the start to the end. There are about one per 30 messages,
/// up to 90 per session (every subject appears at most once, and the vocabulary is finite); a
/// session of fewer than ~40 messages carries none.
pub fn generate(seed: u64, len: usize, language: Language) -> FactSession {
    generator::Gen::new(seed, len, language == Language::Chinese).run()
}
