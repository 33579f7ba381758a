//! Decima's desktop shell: a Tauri 2 window over the same store the CLI uses.
//!
//! Commands are thin: they parse ids, call the store and map results into the DTOs the webview
//! sees. TypeScript bindings for them are generated from this crate (see [`bindings`]).

#![warn(missing_docs)]

pub mod bindings;
mod commands;
mod dto;
mod error;
mod state;

use std::path::PathBuf;
use std::process::ExitCode;

use decima_store::Store;
use tauri::Manager;

pub use dto::{ConversationSummary, MessageView, ToolCallView};
pub use error::{AppError, ErrorCode};
pub use state::AppState;

/// Starts the app. The data directory comes from `--data-dir DIR`, then `DECIMA_DATA_DIR`, then the
/// OS default shared with the CLI.
pub fn run() -> ExitCode {
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
    let store = match tauri::async_runtime::block_on(Store::open_in_dir(
        &data_dir,
        decima_llm::tokens::store_counter(),
    )) {
        Ok(store) => store,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = tauri::Builder::default()
        .invoke_handler(builder.invoke_handler())
        .setup(move |app| {
            builder.mount_events(app);
            app.manage(AppState::new(store));
            Ok(())
        })
        .run(tauri::generate_context!());
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: Decima could not start its window: {e}");
            ExitCode::FAILURE
        }
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
