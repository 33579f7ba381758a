//! Exporting a conversation to a file the analyst picks with the system's save dialog, then
//! opening it or showing it in its folder. The webview never names a path itself: the file is
//! the one the dialog returned, and only files this process exported can be opened or shown.

use std::path::{Path, PathBuf};

use decima_core::export::ExportFormat;
use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt;
use tauri_plugin_opener::OpenerExt;

use super::dialogs::{answered_path, dialog_title_or};
use crate::dto::ExportView;
use crate::{AppError, AppState};

/// The longest file stem proposed, in characters: long titles make unwieldy file names.
const STEM_CHARS: usize = 80;

/// Asks where to export the conversation (md, jsonl or text), with the title and the date as
/// the file's name, and writes it there. `today` is the webview's local date (`YYYY-MM-DD`), so
/// the name carries the analyst's day rather than UTC's; `dialog_title` is the dialog's title in
/// the window's language. `None` when the dialog was cancelled.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "conversation_export"))]
pub async fn conversation_export(
    app: AppHandle,
    state: State<'_, AppState>,
    conversation_id: String,
    format: String,
    today: String,
    dialog_title: String,
) -> Result<Option<ExportView>, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    // A notebook is written whole by its own exporter; `None` stands for it here.
    let (format, extension, kind) = match format.as_str() {
        "md" => (Some(ExportFormat::Markdown), "md", "Markdown"),
        "jsonl" => (Some(ExportFormat::Jsonl), "jsonl", "JSON Lines"),
        "text" => (Some(ExportFormat::Text), "txt", "Text"),
        "ipynb" => (None, "ipynb", "Jupyter notebook"),
        _ => {
            return Err(AppError::invalid(
                "unknown format: use md, jsonl, text or ipynb",
            ));
        }
    };
    if !is_date(&today) {
        return Err(AppError::invalid("the date must read YYYY-MM-DD"));
    }
    let conversation = state.store.conversations().get(id).await?;
    let documents =
        directories::UserDirs::new().and_then(|u| u.document_dir().map(Path::to_path_buf));
    let folder = default_folder(documents, &state.data_dir)?;
    let name = default_name(&conversation.title, &today, extension);
    let dialog = app
        .dialog()
        .file()
        .set_title(dialog_title_or(&dialog_title, "Export the conversation"))
        .set_directory(&folder)
        .set_file_name(&name)
        .add_filter(kind, &[extension]);
    let Some(path) = answered_path(
        |answer| dialog.save_file(answer),
        "save",
        "that place cannot hold a file",
    )
    .await?
    else {
        return Ok(None);
    };
    let outcome = match format {
        Some(format) => {
            decima_runtime::export::export_to_file(
                &state.store,
                &state.data_dir,
                &conversation,
                format,
                &path,
                true,
            )
            .await?
        }
        None => {
            decima_runtime::export::export_notebook(
                &state.store,
                &state.data_dir,
                &conversation,
                &path,
            )
            .await?
        }
    };
    if let Ok(mut exported) = state.exported.lock() {
        exported.insert(outcome.path.clone());
    }
    Ok(Some(ExportView {
        path: outcome.path.display().to_string(),
        messages: u32::try_from(outcome.messages).unwrap_or(u32::MAX),
    }))
}

/// Opens a file this window exported, with the system's default app for it.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "export_open"))]
pub async fn export_open(
    app: AppHandle,
    state: State<'_, AppState>,
    path: String,
) -> Result<(), AppError> {
    let path = exported(&state, &path)?;
    app.opener()
        .open_path(path.to_string_lossy(), None::<&str>)
        .map_err(|e| AppError::invalid(format!("no app opened {}: {e}", path.display())))
}

/// Shows a file this window exported in the system's file manager.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "export_reveal"))]
pub async fn export_reveal(
    app: AppHandle,
    state: State<'_, AppState>,
    path: String,
) -> Result<(), AppError> {
    let path = exported(&state, &path)?;
    app.opener()
        .reveal_item_in_dir(&path)
        .map_err(|e| AppError::invalid(format!("no file manager showed {}: {e}", path.display())))
}

/// The path, when this process exported it and it is still there.
fn exported(state: &AppState, path: &str) -> Result<PathBuf, AppError> {
    let path = PathBuf::from(path);
    let known = state
        .exported
        .lock()
        .map(|set| set.contains(&path))
        .unwrap_or(false);
    if !known {
        return Err(AppError::invalid(
            "only a file exported from this window can be opened from it",
        ));
    }
    if !path.exists() {
        return Err(AppError::not_found(format!(
            "{} is no longer there: it was moved or deleted",
            path.display()
        )));
    }
    Ok(path)
}

/// Where the save dialog starts: the analyst's documents folder as the desktop names it
/// (`XDG_DOCUMENTS_DIR` on Linux), or the data folder's `exports/` (made here) where it names
/// none.
pub(super) fn default_folder(
    documents: Option<PathBuf>,
    data_dir: &Path,
) -> Result<PathBuf, AppError> {
    if let Some(documents) = documents.filter(|d| d.is_dir()) {
        return Ok(documents);
    }
    let exports = data_dir.join("exports");
    std::fs::create_dir_all(&exports)
        .map_err(|e| AppError::invalid(format!("cannot create {}: {e}", exports.display())))?;
    Ok(exports)
}

/// `Q3 invoices 2026-11-26.md`: the title made safe for every file system, and the date.
pub fn default_name(title: &str, today: &str, extension: &str) -> String {
    let mut stem: String = title
        .chars()
        .map(|c| match c {
            '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|' => ' ',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    stem = stem.trim_matches('.').trim().to_owned();
    if stem.chars().count() > STEM_CHARS {
        stem = stem
            .chars()
            .take(STEM_CHARS)
            .collect::<String>()
            .trim_end()
            .to_owned();
    }
    if stem.is_empty() {
        stem = "Conversation".to_owned();
    }
    format!("{stem} {today}.{extension}")
}

/// Whether `text` reads `YYYY-MM-DD`.
pub(super) fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_name_is_the_title_and_the_date_safe_for_any_file_system() {
        assert_eq!(
            default_name("Q3 invoices", "2026-11-26", "md"),
            "Q3 invoices 2026-11-26.md"
        );
        assert_eq!(
            default_name("a/b: c?*\n\"d\"", "2026-11-26", "txt"),
            "a b c d 2026-11-26.txt"
        );
        assert_eq!(
            default_name("  ..  ", "2026-11-26", "jsonl"),
            "Conversation 2026-11-26.jsonl"
        );
        assert_eq!(
            default_name("季度发票核对", "2026-11-26", "md"),
            "季度发票核对 2026-11-26.md"
        );
        let long = "x".repeat(300);
        assert_eq!(
            default_name(&long, "2026-11-26", "md").chars().count(),
            STEM_CHARS + " 2026-11-26.md".len()
        );
    }

    #[test]
    fn the_dialog_title_is_one_short_line() {
        let title = |t: &str| dialog_title_or(t, "Export the conversation");
        assert_eq!(title("导出对话"), "导出对话");
        assert_eq!(title(" \n "), "Export the conversation");
        assert_eq!(title("a\nb"), "ab");
        assert_eq!(title(&"x".repeat(500)).len(), 120);
    }

    #[test]
    fn only_a_plain_date_is_taken() {
        assert!(is_date("2026-11-26"));
        assert!(!is_date("2026-11-26/../x"));
        assert!(!is_date("26-11-2026"));
        assert!(!is_date(""));
    }

    #[test]
    fn without_a_documents_folder_the_dialog_starts_in_a_made_exports_folder() {
        let dir = tempfile::tempdir().unwrap();
        let folder = default_folder(None, dir.path()).unwrap();
        assert_eq!(folder, dir.path().join("exports"));
        assert!(folder.is_dir());
        // A documents folder that is named but missing is passed over too.
        let gone = dir.path().join("Documents");
        assert_eq!(default_folder(Some(gone), dir.path()).unwrap(), folder);
        let docs = tempfile::tempdir().unwrap();
        assert_eq!(
            default_folder(Some(docs.path().to_path_buf()), dir.path()).unwrap(),
            docs.path()
        );
    }
}
