#!/usr/bin/env bash
# The Windows run on its own: the Rust tests of the domain crates and the CLI built for
# x86_64-pc-windows-gnu and run under Wine, and the desktop app cross-built (scripts/lib.sh,
# test_windows, says which crates and how; tests/wine/skip.txt lists the tests left out and
# why). It installs what is missing (mingw-w64, wine64, the Rust target) and starts the tests'
# PostgreSQL cluster unless the caller has one running (DECIMA_TEST_POSTGRES_URL set, as in
# scripts/test.sh). Arguments go to the test binaries after the skip list, e.g.
# `scripts/test-windows.sh context::` runs only the tests whose names contain `context::`.
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"
started=$(date +%s)

# The same build settings as scripts/test.sh's in CI: the Windows build then reuses the build
# scripts and proc-macros its Linux build compiled for this machine, rather than compiling them a
# second time with other settings.
if [[ -n ${CI:-} ]]; then
    export CARGO_INCREMENTAL=0
    export CARGO_PROFILE_DEV_DEBUG=0
    export CARGO_PROFILE_DEV_STRIP=debuginfo
fi

ensure_toolchains
ensure_app_packages
# The desktop app embeds the built UI (tauri.conf.json's frontendDist), even for Windows.
if [[ ! -f ui/dist/index.html ]]; then
    ensure_ui_deps
    build_ui
fi

if [[ -z ${DECIMA_TEST_POSTGRES_URL:-} ]]; then
    say "PostgreSQL: the tests' own cluster, for the store's tests"
    start_test_postgres
    trap stop_test_postgres EXIT
fi

test_windows "$@"
say "Windows: all passed in $(( $(date +%s) - started ))s"
