//! `decima chat [--provider NAME] [--conversation ID] MESSAGE`: one runtime chat turn, with its
//! events printed: the answer on stdout, reasoning and notices on stderr.
//!
//! On a terminal the answer streams as it arrives; a retry then says on stderr that the partial
//! answer above is void, since printed text cannot be taken back. When stdout is a pipe or a file
//! (`decima chat … > answer.md`) the answer is written once it is final, so what lands there is
//! the stored answer exactly, never a discarded partial one before it.
//!
//! Ctrl-C or SIGTERM stops the turn as it stops a run: the runtime ends the answer's stream,
//! keeps what arrived and frees the conversation, and the command fails as cancelled. A turn
//! that does not end within [`GRACE`] (still compressing, or connecting) is dropped, and its
//! claim released before the process exits.

use std::io::IsTerminal as _;
use std::path::Path;
use std::time::Duration;

use decima_llm::LlmError;
use decima_runtime::agent::CancellationToken;
use decima_runtime::chat::{ChatTurn, chat_turn};
use decima_store::Store;

use super::conversation_id;
use super::render::{Human, Printer};
use super::signals::cancel_on_ctrl_c;
use crate::error::CliError;

/// How long a cancelled turn has to end on its own before it is dropped: well inside the couple
/// of seconds a session's end waits after SIGTERM before it sends SIGKILL.
const GRACE: Duration = Duration::from_millis(800);

/// `decima chat`: one turn, printed as a run's text output is.
pub async fn run(
    store: &Store,
    data_dir: &Path,
    provider: Option<&str>,
    conversation: Option<&str>,
    message: String,
) -> Result<(), CliError> {
    let conversation = conversation.map(conversation_id).transpose()?;
    let printer = Printer::Human(Human::new(std::io::stdout().is_terminal()));
    let cancel = CancellationToken::new();
    let watcher = tokio::spawn(cancel_on_ctrl_c(
        cancel.clone(),
        "the answer stops and the conversation is freed",
    ));
    // Boxed, so that a turn that outlives the grace can be dropped before the process exits.
    let mut turn = Box::pin(chat_turn(ChatTurn {
        store,
        data_dir,
        provider,
        conversation,
        message,
        events: &printer,
        cancel: cancel.clone(),
    }));
    let outcome = tokio::select! {
        outcome = &mut turn => Some(outcome),
        () = cancel.cancelled() => tokio::time::timeout(GRACE, &mut turn).await.ok(),
    };
    watcher.abort();
    let Some(outcome) = outcome else {
        // Dropping the turn dropped its stream and handed its claim to a background release;
        // it must land before the process exits.
        drop(turn);
        decima_runtime::busy::finish_releases().await;
        let _ = printer.finish(None);
        return Err(LlmError::Cancelled.into());
    };
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(e) => {
            let _ = printer.finish(None);
            return Err(e.into());
        }
    };
    let printed = printer.finish(Some(&outcome.answer.content));
    if cancel.is_cancelled() {
        return Err(LlmError::Cancelled.into());
    }
    printed
}
