//! Every integration test of `decima-store`, in one binary: each file beside this one is a module
//! of it, so the crate links one test binary rather than one per file. `cargo test -p
//! decima-store --test all -- <file>::` runs one file's tests.

// Test code: a failed setup step should panic right where it happened.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test or a benchmark reads as the story it checks: the line limit is for production code.
#![allow(clippy::too_many_lines)]

mod common;

mod agent_records;
mod agent_state;
mod answers;
mod bulk_counters;
mod claims;
// A gone holder is told apart at once only where the kernel names the boot (Linux); elsewhere its
// claim lapses with its time to live, which `claims` and `run_leases` test everywhere.
#[cfg(target_os = "linux")]
mod claims_process;
mod compactions;
mod conversations;
mod crash;
mod future_sizes;
mod mcp_servers;
mod message_images;
mod messages;
mod migration_executions;
mod migration_resolved_by;
mod migration_run_endings;
mod postgres_store;
mod postgres_tls;
mod pragmas;
mod providers;
mod review_digests;
mod run_history;
mod run_leases;
#[cfg(target_os = "linux")]
mod run_leases_process;
mod schema_parity;
mod schema_versions;
mod search;
mod store_copy;
