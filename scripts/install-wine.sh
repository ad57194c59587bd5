#!/usr/bin/env bash
# Installs Wine from Debian unstable into a self-contained root file system, for the tests
# that run Orogen's Windows CLI (tests/package/run.sh). Debian 12's Wine 8 cannot start a
# Rust program: Rust's standard library imports bcryptprimitives.dll (ProcessPrng), which
# Wine 8 lacks. Wine runs chrooted in the root (scripts/wine).
#
#   scripts/install-wine.sh             # installs into $OROGEN_WINE_ROOT (default below)
#   OROGEN_WINE_ROOT=/some/dir scripts/install-wine.sh
#   scripts/install-wine.sh --loader    # prints the Wine loader's path inside the root
#
# Idempotent: a root that already holds Wine is reused. Built in a temporary directory next
# to it and renamed into place when complete, like scripts/install-godot.sh's. The Debian
# mirror is read from this machine's apt configuration at run time. Needs root (debootstrap).
set -euo pipefail

ROOT="${OROGEN_WINE_ROOT:-/var/cache/orogen/wine-sid}"
# 64-bit Wine only: Orogen ships only x86_64 programs.
PACKAGES="wine,wine64"

# Prints the Wine loader's path inside root $1 (Debian has moved it between releases). The
# names may be symbolic links with absolute targets, which resolve only inside the root.
wine_in_root() {
    local w
    for w in usr/bin/wine usr/bin/wine64 usr/lib/wine/wine64 usr/lib/wine/wine usr/libexec/wine/wine \
        usr/libexec/wine; do
        if [[ -L "$1/$w" || (-f "$1/$w" && -x "$1/$w") ]]; then echo "/$w"; return 0; fi
    done
    # Wine 10's own layout: the Unix loader beside its x86_64-unix libraries.
    w=$(find "$1/usr/lib" -path '*/wine/x86_64-unix/*' \( -name wine -o -name wine64 \) 2>/dev/null | head -n 1)
    if [[ -n "$w" ]]; then echo "${w#"$1"}"; return 0; fi
    return 1
}

if [[ "${1:-}" == --loader ]]; then
    # Prints the loader's path inside the root, for the scripts that run Wine chrooted there.
    wine_in_root "$ROOT"
    exit $?
fi
if wine_in_root "$ROOT" >/dev/null; then
    echo "install-wine: reusing $ROOT"
    exit 0
fi

# shellcheck source=lib/debian-mirror.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/debian-mirror.sh"
MIRROR=$(find_mirror) || { echo "install-wine: no Debian mirror found in the apt configuration" >&2; exit 1; }

if ! command -v debootstrap >/dev/null 2>&1; then
    echo "install-wine: installing debootstrap"
    apt_install debootstrap
fi

mkdir -p "$(dirname "$ROOT")"
TMP=$(mktemp -d "$(dirname "$ROOT")/.wine-sid.XXXXXX")
cleanup() { if [[ -n "${TMP:-}" && -d "$TMP" ]]; then rm -rf --one-file-system "$TMP"; fi; }
trap cleanup EXIT

echo "install-wine: debootstrap sid into $TMP (takes a few minutes)"
debootstrap --variant=minbase --include="$PACKAGES" sid "$TMP" "$MIRROR" >"$TMP.log" 2>&1 || {
    echo "install-wine: debootstrap failed; last lines of the log:" >&2
    tail -n 30 "$TMP.log" >&2
    rm -f "$TMP.log"
    exit 1
}
rm -f "$TMP.log"
rm -rf "$TMP/var/cache/apt/archives/"*.deb

wine_in_root "$TMP" >/dev/null || {
    echo "install-wine: debootstrap finished but no wine program is in the root; wine files there:" >&2
    find "$TMP/usr" -name 'wine*' -not -path '*/share/*' -not -name '*.so' -not -path '*-windows/*' -exec ls -ld {} + >&2 || true
    exit 1
}
if [[ -e "$ROOT" ]]; then
    rm -rf --one-file-system "$ROOT"
fi
mv "$TMP" "$ROOT"
TMP=""
echo "install-wine: installed $(chroot "$ROOT" "$(wine_in_root "$ROOT")" --version 2>/dev/null || echo wine) into $ROOT"
