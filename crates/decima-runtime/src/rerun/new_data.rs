//! A rerun on new data, through the ledger of figures: which of the answer's figures changed,
//! old and new, which stayed, and which the new data could not give.

use std::collections::HashMap;
use std::path::Path;

use decima_core::{Message, ToolCall};
use decima_figures::read_figures;
use decima_store::Store;

use super::{FigureChange, LostFigure, Replay, RerunReport, comparable};
use crate::error::Result;
use crate::figures::{FigureCheck, FigureSource, FigureStatus};

/// The answer's figures on the new data: a linked one read again where its call's new output
/// (or file) holds it, a derived one computed again from its operands.
pub(super) async fn figures_on_new_data(
    store: &Store,
    data_dir: &Path,
    record: &decima_store::Execution,
    calls: &[(i64, ToolCall)],
    recorded: &HashMap<&str, &Message>,
    replay: &Replay,
    report: &mut RerunReport,
) -> Result<()> {
    let numbers = crate::figures::check_execution(store, data_dir, record.id).await?;
    let index: HashMap<&str, usize> = calls
        .iter()
        .enumerate()
        .map(|(k, (_, c))| (c.id.as_str(), k))
        .collect();
    let new_value = |source: &FigureSource| -> std::result::Result<(f64, String), String> {
        let call = source.tool_call_id.as_deref().ok_or_else(|| {
            "its source is the analyst's or an input file, which the rerun replaced".to_owned()
        })?;
        let k = *index
            .get(call)
            .ok_or_else(|| format!("call {call} is not one of this run's"))?;
        let Some(out) = replay.outputs[k].as_ref() else {
            return Err(format!("call {call} is not run again"));
        };
        if out.is_failure() {
            return Err(format!(
                "call {call} failed on the new data: {}",
                last_lines(&out.text, 3)
            ));
        }
        if source.path.is_some() {
            return Err(format!(
                "it is read from a file call {call} wrote, which a rerun does not read yet"
            ));
        }
        let old_text = recorded.get(call).map_or("", |m| comparable(&m.content));
        locate(old_text, &out.text, source.start, source.end)
            .ok_or_else(|| format!("the new output of call {call} no longer holds it"))
    };
    for figure in &numbers.figures {
        match figure.status {
            FigureStatus::Linked => {
                let Some(source) = &figure.source else {
                    continue;
                };
                match new_value(source) {
                    Ok((new, new_text)) => {
                        note_change(
                            report,
                            figure,
                            old_value(&source.text),
                            new,
                            Some(new_text),
                            source.tool_call_id.clone(),
                            None,
                        );
                    }
                    Err(reason) => {
                        report
                            .lost
                            .push(lost(figure, source.tool_call_id.clone(), reason))
                    }
                }
            }
            FigureStatus::Derived => {
                if let Some(d) = &figure.derivation {
                    derived_on_new_data(figure, d, &new_value, report);
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// A source's value on the new data, with its text; or why the new data cannot give it.
type NewValue<'a> = dyn Fn(&FigureSource) -> std::result::Result<(f64, String), String> + 'a;

/// A derived figure computed again from its operands' new values, or named as lost with the
/// first operand the new data could not give.
fn derived_on_new_data(
    figure: &FigureCheck,
    d: &crate::figures::FigureDerivation,
    new_value: &NewValue<'_>,
    report: &mut RerunReport,
) {
    let first_call = d.operands.first().and_then(|o| o.tool_call_id.clone());
    let mut values = Vec::with_capacity(d.operands.len());
    for operand in &d.operands {
        match new_value(operand) {
            Ok((v, _)) => values.push(v),
            Err(reason) => {
                report
                    .lost
                    .push(lost(figure, operand.tool_call_id.clone(), reason));
                return;
            }
        }
    }
    let old: Vec<f64> = d.operands.iter().map(|o| old_value(&o.text)).collect();
    match (d.operation.apply(&old), d.operation.apply(&values)) {
        (Some(old), Some(new)) => note_change(
            report,
            figure,
            old,
            new,
            None,
            first_call,
            Some(d.formula.clone()),
        ),
        _ => report.lost.push(lost(
            figure,
            first_call,
            "its derivation has the wrong operands".to_owned(),
        )),
    }
}

fn note_change(
    report: &mut RerunReport,
    figure: &FigureCheck,
    old: f64,
    new: f64,
    new_text: Option<String>,
    call_id: Option<String>,
    formula: Option<String>,
) {
    if same_value(old, new) {
        report.unchanged += 1;
        return;
    }
    report.changed.push(FigureChange {
        text: figure.text.clone(),
        sentence: figure.sentence.clone(),
        old,
        new,
        new_text,
        call_id,
        formula,
    });
}

fn lost(figure: &FigureCheck, call_id: Option<String>, reason: String) -> LostFigure {
    LostFigure {
        text: figure.text.clone(),
        sentence: figure.sentence.clone(),
        call_id,
        reason,
    }
}

/// Equal to the last bits a float's arithmetic may disturb.
fn same_value(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// A source's value as its text writes it (a percentage as its fraction).
fn old_value(text: &str) -> f64 {
    read_figures(text)
        .first()
        .map_or(f64::NAN, |l| l.figure.magnitude())
}

/// The value in `new` that stands where the figure at `start..end` of `old` stood: the figure
/// with the same subject and the same place among that subject's figures, or, where the
/// output says nothing of what it is about, the same place among all figures.
fn locate(old: &str, new: &str, start: u32, end: u32) -> Option<(f64, String)> {
    let before = read_figures(old);
    let k = before
        .iter()
        .position(|l| l.figure.start == start as usize && l.figure.end == end as usize)?;
    let subject = &before[k].subject;
    let after = read_figures(new);
    let found = if subject.is_empty() {
        (before.len() == after.len()).then(|| &after[k])
    } else {
        let nth = before[..k].iter().filter(|l| l.subject == *subject).count();
        after.iter().filter(|l| l.subject == *subject).nth(nth)
    }?;
    Some((
        found.figure.magnitude(),
        new[found.figure.start..found.figure.end].to_owned(),
    ))
}

/// The last `n` lines of a text, joined with " / ".
fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_is_found_again_by_its_subject_and_place() {
        let old = "region,revenue\nEMEA,2550\nAPAC,1750\n";
        let new = "region,revenue\nAPAC,1800\nEMEA,2600\n";
        let at = old.find("1750").unwrap() as u32;
        assert_eq!(
            locate(old, new, at, at + 4),
            Some((1800.0, "1800".to_owned()))
        );
        let old = "total 4300";
        let new = "total 4400";
        assert_eq!(locate(old, new, 6, 10), Some((4400.0, "4400".to_owned())));
        assert_eq!(locate(old, "nothing", 6, 10), None);
    }
}
