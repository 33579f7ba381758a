//! Exporting a report of the conversation's newest answer (its charts, CSVs and review) where
//! the analyst picks: one HTML file through the save dialog, or a folder made inside the one
//! the folder dialog picks. The rules live in `decima_runtime::report`.

use std::path::Path;

use decima_runtime::report::{ReportFormat, export_report};
use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt;

use super::dialogs::{answered_path, dialog_title_or};
use super::export::{default_folder, default_name, is_date};
use crate::dto::ReportView;
use crate::{AppError, AppState};

/// Asks where to put the report ("html": a file; "folder": a new folder named after the
/// conversation and `today` inside the folder picked) and writes it. `None` when the dialog
/// was cancelled.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(
    name = "command",
    skip_all,
    fields(name = "conversation_export_report")
)]
pub async fn conversation_export_report(
    app: AppHandle,
    state: State<'_, AppState>,
    conversation_id: String,
    format: String,
    today: String,
    dialog_title: String,
) -> Result<Option<ReportView>, AppError> {
    let id = super::conversation_id(&conversation_id)?;
    let format = match format.as_str() {
        "html" => ReportFormat::Html,
        "folder" => ReportFormat::Folder,
        _ => return Err(AppError::invalid("a report is html or folder")),
    };
    if !is_date(&today) {
        return Err(AppError::invalid("the date must read YYYY-MM-DD"));
    }
    let conversation = state.store.conversations().get(id).await?;
    let documents =
        directories::UserDirs::new().and_then(|u| u.document_dir().map(Path::to_path_buf));
    let folder = default_folder(documents, &state.data_dir)?;
    let named = default_name(&conversation.title, &today, "html");
    let title = dialog_title_or(&dialog_title, "Export a report");
    let to = match format {
        ReportFormat::Html => {
            let dialog = app
                .dialog()
                .file()
                .set_title(title)
                .set_directory(&folder)
                .set_file_name(named.replace(".html", " report.html"))
                .add_filter("HTML", &["html"]);
            answered_path(
                |answer| dialog.save_file(answer),
                "save",
                "that place cannot hold a file",
            )
            .await?
        }
        ReportFormat::Folder => {
            let dialog = app.dialog().file().set_title(title).set_directory(&folder);
            answered_path(
                |answer| dialog.pick_folder(answer),
                "folder",
                "that is not a folder on this computer",
            )
            .await?
            .map(|parent| parent.join(named.replace(".html", " report")))
        }
    };
    let Some(to) = to else {
        return Ok(None);
    };
    let made = export_report(&state.store, &state.data_dir, id, format, &to).await?;
    if let Ok(mut exported) = state.exported.lock() {
        exported.insert(made.path.clone());
    }
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    Ok(Some(ReportView {
        path: made.path.display().to_string(),
        charts: count(made.charts),
        tables: count(made.tables),
        findings: count(made.findings),
        left_out: made.left_out,
    }))
}
