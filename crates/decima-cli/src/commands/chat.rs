//! `decima chat [--provider NAME] [--conversation ID] MESSAGE`: one runtime chat turn, with its
//! events printed: the answer on stdout, reasoning and notices on stderr.

use std::io::Write as _;
use std::path::Path;

use decima_runtime::chat::{ChatTurn, chat_turn};
use decima_runtime::{Event, EventSink};
use decima_store::Store;

use super::conversation_id;
use crate::error::CliError;

/// Prints events as they arrive. Printing errors are kept for the end: the turn itself must not
/// be torn down halfway because a terminal went away.
struct Terminal {
    stdout_failed: std::sync::Mutex<Option<std::io::Error>>,
    ends_with_newline: std::sync::atomic::AtomicBool,
}

impl EventSink for Terminal {
    fn emit(&self, event: Event) {
        match event {
            Event::TurnStarted { conversation_id } => {
                eprintln!("conversation {conversation_id}");
            }
            Event::TextDelta { text } => {
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
                        .store(text.ends_with('\n'), std::sync::atomic::Ordering::Relaxed);
                }
            }
            Event::ReasoningDelta { text } => {
                let mut stderr = std::io::stderr().lock();
                let _ = stderr.write_all(text.as_bytes());
                let _ = stderr.flush();
            }
            Event::Discarded { reason } => {
                eprintln!("\n[the partial answer above is discarded: {reason}]");
            }
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
    let terminal = Terminal {
        stdout_failed: std::sync::Mutex::new(None),
        ends_with_newline: std::sync::atomic::AtomicBool::new(false),
    };
    chat_turn(ChatTurn {
        store,
        data_dir,
        provider,
        conversation,
        message,
        events: &terminal,
    })
    .await?;
    if let Ok(mut slot) = terminal.stdout_failed.lock()
        && let Some(e) = slot.take()
    {
        return Err(CliError::Output(e));
    }
    if !terminal
        .ends_with_newline
        .load(std::sync::atomic::Ordering::Relaxed)
    {
        std::io::stdout()
            .write_all(b"\n")
            .map_err(CliError::Output)?;
    }
    Ok(())
}
