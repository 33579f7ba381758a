#!/usr/bin/env bash
# Installs what is missing and runs every test: formatting, lints, the UI's unit tests, the Rust
# unit and integration tests (the Docker sandbox's against a real engine, the shared store's
# against a PostgreSQL cluster of their own, both started here if needed), the end-to-end test
# of the real app in WebKit under Xvfb, the Windows build's tests under Wine, and a check of the
# macOS build.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"
started=$(date +%s)

# A clean checkout gains nothing from incremental caches, and they were a third of the build's
# disk (4 GB of 13 GB); a CI machine ran out of space with them. Without them the build peaks at
# 5.3 GB, three quarters of it the test binaries; a CI machine still ran out of space, so CI
# builds them without line tables (a failing test still names its file and line: that comes from
# the panic, not from debug info), which takes a quarter off each binary.
if [[ -n ${CI:-} ]]; then
    export CARGO_INCREMENTAL=0
    export CARGO_PROFILE_DEV_DEBUG=0
    export CARGO_PROFILE_DEV_STRIP=debuginfo
fi
say "Disk: $(df -h --output=avail "$REPO_ROOT" | tail -1 | tr -d ' ') free where the build goes"

ensure_toolchains
ensure_app_packages
ensure_tauri_driver
ensure_python_tiktoken
ensure_llamacpp
ensure_ui_deps
ensure_mcp_servers

say "UI: type check, lint and unit tests"
(cd ui && npm run --silent typecheck && npm run --silent lint && npm test --silent)
build_ui

say "Rust: formatting"
cargo fmt --all -- --check

say "Rust: clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

say "Docker: the engine, the test images and the analyst's sandbox image"
ensure_docker
ensure_test_image
ensure_mcp_test_image
cargo build --quiet --locked -p decima-cli
ensure_sandbox_image "$REPO_ROOT/target/debug/decima"

say "PostgreSQL: the tests' own cluster, for the shared store's tests"
start_test_postgres
trap stop_test_postgres EXIT

say "Rust: unit, integration and end-to-end tests (under Xvfb)"
xvfb-run -a --server-args="-screen 0 1280x900x24" cargo test --workspace --all-targets --locked --no-fail-fast

say "Rust: the store's whole suite again, on PostgreSQL"
DECIMA_TEST_STORE=postgres cargo test -p decima-store --locked --tests

# A second build, for Windows, reusing the build scripts and proc-macros of the first (the same
# settings above); its store tests use the same PostgreSQL cluster, so it runs before that stops.
say "Windows: the tests of the domain crates and the CLI under Wine, and the desktop app cross-built"
test_windows

say "macOS: cargo check of every crate that builds without Apple's SDK"
check_macos

# The installers: built in release and installed in a clean container, which takes minutes, so
# only when asked (a release's CI sets it; see docs/DEVELOPMENT.md).
if [[ ${DECIMA_TEST_PACKAGE:-} == 1 ]]; then
    say "Installers: the .deb installed, run and purged in a clean Debian 12 container"
    scripts/test-package.sh
fi

say "All tests passed in $(( $(date +%s) - started ))s"
