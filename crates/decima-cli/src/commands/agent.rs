//! `decima run`, `decima recover` and `decima resume`: the agent loop of the runtime, with its
//! events printed and the analyst asked on the terminal when a todo fails.
//!
//! Without `--json` the final answer goes to stdout and everything else to stderr: the execution
//! id (`execution <id>`), tool calls, plan changes, failures and rollbacks. On a terminal the
//! model's text streams as it arrives; when stdout is a pipe or a file only the final answer is
//! written, once, so `decima run … > answer.md` holds the stored answer exactly. With `--json`
//! stdout is one event per line, the `finished` event last.
//!
//! Exit codes: 0 succeeded, 5 failed, 6 waiting on a failure (`--on-failure stop`), 130
//! cancelled (Ctrl-C, or `abort` chosen).

use std::io::{IsTerminal as _, Write as _};
use std::path::Path;

use decima_core::ExecutionId;
use decima_runtime::agent::{
    self, BoxFuture, CancellationToken, ChoiceSource, FailureView, RunOptions, RunOutcome,
    RunRequest, Session, SubagentLimits,
};
use decima_runtime::mcp::{Approval, ApprovalRequest};
use decima_store::{ExecutionStatus, Failure, Resolution, Store};

use super::execution::{failure_report, one_line};
use super::render::{Human, JsonLines, Printer, note};
use super::signals::cancel_on_ctrl_c;
use super::{conversation_id, execution_id, interrupt_orphans};
use crate::args::{OnFailureArg, RunArgs};
use crate::error::CliError;

/// What to start or continue.
enum Entry {
    Run(RunRequest),
    Recover(ExecutionId, agent::Choice),
    Resume(ExecutionId),
}

/// `decima run`.
pub async fn run(store: &Store, data_dir: &Path, args: RunArgs) -> Result<(), CliError> {
    let conversation = args
        .conversation
        .as_deref()
        .map(conversation_id)
        .transpose()?;
    interrupt_orphans(store, data_dir).await?;
    let mut options = RunOptions {
        provider: args.provider.clone(),
        phase_compression: !args.no_phase_compression,
        checkpoint_compression: !args.no_checkpoint_compression,
        tenth_man: match args.tenth_man {
            _ if args.quick => decima_runtime::review::TenthManMode::Off,
            Some(mode) => mode.into(),
            None => {
                decima_runtime::providers::tenth_man_default(store, args.provider.as_deref())
                    .await?
            }
        },
        quick: args.quick,
        reviewer_provider: args.reviewer_provider.clone(),
        check_figures: args.figures == crate::args::OnOff::On,
        ..RunOptions::default()
    };
    options.risky_calls.enabled = args.review_risky;
    options.allow_tools.clone_from(&args.allow_tool);
    if let Some(max_steps) = args.max_steps {
        options.max_steps = max_steps;
    }
    options.subagents = SubagentLimits {
        max_depth: args.subagent_depth,
        max_children: args.subagent_children,
        max_running: args.subagent_running,
        ..SubagentLimits::default()
    };
    let request = RunRequest {
        conversation,
        workspace: args.workspace,
        task: args.task,
        sandbox: args.sandbox.into(),
        options,
    };
    let on_failure = args.on_failure.unwrap_or_else(default_on_failure);
    drive(
        store,
        data_dir,
        args.provider.as_deref(),
        args.json,
        on_failure,
        Entry::Run(request),
    )
    .await
}

/// `decima recover ID --choice C [--note TEXT]`.
pub async fn recover(
    store: &Store,
    data_dir: &Path,
    id: &str,
    choice: agent::Choice,
    json: bool,
) -> Result<(), CliError> {
    let id = execution_id(id)?;
    interrupt_orphans(store, data_dir).await?;
    let entry = Entry::Recover(id, choice);
    drive(store, data_dir, None, json, default_on_failure(), entry).await
}

/// `decima resume ID`.
pub async fn resume(store: &Store, data_dir: &Path, id: &str, json: bool) -> Result<(), CliError> {
    let id = execution_id(id)?;
    interrupt_orphans(store, data_dir).await?;
    let entry = Entry::Resume(id);
    drive(store, data_dir, None, json, default_on_failure(), entry).await
}

/// Asking needs someone to answer: a terminal on stdin.
fn default_on_failure() -> OnFailureArg {
    if std::io::stdin().is_terminal() {
        OnFailureArg::Ask
    } else {
        OnFailureArg::Stop
    }
}

/// Runs one entry point with Ctrl-C wired to the session's cancellation token, then turns the
/// outcome into output and an exit code.
async fn drive(
    store: &Store,
    data_dir: &Path,
    provider: Option<&str>,
    json: bool,
    on_failure: OnFailureArg,
    entry: Entry,
) -> Result<(), CliError> {
    let cancel = CancellationToken::new();
    let watcher = tokio::spawn(cancel_on_ctrl_c(cancel.clone(), "the run stops cleanly"));
    let printer = if json {
        Printer::Json(JsonLines::default())
    } else {
        Printer::Human(Human::new(std::io::stdout().is_terminal()))
    };
    let ask = AskOnTerminal {
        cancel: cancel.clone(),
        failures: on_failure == OnFailureArg::Ask,
        approvals: std::io::stdin().is_terminal(),
    };
    let choices: &dyn ChoiceSource = &ask;
    let session = Session {
        store,
        data_dir,
        provider,
        events: &printer,
        choices,
        cancel: cancel.clone(),
    };
    let result = match entry {
        Entry::Run(request) => agent::run(&session, request).await,
        Entry::Recover(id, choice) => agent::recover(&session, id, choice).await,
        Entry::Resume(id) => agent::resume(&session, id).await,
    };
    watcher.abort();
    // The snapshots of executions that have now finished are garbage; never worth failing for.
    if let Err(e) = agent::collect_snapshots(store, data_dir).await {
        tracing::warn!(error = %e, "cannot collect workspace snapshots");
    }
    let outcome = match result {
        Ok(outcome) => outcome,
        Err(e) => {
            // Ends a streamed line, so the error starts on its own; the error is what counts.
            let _ = printer.finish(None);
            return Err(e.into());
        }
    };
    let printed = printer.finish(outcome.answer.as_deref());
    // How the run ended outranks a closed stdout: a failed run must not exit 0.
    verdict(&outcome, cancel.is_cancelled())?;
    printed
}

/// The exit status of a run that returned: only `succeeded` is a success.
fn verdict(outcome: &RunOutcome, cancelled: bool) -> Result<(), CliError> {
    let execution = outcome.execution.id;
    match outcome.execution.status {
        ExecutionStatus::Succeeded => Ok(()),
        ExecutionStatus::Failed => Err(CliError::RunFailed {
            execution,
            message: outcome
                .execution
                .error
                .as_deref()
                .map_or_else(|| "no error was recorded".into(), |e| one_line(e, 400)),
        }),
        ExecutionStatus::AwaitingUser => {
            let (failure, suggested) = match &outcome.waiting_on {
                Some(f) => (
                    format!("[{}] {}", f.class, one_line(&f.message, 300)),
                    agent::FailureReport::of(f)
                        .offered()
                        .into_iter()
                        .map(|c| c.as_str().to_owned())
                        .collect(),
                ),
                None => ("(no report)".to_owned(), vec!["abort".to_owned()]),
            };
            // Only what the failure offers: `recover` refuses anything else.
            Err(CliError::AwaitingUser {
                execution,
                failure,
                choices: suggested.join("|"),
            })
        }
        ExecutionStatus::Cancelled => Err(CliError::Cancelled {
            execution,
            how: if cancelled { "cancelled" } else { "aborted" },
        }),
        status => Err(CliError::Stopped {
            execution,
            status: status.as_str(),
        }),
    }
}

/// The analyst at the terminal. With `--on-failure ask`, prints a failure's report on stderr
/// and reads the choice from stdin; when stdin is a terminal, asks before an MCP call that no
/// rule approved.
struct AskOnTerminal {
    cancel: CancellationToken,
    /// Whether failures are put to the analyst (else the run stops and waits).
    failures: bool,
    /// Whether MCP calls are (else they are refused with a tool error saying how to allow them).
    approvals: bool,
}

impl ChoiceSource for AskOnTerminal {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Option<Approval>> {
        Box::pin(async move {
            if !self.approvals {
                return None;
            }
            note(&format!("\n{}", request.describe()));
            loop {
                {
                    let mut stderr = std::io::stderr().lock();
                    let _ = write!(
                        stderr,
                        "run it? y = this call, c = always in this conversation, a = always, \
                         n = no: "
                    );
                    let _ = stderr.flush();
                }
                let line = tokio::select! {
                    line = read_line() => line,
                    () = self.cancel.cancelled() => return None,
                };
                match line?.trim().to_ascii_lowercase().as_str() {
                    "y" | "yes" => return Some(Approval::Once),
                    "c" => return Some(Approval::Conversation),
                    "a" => return Some(Approval::Always),
                    "n" | "no" | "" => return Some(Approval::Deny),
                    _ => note("please answer y, c, a or n"),
                }
            }
        })
    }

    fn choose<'a>(&'a self, failure: &'a Failure) -> BoxFuture<'a, Option<agent::Choice>> {
        Box::pin(async move {
            if !self.failures {
                return None;
            }
            let mut report = String::from("\n");
            for line in failure_report(&FailureView::from(failure)) {
                report.push_str(&line);
                report.push('\n');
            }
            note(report.trim_end());
            let offered = agent::FailureReport::of(failure).offered();
            let names: Vec<&str> = offered.iter().map(|c| c.as_str()).collect();
            let list = match names.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
                _ => names.join(""),
            };
            loop {
                {
                    let mut stderr = std::io::stderr().lock();
                    let _ = write!(
                        stderr,
                        "what now? {list}, then any guidance for the agent \
                         (empty: stop and decide later): "
                    );
                    let _ = stderr.flush();
                }
                let line = tokio::select! {
                    line = read_line() => line,
                    () = self.cancel.cancelled() => return None,
                };
                let line = line?;
                let answer = line.trim();
                if answer.is_empty() {
                    return None;
                }
                // "replan use ledger_q3.csv": the first word chooses, the rest guides.
                let (word, guidance) = answer
                    .split_once(char::is_whitespace)
                    .unwrap_or((answer, ""));
                let word = word.trim_end_matches([':', ',']).to_ascii_lowercase();
                match word.parse::<Resolution>() {
                    Ok(choice) if offered.contains(&choice) => {
                        match agent::Choice::new(choice, Some(guidance)) {
                            Ok(choice) => return Some(choice),
                            Err(e) => note(&e.to_string()),
                        }
                    }
                    _ => note(&format!(
                        "please answer {list}: this failure offers nothing else"
                    )),
                }
            }
        })
    }
}

/// One line from stdin; `None` at end of input. Read on a plain thread: one blocked on a
/// terminal must not keep the process from exiting, as the runtime's blocking pool would.
async fn read_line() -> Option<String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || {
            let mut line = String::new();
            let read = match std::io::stdin().read_line(&mut line) {
                Ok(0) | Err(_) => None,
                Ok(_) => Some(line),
            };
            let _ = tx.send(read);
        });
    if spawned.is_err() {
        return None;
    }
    rx.await.ok().flatten()
}
