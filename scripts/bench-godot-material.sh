#!/usr/bin/env bash
# Frame time of the terrain material against the shader before it (issue #37: at most 1.3×
# at 1025², 1600×900, same renderer, same run), under Xvfb with llvmpipe (OpenGL 3), with the
# release extension. Not a test.
#
#   scripts/bench-godot-material.sh            # 1025
#   scripts/bench-godot-material.sh 513,1025
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
sizes="${1:-1025}"
bash scripts/install-godot.sh >/dev/null
[[ -n ${OROGEN_NO_BUILD:-} ]] || bash scripts/build-addon.sh --release >/dev/null
mkdir -p godot_project/.godot
grep -qs 'res://addons/orogen/orogen.gdextension' godot_project/.godot/extension_list.cfg ||
    echo 'res://addons/orogen/orogen.gdextension' >>godot_project/.godot/extension_list.cfg
echo "median frame, default recipe, overview camera, llvmpipe"
echo "| size | window | shader before | today's material | ratio |"
echo "|---|---|---|---|---|"
for side in ${sizes//,/ }; do
    OROGEN_XVFB_SIZE=1600x900x24 bash scripts/godot --xvfb --audio-driver Dummy --resolution 1600x900 \
        --path godot_project res://bench/material_frames.tscn -- --size="$side" 2>&1 | grep -E '^\||ERROR|rror' || true
done
