#!/usr/bin/env bash
# Frame times and peak memory of a live ErosionSimulator run in headless Godot 4.6 with the
# release extension (issue #13: no frame over 16 ms when a 1025² result is applied; peak
# memory at most twice the CLI's), beside the CLI's peak for the same bake. Not a test.
#
#   scripts/bench-godot-apply.sh              # 513 and 1025
#   scripts/bench-godot-apply.sh 1025,2049
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
sizes="${1:-513,1025}"
bash scripts/install-godot.sh >/dev/null
if [[ -z ${OROGEN_NO_BUILD:-} ]]; then
    bash scripts/build-addon.sh --release >/dev/null
    cargo build --release --locked -p orogen-cli >/dev/null 2>&1
fi
mkdir -p godot_project/.godot
grep -qs 'res://addons/orogen/orogen.gdextension' godot_project/.godot/extension_list.cfg ||
    echo 'res://addons/orogen/orogen.gdextension' >>godot_project/.godot/extension_list.cfg
cli="${CARGO_TARGET_DIR:-target}/release/orogen"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "default recipe, live update and apply on finish, $(nproc) threads"
echo "| size | result | frames | steps | longest frame running | longest frame finishing | Godot before run | Godot peak |"
echo "|---|---|---|---|---|---|---|---|"
for side in ${sizes//,/ }; do
    bash scripts/godot --headless --path godot_project -s res://bench/apply_frames.gd -- --size="$side" 2>&1 |
        grep -E '^\||failed|ERROR' || true
done
echo
echo "| size | CLI peak (orogen bake, max resident) |"
echo "|---|---|"
for side in ${sizes//,/ }; do
    kb=$(/usr/bin/time -f '%M' "$cli" bake default --set "size=($side,$side)" --out "$out/b$side" --quiet 2>&1 >/dev/null | tail -n 1)
    echo "| ${side}² | $((kb / 1024)) MiB |"
done
