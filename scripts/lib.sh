# Shared by scripts/run.sh and scripts/test.sh: install whatever is missing, quietly when nothing is.
# Targets Debian 12 (bookworm) with a Rust toolchain (rustup) and Node.js >= 20.19 already present.

set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TAURI_DRIVER_VERSION=2.1.0

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Installs the named Debian packages that are not installed yet.
ensure_apt() {
    local missing=()
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    say "Installing Debian packages: ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# What building and running the Tauri app needs.
ensure_app_packages() {
    ensure_apt build-essential pkg-config curl file libssl-dev \
        libwebkit2gtk-4.1-dev libgtk-3-dev librsvg2-dev libayatana-appindicator3-dev libxdo-dev \
        fonts-noto-cjk
}

ensure_toolchains() {
    command -v cargo >/dev/null || die "cargo not found: install Rust 1.95 or newer with rustup (https://rustup.rs)"
    if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
        ensure_apt nodejs npm
    fi
    local v
    v=$(node -p 'process.versions.node')
    node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' \
        || die "Node.js $v is too old for Vite: install Node.js 20.19 or newer"
}

# npm packages of the webview UI, reinstalled when the lockfile changed.
ensure_ui_deps() {
    local stamp="$REPO_ROOT/ui/node_modules/.decima-lock"
    if [ ! -f "$stamp" ] || ! cmp -s "$REPO_ROOT/ui/package-lock.json" "$stamp"; then
        say "Installing the UI's npm packages"
        (cd "$REPO_ROOT/ui" && npm ci --no-audit --no-fund --loglevel=error)
        cp "$REPO_ROOT/ui/package-lock.json" "$stamp"
    fi
}

build_ui() {
    say "Building the UI"
    (cd "$REPO_ROOT/ui" && npm run --silent build)
}

# Python's tiktoken is the reference the token-count accuracy test and benchmark compare against.
ensure_python_tiktoken() {
    command -v python3 >/dev/null || ensure_apt python3 python3-pip
    python3 -m pip --version >/dev/null 2>&1 || ensure_apt python3-pip
    if ! python3 -c 'import tiktoken' 2>/dev/null; then
        say "Installing Python tiktoken (the token-count reference)"
        python3 -m pip install --quiet --disable-pip-version-check --break-system-packages tiktoken==0.14.0
    fi
}

# tauri-driver bridges WebDriver clients to WebKitWebDriver for the end-to-end tests.
ensure_tauri_driver() {
    ensure_apt webkit2gtk-driver xvfb xauth
    local bin="${CARGO_HOME:-$HOME/.cargo}/bin/tauri-driver"
    if [ ! -x "$bin" ] || ! "$bin" --help 2>&1 | grep -q -- --native-port; then
        say "Installing tauri-driver $TAURI_DRIVER_VERSION"
        cargo install tauri-driver --version "$TAURI_DRIVER_VERSION" --locked --quiet
    fi
}
