//! Every integration test of `decima-runtime`, in one binary: each file beside this one is a module
//! of it, so the crate links one test binary rather than one per file. `cargo test -p
//! decima-runtime --test all -- <file>::` runs one file's tests.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

mod cache_runs;
mod common;

mod agent_loop;
mod agent_loop_context_and_wire;
mod busy_conversation;
mod chat_answers;
mod chat_turn;
mod context_step;
mod failure_states;
mod mcp_tools;
mod plan_rollback;
mod preferences;
mod quick_chat;
mod real_llamacpp;
mod report_export;
mod review_digests_ahead;
mod review_passes;
mod run_answers;
mod run_spans;
mod workspace_changes;
mod workspace_panel;
mod workspace_switch;
