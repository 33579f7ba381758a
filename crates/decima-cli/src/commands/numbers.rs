//! `decima numbers` and `decima execution numbers`: each figure of an answer with what
//! supports it. JSON is the runtime's [`NumbersReport`] as is; the text is a table a person
//! reads top to bottom, an unlinked figure shown in its sentence.

use std::fmt::Write as _;

use decima_runtime::figures::{FigureCheck, FigureStatus, NumbersReport};

use crate::error::CliError;
use crate::output;

/// The longest sentence shown under an unlinked figure.
const SENTENCE_COLUMN: usize = 100;

pub fn print(report: &NumbersReport, json: bool) -> Result<(), CliError> {
    if json {
        output::print_json(report)
    } else {
        output::print(&render(report))
    }
}

fn render(report: &NumbersReport) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "message {} of conversation {}: {} figures, {} linked, {} derived, {} unlinked, {} \
         settled by the analyst, {} verified by the tenth man (ledger: {} figures from {} outputs and messages)",
        report.message_seq,
        report.conversation_id,
        report.figures.len(),
        report.count(FigureStatus::Linked),
        report.count(FigureStatus::Derived),
        report.count(FigureStatus::Unlinked),
        report.count(FigureStatus::Estimate)
            + report.count(FigureStatus::Corrected)
            + report.count(FigureStatus::Accepted),
        report.count(FigureStatus::Verified),
        report.ledger_entries,
        report.ledger_sources,
    );
    if report.figures.is_empty() {
        text.push_str("The answer states no figures to check.\n");
    } else {
        table(&mut text, &report.figures);
    }
    for r in &report.reports {
        let count = |s: FigureStatus| r.figures.iter().filter(|f| f.status == s).count();
        let settled = count(FigureStatus::Estimate)
            + count(FigureStatus::Corrected)
            + count(FigureStatus::Accepted);
        let _ = writeln!(
            text,
            "\nreport {} (written by the run): {} figures, {} linked, {} derived, {} unlinked, \
             {settled} settled by the analyst{}",
            r.path,
            r.figures.len(),
            count(FigureStatus::Linked),
            count(FigureStatus::Derived),
            count(FigureStatus::Unlinked),
            r.note
                .as_deref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        );
        if !r.figures.is_empty() {
            table(&mut text, &r.figures);
        }
    }
    text
}

/// One line per figure, an unlinked one with its sentence, a recomputed one with its verdict.
fn table(text: &mut String, figures: &[FigureCheck]) {
    let _ = writeln!(text, "{:<16}  {:<9}  SOURCE", "FIGURE", "STATUS");
    for f in figures {
        let _ = writeln!(
            text,
            "{:<16}  {:<9}  {}",
            f.text,
            f.status.to_string(),
            where_from(f)
        );
        if f.status == FigureStatus::Unlinked {
            let _ = writeln!(text, "{:<16}  {:<9}  in: {}", "", "", cut(&f.sentence));
        }
        if let Some(r) = &f.recomputed {
            let verdict = match (&r.value, r.agrees) {
                (Some(v), true) => format!("recomputed {v}: agrees"),
                (Some(v), false) => format!("recomputed {v}: DIFFERS"),
                (None, _) => "could not be recomputed".to_owned(),
            };
            let _ = writeln!(
                text,
                "{:<16}  {:<9}  {verdict} (review {}; its code is the receipt: --json)",
                "", "", r.review_id
            );
        }
    }
}

fn where_from(f: &FigureCheck) -> String {
    if let Some(s) = &f.source {
        let call = s
            .tool_call_id
            .as_deref()
            .map(|c| format!(" ({c})"))
            .unwrap_or_default();
        let about = if s.subject.is_empty() {
            String::new()
        } else {
            format!(": {}", s.subject)
        };
        if let Some(path) = &s.path
            && s.tool_call_id.is_none()
        {
            return format!(
                "input file {path} (as the run started, seq {}), bytes {}..{}, \"{}\"{about}",
                s.message_seq, s.start, s.end, s.text
            );
        }
        if let Some(path) = &s.path {
            return format!(
                "file {path} (written by{call} at seq {}), bytes {}..{}, \"{}\"{about}",
                s.message_seq, s.start, s.end, s.text
            );
        }
        return format!(
            "seq {}{call}, bytes {}..{}, \"{}\"{about}",
            s.message_seq, s.start, s.end, s.text
        );
    }
    if let Some(d) = &f.derivation {
        let seqs: Vec<String> = d
            .operands
            .iter()
            .map(|o| o.message_seq.to_string())
            .collect();
        return format!(
            "{} {} (from seq {})",
            d.operation,
            d.formula,
            seqs.join(", ")
        );
    }
    "no tool output or file holds it".to_owned()
}

fn cut(sentence: &str) -> String {
    let one_line = sentence.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= SENTENCE_COLUMN {
        return one_line;
    }
    let mut s: String = one_line.chars().take(SENTENCE_COLUMN - 1).collect();
    s.push('…');
    s
}
