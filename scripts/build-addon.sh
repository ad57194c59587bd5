#!/usr/bin/env bash
# Builds Orogen's GDExtension and lays out the addon for Godot:
#   - cargo build -p orogen-godot (debug; `--release` for an optimised build), into
#     $CARGO_TARGET_DIR when that is set, else target/
#   - copies the library into addons/orogen/bin/ (git-ignored), replacing it atomically so a
#     running editor never maps a half-written file
#   - links godot_project/addons/orogen to the top-level addons/orogen (one source only)
#
#   scripts/build-addon.sh [--release]
set -euo pipefail
cd "$(dirname "$0")/.."

profile=debug
args=()
if [[ "${1:-}" == "--release" ]]; then
    profile=release
    args=(--release)
fi
cargo build -p orogen-godot --locked "${args[@]}"

target_dir="${CARGO_TARGET_DIR:-target}"
lib=""
for name in liborogen.so liborogen.dylib orogen.dll; do
    if [[ -f "$target_dir/$profile/$name" ]]; then
        lib="$name"
        break
    fi
done
[[ -n "$lib" ]] || { echo "build-addon: no library in $target_dir/$profile" >&2; exit 1; }

mkdir -p addons/orogen/bin
cp "$target_dir/$profile/$lib" "addons/orogen/bin/.$lib.tmp"
mv -f "addons/orogen/bin/.$lib.tmp" "addons/orogen/bin/$lib"

mkdir -p godot_project/addons
if [[ ! -e godot_project/addons/orogen ]]; then
    ln -s ../../addons/orogen godot_project/addons/orogen
fi
echo "build-addon: addons/orogen/bin/$lib ($profile)"
