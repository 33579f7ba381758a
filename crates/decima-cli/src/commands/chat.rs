//! `decima chat [--provider NAME] [--conversation ID] MESSAGE`: one runtime chat turn, with its
//! events printed: the answer on stdout, reasoning and notices on stderr.
//!
//! On a terminal the answer streams as it arrives; a retry then says on stderr that the partial
//! answer above is void, since printed text cannot be taken back. When stdout is a pipe or a file
//! (`decima chat … > answer.md`) the answer is written once it is final, so what lands there is
//! the stored answer exactly, never a discarded partial one before it.

use std::io::IsTerminal as _;
use std::path::Path;

use decima_runtime::chat::{ChatTurn, chat_turn};
use decima_store::Store;

use super::conversation_id;
use super::render::{Human, Printer};
use crate::error::CliError;

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
    let outcome = chat_turn(ChatTurn {
        store,
        data_dir,
        provider,
        conversation,
        message,
        events: &printer,
    })
    .await?;
    printer.finish(Some(&outcome.answer.content))
}
