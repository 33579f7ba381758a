#!/usr/bin/env bash
# Installs what is missing, builds the UI and starts the Decima desktop app.
# Arguments go to the app, e.g. `scripts/run.sh --data-dir /tmp/decima`.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

ensure_toolchains
ensure_app_packages
ensure_ui_deps
build_ui
# The Docker sandbox needs an engine and an image; without them the app still runs with the
# host sandbox.
if ! (ensure_docker && ensure_test_image && ensure_sandbox_image); then
    say "warning: no Docker engine; the Docker sandbox is unavailable (the host sandbox still works)"
fi
[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] || die "no display: Decima is a desktop app (run it in a desktop session, or under xvfb-run)"
say "Building and starting Decima"
exec cargo run --release --features custom-protocol --bin decima-desktop -- "$@"
