"""fastflowx's stream-power step, timed, from the starts Orogen's GPU bench dumped.

Run by scripts/gpu-side-by-side.sh on the lent GPU machine:
    python3 fastflowx_step.py START_DIR STEPS SIZE...
For each size, reads START_DIR/start-SIZE.f32 (Orogen's start, little-endian f32), runs
2 warm-up steps and STEPS timed steps of issue #42's parameters (dx 100 m, dt 1e4 yr,
K 2e-4, m 0.5, n 1, U 1e-3 m/yr, carved lakes, edges fixed), and prints a Markdown row:
size, ms per step, mean height after the warm-up and timed steps. fastflowx (Inria's
non-commercial research licence) is only run here, never copied into Orogen.
"""
import sys
import time

import torch
import fastflow as ff
from fastflow import ops

DX, DT, K, M, U = 100.0, 1e4, 2e-4, 0.5, 1e-3


def main():
    start_dir, steps, sizes = sys.argv[1], int(sys.argv[2]), [int(s) for s in sys.argv[3:]]
    print(f"fastflowx on {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    print()
    print("| grid | fastflowx ms/step | mean h |")
    print("|---|---|---|")
    for n in sizes:
        raw = bytearray(open(f"{start_dir}/start-{n}.f32", "rb").read())
        z = torch.frombuffer(raw, dtype=torch.float32).reshape(n, n).to("cuda")
        bound = ff.default_boundary(n).to("cuda")
        b = bound.reshape(-1)
        uplift = torch.full((n, n), U, device="cuda")
        uplift[bound] = 0.0

        def step(z):
            zu = z + DT * uplift
            rcv, w = ff.flow_receivers(zu, bound)
            rcv, w = ff.route_depressions(zu, rcv, w, boundary=bound, method="carve")
            drain = ops.drainage_area_from_tree(rcv, w, dx=DX).reshape(-1)
            qs = torch.zeros(n * n, device="cuda")
            return ops.erode_deposit(
                zu.reshape(-1).clone(), b, rcv, drain, qs, DT, DX, K, 0.0, 0.0, 0.0, M
            ).reshape(n, n)

        for _ in range(2):
            z = step(z)
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(steps):
            z = step(z)
        torch.cuda.synchronize()
        ms = (time.perf_counter() - t) * 1e3 / steps
        print(f"| {n}² | {ms:.2f} | {z.double().mean().item():.3f} |", flush=True)


if __name__ == "__main__":
    main()
