//! Decima's desktop shell: a Tauri 2 window over the same store the CLI uses.
//!
//! Commands are thin: they parse ids, call the store and map results into the DTOs the webview
//! sees. TypeScript bindings for them are generated from this crate (see [`bindings`]).

// Unit tests read as the story they check: the line limit is for production code.
#![cfg_attr(test, allow(clippy::too_many_lines))]
#![warn(missing_docs)]

mod app_menu;
pub mod bindings;
mod commands;
mod dto;
mod error;
#[cfg(target_os = "linux")]
pub mod graphics;
mod preview;
mod runs;
mod state;

use std::path::PathBuf;
use std::process::ExitCode;

use decima_runtime::logging::{self, LevelFilter, LogGuard};
use decima_store::Store;
use tauri::Manager;

pub use commands::about::AppAbout;
pub use dto::{
    CompactionMarker, CompressionPreview, ContextLayerView, ContextUsage, ConversationSummary,
    ExecutionView, FailureReport, FindingView, MessagePage, MessageView, ReviewView, RunUpdate,
    SummaryPreview, ToolCallView,
};
pub use error::{AppError, ErrorCode};
pub use state::{AppState, Opened};

use std::sync::Arc;

/// Starts the app. The data directory comes from `--data-dir DIR`, then `DECIMA_DATA_DIR`, then the
/// OS default shared with the CLI. Logs go to its `logs/`, at the level of `--log-level LEVEL`,
/// then `DECIMA_LOG`, then `RUST_LOG`, then `info`.
pub fn run() -> ExitCode {
    // Fixes the launch time first thing: the start's milestones below count from it.
    commands::startup::launched_at();
    let builder = bindings::builder();
    let data_dir = match data_dir_from(
        std::env::args().skip(1),
        std::env::var_os("DECIMA_DATA_DIR"),
    ) {
        Some(dir) => dir,
        None => {
            eprintln!("error: no data directory: pass --data-dir DIR or set DECIMA_DATA_DIR");
            return ExitCode::FAILURE;
        }
    };
    // Lives until run() returns, after the event loop: the last lines reach the file.
    let log = start_logging(&data_dir);
    // The store: `DECIMA_DATABASE_URL`, else the shared database Settings saved, else the data
    // directory's own file.
    let (store, opened) = match tauri::async_runtime::block_on(open_store(&data_dir)) {
        Ok(opened) => opened,
        Err(e) => {
            tracing::error!(error = %e, "the store could not be opened");
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    tracing::info!(
        since_launch_ms = commands::startup::since_launch_ms(),
        "store opened"
    );
    tidy_after_earlier_runs(&store, &data_dir);
    let state_dir = data_dir.clone();
    // macOS's menu bar (About, Settings…, Quit, Edit, Window); the other platforms have none.
    let app = app_menu::install(tauri::Builder::default())
        .plugin(tauri_plugin_notification::init())
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_opener::init())
        .invoke_handler(builder.invoke_handler())
        // Files dragged over the window: a drop's paths are recorded here, from the window's
        // own event, before the page hears of them and asks to import them or to add them to
        // a conversation's workspace.
        .on_window_event(|window, event| {
            if let tauri::WindowEvent::DragDrop(drag) = event
                && let Some(state) = window.try_state::<AppState>()
            {
                commands::import::on_drag(&state, drag, window.scale_factor().unwrap_or(1.0));
            }
        })
        .setup(move |app| {
            builder.mount_events(app);
            open_main_window(app, &state_dir)?;
            tracing::info!(
                since_launch_ms = commands::startup::since_launch_ms(),
                "window created"
            );
            app.manage(AppState::new(store, state_dir).opened_at(opened));
            Ok(())
        })
        .build(tauri::generate_context!());
    let app = match app {
        Ok(app) => app,
        Err(e) => {
            tracing::error!(error = %e, "the window could not start");
            eprintln!("error: Decima could not start its window: {e}");
            return ExitCode::FAILURE;
        }
    };
    // `run` would end the process itself, skipping destructors and so the log's last lines;
    // `run_return` comes back here when the last window closes.
    // Runs still live when the last window closes are stopped as the Stop button stops them
    // (their servers shut down, their state recorded), and what a run could not stop in time
    // is killed after: a host MCP server leads its own process group, which nothing else
    // would end.
    let code = app.run_return(|handle, event| {
        if let tauri::RunEvent::Exit = event
            && let Some(state) = handle.try_state::<AppState>()
        {
            let left = state.runs.stop_all(std::time::Duration::from_secs(5));
            if left > 0 {
                tracing::warn!(
                    runs = left,
                    "runs did not stop within 5 s of the app's exit"
                );
            }
        }
    });
    let killed = decima_mcp::host_process::kill_every_host_server();
    if killed > 0 {
        tracing::warn!(servers = killed, "host MCP servers were killed at exit");
    }
    tracing::info!(code, "app exited");
    drop(log);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// What earlier runs of the app or the CLI left: executions whose process died, marked
/// interrupted (waited for, so the page lists them); workspace snapshots nobody collected and
/// sandbox containers left behind, both in the background, so the window waits for neither.
fn tidy_after_earlier_runs(store: &decima_store::Store, data_dir: &std::path::Path) {
    // Executions whose process died while they ran are marked interrupted, so they can be
    // resumed; ones another live process runs are left alone.
    match tauri::async_runtime::block_on(decima_runtime::agent::interrupt_orphans(store, data_dir))
    {
        Ok(marked) if !marked.is_empty() => {
            tracing::info!(count = marked.len(), "executions marked interrupted");
        }
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "cannot check for interrupted executions"),
    }
    // Workspace snapshots of executions that finished while no app or CLI collected them.
    let collecting = store.clone();
    let collect_dir = data_dir.to_path_buf();
    tauri::async_runtime::spawn(async move {
        if let Err(e) = decima_runtime::agent::collect_snapshots(&collecting, &collect_dir).await {
            tracing::warn!(error = %e, "cannot collect workspace snapshots");
        }
    });
    // Sandbox containers left by earlier runs of the app are removed in the background: the
    // window does not wait for the Docker engine, and without one the host sandbox still works.
    let engine_dir = data_dir.to_path_buf();
    tauri::async_runtime::spawn(async move {
        if let Err(e) = decima_runtime::docker::engine(&engine_dir).await {
            tracing::info!(error = %e, "no Docker engine: the Docker sandbox is unavailable");
        }
    });
}

/// Opens the store the data directory's choice names, and says where it is (a file's path, or
/// the URL as Settings shows it: without its password). A shared database chosen in Settings
/// that cannot be opened (the server down, the VPN off, the password changed) does not keep
/// the window from starting: it opens this computer's file, and Settings says why.
async fn open_store(data_dir: &std::path::Path) -> Result<(Store, Opened), String> {
    use decima_runtime::database::{self, Source};
    let environment = database::from_environment();
    let (location, source) = database::location(data_dir, environment.as_deref())
        .await
        .map_err(|e| e.to_string())?;
    let counter = decima_llm::tokens::store_counter();
    let local = decima_store::StoreLocation::in_data_dir(data_dir);
    if location == local {
        let store = Store::open_in_dir(data_dir, counter)
            .await
            .map_err(|e| e.to_string())?;
        return Ok((store, Opened::new(location.redacted(), source, None)));
    }
    match Store::connect(&location, Arc::clone(&counter)).await {
        Ok(store) => {
            let shown = match source {
                Source::Settings => database::saved(data_dir).url.unwrap_or_default(),
                _ => location.redacted(),
            };
            Ok((store, Opened::new(shown, source, None)))
        }
        Err(e) if source == Source::Settings => {
            tracing::warn!(error = %e, "the shared database chosen in Settings cannot be opened");
            let store = Store::open_in_dir(data_dir, counter)
                .await
                .map_err(|e| e.to_string())?;
            Ok((
                store,
                Opened::new(local.redacted(), Source::Local, Some(e.to_string())),
            ))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// The window of tauri.conf.json, with the webview's own storage (the UI's language and theme,
/// WebKit's caches) in DATA_DIR/webview: one data directory is one whole profile, and two of them
/// never share a setting through the user's home.
fn open_main_window(app: &tauri::App, data_dir: &std::path::Path) -> tauri::Result<()> {
    // The system's languages, told to the page before its scripts run, so its first frame is
    // already in the analyst's language; and the system ("macos", "windows", "linux"), so its
    // shortcuts take the platform's modifier (⌘ on macOS) and are written its way.
    let languages: Vec<String> = sys_locale::get_locales().take(8).collect();
    let told = format!(
        "window.__decimaSystemLanguages = {};\nwindow.__decimaPlatform = {};",
        serde_json::to_string(&languages).unwrap_or_else(|_| "[]".to_owned()),
        serde_json::to_string(std::env::consts::OS).unwrap_or_else(|_| "\"\"".to_owned())
    );
    for config in app.config().app.windows.iter().filter(|w| !w.create) {
        tauri::WebviewWindowBuilder::from_config(app.handle(), config)?
            .data_directory(data_dir.join("webview"))
            .initialization_script(&told)
            .build()?;
    }
    Ok(())
}

/// Logging to DATA_DIR/logs/. A log that cannot be set up costs one warning, never the app.
fn start_logging(data_dir: &std::path::Path) -> Option<LogGuard> {
    let level = match log_level_from(
        std::env::args().skip(1),
        std::env::var_os(logging::LEVEL_ENV),
    ) {
        Ok(level) => level,
        Err(e) => {
            eprintln!("warning: {e}; using the default");
            None
        }
    };
    match logging::init(data_dir, level) {
        Ok(guard) => Some(guard),
        Err(e) => {
            eprintln!("warning: {e}; continuing without a log file");
            None
        }
    }
}

/// `--log-level LEVEL` or `--log-level=LEVEL` wins over `DECIMA_LOG`; neither (or blank) gives
/// `None`, which leaves the choice to `RUST_LOG` and then the default.
fn log_level_from(
    args: impl IntoIterator<Item = String>,
    env: Option<std::ffi::OsString>,
) -> Result<Option<LevelFilter>, logging::UnknownLevel> {
    let mut args = args.into_iter();
    let mut flag = None;
    while let Some(arg) = args.next() {
        if arg == "--log-level" {
            flag = args.next();
        } else if let Some(value) = arg.strip_prefix("--log-level=") {
            flag = Some(value.to_string());
        }
    }
    let from_flag = match flag {
        Some(value) => logging::parse_level(&value)?,
        None => None,
    };
    match from_flag {
        Some(level) => Ok(Some(level)),
        None => env.map_or(Ok(None), |v| logging::parse_level(&v.to_string_lossy())),
    }
}

/// `--data-dir DIR` or `--data-dir=DIR` wins over the environment, which wins over the default.
fn data_dir_from(
    args: impl IntoIterator<Item = String>,
    env: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "--data-dir" {
            if let Some(dir) = args.next() {
                return Some(PathBuf::from(dir));
            }
        } else if let Some(dir) = arg.strip_prefix("--data-dir=") {
            return Some(PathBuf::from(dir));
        }
    }
    env.filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(decima_store::default_data_dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_level_precedence() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            log_level_from(args(&["--log-level", "debug"]), Some("error".into())),
            Ok(Some(LevelFilter::DEBUG))
        );
        assert_eq!(
            log_level_from(args(&["--data-dir", "/a", "--log-level=warn"]), None),
            Ok(Some(LevelFilter::WARN))
        );
        assert_eq!(
            log_level_from(args(&[]), Some("TRACE".into())),
            Ok(Some(LevelFilter::TRACE))
        );
        assert_eq!(log_level_from(args(&[]), Some(" ".into())), Ok(None));
        assert_eq!(log_level_from(args(&[]), None), Ok(None));
        assert_eq!(
            log_level_from(args(&["--log-level", "loud"]), None),
            Err(logging::UnknownLevel("loud".to_string()))
        );
    }

    #[test]
    fn data_dir_precedence() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            data_dir_from(args(&["--data-dir", "/a"]), Some("/env".into())),
            Some(PathBuf::from("/a"))
        );
        assert_eq!(
            data_dir_from(args(&["--data-dir=/b"]), None),
            Some(PathBuf::from("/b"))
        );
        assert_eq!(
            data_dir_from(args(&[]), Some("/env".into())),
            Some(PathBuf::from("/env"))
        );
        assert_eq!(
            data_dir_from(args(&[]), Some("".into())),
            decima_store::default_data_dir()
        );
    }
}
