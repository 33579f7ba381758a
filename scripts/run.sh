#!/usr/bin/env bash
# Installs what is missing, builds the UI and starts the Decima desktop app.
# Arguments go to the app, e.g. `scripts/run.sh --data-dir /tmp/decima`.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

ensure_toolchains
ensure_app_packages
ensure_ui_deps
build_ui
[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] || die "no display: Decima is a desktop app (run it in a desktop session, or under xvfb-run)"
say "Building and starting Decima"
exec cargo run --release --features custom-protocol --bin decima-desktop -- "$@"
