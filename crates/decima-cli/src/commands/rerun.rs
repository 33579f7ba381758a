//! `decima rerun EXECUTION_ID [--input INPUT=FILE]... [--json]`: a finished run's calls
//! replayed without its model. JSON is the runtime's [`RerunReport`] as is; the text lists each
//! call with its verdict (and the diff of one that differs), then, on new data, each figure
//! of the answer that changed, old and new, and each the new data could not give.

use std::fmt::Write as _;
use std::path::Path;

use decima_runtime::rerun::{InputSwap, RerunReport, Verdict};
use decima_store::Store;

use super::execution_id;
use crate::error::CliError;
use crate::output;

pub async fn run(
    store: &Store,
    data_dir: &Path,
    id: &str,
    inputs: &[String],
    json: bool,
) -> Result<(), CliError> {
    let id = execution_id(id)?;
    let swaps = inputs
        .iter()
        .map(|i| InputSwap::parse(i))
        .collect::<Result<Vec<_>, _>>()?;
    let report = decima_runtime::rerun::rerun(store, data_dir, id, &swaps).await?;
    if json {
        output::print_json(&report)
    } else {
        output::print(&render(&report))
    }
}

fn render(report: &RerunReport) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "run {} replayed without a model{}: {} calls, {} the same, {} different, {} \
         nondeterministic, {} not replayed ({} ms of tools, {} model requests)",
        report.execution_id,
        if report.inputs.is_empty() {
            String::new()
        } else {
            format!(" on new data ({})", report.inputs.join(", "))
        },
        report.calls.len(),
        report.count(Verdict::Same),
        report.count(Verdict::Different),
        report.count(Verdict::Nondeterministic),
        report.count(Verdict::Skipped),
        report.replay_ms,
        report.model_requests,
    );
    for c in &report.calls {
        let verdict = match c.verdict {
            Verdict::Same => "same",
            Verdict::Different => "DIFFERENT",
            Verdict::Nondeterministic => "nondeterministic",
            Verdict::Skipped => "not replayed",
        };
        let failed = if c.failed { ", failed" } else { "" };
        let _ = writeln!(
            text,
            "  {} {} (message {}): {verdict}{failed}",
            c.call_id, c.tool, c.seq
        );
        if let Some(note) = &c.note {
            let _ = writeln!(text, "    {note}");
        }
        if c.verdict == Verdict::Different
            && let Some(diff) = &c.diff
        {
            for line in diff.lines() {
                let _ = writeln!(text, "    {line}");
            }
        }
    }
    if report.inputs.is_empty() {
        return text;
    }
    let _ = writeln!(
        text,
        "\nfigures of the answer: {} changed, {} the same, {} not given by the new data",
        report.changed.len(),
        report.unchanged,
        report.lost.len()
    );
    for f in &report.changed {
        let new = f.new_text.clone().unwrap_or_else(|| format!("{}", f.new));
        let _ = writeln!(
            text,
            "  {} -> {new}  (from {}{})\n    {}",
            f.text,
            f.call_id.as_deref().unwrap_or("?"),
            f.formula
                .as_deref()
                .map(|d| format!(", derived: {d}"))
                .unwrap_or_default(),
            f.sentence.trim()
        );
    }
    for f in &report.lost {
        let _ = writeln!(
            text,
            "  {} could not be worked out again: {}\n    {}",
            f.text,
            f.reason,
            f.sentence.trim()
        );
    }
    text
}
