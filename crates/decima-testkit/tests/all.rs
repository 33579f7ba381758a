//! Every integration test of `decima-testkit`, in one binary: each file beside this one is a module
//! of it, so the crate links one test binary rather than one per file. `cargo test -p
//! decima-testkit --test all -- <file>::` runs one file's tests.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

mod analyst_conversation;
mod anthropic_quirks;
mod fact_sessions;
mod llm_server;
mod llm_server_faults;
