#!/usr/bin/env bash
# Orogen's tests inside a real Godot 4.6 (called by scripts/check.sh).
#
#   1. installs Godot 4.6 if needed (scripts/install-godot.sh, cached outside the clone)
#   2. builds the extension and lays out the addon (scripts/build-addon.sh)
#   3. bakes tests/godot/recipes/equiv.ron with the CLI (the reference for byte equality)
#   4. runs godot_project/tests/run_tests.gd headless (classes, recipe API, CLI equality,
#      signal order, cancel, failures, queries, collision, threads, save/load), then
#      godot_project/tests/mutated_recipes.gd (200 mutated recipes through ErosionSimulator)
#   4. also godot_project/tests/gpu_tests.gd (issue #42, on lavapipe where there is no GPU):
#      a `device: Gpu` run against the CPU and the CLI's `--device gpu` bake, `Auto`, live
#      painting on the GPU; then again with OROGEN_GPU_DISABLE=1 (`Gpu` fails naming
#      `device`, `Auto` runs the CPU)
#   4a. bakes the equivalence recipe with the uplift map the headless tests painted and
#      compares it with Godot's run byte for byte
#   4b. opens each extension class's page in Godot's help (F1) in a headless editor and
#      checks its descriptions (godot_project/tests/class_docs.gd)
#   4c. checks the Terrain3D and HTerrain exports (godot_project/tests/hterrain_export.gd) and
#      imports the HTerrain one with a real HTerrain in a scratch project (SKIPPED without it)
#   5. renders the ten demo scenes under Xvfb (llvmpipe, OpenGL 3) at 1600x900 into
#      test-artifacts/, each in one Godot run from its three views (overview, low over a
#      valley, beside the highest ground; views.gd), the demo also 2 m above the ground:
#      main (the demo), strata, paint (live erosion while a script paints uplift, then the
#      applied terrain), rills, dunes, weathering, graph, large (2049², coarse to fine), lod
#      (1025², 2049², 4097² through the clipmap, which checks vertex counts, the LOD centre,
#      cracks and collision itself, then the 4097² views) and planet (PlanetWorld, which checks
#      itself; the globe, the limb and a coast). Each view is checked in the scene (no
#      background below the horizon; for the demo and rills no snow below the snowline), then
#      every frame by check_screenshot.gd (terrain, sky, water or the materials' colours on
#      the overview), which writes the 960-wide JPEG copies the README shows
#      (scripts/update-screenshots.sh copies them into docs/)
#
# Exits non-zero on any failure; the last line is `godot: N passed, M failed`.
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$REPO"

passed=0
failed=0
WORK="$REPO/target/godot-test"
ART="$REPO/test-artifacts"
RECIPES="$REPO/tests/godot/recipes"

finish() {
    echo "godot: $passed passed, $failed failed"
    [[ $failed -eq 0 ]]
    exit $?
}
fail_step() { # what
    echo "FAIL $1"
    failed=$((failed + 1))
}

# Adds a run's `RESULT passed=N failed=M` to the totals; a run without one (crash,
# timeout) or with error lines counts as one more failure.
tally() { # log file, name
    local log=$1 name=$2 line p f
    line=$(grep -E '^RESULT passed=[0-9]+ failed=[0-9]+' "$log" | tail -n 1)
    if [[ -z $line ]]; then
        echo "--- last lines of $name:"
        tail -n 30 "$log"
        fail_step "$name: no result (crashed or timed out)"
        return
    fi
    p=$(sed -E 's/.*passed=([0-9]+).*/\1/' <<<"$line")
    f=$(sed -E 's/.*failed=([0-9]+).*/\1/' <<<"$line")
    passed=$((passed + p))
    failed=$((failed + f))
    local bad
    bad=$(grep -E 'SCRIPT ERROR|Parse Error|panicked|Segmentation fault|signal 11|ERROR: .*(GDExtension|orogen)' "$log" | head -n 10)
    if [[ -n $bad ]]; then
        echo "$bad"
        fail_step "$name: errors in the output"
    fi
}

echo "==> Godot 4.6 (at ${SECONDS} s)"
if ! bash scripts/install-godot.sh; then
    fail_step "Godot 4.6 installs (scripts/install-godot.sh)"
    finish
fi
GODOT=(bash scripts/godot)
echo "godot version: $("${GODOT[@]}" --headless --version 2>/dev/null | tail -n 1)"

echo "==> build the extension (at ${SECONDS} s)"
if ! bash scripts/build-addon.sh --test-profile >"$REPO/target/godot-build.log" 2>&1; then
    tail -n 40 "$REPO/target/godot-build.log"
    fail_step "the extension builds"
    finish
fi
tail -n 1 "$REPO/target/godot-build.log"

# Godot loads extensions listed in .godot/extension_list.cfg (the editor writes it on its
# first scan); write it so a fresh clone needs no editor run.
mkdir -p godot_project/.godot
grep -qs 'res://addons/orogen/orogen.gdextension' godot_project/.godot/extension_list.cfg ||
    echo 'res://addons/orogen/orogen.gdextension' >>godot_project/.godot/extension_list.cfg

echo "==> CLI reference bake (at ${SECONDS} s)"
rm -rf "$WORK"
mkdir -p "$WORK/out" "$ART"
# The CLI that build-addon.sh --test-profile built with the workspace (`cargo run -p
# orogen-cli` would resolve other features and build the dependencies again).
OROGEN="${CARGO_TARGET_DIR:-$REPO/target}/debug/orogen"
if ! "$OROGEN" bake "$RECIPES/equiv.ron" --out "$WORK/bake" >"$WORK/bake.log" 2>&1; then
    tail -n 20 "$WORK/bake.log"
    fail_step "orogen bake of the equivalence recipe"
fi

# The GPU recipe baked by the CLI on the GPU: Godot's GPU run must give its bytes.
if ! "$OROGEN" bake "$RECIPES/gpu.ron" --device gpu --quiet --out "$WORK/gpu-bake" >"$WORK/gpu-bake.log" 2>&1; then
    tail -n 20 "$WORK/gpu-bake.log"
    fail_step "orogen bake --device gpu of the GPU recipe (scripts/install-vulkan.sh installs lavapipe)"
fi

echo "==> headless tests (godot_project/tests/run_tests.gd) (at ${SECONDS} s)"
timeout 600 "${GODOT[@]}" --headless --path godot_project -s res://tests/run_tests.gd -- \
    --recipes="$RECIPES" --bake="$WORK/bake" --out="$WORK/out" >"$WORK/tests.log" 2>&1
grep -E '^(PASS|FAIL) |^  measured' "$WORK/tests.log"
tally "$WORK/tests.log" "headless tests"

# Issue #42: ErosionSimulator and live painting on the GPU (lavapipe without one), then the
# same script without an adapter (OROGEN_GPU_DISABLE=1: a separate process, as the GPU is
# opened once per process). OROGEN_GPU_SOFTWARE=1: `Auto` takes lavapipe as it takes a GPU
# (it passes over software adapters otherwise; rust/orogen-cli/tests/device.rs tests that).
echo "==> GPU path (godot_project/tests/gpu_tests.gd) (at ${SECONDS} s)"
OROGEN_GPU_SOFTWARE=1 timeout 600 "${GODOT[@]}" --headless --path godot_project -s res://tests/gpu_tests.gd -- \
    --recipes="$RECIPES" --gpu-bake="$WORK/gpu-bake" >"$WORK/gpu.log" 2>&1
grep -E '^(PASS|FAIL) |^  measured' "$WORK/gpu.log"
tally "$WORK/gpu.log" "GPU tests"
OROGEN_GPU_DISABLE=1 timeout 300 "${GODOT[@]}" --headless --path godot_project -s res://tests/gpu_tests.gd -- \
    --recipes="$RECIPES" --no-adapter >"$WORK/gpu-disabled.log" 2>&1
grep -E '^(PASS|FAIL) |^  measured' "$WORK/gpu-disabled.log"
tally "$WORK/gpu-disabled.log" "GPU tests without an adapter"

# A run from a painted uplift map (test_painted_run_for_cli_comparison saved the map and
# the run's maps) bakes to the same bytes as the CLI given that map as an EXR image.
echo "==> painted uplift: the Godot run against orogen bake with the same map (at ${SECONDS} s)"
PAINTED="$WORK/out/painted"
if [[ -f $PAINTED/uplift.exr && -f $PAINTED/godot/height.exr ]]; then
    if "$OROGEN" bake "$RECIPES/equiv.ron" --quiet \
        --set "uplift=Image(path: \"$PAINTED/uplift.exr\", min: 0.0, max: 1.0)" \
        --out "$PAINTED/cli" >"$WORK/painted-bake.log" 2>&1; then
        same=1
        count=0
        for f in "$PAINTED"/cli/*; do
            f=$(basename "$f")
            [[ $f == bake.json ]] && continue
            count=$((count + 1))
            if ! cmp -s "$PAINTED/cli/$f" "$PAINTED/godot/$f"; then
                same=0
                echo "  $f differs"
            fi
        done
        if [[ $same -eq 1 && $count -ge 5 ]]; then
            echo "PASS painted uplift: Godot's $count files equal the CLI's byte for byte"
            passed=$((passed + 1))
        else
            fail_step "painted uplift: Godot's run differs from the CLI's bake of the same map"
        fi
    else
        tail -n 20 "$WORK/painted-bake.log"
        fail_step "orogen bake with the painted uplift map"
    fi
else
    fail_step "painted uplift: the Godot test saved no map or heights under $PAINTED"
fi

# 200 mutated recipes through ErosionSimulator (issue #11): each ends in one finished or
# failed(message), none hangs, no thread is left, and Godot exits cleanly. The seed is
# printed; OROGEN_FUZZ_SEED picks another.
echo "==> mutated recipes (godot_project/tests/mutated_recipes.gd) (at ${SECONDS} s)"
timeout 300 "${GODOT[@]}" --headless --path godot_project -s res://tests/mutated_recipes.gd -- \
    --recipes="$RECIPES" --builtin="$REPO/rust/orogen-core/recipes" >"$WORK/mutated.log" 2>&1
status=$?
grep -E '^(PASS|FAIL) |^  measured|^mutated recipes:|^  FAILED case' "$WORK/mutated.log"
tally "$WORK/mutated.log" "mutated recipes"
if [[ $status -eq 124 ]]; then
    fail_step "mutated recipes: Godot did not exit within 300 s"
elif [[ $status -gt 1 ]]; then
    fail_step "mutated recipes: Godot exited with status $status (0: all passed, 1: some failed)"
fi
# Any engine error or warning, or an object leaked at exit, is a failure here.
leaks=$(grep -E '^(ERROR|WARNING):|ObjectDB instances leaked|Leaked instance|still in use at exit' "$WORK/mutated.log" | head -n 10)
if [[ -n $leaks ]]; then
    echo "$leaks"
    fail_step "mutated recipes: engine errors, warnings or leaks in the output"
fi

# Godot's help (F1) for the extension's classes (issue #40): gdext's register-docs turns the
# binding's /// comments into the class reference, which only the editor loads. A headless
# editor on a scratch project under target/ (the addon linked in, never the repository's
# project) opens each class's page and checks its text (tests/editor/docs_test.gd, as the
# editor self-test does).
echo "==> class reference in Godot's help (godot_project/tests/class_docs.gd) (at ${SECONDS} s)"
DOCP="$WORK/class-docs"
rm -rf "$DOCP"
mkdir -p "$DOCP/addons" "$DOCP/tests" "$DOCP/.godot"
printf 'config_version=5\n\n[application]\n\nconfig/name="Orogen class reference test"\n' >"$DOCP/project.godot"
ln -s "$REPO/addons/orogen" "$DOCP/addons/orogen"
cp -r godot_project/tests/editor godot_project/tests/class_docs.gd "$DOCP/tests/"
echo 'res://addons/orogen/orogen.gdextension' >"$DOCP/.godot/extension_list.cfg"
# Godot 4.6 drops an extension's pages on an editor's very first start, while it builds its
# help cache (editor_doc_cache-4.6.res) from scratch; later starts read the cache and merge the
# extension's pages in. Start the editor once so the check sees what a user's second start shows.
timeout 300 "${GODOT[@]}" --headless --editor --path "$DOCP" --quit >"$WORK/class-docs-cache.log" 2>&1
timeout 300 "${GODOT[@]}" --headless --editor --path "$DOCP" -s res://tests/class_docs.gd \
    >"$WORK/class-docs.log" 2>&1
grep -E '^  (ok|FAIL) ' "$WORK/class-docs.log"
tally "$WORK/class-docs.log" "class reference"

# The Terrain3D and HTerrain exports (issue #13): checked in Godot, then the HTerrain one
# imported by a real HTerrain in a scratch project under target/ (never the repository), found
# at $OROGEN_HTERRAIN or ../shared/vendor/hterrain beside the repository; without it the
# import is SKIPPED (counted neither passed nor failed).
echo "==> Terrain3D / HTerrain exports (godot_project/tests/hterrain_export.gd) (at ${SECONDS} s)"
HT="$WORK/hterrain"
rm -rf "$HT"
mkdir -p "$HT"
timeout 300 "${GODOT[@]}" --headless --path godot_project -s res://tests/hterrain_export.gd -- \
    --phase=export --recipes="$RECIPES" --out="$HT" >"$WORK/hterrain-export.log" 2>&1
grep -E '^(PASS|FAIL|SKIPPED) ' "$WORK/hterrain-export.log"
tally "$WORK/hterrain-export.log" "Terrain3D/HTerrain export"
if [[ -f "$HT/project/project.godot" ]]; then
    # A first editor pass registers HTerrain's class names (its scripts refer to each other by them).
    timeout 300 "${GODOT[@]}" --headless --path "$HT/project" --import >"$WORK/hterrain-scan.log" 2>&1
    timeout 300 "${GODOT[@]}" --headless --path "$HT/project" -s res://hterrain_export.gd -- \
        --phase=import --out="$HT" >"$WORK/hterrain-import.log" 2>&1
    grep -E '^(PASS|FAIL|SKIPPED) ' "$WORK/hterrain-import.log"
    tally "$WORK/hterrain-import.log" "HTerrain import"
fi

# Renders a scene's views under Xvfb at 1600x900 in one Godot run, which saves each as
# test-artifacts/godot-NAME-VIEW.png and checks them itself (PASS/FAIL lines, RESULT; main.gd,
# paint.gd and lod.gd through views.gd: no background below the horizon, and for the demo and
# rills no snow below the snowline; planet.gd its own), then checks every frame in one
# check_screenshot.gd run (the overview with the given options, the others with --basic),
# which also writes the 960-wide JPEG copies (-960.jpg) the README shows. Any engine error line in
# the render is a failure.
render_views() { # name, scene, views (space-separated), scene options (space-separated), overview check options...
    local name=$1 scene=$2 views=$3 scene_opts=$4 view shot
    shift 4
    rm -f "$ART/godot-$name"-*.png "$ART/godot-$name"-*.jpg
    # shellcheck disable=SC2086 # the scene options are words, split on purpose
    OROGEN_XVFB_SIZE=1600x900x24 timeout 600 "${GODOT[@]}" --xvfb --audio-driver Dummy --resolution 1600x900 \
        --path godot_project "$scene" -- --orogen-views="$ART/godot-$name" $scene_opts >"$WORK/render-$name.log" 2>&1
    grep -E '^(PASS|FAIL) |^  (measured|screenshot)|^orogen-paint: [0-9]+ live refreshes|^orogen-views: ' "$WORK/render-$name.log"
    tally "$WORK/render-$name.log" "$name views"
    if grep -qE 'SCRIPT ERROR|^ERROR:|panicked|Segmentation fault' "$WORK/render-$name.log"; then
        grep -E -A1 'SCRIPT ERROR|^ERROR:|panicked|Segmentation fault' "$WORK/render-$name.log" | head -n 10
        fail_step "$name run: errors in the output"
    fi
    local args=()
    for view in $views; do
        shot="$ART/godot-$name-$view.png"
        if [[ ! -f $shot ]]; then
            tail -n 20 "$WORK/render-$name.log"
            fail_step "the $name scene saves its $view view"
            continue
        fi
        args+=(--image="$shot" --small="$ART/godot-$name-$view-960.jpg")
        if [[ $view == overview ]]; then
            args+=("$@")
        else
            args+=(--basic)
        fi
    done
    # The frames are checked together at the end, in one Godot start (check_frames).
    SHOT_ARGS+=("${args[@]}")
    echo "screenshots: $ART/godot-$name-{${views// /,}}.png"
}

# Every scene's frames in one headless Godot (check_screenshot.gd takes each `--image=` with
# its own options): one start instead of one a scene.
SHOT_ARGS=()
check_frames() {
    [[ ${#SHOT_ARGS[@]} -gt 0 ]] || return 0
    echo "==> the frames of every scene (check_screenshot.gd) (at ${SECONDS} s)"
    timeout 600 "${GODOT[@]}" --headless --path godot_project -s res://tests/check_screenshot.gd -- \
        "${SHOT_ARGS[@]}" >"$WORK/shots.log" 2>&1
    grep -E '^(PASS|FAIL) |^  (screenshot|materials)' "$WORK/shots.log"
    tally "$WORK/shots.log" "frame checks"
}

# The views of the scenes built on main.gd (views.gd): the orbit overview, low over a valley,
# beside the highest ground; the demo also 2 m above the ground.
VIEWS="overview valley ridge"

echo "==> the demo from four views at 1600x900 under Xvfb (llvmpipe) (at ${SECONDS} s)"
# The demo is an island with bays (uplift_fade_ragged): over a third of its map is sea,
# which counts as water, not terrain; its overview shows 28 % terrain.
render_views demo res://main.tscn "$VIEWS closeup" "--orogen-check-views --orogen-check-snow --orogen-closeup" --min-terrain=22

echo "==> the strata scene (at ${SECONDS} s)"
# Its recipe's materials: sandstone, shale, sand (granite, grey, is not told apart).
render_views strata res://strata.tscn "$VIEWS" --orogen-check-views \
    "--materials=196,112,68;84,92,128;222,180,90;150,140,138"

# The painting demo: live erosion of the built-in `paint` recipe while a script paints an
# S-shaped range of uplift (it prints the refresh rate it saw), then the applied terrain's
# views (the overview with the brush on it).
echo "==> the painting demo (paint.tscn) (at ${SECONDS} s)"
render_views paint res://paint.tscn "$VIEWS" --orogen-check-views

echo "==> the rills scene (at ${SECONDS} s)"
# Rills: one material; the rain water still running in the rills is the water checked. That
# water covers much of the plane and counts as water, not terrain, hence the lower share.
render_views rills res://rills.tscn "$VIEWS" "--orogen-check-views --orogen-check-snow" --min-terrain=18

echo "==> the dunes scene (at ${SECONDS} s)"
# Dunes: sand over bedrock (grey, not told apart), so one material colour is enough.
render_views dunes res://dunes.tscn "$VIEWS" --orogen-check-views "--materials=222,200,150;92,88,86" --min-materials=1

echo "==> the weathering scene (at ${SECONDS} s)"
# Weathering: sandstone, shale and sand.
render_views weathering res://weathering.tscn "$VIEWS" --orogen-check-views "--materials=196,150,96;110,104,120;222,200,150"

echo "==> the graph scene (at ${SECONDS} s)"
# Graph: one material; its rivers, drawn from the same curves as get_rivers(), are the water.
render_views graph res://graph.tscn "$VIEWS" --orogen-check-views

echo "==> the large scene (at ${SECONDS} s)"
# Large: the built-in `large` recipe, 2049² with stream power coarse to fine.
render_views large res://large.tscn "$VIEWS" --orogen-check-views

echo "==> LOD: 1025², 2049² and 4097² terrains through the clipmap (at ${SECONDS} s)"
# lod.gd checks each size itself: at most 1.5M vertices, the frame's primitives are the
# clipmap's triangles, the LOD centre follows the camera, no background through the terrain
# (no cracks), collision regions match the heights; then the 4097² terrain's views under a
# sky, its edge a coast: the sea fills the noise's low half (an archipelago), so water shows
# and the overview is about a quarter terrain (26 % measured).
render_views lod res://lod.tscn "$VIEWS" "" --min-terrain=20

echo "==> the planet scene (at ${SECONDS} s)"
# PlanetWorld steps a 20,000-point planet live; planet.gd checks it (mesh, sample, pick,
# region recipe), then saves and checks its views: the globe, the limb, a coast. Space, not
# sky, is their background, so each frame gets the basic checks.
render_views planet res://planet.tscn "overview limb coast" "" --basic

check_frames
finish
