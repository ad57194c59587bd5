#!/usr/bin/env bash
# Tests of tiled bakes over MPI (issue #41), called by scripts/check.sh:
#
#   1. scripts/install-mpi.sh installs Open MPI and libclang (apt) when missing;
#   2. the CLI is built in the test profile with the `mpi` feature (rsmpi) and copied aside;
#   3. `mpirun --oversubscribe -np 4 orogen bake tests/mpi/tiled.ron --tiles 2x2 --merge`
#      (and 4x1) writes every file the whole-map bake writes, with the same bytes
#      (bake.json's timings, devices and tiles_* figures aside), and the same as the tiles
#      over threads; the same for lakes carved and filled, and for the default recipe (its
#      Hydrology stage); without --merge each rank writes its own tiles, the same files
#      with the same bytes as the tiles over threads, also the default recipe's hydrology
#      tiles, with its river curves (traced at rank 0 from the river cells, carved per
#      tile) and without; a layered world's maps per tile; a CoarseToFine schedule; the
#      pipe model (tests/mpi/hydraulic.ron); strata with Thermal (a Material talus) and
#      LayeredThermal (tests/mpi/layered.ron); strata eroded by StreamPower (k from the
#      exposed material) and the pipe model (dissolving down the layers)
#      (tests/mpi/layered_erosion.ron); with --target terrain3d, the regions written per
#      rank, the whole export's bytes;
#   4. ranks that are not one per tile, and a stage that does not tile, are refused with
#      exit code 2 and a message naming the flag or the field.
#
# The last line is `mpi: N passed, M failed`; exits non-zero on any failure.
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$REPO"

passed=0
failed=0
TARGET="${CARGO_TARGET_DIR:-$REPO/target}"
WORK="$TARGET/mpi-test"
RECIPE="$REPO/tests/mpi/tiled.ron"

ok() { echo "PASS $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
finish() {
    echo "mpi: took $SECONDS s"
    echo "mpi: $passed passed, $failed failed"
    [[ $failed -eq 0 ]]
    exit $?
}

if ! bash scripts/install-mpi.sh; then
    bad "install Open MPI (scripts/install-mpi.sh)"
    finish
fi
rm -rf "$WORK"
mkdir -p "$WORK"
# The test profile's binary without MPI (what the Godot and package tests use) is put back
# after the MPI build, which writes the same path; the MPI one is kept aside.
PLAIN="$TARGET/debug/orogen"
[[ -f "$PLAIN" ]] && cp -p "$PLAIN" "$WORK/orogen-plain"
# The whole workspace with the CLI's `mpi` feature on top: features resolve as in the
# workspace build check.sh has made, so only mpi-sys and the CLI are compiled again
# (`-p orogen-cli` alone resolved other features and rebuilt most of the dependencies).
if ! cargo build -q --workspace --profile test --features orogen-cli/mpi; then
    bad "build orogen-cli --features mpi"
    finish
fi
BIN="$WORK/orogen-mpi"
cp "$PLAIN" "$BIN"
if [[ -f "$WORK/orogen-plain" ]]; then
    rm -f "$PLAIN"
    cp -p "$WORK/orogen-plain" "$PLAIN"
fi
ok "build orogen-cli --features mpi"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# One core per rank is not there on CI: oversubscribe, and let idle ranks yield.
MPIRUN=(mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np)

# bake.json without what differs between runs of the same bake: timings, where each stage
# ran (the tiling) and the bytes the tiles exchanged.
normal_json() {
    jq -S 'del(.total_seconds)
        | .stages |= map(del(.seconds, .device)
            | if .figures then .figures |= with_entries(select(.key | startswith("tiles_") | not)) else . end
            | if .figures == {} then del(.figures) else . end)' "$1"
}

# Every file of folder $1 is in $2 with the same bytes (bake.json normalised), and no more.
same_files() {
    local a=$1 b=$2 f name good=0
    if [[ "$(ls "$a")" != "$(ls "$b")" ]]; then
        echo "  files differ: $(ls "$a" | tr '\n' ' ') / $(ls "$b" | tr '\n' ' ')"
        return 1
    fi
    for f in "$a"/*; do
        name=$(basename "$f")
        if [[ $name == bake.json ]]; then
            if ! diff <(normal_json "$f") <(normal_json "$b/$name") >/dev/null; then
                echo "  $name differs"
                good=1
            fi
        elif ! cmp -s "$f" "$b/$name"; then
            echo "  $name differs"
            good=1
        fi
    done
    return $good
}

if "$BIN" bake "$RECIPE" --out "$WORK/whole" -q; then
    ok "whole-map bake"
else
    bad "whole-map bake"
    finish
fi

for tiles in 2x2 4x1; do
    log="$WORK/mpi-$tiles.log"
    if "${MPIRUN[@]}" 4 "$BIN" bake "$RECIPE" --out "$WORK/mpi-$tiles" --tiles "$tiles" --merge -q >"$log" 2>&1; then
        if same_files "$WORK/whole" "$WORK/mpi-$tiles"; then
            ok "mpirun -np 4 --tiles $tiles: the whole-map bake's bytes"
        else
            bad "mpirun -np 4 --tiles $tiles: the whole-map bake's bytes"
        fi
        if jq -e '.stages[1].device == "cpu, tiles '"$tiles"' over mpi (4 ranks)"
                and .stages[1].figures.tiles_bytes_per_step > 0' "$WORK/mpi-$tiles/bake.json" >/dev/null; then
            ok "mpirun -np 4 --tiles $tiles: bake.json records the tiling and the bytes per step"
        else
            bad "mpirun -np 4 --tiles $tiles: bake.json records the tiling and the bytes per step"
        fi
    else
        bad "mpirun -np 4 --tiles $tiles (exit $?): $(tail -n 5 "$log")"
    fi
    if "$BIN" bake "$RECIPE" --out "$WORK/threads-$tiles" --tiles "$tiles" --merge -q &&
        same_files "$WORK/threads-$tiles" "$WORK/mpi-$tiles"; then
        ok "--tiles $tiles: MPI ranks and threads give the same bytes"
    else
        bad "--tiles $tiles: MPI ranks and threads give the same bytes"
    fi
done

# Lakes carved and filled across the ranks (Barnes 2016's basin graph in orogen_core::tiles).
for lakes in Carve "Fill()"; do
    name=${lakes%%(*}
    if "$BIN" bake "$RECIPE" --out "$WORK/whole-$name" -q --set "stages[0].lakes=$lakes" &&
        "${MPIRUN[@]}" 4 "$BIN" bake "$RECIPE" --out "$WORK/mpi-$name" --tiles 2x2 --merge -q \
            --set "stages[0].lakes=$lakes" >"$WORK/mpi-$name.log" 2>&1 &&
        same_files "$WORK/whole-$name" "$WORK/mpi-$name"; then
        ok "mpirun -np 4 --tiles 2x2, lakes: $lakes: the whole-map bake's bytes"
    else
        bad "mpirun -np 4 --tiles 2x2, lakes: $lakes: the whole-map bake's bytes ($(tail -n 3 "$WORK/mpi-$name.log" 2>/dev/null))"
    fi
done

# schedule: CoarseToFine: the coarse levels run whole at rank 0, the finest level on the ranks.
C2F=(--set "stages[0].schedule=CoarseToFine(levels: 2)")
if "$BIN" bake "$RECIPE" --out "$WORK/whole-c2f" -q "${C2F[@]}" &&
    "${MPIRUN[@]}" 4 "$BIN" bake "$RECIPE" --out "$WORK/mpi-c2f" --tiles 2x2 --merge -q \
        "${C2F[@]}" >"$WORK/mpi-c2f.log" 2>&1 &&
    same_files "$WORK/whole-c2f" "$WORK/mpi-c2f"; then
    ok "mpirun -np 4 --tiles 2x2, CoarseToFine: the whole-map bake's bytes"
else
    bad "mpirun -np 4 --tiles 2x2, CoarseToFine: the whole-map bake's bytes ($(tail -n 3 "$WORK/mpi-c2f.log" 2>/dev/null))"
fi

# The pipe model (tests/mpi/hydraulic.ron: rain drops, a source, open borders, two
# Hydraulic stages): halos of heights, water and sediment per step, the lost water and
# sediment summed at rank 0 in the whole map's order.
PIPES="$REPO/tests/mpi/hydraulic.ron"
if "$BIN" bake "$PIPES" --out "$WORK/whole-pipes" -q &&
    "${MPIRUN[@]}" 4 "$BIN" bake "$PIPES" --out "$WORK/mpi-pipes" --tiles 2x2 --merge -q \
        >"$WORK/mpi-pipes.log" 2>&1 &&
    same_files "$WORK/whole-pipes" "$WORK/mpi-pipes"; then
    ok "mpirun -np 4 --tiles 2x2, Hydraulic: the whole-map bake's bytes"
else
    bad "mpirun -np 4 --tiles 2x2, Hydraulic: the whole-map bake's bytes ($(tail -n 3 "$WORK/mpi-pipes.log" 2>/dev/null))"
fi

# Strata (tests/mpi/layered.ron: strata laid per tile, Thermal with a Material talus,
# LayeredThermal with every layer's halo exchanged per step, Hydrology): the layer maps and
# surface colour gathered by rank 0.
LAYERED="$REPO/tests/mpi/layered.ron"
if "$BIN" bake "$LAYERED" --out "$WORK/whole-layered" -q &&
    "${MPIRUN[@]}" 4 "$BIN" bake "$LAYERED" --out "$WORK/mpi-layered" --tiles 2x2 --merge -q \
        >"$WORK/mpi-layered.log" 2>&1 &&
    same_files "$WORK/whole-layered" "$WORK/mpi-layered"; then
    ok "mpirun -np 4 --tiles 2x2, strata and LayeredThermal: the whole-map bake's bytes"
else
    bad "mpirun -np 4 --tiles 2x2, strata and LayeredThermal: the whole-map bake's bytes ($(tail -n 3 "$WORK/mpi-layered.log" 2>/dev/null))"
fi

# Strata eroded by water (tests/mpi/layered_erosion.ron: StreamPower with k from the
# exposed material, lakes carved; the pipe model dissolving down the layers, each layer's
# halo of one ring exchanged per step; StreamPower with n = 2, lakes filled).
ERODED="$REPO/tests/mpi/layered_erosion.ron"
if "$BIN" bake "$ERODED" --out "$WORK/whole-eroded" -q &&
    "${MPIRUN[@]}" 4 "$BIN" bake "$ERODED" --out "$WORK/mpi-eroded" --tiles 2x2 --merge -q \
        >"$WORK/mpi-eroded.log" 2>&1 &&
    same_files "$WORK/whole-eroded" "$WORK/mpi-eroded"; then
    ok "mpirun -np 4 --tiles 2x2, StreamPower and Hydraulic over strata: the whole-map bake's bytes"
else
    bad "mpirun -np 4 --tiles 2x2, StreamPower and Hydraulic over strata: the whole-map bake's bytes ($(tail -n 3 "$WORK/mpi-eroded.log" 2>/dev/null))"
fi

# The default recipe (StreamPower, Thermal, Hydrology with its river curves) at 97×83: its
# Hydrology maps are made per tile and gathered by rank 0, which draws the river curves.
if "$BIN" bake --out "$WORK/whole-default" -q --set "size=(97,83)" &&
    "${MPIRUN[@]}" 4 "$BIN" bake --out "$WORK/mpi-default" --tiles 2x2 --merge -q \
        --set "size=(97,83)" >"$WORK/mpi-default.log" 2>&1 &&
    same_files "$WORK/whole-default" "$WORK/mpi-default"; then
    ok "mpirun -np 4 --tiles 2x2, the default recipe: the whole-map bake's bytes"
else
    bad "mpirun -np 4 --tiles 2x2, the default recipe: the whole-map bake's bytes ($(tail -n 3 "$WORK/mpi-default.log" 2>/dev/null))"
fi

# Without --merge: each rank writes its own tiles (height_rR_cC.exr, erosion_rR_cC.exr)
# into the one folder, and rank 0 bake.json; the same files and bytes as over threads.
NOHYD=(--set "stages[0].hydrology=false")
if "${MPIRUN[@]}" 4 "$BIN" bake "$RECIPE" --out "$WORK/mpi-tiles" --tiles 2x2 -q "${NOHYD[@]}" \
        >"$WORK/mpi-tiles.log" 2>&1 &&
    "$BIN" bake "$RECIPE" --out "$WORK/threads-tiles" --tiles 2x2 -q "${NOHYD[@]}" &&
    [[ $(ls "$WORK/mpi-tiles" | grep -c '_r[0-9]*_c[0-9]*\.exr$') -eq 8 ]] &&
    same_files "$WORK/threads-tiles" "$WORK/mpi-tiles"; then
    ok "mpirun -np 4 --tiles 2x2 without --merge: every rank's tiles, the threads' bytes"
else
    bad "mpirun -np 4 --tiles 2x2 without --merge: every rank's tiles, the threads' bytes ($(tail -n 3 "$WORK/mpi-tiles.log" 2>/dev/null))"
fi

# The default recipe without --merge (its river curves off: they are drawn over the whole
# map): every rank writes its tiles of the heights and of the hydrology maps (drainage,
# water_surface, lake_depth .exr; rivers, basins .png), the threads' bytes.
NOCURVES=(--set "size=(97,83)" --set "river_curves=None")
if "${MPIRUN[@]}" 4 "$BIN" bake --out "$WORK/mpi-hydro" --tiles 2x2 -q "${NOCURVES[@]}" \
        >"$WORK/mpi-hydro.log" 2>&1 &&
    "$BIN" bake --out "$WORK/threads-hydro" --tiles 2x2 -q "${NOCURVES[@]}" &&
    [[ $(ls "$WORK/mpi-hydro" | grep -c '_r[0-9]*_c[0-9]*\.\(exr\|png\)$') -eq 24 ]] &&
    same_files "$WORK/threads-hydro" "$WORK/mpi-hydro"; then
    ok "mpirun -np 4 --tiles 2x2, the default recipe without --merge: hydrology tiles, the threads' bytes"
else
    bad "mpirun -np 4 --tiles 2x2, the default recipe without --merge: hydrology tiles, the threads' bytes ($(tail -n 3 "$WORK/mpi-hydro.log" 2>/dev/null))"
fi

# Without --merge, the river curves (traced at rank 0 from the ranks' river cells, carved
# per tile) and a layered world's maps per tile: the threads' bytes, and rivers.json the
# whole bake's.
SMALL=(--set "size=(97,83)")
if "${MPIRUN[@]}" 4 "$BIN" bake --out "$WORK/mpi-curves" --tiles 2x2 -q "${SMALL[@]}" \
        >"$WORK/mpi-curves.log" 2>&1 &&
    "$BIN" bake --out "$WORK/threads-curves" --tiles 2x2 -q "${SMALL[@]}" &&
    cmp -s "$WORK/whole-default/rivers.json" "$WORK/mpi-curves/rivers.json" &&
    same_files "$WORK/threads-curves" "$WORK/mpi-curves"; then
    ok "mpirun -np 4 --tiles 2x2, the default recipe's river curves without --merge: the threads' bytes"
else
    bad "mpirun -np 4 --tiles 2x2, the default recipe's river curves without --merge: the threads' bytes ($(tail -n 3 "$WORK/mpi-curves.log" 2>/dev/null))"
fi
if "${MPIRUN[@]}" 4 "$BIN" bake "$LAYERED" --out "$WORK/mpi-layered-tiles" --tiles 2x2 -q \
        >"$WORK/mpi-layered-tiles.log" 2>&1 &&
    "$BIN" bake "$LAYERED" --out "$WORK/threads-layered-tiles" --tiles 2x2 -q &&
    [[ $(ls "$WORK/mpi-layered-tiles" | grep -c '^splat_r[0-9]*_c[0-9]*\.png$') -eq 4 ]] &&
    cmp -s "$WORK/whole-layered/rivers.json" "$WORK/mpi-layered-tiles/rivers.json" &&
    same_files "$WORK/threads-layered-tiles" "$WORK/mpi-layered-tiles"; then
    ok "mpirun -np 4 --tiles 2x2, strata without --merge: the layer maps per tile, the threads' bytes"
else
    bad "mpirun -np 4 --tiles 2x2, strata without --merge: the layer maps per tile, the threads' bytes ($(tail -n 3 "$WORK/mpi-layered-tiles.log" 2>/dev/null))"
fi

# Without --merge, --target terrain3d: each region written by the rank owning its first
# cell from its window's cells (region size 64: regions straddle the tiles); every file
# but bake.json the whole export's bytes, for the default recipe and a layered one.
T3D=(--target terrain3d --region-size 64)
# The same files in $1 and $2, each but bake.json (a tiled bake's lists its tiles) the same.
same_export() {
    local f name good=0
    [[ "$(ls "$1")" == "$(ls "$2")" ]] || { echo "  files differ"; return 1; }
    for f in "$1"/*; do
        name=$(basename "$f")
        if [[ $name != bake.json ]] && ! cmp -s "$f" "$2/$name"; then
            echo "  $name differs"
            good=1
        fi
    done
    return $good
}
for case in default layered; do
    if [[ $case == default ]]; then src=("${SMALL[@]}"); else src=("$LAYERED"); fi
    if "$BIN" bake "${src[@]}" --out "$WORK/whole-t3d-$case" -q "${T3D[@]}" &&
        "${MPIRUN[@]}" 4 "$BIN" bake "${src[@]}" --out "$WORK/mpi-t3d-$case" --tiles 2x2 -q "${T3D[@]}" \
            >"$WORK/mpi-t3d-$case.log" 2>&1 &&
        [[ -f "$WORK/mpi-t3d-$case/control_1_1.exr" ]] &&
        same_export "$WORK/whole-t3d-$case" "$WORK/mpi-t3d-$case"; then
        ok "mpirun -np 4 --tiles 2x2 --target terrain3d without --merge, $case: the whole export's bytes"
    else
        bad "mpirun -np 4 --tiles 2x2 --target terrain3d without --merge, $case: the whole export's bytes ($(tail -n 3 "$WORK/mpi-t3d-$case.log" 2>/dev/null))"
    fi
done

# Refusals, exit code 2, naming the flag or the field; no rank hangs.
refused() { # what, needle, command...
    local what=$1 needle=$2 log="$WORK/refused.log" code
    shift 2
    timeout 60 "$@" >"$log" 2>&1
    code=$?
    if [[ $code -eq 2 ]] && grep -qF -- "$needle" "$log"; then
        ok "$what"
    else
        bad "$what (exit $code): $(tail -n 3 "$log")"
    fi
}
refused "mpirun -np 3 --tiles 2x2 is refused naming --tiles" "--tiles 2x2 is 4 tiles, but mpirun started 3 ranks" \
    "${MPIRUN[@]}" 3 "$BIN" bake "$RECIPE" --out "$WORK/refused" --tiles 2x2 --merge -q
refused "mpirun -np 4, CoarseToFine over strata is refused naming the field" "stages[0].StreamPower.schedule" \
    "${MPIRUN[@]}" 4 "$BIN" bake "$RECIPE" --out "$WORK/refused" --tiles 2x2 --merge -q \
    --set 'strata=(layers: [(material: "shale", thickness: Constant(1.0))])' \
    --set 'stages[0].schedule=CoarseToFine(levels: 2)'

finish
