//! Every integration test of `decima-cli`, in one binary: each file beside this one is a module
//! of it, so the crate links one test binary rather than one per file. `cargo test -p
//! decima-cli --test all -- <file>::` runs one file's tests.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

mod common;
mod window_env;

mod agent_cli;
mod agent_cli_limits;
mod analyst_kernel;
mod busy_and_choices;
mod chat_claims;
mod chat_output;
mod cli;
mod compress;
mod context;
mod data_across_versions;
mod llm;
mod logging;
mod mcp_cli;
mod mcp_cli_settings;
mod numbers;
mod real_llamacpp;
mod recompute;
mod remote_engine;
mod review;
mod review_answers;
mod review_in_runs;
mod run;
mod sandbox_image;
mod shared_store;
mod soak;
mod subagents;
#[cfg(windows)]
mod windows_cli;
