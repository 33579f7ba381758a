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
use std::sync::Mutex;

use decima_core::ExecutionId;
use decima_runtime::agent::{
    self, BoxFuture, CancellationToken, ChoiceSource, FailureView, RunOptions, RunOutcome,
    RunRequest, Session, SubagentLimits, TODO_WRITE,
};
use decima_runtime::events::TodoView;
use decima_runtime::mcp::{Approval, ApprovalRequest};
use decima_runtime::{Event, EventSink};
use decima_store::{ExecutionStatus, Failure, Resolution, Store};

use super::execution::{failure_report, one_line};
use super::{conversation_id, execution_id, interrupt_orphans};
use crate::args::{OnFailureArg, RunArgs};
use crate::error::{CliError, EXIT_CANCELLED};

/// How much of a tool call's arguments its `[tool]` line shows.
const ARGUMENTS_SHOWN: usize = 160;

/// What to start or continue.
enum Entry {
    Run(RunRequest),
    Recover(ExecutionId, Resolution),
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
        tenth_man: args.tenth_man.into(),
        reviewer_provider: args.reviewer_provider.clone(),
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

/// `decima recover ID --choice C`.
pub async fn recover(
    store: &Store,
    data_dir: &Path,
    id: &str,
    choice: Resolution,
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
    let watcher = tokio::spawn(cancel_on_ctrl_c(cancel.clone()));
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

/// The first Ctrl-C (or SIGTERM, as a session's end or `kill` sends) cancels the run cleanly,
/// which shuts its MCP servers down; a second one quits at once (the kernel releases the
/// execution's lock, and `decima resume` continues it), killing the host servers' process
/// groups first, since exiting runs no destructor.
async fn cancel_on_ctrl_c(cancel: CancellationToken) {
    let mut terminate =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    if !stop_requested(&mut terminate).await {
        return;
    }
    note("\n[cancelling: the run stops cleanly; press Ctrl-C again to quit at once]");
    cancel.cancel();
    if stop_requested(&mut terminate).await {
        decima_mcp::host_process::kill_every_host_server();
        std::process::exit(i32::from(EXIT_CANCELLED));
    }
}

/// Waits for Ctrl-C or SIGTERM; `false` when neither can be listened for.
async fn stop_requested(terminate: &mut Option<tokio::signal::unix::Signal>) -> bool {
    let term = async {
        match terminate.as_mut() {
            Some(t) => t.recv().await.is_some(),
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        c = tokio::signal::ctrl_c() => c.is_ok(),
        t = term => t,
    }
}

/// One line on stderr. A stderr that cannot be written to costs the line, never the run.
fn note(line: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{line}");
    let _ = stderr.flush();
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

    fn choose<'a>(&'a self, failure: &'a Failure) -> BoxFuture<'a, Option<Resolution>> {
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
                    let _ = write!(stderr, "what now? {list} (empty: stop and decide later): ");
                    let _ = stderr.flush();
                }
                let line = tokio::select! {
                    line = read_line() => line,
                    () = self.cancel.cancelled() => return None,
                };
                let answer = line?.trim().to_ascii_lowercase();
                if answer.is_empty() {
                    return None;
                }
                match answer.parse::<Resolution>() {
                    Ok(choice) if offered.contains(&choice) => return Some(choice),
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

/// The event sink of one command: JSON lines or text.
enum Printer {
    Json(JsonLines),
    Human(Human),
}

impl Printer {
    /// The run returned: prints what is left (the answer) and reports a failed stdout.
    fn finish(&self, answer: Option<&str>) -> Result<(), CliError> {
        match self {
            Printer::Json(p) => p.finish(),
            Printer::Human(p) => p.finish(answer),
        }
    }
}

impl EventSink for Printer {
    fn emit(&self, event: Event) {
        if let Event::ExecutionStarted { execution_id, .. } = &event {
            match self {
                Printer::Human(p) => p.note(&format!("execution {execution_id}")),
                Printer::Json(_) => note(&format!("execution {execution_id}")),
            }
        }
        match self {
            Printer::Json(p) => p.emit(event),
            Printer::Human(p) => p.emit(event),
        }
    }
}

/// `--json`: every event as one line of JSON on stdout, flushed at once. Printing errors are
/// kept for the end: the run must not be torn down halfway because a reader went away.
#[derive(Default)]
struct JsonLines {
    stdout_failed: Mutex<Option<std::io::Error>>,
}

impl JsonLines {
    fn emit(&self, event: Event) {
        let Ok(mut failed) = self.stdout_failed.lock() else {
            return;
        };
        if failed.is_some() {
            return;
        }
        let written = serde_json::to_string(&event)
            .map_err(std::io::Error::other)
            .and_then(|mut line| {
                line.push('\n');
                let mut stdout = std::io::stdout().lock();
                stdout.write_all(line.as_bytes())?;
                stdout.flush()
            });
        if let Err(e) = written {
            *failed = Some(e);
        }
    }

    fn finish(&self) -> Result<(), CliError> {
        match self.stdout_failed.lock() {
            Ok(mut failed) => failed.take().map_or(Ok(()), |e| Err(CliError::Output(e))),
            Err(_) => Ok(()),
        }
    }
}

/// Text output: the answer on stdout, progress on stderr.
struct Human {
    /// Stream the model's text as it arrives (stdout is a terminal); otherwise only the final
    /// answer is written, at the end.
    stream: bool,
    state: Mutex<HumanState>,
}

#[derive(Default)]
struct HumanState {
    /// The text streamed since the last tool call or discard: the answer, if the run ends now.
    segment: String,
    /// Streamed text on stdout does not end with a line break.
    stdout_open: bool,
    /// Streamed reasoning on stderr does not end with a line break.
    reasoning_open: bool,
    /// The titles of the plan last shown, to show the whole plan again only when it changes.
    plan: Vec<String>,
    stdout_failed: Option<std::io::Error>,
}

impl Human {
    fn new(stream: bool) -> Self {
        Self {
            stream,
            state: Mutex::new(HumanState::default()),
        }
    }

    /// A line on stderr, on a line of its own even when text was streaming.
    fn note(&self, line: &str) {
        match self.state.lock() {
            Ok(mut state) => {
                state.break_lines();
                note(line);
            }
            Err(_) => note(line),
        }
    }

    fn emit(&self, event: Event) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        match event {
            Event::TextDelta { text } => {
                if self.stream {
                    if state.reasoning_open {
                        let _ = writeln!(std::io::stderr());
                        state.reasoning_open = false;
                    }
                    state.print(&text);
                }
                state.segment.push_str(&text);
            }
            Event::ReasoningDelta { text } => {
                if state.stdout_open {
                    state.print("\n");
                }
                let mut stderr = std::io::stderr().lock();
                let _ = stderr.write_all(text.as_bytes());
                let _ = stderr.flush();
                if !text.is_empty() {
                    state.reasoning_open = !text.ends_with('\n');
                }
            }
            Event::Discarded { reason } => {
                let streamed = !state.segment.is_empty() && self.stream;
                state.segment.clear();
                state.break_lines();
                if streamed {
                    note(&format!("[the partial text above is discarded: {reason}]"));
                } else {
                    note(&format!("[a partial answer was discarded: {reason}]"));
                }
            }
            Event::ExecutionStarted { workspace, how, .. } => {
                state.segment.clear();
                state.break_lines();
                if !workspace.is_empty() {
                    note(&format!("[{how}] workspace {workspace}"));
                }
            }
            // The plan lines below say what a todo_write did.
            Event::ToolStarted { name, .. } if name == TODO_WRITE => {
                state.segment.clear();
            }
            Event::ToolFinished {
                name, class: None, ..
            } if name == TODO_WRITE => {}
            Event::ToolStarted {
                name, arguments, ..
            } => {
                state.segment.clear();
                state.break_lines();
                note(&format!(
                    "[tool] {name} {}",
                    one_line(&arguments, ARGUMENTS_SHOWN)
                ));
            }
            Event::ToolFinished {
                name,
                exit_code,
                duration_ms,
                class,
                ran,
                ..
            } => {
                state.break_lines();
                let mut line = format!("[tool] {name}");
                match (exit_code, class) {
                    _ if !ran => line.push_str(" answered without running"),
                    (Some(code), Some(class)) => line.push_str(&format!(" exit {code} [{class}]")),
                    (Some(code), None) => line.push_str(&format!(" exit {code}")),
                    (None, Some(class)) => line.push_str(&format!(" failed [{class}]")),
                    (None, None) => line.push_str(" ok"),
                }
                line.push_str(&format!(" ({duration_ms} ms)"));
                note(&line);
            }
            Event::TodosChanged { todos } => {
                state.break_lines();
                let titles: Vec<String> = todos.iter().map(|t| t.title.clone()).collect();
                if titles != state.plan {
                    note(&plan_lines(&todos));
                    state.plan = titles;
                } else {
                    note(&progress_line(&todos));
                }
            }
            Event::SnapshotTaken {
                snapshot_id,
                reason: "checkpoint",
                ..
            } => {
                state.break_lines();
                note(&format!("[checkpoint] snapshot {}", short(&snapshot_id)));
            }
            Event::Failure { class, message, .. } => {
                state.break_lines();
                note(&format!("[failure] [{class}] {}", one_line(&message, 400)));
            }
            Event::RolledBack {
                snapshot_id,
                files_restored,
                files_removed,
                messages_removed,
                ..
            } => {
                state.segment.clear();
                state.break_lines();
                note(&format!(
                    "[rollback] workspace, plan and history back to snapshot {}: {files_restored} \
                     files restored, {files_removed} removed, {messages_removed} messages undone",
                    short(&snapshot_id)
                ));
            }
            Event::Recovered { choice, .. } => {
                state.break_lines();
                note(&format!("[recover] {choice}"));
            }
            Event::Compacted {
                compaction_id,
                tokens_before,
                tokens_after,
                ..
            } => {
                state.break_lines();
                note(&format!(
                    "[compressed the history: {tokens_before} → {tokens_after} tokens; \
                     `decima compress undo {compaction_id}` reverts it]"
                ));
            }
            Event::Warning { message } => {
                state.break_lines();
                note(&format!("warning: {message}"));
            }
            // The terminal prompt itself says what is asked.
            Event::ApprovalAsked { .. } => state.break_lines(),
            Event::SubagentStarted {
                execution_id,
                depth,
                task,
                ..
            } => {
                state.break_lines();
                note(&format!(
                    "[subagent {} started at depth {depth}] {}",
                    short(&execution_id.to_string()),
                    one_line(&task, 100)
                ));
            }
            Event::SubagentFinished {
                execution_id,
                status,
                ..
            } => {
                state.break_lines();
                note(&format!(
                    "[subagent {} {status}]",
                    short(&execution_id.to_string())
                ));
            }
            Event::ReviewStarted {
                trigger,
                mode,
                review_type,
                ..
            } => {
                state.break_lines();
                note(&format!(
                    "[tenth man: {review_type} {mode} review ({trigger})…]"
                ));
            }
            Event::ReviewFinished {
                review_id,
                risk_level,
                findings,
                cached,
                contested,
            } => {
                state.break_lines();
                note(&format!(
                    "[tenth man: risk {risk_level}, {findings} finding(s){}; review {review_id}]{}",
                    if cached { ", from the cache" } else { "" },
                    if contested {
                        "\n[the final review CONTESTS this result: read the findings before \
                         relying on it]"
                    } else {
                        ""
                    }
                ));
            }
            // The report and the question come from the choice source, or the exit message.
            Event::AwaitingChoice { .. } => state.break_lines(),
            Event::TurnStarted { .. }
            | Event::MessageStored { .. }
            | Event::ContextUsage { .. }
            | Event::StepTimed { .. }
            | Event::SnapshotTaken { .. }
            | Event::Finished { .. } => {}
        }
    }

    /// The run returned. The answer goes to stdout unless it has just streamed there, and the
    /// output ends with a line break.
    fn finish(&self, answer: Option<&str>) -> Result<(), CliError> {
        let Ok(mut state) = self.state.lock() else {
            return Ok(());
        };
        if let Some(answer) = answer {
            let streamed = self.stream && state.segment.trim() == answer.trim();
            if !streamed {
                if state.stdout_open {
                    state.print("\n");
                }
                state.print(answer);
            }
        }
        if state.stdout_open {
            state.print("\n");
        }
        if state.reasoning_open {
            let _ = writeln!(std::io::stderr());
            state.reasoning_open = false;
        }
        state
            .stdout_failed
            .take()
            .map_or(Ok(()), |e| Err(CliError::Output(e)))
    }
}

impl HumanState {
    /// Writes text to stdout, remembering the first failure.
    fn print(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let mut stdout = std::io::stdout().lock();
        let result = stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush());
        if let Err(e) = result {
            self.stdout_failed.get_or_insert(e);
        }
        self.stdout_open = !text.ends_with('\n');
    }

    /// Ends streamed text and reasoning lines, so the next note starts a line of its own.
    fn break_lines(&mut self) {
        if self.stdout_open {
            self.print("\n");
        }
        if self.reasoning_open {
            let _ = writeln!(std::io::stderr());
            self.reasoning_open = false;
        }
    }
}

/// The whole plan, one todo a line.
fn plan_lines(todos: &[TodoView]) -> String {
    let mut text = String::from("[plan]");
    for (i, todo) in todos.iter().enumerate() {
        text.push_str(&format!(
            "\n  {} {}. {}",
            mark(todo.status),
            i + 1,
            one_line(&todo.title, 120)
        ));
    }
    text
}

/// Progress through an unchanged plan: how many are done and which one is being worked on.
fn progress_line(todos: &[TodoView]) -> String {
    let done = todos.iter().filter(|t| t.status == "completed").count();
    let mut line = format!("[todos] {done}/{} completed", todos.len());
    if let Some(todo) = todos.iter().find(|t| t.status == "in_progress") {
        line.push_str(&format!("; now: {}", one_line(&todo.title, 120)));
    }
    line
}

/// A todo's status as one character: done, in progress, failed, skipped or pending.
fn mark(status: &str) -> &'static str {
    match status {
        "completed" => "[x]",
        "in_progress" => "[>]",
        "failed" => "[!]",
        "skipped" => "[-]",
        _ => "[ ]",
    }
}

/// The first 12 characters of a long id.
fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}
