//! An answer's figures for the window: each with what supports it, so a linked or derived one
//! can be a link to the output that holds it and an unlinked one can be marked.

use decima_runtime::figures::{FigureCheck, FigureSource, NumbersReport};
use serde::Serialize;
use specta::Type;

/// Where a figure's value is: a span of a tool's output (or of a file a command wrote).
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct FigureSourceView {
    /// The message that holds the output.
    pub message_seq: u32,
    /// The span of the value in that message's text, in UTF-8 bytes.
    pub start: u32,
    /// Its end.
    pub end: u32,
    /// The value as the output wrote it.
    pub text: String,
    /// What the output says it is about.
    pub subject: String,
    /// The workspace file that holds it, when a command wrote it there or the run started
    /// with it.
    pub path: Option<String>,
    /// Whether that file is one of the run's inputs (as it was when the run started), not one
    /// a command of the run wrote.
    pub input: bool,
}

impl From<&FigureSource> for FigureSourceView {
    fn from(s: &FigureSource) -> Self {
        Self {
            message_seq: u32::try_from(s.message_seq).unwrap_or(u32::MAX),
            start: s.start,
            end: s.end,
            text: s.text.clone(),
            subject: s.subject.clone(),
            path: s.path.clone(),
            input: s.path.is_some() && s.tool_call_id.is_none(),
        }
    }
}

/// One figure of an answer.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct FigureView {
    /// The figure as written.
    pub text: String,
    /// Its span in the answer, in UTF-8 bytes.
    pub start: u32,
    /// Its end.
    pub end: u32,
    /// linked, derived, unlinked, estimate, corrected, accepted or verified.
    pub status: String,
    /// The output that holds it, when linked.
    pub source: Option<FigureSourceView>,
    /// The derivation written out, when derived: "(150 − 120) ÷ 120 = 0.25".
    pub formula: Option<String>,
    /// The outputs a derived figure's operands are in.
    pub operands: Vec<FigureSourceView>,
    /// What the tenth man got when it recomputed it, and whether that agrees.
    pub recomputed: Option<String>,
    /// Whether the recomputed value agrees.
    pub agrees: Option<bool>,
    /// The tenth man's receipt, when it recomputed the figure: what the window shows when the
    /// figure is opened.
    pub receipt: Option<ReceiptView>,
}

/// How the tenth man recomputed a figure, from the run's inputs in a fresh sandbox: its value,
/// how it got there, and its commands and the files it wrote, so the analyst can check the
/// check.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptView {
    /// The value it reached, as it wrote it; none when it could not compute one.
    pub value: Option<String>,
    /// Whether that agrees with the figure within the figure's precision.
    pub agrees: bool,
    /// How it got there, or why it could not.
    pub derivation: String,
    /// Its commands and the files it wrote.
    pub code: String,
    /// The review that did it.
    pub review_id: String,
}

impl From<&FigureCheck> for FigureView {
    fn from(f: &FigureCheck) -> Self {
        Self {
            text: f.text.clone(),
            start: f.start,
            end: f.end,
            status: f.status.to_string(),
            source: f.source.as_ref().map(FigureSourceView::from),
            formula: f.derivation.as_ref().map(|d| d.formula.clone()),
            operands: f
                .derivation
                .iter()
                .flat_map(|d| d.operands.iter().map(FigureSourceView::from))
                .collect(),
            recomputed: f.recomputed.as_ref().and_then(|r| r.value.clone()),
            agrees: f.recomputed.as_ref().map(|r| r.agrees),
            receipt: f.recomputed.as_ref().map(|r| ReceiptView {
                value: r.value.clone(),
                agrees: r.agrees,
                derivation: r.derivation.clone(),
                code: r.code.clone(),
                review_id: r.review_id.clone(),
            }),
        }
    }
}

/// The figures of one answer, in its order.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct FiguresView {
    /// The answer's seq.
    pub message_seq: u32,
    /// Its figures.
    pub figures: Vec<FigureView>,
}

impl From<&NumbersReport> for FiguresView {
    fn from(r: &NumbersReport) -> Self {
        Self {
            message_seq: u32::try_from(r.message_seq).unwrap_or(u32::MAX),
            figures: r.figures.iter().map(FigureView::from).collect(),
        }
    }
}
