//! The `python` tool: a cell in the conversation's kernel (see `decima_sandbox::kernel`), its
//! output as the model reads it, and what the kernel holds, for the request's volatile tail.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use decima_llm::ToolSpec;
use decima_sandbox::host::BoxFuture;
use decima_sandbox::host::tools::{parse_python, python_schema};
use decima_sandbox::kernel::{PythonOutcome, PythonRequest, PythonStatus, Variable};

use crate::tools::{AgentTool, ToolCallContext, ToolOutcome, builtin_spec};

/// The cell's timeout when the model gives none, and the most it may ask for.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
const MAX_TIMEOUT: Duration = Duration::from_secs(3600);
/// Variables listed in a request at most: the context is for the model's bearings.
const LISTED_VARIABLES: usize = 30;

/// How a cell's result says that it raised: "[the cell raised KeyError]". A notebook of the
/// session tags such a cell as one that raises, so that running it does not stop there.
pub const RAISED: &str = "[the cell raised ";

/// Whether a stored `python` result says the cell did not run to its end.
#[must_use]
pub fn recorded_failure(result: &str) -> bool {
    result.lines().any(|l| {
        l.starts_with(RAISED)
            || l.starts_with("[the cell ran past its timeout")
            || l.starts_with("[the cell was interrupted]")
            || l.starts_with("[the kernel died")
    })
}

/// `python` in the conversation's kernel.
pub struct PythonTool {
    /// The kernel's name: the conversation's id (a subagent has its own).
    pub kernel: String,
}

impl AgentTool for PythonTool {
    fn spec(&self) -> ToolSpec {
        builtin_spec(&python_schema())
    }

    fn call<'a>(&'a self, call: ToolCallContext<'a>) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let started = Instant::now();
            let args = match parse_python(call.raw) {
                Ok(args) => args,
                Err(e) => return ToolOutcome::from((e, started.elapsed())),
            };
            let request = PythonRequest {
                code: args.code,
                timeout: args.timeout.unwrap_or(DEFAULT_TIMEOUT).min(MAX_TIMEOUT),
                charts: charts_prefix(call.call_id),
            };
            match call.sandbox.python(self.kernel.clone(), request).await {
                Ok(out) => ToolOutcome {
                    class: out.failure_class(),
                    ..ToolOutcome::ok(tool_text(&out), started.elapsed())
                },
                Err(e) => ToolOutcome::from((e, started.elapsed())),
            }
        })
    }

    fn changes_workspace(&self) -> bool {
        true
    }
}

/// Where a call's charts are saved: `charts/<call id>`, the id cut to what a file name holds.
fn charts_prefix(call_id: &str) -> String {
    let id: String = call_id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        .take(48)
        .collect();
    format!("charts/{}", if id.is_empty() { "python" } else { &id })
}

/// The cell's outcome as the model reads it: what happened to the kernel first, then what the
/// cell printed, its value, its charts and its exception.
#[must_use]
pub fn tool_text(out: &PythonOutcome) -> String {
    let mut text = String::new();
    if out.fresh_kernel {
        text.push_str(
            "[a new kernel started for this call: nothing from earlier calls is in memory]\n",
        );
    }
    match out.status {
        PythonStatus::Timeout => text.push_str("[the cell ran past its timeout and was interrupted]\n"),
        PythonStatus::Interrupted => text.push_str("[the cell was interrupted]\n"),
        PythonStatus::Died => text.push_str(
            "[the kernel died during the cell (a crash, or the container's memory limit) and was started again]\n",
        ),
        _ => {}
    }
    if out.restarted {
        text.push_str(
            "[the kernel was restarted: every variable is gone; load what you need again]\n",
        );
    }
    if !out.stdout.is_empty() {
        text.push_str(&out.stdout);
        if !out.stdout.ends_with('\n') {
            text.push('\n');
        }
    }
    if !out.stderr.is_empty() {
        text.push_str("[stderr]\n");
        text.push_str(&out.stderr);
        if !out.stderr.ends_with('\n') {
            text.push('\n');
        }
    }
    if let Some(result) = &out.result {
        let _ = writeln!(text, "Out: {result}");
    }
    for chart in &out.charts {
        let _ = writeln!(text, "[chart saved: {chart}]");
    }
    if let Some(e) = &out.error {
        let _ = writeln!(text, "{RAISED}{}]", e.ename);
        if e.traceback.is_empty() {
            let _ = writeln!(text, "{}: {}", e.ename, e.evalue);
        } else {
            text.push_str(&e.traceback.join("\n"));
            text.push('\n');
        }
    }
    if text.is_empty() {
        text.push_str("[the cell ran and printed nothing]\n");
    }
    text
}

/// What the kernel holds, for the request's volatile tail: the model is never left guessing
/// after a compression hid the calls that made them.
#[must_use]
pub fn memory_note(variables: &[Variable]) -> String {
    if variables.is_empty() {
        return "Python kernel memory: no variables.".to_owned();
    }
    let mut note = String::from("Python kernel memory (variables from earlier `python` calls):");
    for v in variables.iter().take(LISTED_VARIABLES) {
        let _ = write!(note, "\n- {}", v.line());
    }
    if variables.len() > LISTED_VARIABLES {
        let _ = write!(
            note,
            "\n- … and {} more",
            variables.len() - LISTED_VARIABLES
        );
    }
    note
}

/// After a rollback, makes the conversation's kernel match the files put back: it is started
/// again and the `python` cells of the messages kept (up to `kept_seq`) run in order, as they
/// ran. A conversation that never called `python` has no kernel and is left alone. Cells that
/// fail on the rerun are counted in `done.kernel_error`, not raised: the rollback itself holds.
pub async fn realign_kernel(
    docker: &crate::docker::LazyDocker,
    db: &decima_store::Store,
    conversation: decima_core::ConversationId,
    kept_seq: i64,
    done: &mut crate::agent::RolledBack,
) -> crate::error::Result<()> {
    let messages = db.messages().all(conversation).await?;
    let calls: Vec<(i64, &decima_core::ToolCall)> = messages
        .iter()
        .flat_map(|m| m.tool_calls.iter().map(move |c| (m.seq, c)))
        .filter(|(_, c)| c.name == decima_sandbox::host::tools::PYTHON)
        .collect();
    if calls.is_empty() {
        return Ok(());
    }
    let sandbox = match docker.get().await {
        Ok(sandbox) => sandbox,
        Err(e) => {
            done.kernel_error = Some(format!("the Python kernel was not restarted: {e}"));
            return Ok(());
        }
    };
    let kernel = conversation.to_string();
    if let Err(e) = sandbox.restart_python_in(&kernel).await {
        done.kernel_error = Some(format!(
            "the Python kernel was not restarted: {}",
            e.message
        ));
        return Ok(());
    }
    let mut rerun = 0u32;
    let mut failed = Vec::new();
    for (_, call) in calls.iter().filter(|(seq, _)| *seq <= kept_seq) {
        let Ok(args) = parse_python(&call.arguments) else {
            continue;
        };
        let request = PythonRequest {
            code: args.code,
            timeout: args.timeout.unwrap_or(DEFAULT_TIMEOUT).min(MAX_TIMEOUT),
            charts: charts_prefix(&call.id),
        };
        rerun += 1;
        match sandbox.python_in(&kernel, &request).await {
            Ok(out) if out.status == PythonStatus::Ok => {}
            Ok(out) => failed.push(format!(
                "{} ({})",
                call.id,
                out.error
                    .map_or_else(|| format!("{:?}", out.status), |e| e.ename)
            )),
            Err(e) => {
                done.kernel_error = Some(format!(
                    "the Python kernel stopped while its cells ran again: {}",
                    e.message
                ));
                done.kernel_cells_rerun = Some(rerun);
                return Ok(());
            }
        }
    }
    if !failed.is_empty() {
        done.kernel_error = Some(format!(
            "cells that ran before failed when run again, so the kernel's memory may differ \
             from before: {}",
            failed.join(", ")
        ));
    }
    done.kernel_cells_rerun = Some(rerun);
    tracing::info!(
        cells = rerun,
        failed = failed.len(),
        "the Python kernel was realigned after a rollback"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(json: &str) -> PythonOutcome {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn a_cell_reads_as_its_output_value_charts_and_exception() {
        let out = outcome(
            r#"{"status": "error", "stdout": "loaded 3 rows", "result": null,
                "charts": ["charts/c1-1.png"], "restarted": false, "elapsed_ms": 5,
                "error": {"ename": "KeyError", "evalue": "'q4'",
                          "traceback": ["KeyError Traceback", "KeyError: 'q4'"]}}"#,
        );
        assert_eq!(
            tool_text(&out),
            "loaded 3 rows\n[chart saved: charts/c1-1.png]\n[the cell raised KeyError]\n\
             KeyError Traceback\nKeyError: 'q4'\n"
        );
        let mut fresh = outcome(r#"{"status": "ok", "result": "42"}"#);
        fresh.fresh_kernel = true;
        assert!(tool_text(&fresh).starts_with("[a new kernel started"));
        assert!(tool_text(&fresh).ends_with("Out: 42\n"));
        let died = outcome(r#"{"status": "died", "restarted": true}"#);
        assert!(tool_text(&died).contains("every variable is gone"));
        assert!(recorded_failure(&tool_text(&out)));
        assert!(recorded_failure(&tool_text(&died)));
        assert!(!recorded_failure(&tool_text(&fresh)));
    }

    #[test]
    fn a_call_id_makes_a_safe_chart_name() {
        assert_eq!(charts_prefix("call_1/../x"), "charts/call_1x");
        assert_eq!(charts_prefix("../"), "charts/python");
    }

    #[test]
    fn the_memory_note_lists_names_types_and_shapes() {
        let vars: Vec<Variable> = serde_json::from_str(
            r#"[{"name": "df", "type": "pandas.DataFrame", "shape": [1200, 8]},
                {"name": "x", "type": "int", "shape": null}]"#,
        )
        .unwrap();
        assert_eq!(
            memory_note(&vars),
            "Python kernel memory (variables from earlier `python` calls):\n\
             - df: pandas.DataFrame (1200 × 8)\n- x: int"
        );
        assert_eq!(memory_note(&[]), "Python kernel memory: no variables.");
    }
}
