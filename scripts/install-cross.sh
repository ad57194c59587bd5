#!/usr/bin/env bash
# Installs what the Windows build needs on this Linux machine: Rust's x86_64-pc-windows-gnu
# target (rustup) and Debian's mingw-w64 cross linker and binutils (apt). The linker is named
# for that target in .cargo/config.toml. Idempotent, and quick when both are already there.
#
#   scripts/install-cross.sh
set -euo pipefail

TARGET=x86_64-pc-windows-gnu

if ! rustup target list --installed | grep -qx "$TARGET"; then
    echo "install-cross: rustup target add $TARGET"
    rustup target add "$TARGET" >/dev/null
fi

if ! command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 ||
    ! command -v x86_64-w64-mingw32-strip >/dev/null 2>&1 ||
    ! command -v x86_64-w64-mingw32-objdump >/dev/null 2>&1; then
    echo "install-cross: installing mingw-w64 (apt)"
    # shellcheck source=lib/debian-mirror.sh
    source "$(dirname "${BASH_SOURCE[0]}")/lib/debian-mirror.sh"
    apt_install gcc-mingw-w64-x86-64 binutils-mingw-w64-x86-64
fi
echo "install-cross: $TARGET and $(x86_64-w64-mingw32-gcc --version | head -n 1)"
