//! `decima export ID [--format text|jsonl|md|ipynb] [-o FILE [--full]]`

use std::path::Path;

use decima_core::export::ExportFormat;
use decima_store::{Conversation, Store};

use super::conversation_id;
use crate::args::ExportFormatArg;
use crate::error::CliError;
use crate::output;

pub async fn run(
    store: &Store,
    data_dir: &Path,
    id: &str,
    format: ExportFormatArg,
    output: Option<&Path>,
    full: bool,
) -> Result<(), CliError> {
    let id = conversation_id(id)?;
    // Fails with "not found" before anything is written.
    let conversation = store.conversations().get(id).await?;
    let format = match format {
        ExportFormatArg::Text => ExportFormat::Text,
        ExportFormatArg::Jsonl => ExportFormat::Jsonl,
        ExportFormatArg::Md => ExportFormat::Markdown,
        ExportFormatArg::Ipynb => return notebook(store, data_dir, &conversation, output).await,
    };
    match output {
        None => {
            let messages = store.messages().all(id).await?;
            let ledger =
                decima_runtime::export::footnote_ledger(store, data_dir, format, &messages).await?;
            output::print(&decima_runtime::export::render(
                &conversation,
                format,
                &messages,
                true,
                ledger.as_ref(),
            ))
        }
        Some(path) => export_to_file(store, data_dir, &conversation, format, path, full).await,
    }
}

/// Writes to a file through the runtime's incremental export and reports what it did.
async fn export_to_file(
    store: &Store,
    data_dir: &Path,
    conversation: &Conversation,
    format: ExportFormat,
    path: &Path,
    full: bool,
) -> Result<(), CliError> {
    let outcome =
        decima_runtime::export::export_to_file(store, data_dir, conversation, format, path, full)
            .await?;
    if outcome.appended && outcome.messages == 0 {
        eprintln!("{} is up to date", outcome.path.display());
    } else {
        let verb = if outcome.appended {
            "appended"
        } else {
            "wrote"
        };
        eprintln!(
            "{verb} {} messages to {}",
            outcome.messages,
            outcome.path.display()
        );
    }
    Ok(())
}

/// The conversation as a notebook, printed or written whole to a file.
async fn notebook(
    store: &Store,
    data_dir: &Path,
    conversation: &Conversation,
    output: Option<&Path>,
) -> Result<(), CliError> {
    match output {
        None => {
            let (text, _) =
                decima_runtime::export::notebook_text(store, data_dir, conversation).await?;
            output::print(&text)
        }
        Some(path) => {
            let outcome =
                decima_runtime::export::export_notebook(store, data_dir, conversation, path)
                    .await?;
            eprintln!(
                "wrote {} messages to {} (run it from the workspace's folder)",
                outcome.messages,
                outcome.path.display()
            );
            Ok(())
        }
    }
}
