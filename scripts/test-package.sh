#!/usr/bin/env bash
# A clean install of the .deb, tested in a container: a Debian 12 root filesystem made from
# Debian's packages (mmdebstrap, `docker import`, as the analyst's sandbox image is made) installs
# the package with `apt-get install ./Decima_….deb`, so its declared dependencies are all it gets.
# Then, as an analyst's user: `decima --version`, an import of a small JSONL and `decima context`;
# the desktop app starts under Xvfb in the container and its window shows the page on the X
# screen (the accent blue of its buttons, counted as the end-to-end test does); then the package
# is purged, which must remove every file it installed and leave the analyst's data folder alone.
#
# `scripts/test.sh` runs this only when DECIMA_TEST_PACKAGE=1 (it builds the release and the
# installers first, which takes minutes). DECIMA_PACKAGE_DEB=path tests a .deb already built.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO_ROOT"
mirror=${DECIMA_DEBIAN_MIRROR:-http://deb.debian.org/debian}

ensure_docker
ensure_apt mmdebstrap python3 rpm

if [ -z "${DECIMA_PACKAGE_DEB:-}" ]; then
    scripts/package.sh
fi
deb=${DECIMA_PACKAGE_DEB:-$(ls target/release/bundle/deb/*.deb)}
[ -f "$deb" ] || die "no .deb to test: $deb"
version=$(cargo metadata --no-deps --format-version 1 \
    | python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "decima-desktop"))')
# Abbreviated as the build stamps it (git picks the length).
commit=$(git rev-parse --short HEAD)

# The .rpm: no RPM system's mirror is reachable here to install it, so its contents and declared
# dependencies are read with rpm itself.
rpmfile=$(ls target/release/bundle/rpm/*.rpm 2>/dev/null | head -1)
if [ -z "${DECIMA_PACKAGE_DEB:-}" ] || [ -n "$rpmfile" ]; then
    [ -f "$rpmfile" ] || die "no .rpm beside the .deb"
    say "Reading $(basename "$rpmfile")"
    rpm -qpl "$rpmfile" 2>/dev/null >"${TMPDIR:-/tmp}/decima-rpm-files.$$"
    for f in /usr/bin/decima /usr/bin/decima-desktop /usr/share/applications/Decima.desktop \
        /usr/share/icons/hicolor/32x32/apps/decima-desktop.png; do
        grep -qx "$f" "${TMPDIR:-/tmp}/decima-rpm-files.$$" || die "the .rpm lacks $f"
    done
    rm -f "${TMPDIR:-/tmp}/decima-rpm-files.$$"
    requires=$(rpm -qpR "$rpmfile" 2>/dev/null)
    for dep in webkit2gtk4.1 libsoup3 gtk3 openssl-libs; do
        grep -qx "$dep" <<<"$requires" || die "the .rpm does not require $dep: $requires"
    done
fi

# The clean system: Debian 12's required packages and apt, nothing else.
IMAGE=decima-test:debian12-apt
recipe_version=1
stamp=$(echo "bookworm variant=apt $mirror $recipe_version" | sha256sum | cut -c1-16)
current=$(as_root "$DOCKER" image inspect -f '{{index .Config.Labels "decima.stamp"}}' "$IMAGE" 2>/dev/null || true)
if [ "$current" != "$stamp" ]; then
    say "Building the clean Debian 12 image $IMAGE from Debian's packages"
    as_root mmdebstrap --quiet --variant=apt --aptopt='Acquire::Retries "3"' --format=tar \
        bookworm - "$mirror" \
        | as_root "$DOCKER" import --change 'CMD ["/bin/bash"]' --change "LABEL decima.stamp=$stamp" \
            - "$IMAGE" >/dev/null
fi

work=$(mktemp -d)
chmod 755 "$work"
container=decima-package-test-$$
cleanup() {
    as_root "$DOCKER" rm -f "$container" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
cp "$deb" "$work/"
debname=$(basename "$deb")
cat >"$work/small.jsonl" <<'JSONL'
{"role":"user","content":"Which region missed its Q3 target? 哪个地区未达标？"}
{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"shell","arguments":"{\"command\":\"python3 q3.py\"}"}}]}
{"role":"tool","tool_call_id":"call_1","content":"north 91%, south 104%, east 88%"}
{"role":"assistant","content":"East missed its target: 88% of plan."}
JSONL
chmod 644 "$work"/*

as_root "$DOCKER" run -d --name "$container" -v "$work:/pkg:ro" "$IMAGE" sleep infinity >/dev/null
in_box() { as_root "$DOCKER" exec "$container" "$@"; }
as_analyst() { as_root "$DOCKER" exec --user analyst --workdir /home/analyst "$container" "$@"; }

say "Installing $debname in a clean Debian 12 container"
in_box bash -c "apt-get update -qq && cd /pkg && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ./$debname >/dev/null"
in_box dpkg-query -W -f='${Depends}\n' decima | tee "$work/depends.txt" >&2
grep -q 'libwebkit2gtk-4.1-0' "$work/depends.txt" || die "the package does not depend on WebKitGTK"
grep -q 'libsoup-3.0-0' "$work/depends.txt" || die "the package does not depend on libsoup"
in_box dpkg -L decima >"$work/files.txt"
for f in /usr/bin/decima /usr/bin/decima-desktop /usr/share/applications/Decima.desktop \
    /usr/share/icons/hicolor/32x32/apps/decima-desktop.png; do
    grep -qx "$f" "$work/files.txt" || die "the package lacks $f: $(tr '\n' ' ' <"$work/files.txt")"
done
in_box grep -q '^Exec=decima-desktop' /usr/share/applications/Decima.desktop \
    || die "the desktop entry does not start decima-desktop"
for bin in decima decima-desktop; do
    if in_box ldd "/usr/bin/$bin" | grep 'not found'; then
        die "$bin needs libraries the package does not declare"
    fi
done

say "The CLI, as an analyst"
in_box useradd --create-home --shell /bin/bash analyst
got=$(as_analyst decima --version)
[[ $got == "decima $version (commit $commit, built "* ]] \
    || die "decima --version printed '$got', not version $version at commit $commit"
as_analyst decima provider add lab --kind openai --base-url http://127.0.0.1:9/v1 \
    --model qwen3-32b --context-window 32000 >/dev/null
id=$(as_analyst decima conversation import --title "Q3 regions" /pkg/small.jsonl)
as_analyst decima conversation list | grep -q "Q3 regions" || die "the import is not listed"
context=$(as_analyst decima context "$id" --provider lab)
grep -q "East missed its target: 88% of plan." <<<"$context" || die "decima context lacks the history: $context"
data=/home/analyst/.local/share/decima
in_box test -s "$data/decima.db" || die "the data folder is not where an analyst's is"

say "The desktop app under Xvfb in the container"
in_box bash -c "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends xvfb x11-apps >/dev/null"
in_box bash -c 'setsid Xvfb :99 -screen 0 1280x900x24 -nolisten tcp >/tmp/xvfb.log 2>&1 & echo $! >/tmp/xvfb.pid'
as_analyst bash -c 'DISPLAY=:99 setsid decima-desktop >/tmp/desktop.log 2>&1 & echo $! >/tmp/desktop.pid'
# The accent blue of the app's buttons (--accent in ui/src/styles), as src-tauri/tests/e2e.rs looks for it.
count_accent() {
    python3 - "$1" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
f = lambda i: struct.unpack(">I", data[i * 4:i * 4 + 4])[0]
header, width, height = f(0), f(4), f(5)
order, bpp, stride, ncolors = f(7), f(11), f(12), f(19)
size = bpp // 8
shifts = [(m & -m).bit_length() - 1 for m in (f(14), f(15), f(16))]
pixels = data[header + ncolors * 12:]
rows = b"".join(pixels[y * stride:y * stride + width * size] for y in range(height))
red, green, blue = (rows[(s // 8 if order == 0 else size - 1 - s // 8)::size] for s in shifts)
print(sum(1 for px in zip(red, green, blue) if px == (0x2F, 0x62, 0xD6)))
PY
}
shown=0
for _ in $(seq 1 60); do
    sleep 1
    in_box xwd -display :99 -root -silent >"$work/screen.xwd" 2>/dev/null || continue
    if [ "$(count_accent "$work/screen.xwd")" -ge 1000 ]; then shown=1; break; fi
done
if [ "$shown" -ne 1 ]; then
    in_box cat /tmp/desktop.log >&2 || true
    die "the app's window never showed the page on the container's X screen"
fi
mkdir -p target/package-test
cp "$work/screen.xwd" target/package-test/screen.xwd
in_box bash -c 'kill -0 "$(cat /tmp/desktop.pid)"' || die "the app exited after showing its window"
in_box bash -c 'kill "$(cat /tmp/desktop.pid)" "$(cat /tmp/xvfb.pid)"'
sleep 2

say "Uninstalling"
# The files (not the folders, which other packages share) the package put on the system.
in_box bash -c 'dpkg -L decima | while read -r f; do if [ -f "$f" ] || [ -L "$f" ]; then echo "$f"; fi; done' >"$work/installed.txt"
[ -s "$work/installed.txt" ] || die "dpkg lists no file of decima"
before=$(in_box sha256sum "$data/decima.db")
in_box bash -c "DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq decima >/dev/null"
if in_box dpkg-query -W decima >/dev/null 2>&1 && in_box dpkg-query -W -f='${Status}' decima | grep -q installed; then
    die "decima is still installed after the purge"
fi
left=$(in_box bash -c 'for f; do if [ -e "$f" ] || [ -L "$f" ]; then echo "$f"; fi; done' _ $(cat "$work/installed.txt"))
[ -z "$left" ] || die "the purge left: $left"
after=$(in_box sha256sum "$data/decima.db")
[ "$before" = "$after" ] || die "the uninstall changed the analyst's database"

say "The .deb installs, runs and uninstalls cleanly in a clean Debian 12 container"
