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
say "Building Decima"
cargo build --release --features decima-desktop/custom-protocol -p decima-desktop -p decima-cli
# The Docker sandbox needs an engine and its image. The image is built in the background while
# the app runs (its first build takes a few minutes); without an engine the app still runs with
# the host sandbox.
if (ensure_docker && ensure_apt mmdebstrap); then
    log="$REPO_ROOT/target/sandbox-image-build.log"
    say "Building the sandbox image in the background when its recipe changed (log: $log)"
    nohup bash -c "source '$REPO_ROOT/scripts/lib.sh'; ensure_sandbox_image '$REPO_ROOT/target/release/decima'" \
        > "$log" 2>&1 < /dev/null &
else
    say "warning: no Docker engine; the Docker sandbox is unavailable (the host sandbox still works)"
fi
say "Starting Decima"
exec "$REPO_ROOT/target/release/decima-desktop" "$@"
