//! The system's file dialogs, as the commands use them: shown from Rust, answered through a
//! callback, and worded by the window.

use std::path::PathBuf;

use tauri_plugin_dialog::FilePath;

use crate::AppError;

/// What a dialog calls with the analyst's answer (`None` when they cancelled).
pub(super) type Answer = Box<dyn FnOnce(Option<FilePath>) + Send + 'static>;

/// Shows a dialog through `show` and waits for its answer: the path picked, `None` when the
/// analyst cancelled. `kind` names the dialog in the error should it close without answering;
/// `not_local` says why a picked place that is no local path cannot be used.
pub(super) async fn answered_path(
    show: impl FnOnce(Answer),
    kind: &str,
    not_local: &str,
) -> Result<Option<PathBuf>, AppError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    show(Box::new(move |picked| {
        let _ = tx.send(picked);
    }));
    let picked = rx
        .await
        .map_err(|_| AppError::internal(format!("the {kind} dialog closed without an answer")))?;
    picked
        .map(|p| {
            p.into_path()
                .map_err(|e| AppError::invalid(format!("{not_local}: {e}")))
        })
        .transpose()
}

/// A dialog's title as the window worded it: one short line, or `fallback` (English) where it
/// sent none.
pub(super) fn dialog_title_or(title: &str, fallback: &str) -> String {
    let line: String = title
        .chars()
        .filter(|c| !c.is_control())
        .take(120)
        .collect();
    let line = line.trim();
    if line.is_empty() {
        fallback.to_owned()
    } else {
        line.to_owned()
    }
}
