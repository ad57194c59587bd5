#!/usr/bin/env bash
# Installs Godot 4.6 (Debian unstable's `godot` package) into a self-contained root
# filesystem, because Godot 4.6 needs a newer C library than Debian 12 ships.
#
#   scripts/install-godot.sh            # installs into $OROGEN_GODOT_ROOT (default below)
#   OROGEN_GODOT_ROOT=/some/dir scripts/install-godot.sh
#
# Idempotent: if the root already holds usr/bin/godot it is reused. The root is built in a
# temporary directory next to it and renamed into place only when complete, so an
# interrupted install is never mistaken for a good one. The Debian mirror is read from this
# machine's apt configuration at run time. Needs root (debootstrap).
set -euo pipefail

ROOT="${OROGEN_GODOT_ROOT:-/var/cache/orogen/godot-sid}"
PACKAGES="godot,xvfb,xauth,libgl1-mesa-dri,mesa-vulkan-drivers,x11-apps,imagemagick"

if [[ -x "$ROOT/usr/bin/godot" ]]; then
    echo "install-godot: reusing $ROOT"
    exit 0
fi

# shellcheck source=lib/debian-mirror.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/debian-mirror.sh"

MIRROR=$(find_mirror) || { echo "install-godot: no Debian mirror found in the apt configuration" >&2; exit 1; }

if ! command -v debootstrap >/dev/null 2>&1; then
    echo "install-godot: installing debootstrap"
    apt_install debootstrap
fi

mkdir -p "$(dirname "$ROOT")"
TMP=$(mktemp -d "$(dirname "$ROOT")/.godot-sid.XXXXXX")
cleanup() { if [[ -n "${TMP:-}" && -d "$TMP" ]]; then rm -rf --one-file-system "$TMP"; fi; }
trap cleanup EXIT

echo "install-godot: debootstrap sid into $TMP (takes a minute or two)"
debootstrap --variant=minbase --include="$PACKAGES" sid "$TMP" "$MIRROR" >"$TMP.log" 2>&1 || {
    echo "install-godot: debootstrap failed; last lines of the log:" >&2
    tail -n 30 "$TMP.log" >&2
    rm -f "$TMP.log"
    exit 1
}
rm -f "$TMP.log"
# Keep the download cache out of the root.
rm -rf "$TMP/var/cache/apt/archives/"*.deb

if [[ ! -x "$TMP/usr/bin/godot" ]]; then
    echo "install-godot: debootstrap finished but usr/bin/godot is missing" >&2
    exit 1
fi
if [[ -e "$ROOT" ]]; then
    rm -rf --one-file-system "$ROOT"
fi
mv "$TMP" "$ROOT"
TMP=""
echo "install-godot: installed $("$ROOT/lib64/ld-linux-x86-64.so.2" --library-path "$ROOT/lib/x86_64-linux-gnu:$ROOT/usr/lib/x86_64-linux-gnu:$ROOT/usr/lib/x86_64-linux-gnu/pulseaudio" "$ROOT/usr/bin/godot" --version 2>/dev/null || echo godot) into $ROOT"
