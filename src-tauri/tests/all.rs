//! Every integration test of `decima-desktop`, in one binary: each file beside this one is a module
//! of it, so the crate links one test binary rather than one per file. `cargo test -p
//! decima-desktop --test all -- <file>::` runs one file's tests.

// The app is driven through tauri-driver and WebKitWebDriver, which exist on Linux only (a
// Windows build has no WebView2 under Wine; docs/WINDOWS-AND-MACOS.md says where each is tested).
#![cfg(target_os = "linux")]
// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

mod support;

mod e2e;
mod e2e_answers;
mod e2e_context;
mod e2e_day;
mod e2e_day_actions;
mod e2e_export;
mod e2e_figures;
mod e2e_import;
mod e2e_layout;
mod e2e_mcp;
mod e2e_search;
mod e2e_shared;
mod e2e_stop;
mod e2e_workbench;
mod e2e_workspace;
