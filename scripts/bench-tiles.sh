#!/usr/bin/env bash
# Issue #41's equality cases and scale figures for tiled bakes, measured once (not in CI):
# each case is baked whole and tiled, and every file of the tiled folder is compared with
# `cmp` to the whole bake's (bake.json without its timings, devices and tiles_* figures).
#
#   scripts/bench-tiles.sh equal [BIN]   # the equality table (threads; about an hour on 2 busy cores)
#   scripts/bench-tiles.sh scale [BIN]   # 4097² (and SIZES="4097 8193") on 4 MPI ranks:
#                                        # whole, tiled 2x2 writing tiles, tiled 2x2 --merge
#   scripts/bench-tiles.sh speed [BIN]   # the 1.5x bar: a StreamPower step (carved lakes) at
#                                        # 4097², whole on 1 and 2 threads against tiled 2x2 on
#                                        # 4 MPI ranks (one thread each); ROUNDS=3 alternations;
#                                        # per step = (8 steps - 2 steps) / 6, CPU s and wall s
#
# BIN defaults to target/debug/orogen (the test profile: optimised). `scale` needs an orogen
# built with `--features orogen-cli/mpi` (tests/mpi/run.sh leaves one at
# target/mpi-test/orogen-mpi) and mpirun. Environment:
#   ITER=20       StreamPower iterations of the 2049² cases (the default recipe's 100 at 1025²)
#   TILES="2x2 3x3 4x4"
#   SIZES=4097    the scale runs' sizes; SCALE_ITER="4 12" their StreamPower iterations;
#                 MERGE=0 skips the --merge run
#                 (the CPU time per step is the difference of two runs over their steps)
#   WORK=/tmp/bench-tiles   scratch folder (deleted case by case)
# Each run's CPU time (user+sys, all ranks or threads) and peak RSS come from /usr/bin/time.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

mode=${1:-equal}
BIN=${2:-target/debug/orogen}
BIN=$(realpath "$BIN")
WORK=${WORK:-/tmp/bench-tiles}
ITER=${ITER:-20}
TILES=${TILES:-"2x2 3x3 4x4"}
SIZES=${SIZES:-4097}
SCALE_ITER=${SCALE_ITER:-"4 12"}
mkdir -p "$WORK"

normal_json() {
    jq -S 'del(.total_seconds)
        | .stages |= map(del(.seconds, .device)
            | if .figures then .figures |= with_entries(select(.key | startswith("tiles_") | not)) else . end
            | if .figures == {} then del(.figures) else . end)' "$1"
}

# "equal/total" files of $2 with the bytes of $1's, then the names that differ.
compare() {
    local a=$1 b=$2 f name same=0 total=0 differ=""
    for f in "$a"/*; do
        name=$(basename "$f")
        total=$((total + 1))
        if [[ $name == bake.json ]]; then
            diff -q <(normal_json "$f") <(normal_json "$b/$name") >/dev/null && same=$((same + 1)) || differ+=" $name"
        elif cmp -s "$f" "$b/$name"; then
            same=$((same + 1))
        else
            differ+=" $name"
        fi
    done
    [[ "$(ls "$a")" == "$(ls "$b")" ]] || differ+=" (file lists differ)"
    echo "$same/$total${differ:+ differ:$differ}"
}

# Runs "$@" under /usr/bin/time; prints "CPU_S MAXRSS_MIB" (the largest process's RSS).
timed() {
    local t="$WORK/time.txt"
    /usr/bin/time -f "%U %S %M" -o "$t" "$@" || return 1
    awk '{printf "%.1f %.0f", $1 + $2, $3 / 1024}' "$t"
}

if [[ $mode == equal ]]; then
    echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ), $BIN"
    echo "| recipe | tiles | files equal (cmp) | whole CPU s | tiled CPU s |"
    echo "|---|---|---|---|---|"
    cases=(
        "default 1025²|--set size=(1025,1025)"
        "2049² Carve n=1|--set size=(2049,2049) --set stages[0].iterations=$ITER --set stages[0].lakes=Carve --set stages[0].n=1.0"
        "2049² Carve n=2|--set size=(2049,2049) --set stages[0].iterations=$ITER --set stages[0].lakes=Carve --set stages[0].n=2.0"
        "2049² Fill n=1|--set size=(2049,2049) --set stages[0].iterations=$ITER --set stages[0].lakes=Fill() --set stages[0].n=1.0"
        "2049² Fill n=2|--set size=(2049,2049) --set stages[0].iterations=$ITER --set stages[0].lakes=Fill() --set stages[0].n=2.0"
    )
    for c in "${cases[@]}"; do
        name=${c%%|*}
        read -r -a sets <<<"${c#*|}"
        rm -rf "$WORK/whole"
        whole=$(timed "$BIN" bake --out "$WORK/whole" -q "${sets[@]}") || { echo "| $name | whole | FAILED | | |"; continue; }
        for tiles in $TILES; do
            rm -rf "$WORK/tiled"
            if tiled=$(timed "$BIN" bake --out "$WORK/tiled" -q --tiles "$tiles" --merge "${sets[@]}"); then
                echo "| $name | $tiles | $(compare "$WORK/whole" "$WORK/tiled") | ${whole% *} | ${tiled% *} |"
            else
                echo "| $name | $tiles | FAILED | | |"
            fi
        done
    done
    rm -rf "$WORK/whole" "$WORK/tiled"
elif [[ $mode == scale ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(free -g | awk '/Mem/ {print $2 " GiB"}'), $(date -u +%Y-%m-%dT%H:%MZ), $BIN"
    # 4 MPI ranks, each under its own /usr/bin/time: its CPU time and peak RSS.
    ranks() { # out, bake args...
        local out=$1
        shift
        rm -rf "$WORK/$out" "$WORK"/rank*.time
        mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np 4 \
            bash -c '/usr/bin/time -f "rank $OMPI_COMM_WORLD_RANK: %U user %S sys %M KiB" -o "$0/rank$OMPI_COMM_WORLD_RANK.time" "$@"' \
            "$WORK" "$BIN" bake --out "$WORK/$out" -q --tiles 2x2 "$@" || echo "mpirun failed"
        cat "$WORK"/rank*.time
        awk '{u += $3; s += $5} END {printf "all ranks: %.1f CPU s\n", u + s}' "$WORK"/rank*.time
        jq -c '.stages[] | {stage, seconds, device, figures}' "$WORK/$out/bake.json"
    }
    for size in $SIZES; do
      for iter in $SCALE_ITER; do
        # The default recipe without its Hydrology stage (its maps need the whole map):
        # StreamPower, then Thermal 10 steps; whole, then tiled 2x2 writing tiles.
        stages="[StreamPower(iterations: $iter, dt: 50000.0, k: Constant(5e-6), hydrology: false), Thermal(iterations: 10, talus: Noise(min_deg: 25.0, max_deg: 45.0, wavelength: 3000.0))]"
        sets=(--set "size=($size,$size)" --set "stages=$stages" --set 'outputs=["erosion"]')
        echo "== $size², StreamPower $iter steps, Thermal 10 steps =="
        rm -rf "$WORK/whole"
        echo "whole: CPU s, peak RSS MiB: $(timed "$BIN" bake --out "$WORK/whole" -q "${sets[@]}")"
        jq -c '.stages[] | {stage, seconds}' "$WORK/whole/bake.json"
        echo "-- tiled 2x2, each rank writes its tiles --"
        ranks tiled "${sets[@]}"
        ls "$WORK/tiled"
        # The same with --merge (rank 0 gathers and writes the whole maps): the whole
        # bake's files, byte for byte.
        if [[ ${MERGE:-1} == 1 ]]; then
            echo "-- tiled 2x2 --merge --"
            ranks merged --merge "${sets[@]}"
            echo "files equal (cmp), --merge against whole: $(compare "$WORK/whole" "$WORK/merged")"
        fi
        rm -rf "$WORK/whole" "$WORK/tiled" "$WORK/merged" "$WORK"/rank*.time
      done
    done
elif [[ $mode == speed ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    size=${SPEED_SIZE:-4097}
    echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ), $BIN"
    # "CPU_S WALL_S" of one bake of $1 StreamPower steps; $2: whole1 | whole2 | tiled.
    run() {
        local iter=$1 how=$2 t0 t1 cpu
        local sets=(--set "size=($size,$size)" --set 'outputs=[]'
            --set "stages=[StreamPower(iterations: $iter, dt: 50000.0, k: Constant(5e-6), hydrology: false, lakes: Carve)]")
        rm -rf "$WORK/out" "$WORK"/rank*.time
        t0=$(date +%s.%N)
        case $how in
            whole1) RAYON_NUM_THREADS=1 /usr/bin/time -f "%U %S" -o "$WORK/rank0.time" "$BIN" bake --out "$WORK/out" -q "${sets[@]}" ;;
            whole2) RAYON_NUM_THREADS=2 /usr/bin/time -f "%U %S" -o "$WORK/rank0.time" "$BIN" bake --out "$WORK/out" -q "${sets[@]}" ;;
            tiled) RAYON_NUM_THREADS=1 mpirun --oversubscribe --mca mpi_yield_when_idle 1 -np 4 -x RAYON_NUM_THREADS \
                bash -c '/usr/bin/time -f "%U %S" -o "$0/rank$OMPI_COMM_WORLD_RANK.time" "$@"' \
                "$WORK" "$BIN" bake --out "$WORK/out" -q --tiles 2x2 "${sets[@]}" ;;
        esac || { echo "FAILED FAILED"; return; }
        t1=$(date +%s.%N)
        cpu=$(cat "$WORK"/rank*.time | awk '{c += $1 + $2} END {print c}')
        echo "$cpu $(echo "$t1 - $t0" | bc)"
    }
    echo "| round | load | whole, 1 thread (CPU s, wall s) | whole, 2 threads (CPU s, wall s) | tiled 2x2, 4 ranks (CPU s, wall s) | tiled / whole 2 threads (CPU, wall) |"
    echo "|---|---|---|---|---|---|"
    for round in $(seq "${ROUNDS:-3}"); do
        load=$(cut -d' ' -f1 /proc/loadavg)
        declare -A per
        for how in whole1 whole2 tiled; do
            read -r c2 w2 <<<"$(run 2 $how)"
            read -r c8 w8 <<<"$(run 8 $how)"
            per[$how]=$(echo "$c2 $w2 $c8 $w8" | awk '{printf "%.3f %.3f", ($3 - $1) / 6, ($4 - $2) / 6}')
        done
        read -r c1 w1 <<<"${per[whole1]}"
        read -r c2 w2 <<<"${per[whole2]}"
        read -r ct wt <<<"${per[tiled]}"
        echo "| $round | $load | $c1, $w1 | $c2, $w2 | $ct, $wt | $(awk -v a="$ct" -v b="$c2" -v c="$wt" -v d="$w2" 'BEGIN {printf "%.2fx, %.2fx", a / b, c / d}') |"
    done
    rm -rf "$WORK/out" "$WORK"/rank*.time
else
    echo "usage: scripts/bench-tiles.sh equal|scale|speed [BIN]" >&2
    exit 2
fi
