#!/usr/bin/env bash
# Time from TerrainWorld.generate() to `finished` in headless Godot 4.6 with the release
# extension, for the default recipe at 1025² (and any --sizes given), with and without the
# StreamPower coarse-to-fine schedule (issue #12). Not part of the tests.
#
#   scripts/bench-godot-load.sh                # 1025²
#   scripts/bench-godot-load.sh 1025,4097      # and 4097² (coarse-to-fine only)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
sizes="${1:-1025}"
bash scripts/install-godot.sh >/dev/null
bash scripts/build-addon.sh --release >/dev/null
mkdir -p godot_project/.godot
grep -qs 'res://addons/orogen/orogen.gdextension' godot_project/.godot/extension_list.cfg ||
    echo 'res://addons/orogen/orogen.gdextension' >>godot_project/.godot/extension_list.cfg
bash scripts/godot --headless --path godot_project -s res://bench/load_time.gd -- --sizes="$sizes" 2>&1 |
    grep -E '^\||^default|failed|ERROR'
# addons/orogen/bin now holds the release library; tests/godot/run.sh builds its own.
