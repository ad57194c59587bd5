#!/usr/bin/env bash
# Installs what the macOS build needs on this Linux machine: Rust's aarch64-apple-darwin and
# x86_64-apple-darwin targets (rustup), and Zig with cargo-zigbuild from their PyPI packages
# (`ziglang`, `cargo-zigbuild`) in a virtual environment cached outside the clone
# (/var/cache/orogen/zig-venv, or $OROGEN_ZIG_VENV). Zig links Mach-O against the stubs of
# Apple's system libraries it carries (no Apple SDK is fetched) and signs arm64 code ad hoc,
# as macOS requires. Idempotent, and quick when all is there. Prints the venv's bin folder
# last, for PATH.
#
#   scripts/install-macos-cross.sh
set -euo pipefail

VENV=${OROGEN_ZIG_VENV:-/var/cache/orogen/zig-venv}
ZIG_VERSION=0.17.1
ZIGBUILD_VERSION=0.24.1

for target in aarch64-apple-darwin x86_64-apple-darwin; do
    if ! rustup target list --installed | grep -qx "$target"; then
        echo "install-macos-cross: rustup target add $target" >&2
        rustup target add "$target" >/dev/null
    fi
done

if ! "$VENV/bin/python" -m ziglang version 2>/dev/null | grep -qx "$ZIG_VERSION" ||
    ! "$VENV/bin/cargo-zigbuild" --version 2>/dev/null | grep -q " $ZIGBUILD_VERSION\$"; then
    echo "install-macos-cross: ziglang $ZIG_VERSION and cargo-zigbuild $ZIGBUILD_VERSION (pip) into $VENV" >&2
    mkdir -p "$(dirname "$VENV")"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet "ziglang==$ZIG_VERSION" "cargo-zigbuild==$ZIGBUILD_VERSION" >&2
fi
echo "install-macos-cross: zig $("$VENV/bin/python" -m ziglang version), $("$VENV/bin/cargo-zigbuild" --version)" >&2
echo "$VENV/bin"
