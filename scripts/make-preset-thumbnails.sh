#!/usr/bin/env bash
# Renders the thumbnails of the dock's preset gallery: bakes every built-in recipe at its own
# size with the CLI and shrinks its preview.png (shaded relief × hypsometric tint, water in
# blue) to 128×128 into addons/orogen/editor/presets/NAME.png. A test checks that every
# built-in recipe has one (rust/orogen-godot/tests/presets.rs).
#
#   scripts/make-preset-thumbnails.sh [OUT_DIR]
#
# OROGEN names the CLI binary (default: target/release/orogen, else target/debug/orogen);
# OUT_DIR defaults to addons/orogen/editor/presets. Needs ImageMagick's `convert`. The bakes
# are deterministic, so the same CLI gives the same pictures; the large ones (large, graph,
# planet) take minutes on a few cores.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-addons/orogen/editor/presets}"
bin="${OROGEN:-}"
if [[ -z "$bin" ]]; then
    for b in target/release/orogen target/debug/orogen; do
        [[ -x "$b" ]] && { bin="$b"; break; }
    done
fi
[[ -x "$bin" ]] || { echo "make-preset-thumbnails: no orogen CLI (build it: cargo build -p orogen-cli --release, or set OROGEN)" >&2; exit 2; }
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for name in $("$bin" recipe | awk '{print $1}'); do
    start=$SECONDS
    "$bin" bake "$name" -q -o "$work/$name"
    # Square thumbnails: the equirectangular planet (2:1) is cropped to its middle.
    convert "$work/$name/preview.png" -resize 128x128^ -gravity center -extent 128x128 \
        -strip "$out/$name.png"
    echo "$name: $((SECONDS - start)) s"
done
