//! Facts as *statements*, and a checker that asks whether a summary kept each statement — what
//! it is about together with its value — rather than its tokens.
//!
//! A summary that keeps `0.85`, `1204` and `DE89` has kept numbers, not facts: the reader cannot
//! tell which threshold `0.85` is, whether it replaced `0.8`, or which account `DE89` starts.
//! Every [`Fact`] therefore records its *subject* (the phrases that name what it is
//! about) and its *value* exactly as written, and [`statement_kept`] counts it only where both
//! survive on the same line (or the same bullet, or under a `Label:` line, or — for a table cell
//! — under the table's header).
//!
//! # API
//!
//! - [`statement_kept`]`(text, fact) -> `[`Verdict`]: one fact against a summary's text.
//! - [`score`]`(text, facts) -> `[`Scorecard`]: all of them, with recall per kind, the lost facts
//!   and why, printable as a table.

mod check;

use decima_core::Role;

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
