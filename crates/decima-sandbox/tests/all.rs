//! Every integration test of `decima-sandbox`, in one binary: each file beside this one is a module
//! of it, so the crate links one test binary rather than one per file. `cargo test -p
//! decima-sandbox --test all -- <file>::` runs one file's tests.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

mod common;

mod docker_kernel;
mod docker_sandbox;
mod docker_ssh;
mod docker_tls;
mod host_files;
#[cfg(unix)]
mod host_shell;
#[cfg(windows)]
mod host_shell_windows;
mod host_tools;
mod snapshot_store;
