#!/usr/bin/env bash
# Runs every fuzz target in fuzz/fuzz_targets/ for SECONDS each (default 60) with cargo-fuzz
# on nightly Rust (libFuzzer), installing cargo-fuzz if it is missing.
#
#   scripts/fuzz.sh             every target, 60 s each
#   scripts/fuzz.sh 600 png     one target, 10 minutes
#
# Targets: recipe (RON text), set (--set lines), png, exr, raw (the decoders), and bake (a
# built-in recipe changed by --set lines, or RON text, cut to a 33² grid and a few iterations,
# run whole at 1 and 2 threads, one success in four baked into a folder under /dev/shm; see
# rust/orogen-fuzz/src/bake.rs).
#
# A run starts from the committed seeds (fuzz/corpus/<target>/) and keeps what it finds in
# fuzz/.work/corpus/<target>/ (not committed). A crash, hang (over 10 s) or allocation over
# 2 GiB stops that target and leaves its input in fuzz/artifacts/<target>/; reproduce it with
# `cargo +nightly fuzz run TARGET fuzz/artifacts/TARGET/FILE`. Once fixed, copy the input into
# fuzz/corpus/<target>/ so `cargo test -p orogen-fuzz` (stable) replays it from then on.
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for f in fuzz/fuzz_targets/*.rs; do
    targets+=("$(basename "$f" .rs)")
  done
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "==> installing cargo-fuzz"
  cargo install cargo-fuzz --locked || exit 1
fi

failed=()
for t in "${targets[@]}"; do
  echo "==> fuzz $t for ${seconds} s"
  work="fuzz/.work/corpus/$t"
  mkdir -p "$work" "fuzz/artifacts/$t"
  if ! (cd fuzz && cargo +nightly fuzz run "$t" "../$work" "corpus/$t" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
    -print_final_stats=1); then
    failed+=("$t")
  fi
done

echo
if [ "${#failed[@]}" -ne 0 ]; then
  echo "fuzz: failed: ${failed[*]} (inputs in fuzz/artifacts/)"
  exit 1
fi
echo "fuzz: ${#targets[@]} target(s), ${seconds} s each, no crash"
