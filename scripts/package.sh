#!/usr/bin/env bash
# Builds Decima's installers with Tauri's own bundler (the `tauri` CLI from the UI's npm
# packages, at the project's Tauri version). On Linux: a .deb and an .rpm, each with the desktop
# app, the `decima` CLI, the icons and a desktop entry. On macOS and Windows (the release
# workflow, .github/workflows/release.yml): what tauri.conf.json's "all" targets give there.
# Writes them under target/release/bundle/ and prints their paths and sizes.
#
# An AppImage is not built: Tauri's AppImage bundler downloads linuxdeploy and its plugins from
# GitHub, which this project's build machines cannot reach. A CI with internet access can add
# it with `--bundles appimage`.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"

if command -v apt-get >/dev/null; then
    ensure_toolchains
    ensure_app_packages
fi
ensure_ui_deps
build_ui

# Installed binaries carry no symbol table (as Debian's own packages): it was 13 MB of the CLI's
# 64 MB. Only here, through the environment: benchmarks and profiles keep their symbols. A change
# of profile rebuilds every crate, so a build after scripts/run.sh's starts from the beginning.
export CARGO_PROFILE_RELEASE_STRIP=symbols

# The CLI rides along as Tauri's "external binary": the bundler wants it named for the target
# (decima-x86_64-unknown-linux-gnu) and installs it beside the app as plain `decima`. It is named
# in src-tauri/tauri.bundle.json, not tauri.conf.json, because the app's own build script checks
# that every external binary exists, and a plain `cargo build` has not built one.
say "Building the decima CLI"
cargo build --release --locked -p decima-cli
triple=$(rustc -vV | sed -n 's/^host: //p')
exe=""
[[ $triple == *windows* ]] && exe=.exe
mkdir -p target/release/sidecar
cp "target/release/decima$exe" "target/release/sidecar/decima-$triple$exe"

# The release workflow stops here on macOS and Windows and hands the same `tauri build` to
# tauri's GitHub action, which also uploads what it builds to the release.
[[ -n ${DECIMA_PACKAGE_PREPARE_ONLY:-} ]] && exit 0

bundles=()
[[ $(uname -s) == Linux ]] && bundles=(--bundles deb,rpm)
say "Building the app and its installers"
rm -rf target/release/bundle
node ui/node_modules/@tauri-apps/cli/tauri.js build --config src-tauri/tauri.bundle.json "${bundles[@]}" -- --locked

say "Installers"
find target/release/bundle -maxdepth 2 -type f \
    \( -name '*.deb' -o -name '*.rpm' -o -name '*.msi' -o -name '*.exe' -o -name '*.dmg' -o -name '*.AppImage' \) \
    -print0 | xargs -0 -r du -h | sort -k2
