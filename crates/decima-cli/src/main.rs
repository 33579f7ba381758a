//! `decima`: Decima without a window, for scripting, benchmarks and tests.

mod args;
mod commands;
mod context_build;
mod data_dir;
mod error;
mod output;
mod provider_config;

use std::process::ExitCode;

use clap::Parser;

use crate::args::Cli;

fn main() -> ExitCode {
    let cli = Cli::parse();
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
