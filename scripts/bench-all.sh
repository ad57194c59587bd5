#!/usr/bin/env bash
# Every speed figure in one run (release build, all threads): each bench binary's table,
# then the CLI bakes of the built-in recipes with their wall time. Not part of the tests.
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

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(date -u +%Y-%m-%dT%H:%MZ)"
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
fi
