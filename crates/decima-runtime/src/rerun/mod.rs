//! Running a finished run again without its model: its tool calls replayed in order in a
//! fresh sandbox restored from the run's first snapshot, each output compared with the one
//! recorded (the same, different with a diff, or nondeterministic: it varies between two
//! replays, as a timestamp does). With new data (`--input q3.csv=q4.csv`) the same calls run
//! on it, and the ledger of figures says which of the answer's figures changed, old and new,
//! and which could not be worked out again because the call that gave them failed on the new
//! data. Nothing a replay does touches the run's own workspace.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use decima_core::{ExecutionId, Message, Role, ToolCall};
use decima_sandbox::host::tools::{PYTHON, READ_FILE, SHELL, WRITE_FILE};
use decima_store::{ExecutionStatus, Store};
use serde::Serialize;
use tokio_util::sync::CancellationToken;
use tracing::{Instrument as _, info, info_span};

mod new_data;

use crate::error::{Result, RuntimeError};
use crate::fresh_sandbox::FreshSandbox;
use crate::python_tool::PythonTool;
use crate::tools::{Registry, ToolOutcome};

/// The most bytes of a new input file copied in for a rerun.
const MAX_INPUT_BYTES: u64 = 512 * 1024 * 1024;
/// Lines of a diff kept in the report.
const MAX_DIFF_LINES: usize = 40;

/// A workspace file of the run replaced by a file of this computer for the rerun.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputSwap {
    /// The input's workspace path, as the run started with it.
    pub path: String,
    /// The file that takes its place.
    pub with: PathBuf,
}

impl InputSwap {
    /// Reads `q3.csv=/data/q4.csv`.
    pub fn parse(text: &str) -> Result<Self> {
        let (path, with) = text.split_once('=').ok_or_else(|| {
            RuntimeError::Config(format!(
                "--input takes INPUT=FILE (the run's input, then the file to use instead), \
                 not {text:?}"
            ))
        })?;
        if path.trim().is_empty() || with.trim().is_empty() {
            return Err(RuntimeError::Config(format!(
                "--input takes INPUT=FILE with both sides named, not {text:?}"
            )));
        }
        Ok(Self {
            path: path.trim().trim_start_matches("./").to_owned(),
            with: PathBuf::from(with.trim()),
        })
    }
}

/// How a replayed call's output compares with the recorded one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Byte for byte the same (a chart the same by its hash).
    Same,
    /// Different, and the same in both replays: what the run did differs now.
    Different,
    /// Different between two replays: its output varies by itself (a timestamp, a random draw).
    Nondeterministic,
    /// Not replayed: a tool whose effect is not the sandbox's (a subagent, an MCP server, the plan).
    Skipped,
}

/// One call of the run, replayed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayedCall {
    /// The call's id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The seq of the answer that made it.
    pub seq: i64,
    /// How its output compares.
    pub verdict: Verdict,
    /// Whether the replayed call failed (a non-zero exit, an exception, a refused path).
    pub failed: bool,
    /// Recorded against replayed, as a unified diff (cut), when they differ.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Why it was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The replay's time for it.
    pub replay_ms: u64,
}

/// A figure of the answer worked out again on the new data.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureChange {
    /// The figure as the answer wrote it.
    pub text: String,
    /// Its sentence.
    pub sentence: String,
    /// Its value then (a percentage as its fraction).
    pub old: f64,
    /// Its value on the new data.
    pub new: f64,
    /// The new value as its source writes it now, for a linked figure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_text: Option<String>,
    /// The call whose output (or file) holds it, or the first of a derived figure's operands.
    pub call_id: Option<String>,
    /// The derivation, for a derived figure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub formula: Option<String>,
}

/// A figure of the answer that the new data could not give.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LostFigure {
    /// The figure as the answer wrote it.
    pub text: String,
    /// Its sentence.
    pub sentence: String,
    /// The call that gave it.
    pub call_id: Option<String>,
    /// Why: the call's error on the new data, or that its output no longer holds it.
    pub reason: String,
}

/// What a rerun found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RerunReport {
    /// The run replayed.
    pub execution_id: String,
    /// The inputs replaced, as `path=file`.
    pub inputs: Vec<String>,
    /// Every call of the run, in order.
    pub calls: Vec<ReplayedCall>,
    /// Requests sent to a model: none, ever.
    pub model_requests: u32,
    /// The first replay's tool time.
    pub replay_ms: u64,
    /// With new inputs: the answer's figures whose value changed.
    pub changed: Vec<FigureChange>,
    /// With new inputs: the answer's figures whose value stayed.
    pub unchanged: u32,
    /// With new inputs: the answer's figures the new data could not give.
    pub lost: Vec<LostFigure>,
}

impl RerunReport {
    /// How many calls have `verdict`.
    #[must_use]
    pub fn count(&self, verdict: Verdict) -> usize {
        self.calls.iter().filter(|c| c.verdict == verdict).count()
    }
}

/// One replay's outputs, by call index, with the hashes of the images each call wrote.
struct Replay {
    outputs: Vec<Option<ToolOutcome>>,
    charts: Vec<Vec<String>>,
    elapsed: Duration,
}

/// The most bytes of a chart read to hash it.
const MAX_CHART_BYTES: u64 = 32 * 1024 * 1024;

/// Workspace paths of the images the loop kept with a recorded result, in order (one it named
/// but did not keep, too large or one too many, has nothing to compare with).
fn kept_images(recorded: &str) -> Vec<String> {
    recorded
        .lines()
        .filter(|l| l.starts_with("[image ") && !l.contains("; not kept"))
        .filter_map(|l| {
            let at = l.find("written by this call as ")? + "written by this call as ".len();
            let rest = &l[at..];
            let end = rest.find(';').or_else(|| rest.rfind(']'))?;
            Some(rest[..end].to_owned())
        })
        .collect()
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Replays `execution`'s calls (see the module's comment); `swaps` replace inputs first.
pub async fn rerun(
    store: &Store,
    data_dir: &Path,
    execution: ExecutionId,
    swaps: &[InputSwap],
) -> Result<RerunReport> {
    let record = store.executions().get(execution).await?;
    if !matches!(
        record.status,
        ExecutionStatus::Succeeded | ExecutionStatus::Failed | ExecutionStatus::Cancelled
    ) {
        return Err(RuntimeError::Conflict(format!(
            "run {execution} is {}: a run is run again once it has finished",
            record.status.as_str()
        )));
    }
    let messages = store.messages().all(record.conversation_id).await?;
    let calls = calls_of(&messages, execution);
    let recorded: HashMap<&str, &Message> = messages
        .iter()
        .filter(|m| m.role == Role::Tool && m.execution_id == Some(execution))
        .filter_map(|m| Some((m.tool_call_id.as_deref()?, m)))
        .collect();
    let images: Vec<Vec<String>> = calls
        .iter()
        .map(|(_, c)| {
            recorded
                .get(c.id.as_str())
                .map_or_else(Vec::new, |m| kept_images(&m.content))
        })
        .collect();
    let first = replay(store, data_dir, &record, &calls, &images, swaps)
        .instrument(info_span!("rerun.replay", n = 1))
        .await?;
    // With new data, what is compared is the figures; without, a second replay tells what
    // varies by itself from what differs.
    let second = if swaps.is_empty() {
        Some(
            replay(store, data_dir, &record, &calls, &images, swaps)
                .instrument(info_span!("rerun.replay", n = 2))
                .await?,
        )
    } else {
        None
    };
    let mut replayed = Vec::with_capacity(calls.len());
    for (k, (seq, call)) in calls.iter().enumerate() {
        let was = recorded
            .get(call.id.as_str())
            .map_or("", |m| m.content.as_str());
        let was_charts = if images[k].is_empty() {
            Vec::new()
        } else {
            recorded_chart_hashes(store, record.conversation_id, &call.id).await?
        };
        replayed.push(compare(
            *seq,
            call,
            (was, &was_charts),
            first.outputs[k].as_ref().map(|o| (o, &first.charts[k])),
            second
                .as_ref()
                .and_then(|s| s.outputs[k].as_ref().map(|o| (o, &s.charts[k]))),
        ));
    }
    let mut report = RerunReport {
        execution_id: execution.to_string(),
        inputs: swaps
            .iter()
            .map(|s| format!("{}={}", s.path, s.with.display()))
            .collect(),
        calls: replayed,
        model_requests: 0,
        replay_ms: u64::try_from(first.elapsed.as_millis()).unwrap_or(u64::MAX),
        changed: Vec::new(),
        unchanged: 0,
        lost: Vec::new(),
    };
    if !swaps.is_empty() {
        new_data::figures_on_new_data(
            store,
            data_dir,
            &record,
            &calls,
            &recorded,
            &first,
            &mut report,
        )
        .await?;
    }
    info!(
        calls = report.calls.len(),
        same = report.count(Verdict::Same),
        different = report.count(Verdict::Different),
        nondeterministic = report.count(Verdict::Nondeterministic),
        changed = report.changed.len(),
        "run replayed"
    );
    Ok(report)
}

/// The run's tool calls in order, with the seq of the answer that made each.
fn calls_of(messages: &[Message], execution: ExecutionId) -> Vec<(i64, ToolCall)> {
    messages
        .iter()
        .filter(|m| m.role == Role::Assistant && m.execution_id == Some(execution))
        .flat_map(|m| m.tool_calls.iter().map(move |c| (m.seq, c.clone())))
        .collect()
}

/// The hashes of the images kept with a recorded result, in order.
async fn recorded_chart_hashes(
    store: &Store,
    conversation: decima_core::ConversationId,
    call_id: &str,
) -> Result<Vec<String>> {
    use base64::Engine as _;
    let images = store
        .messages()
        .result_images(conversation, call_id)
        .await?;
    Ok(images
        .iter()
        .map(|i| {
            base64::engine::general_purpose::STANDARD
                .decode(i.data.as_bytes())
                .map_or_else(|_| "unreadable".to_owned(), |b| sha256_hex(&b))
        })
        .collect())
}

/// One replay in a fresh sandbox of its own, removed after.
async fn replay(
    store: &Store,
    data_dir: &Path,
    record: &decima_store::Execution,
    calls: &[(i64, ToolCall)],
    images: &[Vec<String>],
    swaps: &[InputSwap],
) -> Result<Replay> {
    let fresh = FreshSandbox::open(store, data_dir, record, "rerun").await?;
    let outcome = replay_in(&fresh, calls, images, swaps).await;
    fresh.close().await;
    outcome
}

async fn replay_in(
    fresh: &FreshSandbox,
    calls: &[(i64, ToolCall)],
    images: &[Vec<String>],
    swaps: &[InputSwap],
) -> Result<Replay> {
    let sandbox = fresh.sandbox();
    for swap in swaps {
        if !fresh.files.iter().any(|f| f.path == swap.path) {
            let names: Vec<&str> = fresh.files.iter().map(|f| f.path.as_str()).collect();
            return Err(RuntimeError::Config(format!(
                "{} is not one of the run's inputs (it started with: {})",
                swap.path,
                if names.is_empty() {
                    "no files".to_owned()
                } else {
                    names.join(", ")
                }
            )));
        }
        let bytes = read_input(&swap.with)?;
        sandbox
            .write_bytes(swap.path.clone(), bytes)
            .await
            .map_err(RuntimeError::Workspace)?;
    }
    let mut registry = Registry::new(Arc::clone(&sandbox));
    if sandbox.python_unavailable().is_none() {
        registry.register_core(Arc::new(PythonTool {
            kernel: format!("rerun-{}", decima_core::ConversationId::new()),
        }));
    }
    let cancel = CancellationToken::new();
    let started = Instant::now();
    let mut outputs = Vec::with_capacity(calls.len());
    let mut charts = Vec::with_capacity(calls.len());
    let mut tool_time = Duration::ZERO;
    for (k, (_, call)) in calls.iter().enumerate() {
        if !replayable(&call.name) {
            outputs.push(None);
            charts.push(Vec::new());
            continue;
        }
        let out = registry
            .call(&call.id, &call.name, &call.arguments, &cancel)
            .await;
        tool_time += out.duration;
        // The images the run kept with this call, as the replay wrote them.
        let mut hashes = Vec::new();
        for path in &images[k] {
            hashes.push(
                match sandbox.read_bytes(path.clone(), MAX_CHART_BYTES).await {
                    Ok(bytes) => sha256_hex(&bytes),
                    Err(_) => "missing".to_owned(),
                },
            );
        }
        outputs.push(Some(out));
        charts.push(hashes);
    }
    let elapsed = started.elapsed();
    tracing::debug!(?elapsed, ?tool_time, "replay done");
    Ok(Replay {
        outputs,
        charts,
        elapsed: tool_time,
    })
}

/// The tools whose whole effect is the sandbox's: these are replayed.
fn replayable(tool: &str) -> bool {
    matches!(tool, SHELL | PYTHON | WRITE_FILE | READ_FILE)
}

/// A new input, read whole; a missing or oversized file says so.
fn read_input(path: &Path) -> Result<Vec<u8>> {
    let meta = std::fs::metadata(path).map_err(|e| {
        RuntimeError::Config(format!("cannot read the new input {}: {e}", path.display()))
    })?;
    if !meta.is_file() {
        return Err(RuntimeError::Config(format!(
            "the new input {} is not a file",
            path.display()
        )));
    }
    if meta.len() > MAX_INPUT_BYTES {
        return Err(RuntimeError::Config(format!(
            "the new input {} is {} MB; a rerun copies in at most {} MB",
            path.display(),
            meta.len() / 1_000_000,
            MAX_INPUT_BYTES / 1_000_000
        )));
    }
    std::fs::read(path).map_err(|e| {
        RuntimeError::Config(format!("cannot read the new input {}: {e}", path.display()))
    })
}

/// The recorded text as the replay gives it: without the notes of images the loop appended
/// (the replay runs no loop), which are compared by the files' bytes instead.
fn comparable(text: &str) -> &str {
    let mut end = text.len();
    for line in text.lines().rev() {
        if line.starts_with("[image ") && line.contains("written by this call as") {
            end = text[..end].rfind('\n').unwrap_or(0);
        } else {
            break;
        }
    }
    &text[..end]
}

/// A call's output and its charts' hashes.
type Output<'a> = (&'a ToolOutcome, &'a Vec<String>);

fn compare(
    seq: i64,
    call: &ToolCall,
    (recorded, recorded_charts): (&str, &Vec<String>),
    first: Option<Output<'_>>,
    second: Option<Output<'_>>,
) -> ReplayedCall {
    let Some((first, first_charts)) = first else {
        return ReplayedCall {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            seq,
            verdict: Verdict::Skipped,
            failed: false,
            diff: None,
            note: Some(format!(
                "{} is not run again: its effect is not the sandbox's alone",
                call.name
            )),
            replay_ms: 0,
        };
    };
    let recorded = comparable(recorded);
    let verdict = if first.text == recorded && first_charts == recorded_charts {
        Verdict::Same
    } else if second.is_some_and(|(s, c)| s.text != first.text || c != first_charts) {
        Verdict::Nondeterministic
    } else {
        Verdict::Different
    };
    let chart_note = (first_charts != recorded_charts).then(|| {
        format!(
            "charts by hash: recorded {}, replayed {}",
            short_hashes(recorded_charts),
            short_hashes(first_charts)
        )
    });
    ReplayedCall {
        call_id: call.id.clone(),
        tool: call.name.clone(),
        seq,
        verdict,
        failed: first.is_failure(),
        diff: (verdict != Verdict::Same && first.text != recorded)
            .then(|| diff(recorded, &first.text)),
        note: chart_note,
        replay_ms: u64::try_from(first.duration.as_millis()).unwrap_or(u64::MAX),
    }
}

fn short_hashes(hashes: &[String]) -> String {
    if hashes.is_empty() {
        return "none".to_owned();
    }
    hashes
        .iter()
        .map(|h| h.get(..12).unwrap_or(h))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A unified diff of two outputs, cut to [`MAX_DIFF_LINES`].
fn diff(recorded: &str, replayed: &str) -> String {
    let text = similar::TextDiff::from_lines(recorded, replayed)
        .unified_diff()
        .context_radius(1)
        .header("recorded", "replayed")
        .to_string();
    let mut lines: Vec<&str> = text.lines().collect();
    if lines.len() > MAX_DIFF_LINES {
        let more = lines.len() - MAX_DIFF_LINES;
        lines.truncate(MAX_DIFF_LINES);
        return format!("{}\n[… {more} more lines]", lines.join("\n"));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_swap_is_read_and_checked() {
        assert_eq!(
            InputSwap::parse("./q3.csv=/data/q4.csv").unwrap(),
            InputSwap {
                path: "q3.csv".to_owned(),
                with: PathBuf::from("/data/q4.csv")
            }
        );
        assert!(InputSwap::parse("q3.csv").is_err());
        assert!(InputSwap::parse("=q4.csv").is_err());
    }

    #[test]
    fn the_image_notes_of_the_loop_are_not_compared() {
        let text = "total 4300\n[chart saved: charts/c-1.png]\n\
                    [image 1: image/png, 1200 bytes, written by this call as charts/c-1.png]";
        assert_eq!(
            comparable(text),
            "total 4300\n[chart saved: charts/c-1.png]"
        );
        assert_eq!(comparable("plain\n[exit code 0]"), "plain\n[exit code 0]");
    }

    #[test]
    fn the_images_a_result_kept_are_named_in_order() {
        let text = "x\n[image 1: image/png, 10 bytes, written by this call as charts/a-1.png]\n\
                    [image 2: image/png, 10 bytes, written by this call as b c.png; not kept (too large or too many)]";
        assert_eq!(kept_images(text), ["charts/a-1.png"]);
    }

    #[test]
    fn a_diff_shows_what_changed() {
        let d = diff("a\nb\nc\n", "a\nB\nc\n");
        assert!(d.contains("-b") && d.contains("+B"), "{d}");
    }
}
