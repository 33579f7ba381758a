//! Which Docker engine this desktop's runs use, in Settings: this computer's, or a remote one
//! over mutual TLS (its address typed, its certificate folder picked in the system's folder
//! dialog: the page never names a host path). `DOCKER_HOST` in the app's environment wins, as
//! for the docker CLI, and the window says so.

use decima_runtime::docker::{self, EngineChoice};
use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt;

use super::dialogs::{answered_path, dialog_title_or};
use crate::dto::EngineChoiceView;
use crate::{AppError, AppState};

/// The engine choice Settings saved, and `DOCKER_HOST` when the environment sets one.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "sandbox_engine_get"))]
pub fn sandbox_engine_get(state: State<'_, AppState>) -> EngineChoiceView {
    view(docker::engine_choice(&state.data_dir))
}

/// Saves the engine: `host` (`tcp://HOST:PORT`; blank: this computer's) with the certificate
/// folder saved before, or, with `choose_certs`, one picked now in the folder dialog (nothing
/// is saved when it is cancelled). The next use of the sandbox connects to it.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "sandbox_engine_save"))]
pub async fn sandbox_engine_save(
    app: AppHandle,
    state: State<'_, AppState>,
    host: String,
    choose_certs: bool,
    dialog_title: String,
) -> Result<EngineChoiceView, AppError> {
    if host.len() > 512 || host.chars().any(char::is_control) {
        return Err(AppError::invalid(
            "an engine address is one line, such as tcp://server:2376",
        ));
    }
    let mut choice = docker::engine_choice(&state.data_dir);
    choice.host = Some(host.trim().to_owned()).filter(|h| !h.is_empty());
    if choose_certs {
        let dialog = app
            .dialog()
            .file()
            .set_title(dialog_title_or(&dialog_title, "The engine's certificates"));
        let Some(folder) = answered_path(
            |answer| dialog.pick_folder(answer),
            "folder",
            "that is not a folder on this computer",
        )
        .await?
        else {
            return Ok(view(docker::engine_choice(&state.data_dir)));
        };
        choice.cert_path = Some(folder);
    }
    docker::save_engine_choice(&state.data_dir, &choice)
        .await
        .map_err(|e| AppError::invalid(engine_message(e)))?;
    Ok(view(docker::engine_choice(&state.data_dir)))
}

/// The message of a refused choice, without the terminal's advice.
fn engine_message(e: decima_sandbox::SandboxError) -> String {
    match e {
        decima_sandbox::SandboxError::EngineRefused { detail }
        | decima_sandbox::SandboxError::DockerUnavailable { detail } => detail,
        other => other.to_string(),
    }
}

fn view(choice: EngineChoice) -> EngineChoiceView {
    EngineChoiceView {
        host: choice.host,
        cert_path: choice.cert_path.map(|p| p.display().to_string()),
        from_environment: std::env::var("DOCKER_HOST").ok().filter(|h| !h.is_empty()),
    }
}
