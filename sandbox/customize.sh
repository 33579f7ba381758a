#!/bin/sh
# Runs once on the image's root filesystem ($1) after its packages are installed, before it is
# packed and imported. Part of the recipe: changing it rebuilds the image.
set -eu
root="$1"

# The user the tools run as (the sandbox's default is 1000:1000), and the workspace.
chroot "$root" groupadd --gid 1000 analyst
chroot "$root" useradd --uid 1000 --gid 1000 --create-home --home-dir /home/analyst \
    --shell /bin/bash analyst
mkdir -p "$root/workspace"
chroot "$root" chown 1000:1000 /workspace

# matplotlib draws to files (there is no display), with a font that has Chinese first. Debian's
# own settings for these keys are replaced, not repeated.
sed -i -e '/^backend *:/d' -e '/^font\.family *:/d' -e '/^font\.sans-serif *:/d' \
    -e '/^axes\.unicode_minus *:/d' "$root/etc/matplotlibrc"
cat >> "$root/etc/matplotlibrc" <<'RC'
backend: Agg
font.family: sans-serif
font.sans-serif: WenQuanYi Micro Hei, DejaVu Sans
axes.unicode_minus: False
RC
chroot "$root" fc-cache -f >/dev/null

# Smaller: what only a package manager or a reader of manuals needs.
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/usr/share/doc/* \
    "$root"/usr/share/man/* "$root"/usr/share/info/*
