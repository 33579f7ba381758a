//! Every integration test of `decima-llm`, in one binary: each file beside this one is a module
//! of it, so the crate links one test binary rather than one per file. `cargo test -p
//! decima-llm --test all -- <file>::` runs one file's tests.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

mod anthropic_compat;
mod compat;
mod compat_profiles;
mod discovery;
mod models;
mod ollama;
mod provider_failures;
mod secrets;
mod token_accuracy;
mod wire;
mod wire_faults;
