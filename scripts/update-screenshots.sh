#!/usr/bin/env bash
# Copies the Godot tests' renders of the ten demo scenes into docs/gallery/ for the README's
# gallery (README.md, docs/godot.md): the 960-wide JPEG copies tests/godot/run.sh writes
# (test-artifacts/godot-NAME-VIEW-960.jpg, made by godot_project/tests/check_screenshot.gd
# from the 1600x900 frames) become docs/gallery/NAME-VIEW.jpg.
#
#   tests/godot/run.sh              # renders and checks every scene (10-15 minutes)
#   scripts/update-screenshots.sh   # then copies the pictures
#
# Fails, copying nothing, if a picture is missing or over 400 KB (docs/ holds small files).
set -euo pipefail
cd "$(dirname "$0")/.."

ART=test-artifacts
OUT=docs/gallery
LIMIT=$((400 * 1024))
VIEWS="overview valley ridge"
# Scene name in run.sh, then its views.
SCENES=(
    "demo:$VIEWS closeup"
    "strata:$VIEWS"
    "paint:$VIEWS"
    "rills:$VIEWS"
    "dunes:$VIEWS"
    "weathering:$VIEWS"
    "graph:$VIEWS"
    "large:$VIEWS"
    "lod:$VIEWS"
    "planet:overview limb coast"
)

files=()
missing=0
for entry in "${SCENES[@]}"; do
    name=${entry%%:*}
    for view in ${entry#*:}; do
        src="$ART/godot-$name-$view-960.jpg"
        if [[ ! -f $src ]]; then
            echo "update-screenshots: $src is missing (run tests/godot/run.sh first)" >&2
            missing=1
            continue
        fi
        size=$(stat -c %s "$src")
        if [[ $size -gt $LIMIT ]]; then
            echo "update-screenshots: $src is $size bytes, over the $LIMIT allowed in docs/" >&2
            missing=1
            continue
        fi
        files+=("$src:$OUT/$name-$view.jpg")
    done
done
[[ $missing -eq 0 ]] || exit 1

mkdir -p "$OUT"
total=0
for pair in "${files[@]}"; do
    cp "${pair%%:*}" "${pair#*:}"
    total=$((total + $(stat -c %s "${pair#*:}")))
done
echo "update-screenshots: ${#files[@]} pictures in $OUT/ ($((total / 1024)) KB)"
