//! Saving a table the window shows (an answer's Markdown table, a CSV or spreadsheet preview)
//! as a CSV file where the analyst picks, with the system's save dialog: the webview sends the
//! table's text, never a path.

use std::io::Write;
use std::path::Path;

use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt;

use super::dialogs::{answered_path, dialog_title_or};
use super::export::default_folder;
use crate::dto::SavedFileView;
use crate::{AppError, AppState};

/// The largest table text saved: far beyond what a window shows, short of exhausting memory.
const MAX_CSV_BYTES: usize = 64 * 1024 * 1024;

/// Asks where to save `csv` (the table as the window built it), proposing `suggested_name`,
/// and writes it there whole or not at all. `None` when the dialog was cancelled.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "table_save_csv"))]
pub async fn table_save_csv(
    app: AppHandle,
    state: State<'_, AppState>,
    csv: String,
    suggested_name: String,
    dialog_title: String,
) -> Result<Option<SavedFileView>, AppError> {
    if csv.len() > MAX_CSV_BYTES {
        return Err(AppError::invalid(format!(
            "this table is {} MB as CSV, more than the {} MB the window saves; save the file it \
             came from instead",
            csv.len() / (1024 * 1024),
            MAX_CSV_BYTES / (1024 * 1024)
        )));
    }
    let documents =
        directories::UserDirs::new().and_then(|u| u.document_dir().map(Path::to_path_buf));
    let folder = default_folder(documents, &state.data_dir)?;
    let dialog = app
        .dialog()
        .file()
        .set_title(dialog_title_or(&dialog_title, "Save the table as CSV"))
        .set_directory(&folder)
        .set_file_name(csv_name(&suggested_name))
        .add_filter("CSV", &["csv"]);
    let Some(path) = answered_path(
        |answer| dialog.save_file(answer),
        "save",
        "that place cannot hold a file",
    )
    .await?
    else {
        return Ok(None);
    };
    let bytes = csv.len();
    let written = path.clone();
    tokio::task::spawn_blocking(move || write_whole(&written, csv.as_bytes()))
        .await
        .map_err(|e| AppError::internal(format!("the save task failed: {e}")))??;
    if let Ok(mut exported) = state.exported.lock() {
        exported.insert(path.clone());
    }
    #[allow(clippy::cast_precision_loss)] // sizes far below 2^53
    Ok(Some(SavedFileView {
        path: path.display().to_string(),
        bytes: bytes as f64,
    }))
}

/// Writes `bytes` to `path` through a temporary file beside it: a failed save leaves what was
/// there before.
fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), AppError> {
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    let cannot =
        |e: std::io::Error| AppError::invalid(format!("cannot save {}: {e}", path.display()));
    let mut file = tempfile::NamedTempFile::new_in(folder).map_err(cannot)?;
    file.write_all(bytes)
        .and_then(|()| file.as_file().sync_all())
        .map_err(cannot)?;
    file.persist(path).map_err(|e| cannot(e.error))?;
    Ok(())
}

/// `suggested_name` as a CSV file's name: its unsafe characters replaced, `.csv` added where
/// missing, and `table.csv` where nothing is left.
fn csv_name(suggested_name: &str) -> String {
    let stem: String = suggested_name
        .chars()
        .filter(|c| !c.is_control())
        .map(|c| match c {
            '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|' => ' ',
            c => c,
        })
        .take(80)
        .collect();
    let stem = stem.trim().trim_end_matches(".csv").trim();
    if stem.is_empty() || stem.starts_with('.') {
        "table.csv".to_owned()
    } else {
        format!("{stem}.csv")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suggested_name_becomes_a_safe_csv_name() {
        assert_eq!(csv_name("sales_q3.csv"), "sales_q3.csv");
        assert_eq!(csv_name("Revenue / region"), "Revenue   region.csv");
        assert_eq!(csv_name(""), "table.csv");
        assert_eq!(csv_name("../.."), "table.csv");
        assert_eq!(csv_name(&"x".repeat(5_000)).len(), 84);
    }

    #[test]
    fn a_save_replaces_the_file_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        std::fs::write(&path, "old").unwrap();
        write_whole(&path, b"a,b\n1,2\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a,b\n1,2\n");
        let missing = dir.path().join("no/such/t.csv");
        let err = write_whole(&missing, b"x").unwrap_err();
        assert!(err.to_string().contains("cannot save"), "{err}");
    }
}
