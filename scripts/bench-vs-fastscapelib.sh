#!/usr/bin/env bash
# Orogen's erosion step against fastscapelib 0.3 on the same grid, parameters, initial
# terrain and number of steps; prints one table with the speedup.
#
#   scripts/bench-vs-fastscapelib.sh            # 256 512 1024 2048
#   scripts/bench-vs-fastscapelib.sh 256 512    # chosen sizes
#
# fastscapelib is installed with pip into a venv outside the repository
# (OROGEN_CACHE, default ~/.cache/orogen). Both sides: RasterGrid with fixed-value (open)
# borders, single-flow router + MST sink resolver (carve), SPL with k = 5e-6, m = 0.5,
# n = 1, dt = 5e4 yr, uplift 1e-3 m/yr on interior nodes, 100 m cells.
set -euo pipefail
cd "$(dirname "$0")/.."

sizes=("$@")
if [ ${#sizes[@]} -eq 0 ]; then
    sizes=(256 512 1024 2048)
fi

cache="${OROGEN_CACHE:-$HOME/.cache/orogen}"
venv="$cache/venv"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import fastscapelib" 2>/dev/null; then
    echo "installing fastscapelib 0.3.0 into $venv" >&2
    mkdir -p "$cache"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet fastscapelib==0.3.0 numpy
fi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

echo "== Orogen (cargo bench --bench erosion) ==" >&2
cargo bench --quiet -p orogen-core --bench erosion -- --json "$out/orogen.json" "${sizes[@]}" >&2
echo "== fastscapelib ==" >&2
"$venv/bin/python" rust/orogen-core/benches/fastscapelib_peer.py --json "$out/fastscape.json" "${sizes[@]}" >&2

"$venv/bin/python" - "$out/orogen.json" "$out/fastscape.json" <<'EOF'
import json, sys
ours = {r["size"]: r for r in json.load(open(sys.argv[1]))}
peer = {r["size"]: r for r in json.load(open(sys.argv[2]))}
print()
print("ms per iteration (Orogen phases; fastscapelib = uplift + update_routes + accumulate + erode)")
head = f"{'size':>6} {'steps':>5} {'receivers':>9} {'lakes':>8} {'accum':>7} {'SPL':>7} {'Orogen':>8} {'thermal':>8} {'fastscape':>10} {'speedup':>8}"
print(head)
print("-" * len(head))
for size in sorted(ours):
    o, p = ours[size], peer.get(size)
    fs_ms = p["ms_per_step"] if p else float("nan")
    print(f"{size:>6} {o['steps']:>5} {o['receivers']:>9.2f} {o['lakes']:>8.2f} {o['accumulate']:>7.2f} "
          f"{o['stream_power']:>7.2f} {o['total']:>8.2f} {o['thermal']:>8.2f} {fs_ms:>10.2f} "
          f"{fs_ms / o['total']:>7.1f}x")
EOF
