#!/usr/bin/env bash
# Issue #42's measurement, on one GPU machine and in one run: fastflowx's stream-power step,
# Orogen's GPU step and Orogen's CPU step (all cores), from the same start heights and
# parameters (dx 100 m, dt 1e4 yr, K 2e-4, m 0.5, n 1, U 1e-3 m/yr, carved lakes).
#
#   scripts/gpu-side-by-side.sh BENCH FASTFLOWX_TAR [SIZE...]
#
# BENCH: Orogen's GPU bench built in release (`cargo build --release -p orogen-gpu
# --example bench`, target/release/examples/bench). FASTFLOWX_TAR: fastflowx-0.1.0.tar.gz
# (../shared/peers/; built here with nvcc and the machine's PyTorch, without its -flto, as
# ../shared/peers/gpu-side-by-side.md says). Sizes default to 1024 2048 4096 8192.
# Needs a Vulkan loader and the NVIDIA ICD for Orogen, CUDA and PyTorch for fastflowx.
set -euo pipefail
bench=$(realpath "$1")
tarball=$(realpath "$2")
shift 2
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(1024 2048 4096 8192)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== building fastflowx"
(
    cd "$work"
    tar xzf "$tarball"
    cd fastflowx-*/
    sed -i 's/"-O2", "-flto", "-ffast-math"/"-O2", "-ffast-math"/' setup.py
    TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0} MAX_JOBS=${MAX_JOBS:-16} \
        python3 -m pip install -q --no-build-isolation --no-deps --no-index \
        --target "$work/site" . > "$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 1; }
)

echo "== Orogen: GPU and CPU (20 steps after 2 warm-up)"
"$bench" "${sizes[@]}" --steps 20 --start uniform --lakes carve --dump "$work"
echo
echo "== fastflowx (20 steps after 2 warm-up, from Orogen's starts)"
PYTHONPATH="$work/site" python3 "$here/lib/fastflowx_step.py" "$work" 20 "${sizes[@]}"
