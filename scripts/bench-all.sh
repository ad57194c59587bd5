#!/usr/bin/env bash
# Every speed figure in one run (release build, all threads): each bench binary's table,
# then the CLI bakes of the built-in recipes with their wall time, the default recipe at
# 1025² and 4097² with each StreamPower schedule, and (when Godot is installed) the load
# time of a 1025² world in Godot. Not part of the tests.
#
#   scripts/bench-all.sh            # everything (about 10-15 minutes on 2 cores)
#   scripts/bench-all.sh graph planet   # only these benches, no bakes
#
# The fastscapelib comparison needs Python and a venv: scripts/bench-vs-fastscapelib.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

benches=(noise flow thermal erosion process_step hydraulic layered graph planet)
bakes=1
if [[ $# -gt 0 ]]; then
    benches=("$@")
    bakes=0
fi

# The CPU model and family too: the figures move with the host (a memory-bound walk and a
# vectorised pass do not move together).
cpu=$(awk -F': ' '/^model name/ {m = $2} /^cpu family/ {f = $2} END {printf "%s (family %s)", m, f}' /proc/cpuinfo)
echo "machine: $(nproc) cores, $cpu, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(date -u +%Y-%m-%dT%H:%MZ)"
for b in "${benches[@]}"; do
    echo
    echo "== cargo bench -p orogen-core --bench $b =="
    cargo bench --quiet -p orogen-core --bench "$b"
done

if [[ $bakes -eq 1 ]]; then
    cargo build --quiet --release -p orogen-cli
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
    echo
    echo "== orogen bake (release CLI), wall time from start to files =="
    for r in $(target/release/orogen recipe | awk '{print $1}'); do
        start=$(date +%s.%N)
        target/release/orogen bake "$r" --out "$out/$r" >/dev/null 2>&1
        awk -v r="$r" -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%-14s %8.2f s\n", r, b - a }'
    done

    echo
    echo "== the default recipe at 1025² and 4097², StreamPower schedules (release CLI) =="
    for side in 1025 4097; do
        for schedule in Fine "CoarseToFine(levels: 2)" "CoarseToFine(levels: 3)"; do
            [[ $side -eq 4097 && $schedule == Fine ]] && continue
            start=$(date +%s.%N)
            target/release/orogen bake default --set "size=($side,$side)" \
                --set "stages[0].StreamPower.schedule=$schedule" --out "$out/d$side" >/dev/null 2>&1
            stages=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(", ".join("%s %.2f s" % (s["stage"], s["seconds"]) for s in d["stages"]))' "$out/d$side/bake.json" 2>/dev/null || echo "?")
            awk -v s="$side² $schedule" -v a="$start" -v b="$(date +%s.%N)" -v st="$stages" \
                'BEGIN { printf "%-32s %8.2f s  (%s)\n", s, b - a, st }'
        done
    done

    if [[ -x "${OROGEN_GODOT_ROOT:-/var/cache/orogen/godot-sid}/usr/bin/godot" ]]; then
        echo
        echo "== TerrainWorld.generate() to finished in headless Godot (scripts/bench-godot-load.sh) =="
        bash scripts/bench-godot-load.sh 1025
    fi
fi
