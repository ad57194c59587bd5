#!/usr/bin/env python3
"""fastscapelib 0.3 peer of `benches/erosion.rs`: the same grid, parameters, initial terrain
and number of steps, timed per step (uplift + flow_graph.update_routes + accumulate + SPL
erode), printed as ms/step.

Usage: fastscapelib_peer.py [--json OUT.json] [SIZE ...]   (default 256 512 1024 2048)
Run through `scripts/bench-vs-fastscapelib.sh`, which installs fastscapelib in a venv.
"""

import json
import sys
import time

import fastscapelib as fs
import numpy as np

# Keep in step with benches/erosion.rs.
CELL = 100.0  # m
UPLIFT = 1e-3  # m/yr, interior nodes; fixed-value borders stay at 0
K = 5e-6  # m^(1-2m)/yr
M = 0.5
N = 1.0
DT = 5e4  # yr
SEED = 0x0E05


def steps_for(size):
    """Steps timed at each size (the Rust bench uses the same table)."""
    return {256: 20, 512: 20, 1024: 10}.get(size, 5)


def initial_terrain(size):
    """Uniform noise in [0, 1) m from a SplitMix64 hash of the cell index (bit-identical
    to `initial_terrain` in benches/erosion.rs)."""
    with np.errstate(over="ignore"):
        x = np.arange(size * size, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        x += np.uint64(SEED)
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    h = (x >> np.uint64(40)).astype(np.float64) / float(1 << 24)
    return h.reshape(size, size)


def run(size):
    grid = fs.RasterGrid([size, size], [CELL, CELL], fs.NodeStatus.FIXED_VALUE)
    flow_graph = fs.FlowGraph(grid, [fs.SingleFlowRouter(), fs.MSTSinkResolver()])
    eroder = fs.SPLEroder(flow_graph, k_coef=K, area_exp=M, slope_exp=N, tolerance=1e-5)
    uplift = np.full((size, size), UPLIFT)
    uplift[[0, -1], :] = 0.0
    uplift[:, [0, -1]] = 0.0
    elevation = initial_terrain(size)
    steps = steps_for(size)
    start = time.perf_counter()
    for _ in range(steps):
        uplifted = elevation + DT * uplift
        flow_graph.update_routes(uplifted)
        area = flow_graph.accumulate(1.0)
        erosion = eroder.erode(uplifted, area, DT)
        elevation = uplifted - erosion
    ms = (time.perf_counter() - start) * 1e3 / steps
    return {"size": size, "steps": steps, "ms_per_step": ms, "max_height": float(elevation.max())}


def main(argv):
    out = None
    if "--json" in argv:
        i = argv.index("--json")
        out = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    sizes = [int(a) for a in argv] or [256, 512, 1024, 2048]
    print(f"fastscapelib {fs.__version__}: ms per step (uplift + routes + accumulate + SPL)")
    print(f"{'size':>6} {'steps':>6} {'ms/step':>10} {'max h (m)':>10}")
    results = []
    for size in sizes:
        r = run(size)
        results.append(r)
        print(f"{size:>6} {r['steps']:>6} {r['ms_per_step']:>10.1f} {r['max_height']:>10.1f}", flush=True)
    if out:
        with open(out, "w") as f:
            json.dump(results, f)


if __name__ == "__main__":
    main(sys.argv[1:])
