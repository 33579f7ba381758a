//! `decima chat [--provider NAME] [--conversation ID] MESSAGE`: one runtime chat turn, with its
//! events printed: the answer on stdout, reasoning and notices on stderr.
//!
//! On a terminal the answer streams as it arrives; a retry then says on stderr that the partial
//! answer above is void, since printed text cannot be taken back. When stdout is a pipe or a file
//! (`decima chat … > answer.md`) the answer is written once it is final, so what lands there is
//! the stored answer exactly, never a discarded partial one before it.

use std::io::{IsTerminal as _, Write as _};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use decima_runtime::chat::{ChatTurn, chat_turn};
use decima_runtime::{Event, EventSink};
use decima_store::Store;

use super::conversation_id;
use crate::error::CliError;

/// Prints events as they arrive. Printing errors are kept for the end: the turn itself must not
/// be torn down halfway because a terminal went away.
struct Terminal {
    /// `Some` when stdout is not a terminal: the answer so far, written once it is final.
    held: Option<Mutex<String>>,
    stdout_failed: Mutex<Option<std::io::Error>>,
    ends_with_newline: AtomicBool,
}

impl Terminal {
    fn new(stdout_is_terminal: bool) -> Self {
        Self {
            held: (!stdout_is_terminal).then(|| Mutex::new(String::new())),
            stdout_failed: Mutex::new(None),
            ends_with_newline: AtomicBool::new(false),
        }
    }

    /// Writes answer text to stdout, remembering the first failure.
    fn print(&self, text: &str) {
        let mut stdout = std::io::stdout().lock();
        let result = stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush());
        if let Err(e) = result
            && let Ok(mut slot) = self.stdout_failed.lock()
        {
            slot.get_or_insert(e);
        }
        if !text.is_empty() {
            self.ends_with_newline
                .store(text.ends_with('\n'), Ordering::Relaxed);
        }
    }

    /// The turn is over and its answer stored: a held answer goes out now, then the final
    /// newline if the answer lacked one.
    fn finish(&self) -> Result<(), CliError> {
        if let Some(held) = &self.held {
            let answer = held.lock().map(|a| a.clone()).unwrap_or_default();
            self.print(&answer);
        }
        if let Ok(mut slot) = self.stdout_failed.lock()
            && let Some(e) = slot.take()
        {
            return Err(CliError::Output(e));
        }
        if !self.ends_with_newline.load(Ordering::Relaxed) {
            std::io::stdout()
                .write_all(b"\n")
                .map_err(CliError::Output)?;
        }
        Ok(())
    }
}

impl EventSink for Terminal {
    fn emit(&self, event: Event) {
        match event {
            Event::TurnStarted { conversation_id } => {
                eprintln!("conversation {conversation_id}");
            }
            Event::TextDelta { text } => match &self.held {
                Some(held) => {
                    if let Ok(mut held) = held.lock() {
                        held.push_str(&text);
                    }
                }
                None => self.print(&text),
            },
            Event::ReasoningDelta { text } => {
                let mut stderr = std::io::stderr().lock();
                let _ = stderr.write_all(text.as_bytes());
                let _ = stderr.flush();
            }
            Event::Discarded { reason } => match &self.held {
                Some(held) => {
                    if let Ok(mut held) = held.lock() {
                        held.clear();
                    }
                    eprintln!("[a partial answer was discarded: {reason}]");
                }
                None => eprintln!("\n[the partial answer above is discarded: {reason}]"),
            },
            Event::Compacted {
                compaction_id,
                tokens_before,
                tokens_after,
                ..
            } => eprintln!(
                "[compressed the history before sending: {tokens_before} → {tokens_after} tokens; \
                 `decima compress undo {compaction_id}` reverts it]"
            ),
            Event::Warning { message } => eprintln!("warning: {message}"),
            Event::MessageStored { .. } => {}
            // Agent events: a chat turn emits none of them.
            Event::ExecutionStarted { .. }
            | Event::ContextUsage { .. }
            | Event::ToolStarted { .. }
            | Event::ToolFinished { .. }
            | Event::TodosChanged { .. }
            | Event::SnapshotTaken { .. }
            | Event::Failure { .. }
            | Event::RolledBack { .. }
            | Event::AwaitingChoice { .. }
            | Event::ApprovalAsked { .. }
            | Event::Recovered { .. }
            | Event::StepTimed { .. }
            | Event::SubagentStarted { .. }
            | Event::SubagentFinished { .. }
            | Event::ReviewStarted { .. }
            | Event::ReviewFinished { .. }
            | Event::Finished { .. } => {}
        }
    }
}

pub async fn run(
    store: &Store,
    data_dir: &Path,
    provider: Option<&str>,
    conversation: Option<&str>,
    message: String,
) -> Result<(), CliError> {
    let conversation = conversation.map(conversation_id).transpose()?;
    let terminal = Terminal::new(std::io::stdout().is_terminal());
    chat_turn(ChatTurn {
        store,
        data_dir,
        provider,
        conversation,
        message,
        events: &terminal,
    })
    .await?;
    terminal.finish()
}
