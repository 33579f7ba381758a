//! `decima`: Decima without a window, for scripting, benchmarks and tests.

// Unit tests read as the story they check: the line limit is for production code.
#![cfg_attr(test, allow(clippy::too_many_lines))]

mod args;
mod commands;
mod data_dir;
mod error;
mod output;

use std::process::ExitCode;

use clap::Parser;
use decima_runtime::logging::{self, LevelFilter, LogGuard};

use crate::args::Cli;

/// What `decima --version` prints: the release, the commit and the day of the build, so that a
/// report names the exact code (build.rs stamps the last two).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("VERGEN_GIT_SHA"),
    ", built ",
    env!("VERGEN_BUILD_DATE"),
    ")"
);

/// mimalloc instead of the system allocator: an agent step copies its whole context window
/// (thousands of small strings), and glibc's allocator made that copy about ten times slower
/// (see docs/PERFORMANCE.md, the agent step).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Declared before the runtime so it is dropped after it: the last lines reach the file.
    let _log = start_logging(&cli);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(error::EXIT_FAILURE);
        }
    };
    match runtime.block_on(commands::run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", e.one_line());
            ExitCode::from(e.exit_code())
        }
    }
}

/// Logs to DIR/logs/ only (stdout and stderr are the user's). A log file that cannot be opened
/// costs one warning, never the command; an unusable data directory is left to the store to
/// report, as the command's one error line.
fn start_logging(cli: &Cli) -> Option<LogGuard> {
    let dir = data_dir::resolve(cli.data_dir.clone()).ok()?;
    match logging::init(&dir, log_level(cli)) {
        Ok(guard) => Some(guard),
        Err(_) if !dir.is_dir() => None,
        Err(e) => {
            eprintln!("warning: {e}; continuing without a log file");
            None
        }
    }
}

/// `--log-level`, else `DECIMA_LOG` (blank counts as unset); `None` leaves it to `RUST_LOG`.
fn log_level(cli: &Cli) -> Option<LevelFilter> {
    if let Some(level) = cli.log_level {
        return Some(level.into());
    }
    logging::level_from_env().unwrap_or_else(|e| {
        eprintln!("warning: {}: {e}; using the default", logging::LEVEL_ENV);
        None
    })
}
