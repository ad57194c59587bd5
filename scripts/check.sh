#!/usr/bin/env bash
# Orogen's one entry point to every check: formatting, lints, the Rust tests and the
# tests that run inside a real Godot 4.6. `.ci/run` calls this and nothing else.
#
#   scripts/check.sh            everything
#   OROGEN_SKIP_GODOT=1 ...     Rust only (for a quick local loop; CI never sets it)
set -uo pipefail
cd "$(dirname "$0")/.."

start=$SECONDS
phase_start=$SECONDS
phase_name=""
times=""
# Each phase's wall time, printed at the end (CI must stay well under 30 minutes).
log() {
  if [ -n "$phase_name" ]; then
    times+="$(printf '  %5d s  %s' $((SECONDS - phase_start)) "$phase_name")"$'\n'
  fi
  phase_name=$*
  phase_start=$SECONDS
  printf '\n==> %s\n' "$*"
}
failures=0
passed=0
failed=0
record() { # name, exit code
  if [ "$2" -ne 0 ]; then
    echo "FAILED: $1 (exit $2)"
    failures=$((failures + 1))
  fi
}

# Sums the `N passed; M failed` of every cargo test binary, and `name: N passed, M failed`
# lines of the Godot drivers, into the totals printed at the end.
count() {
  local file=$1
  while read -r p f; do
    passed=$((passed + p)); failed=$((failed + f))
  done < <(sed -nE 's/^test result: [a-zA-Z]+\. ([0-9]+) passed; ([0-9]+) failed.*/\1 \2/p' "$file")
  while read -r p f; do
    passed=$((passed + p)); failed=$((failed + f))
  done < <(sed -nE 's/^[a-z]+: ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/p' "$file")
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

log "cargo fmt --check"
cargo fmt --all -- --check
record "cargo fmt --check" $?

log "cargo clippy --all-targets -- -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings
record "cargo clippy" $?

log "Vulkan for the GPU tests (scripts/install-vulkan.sh)"
bash scripts/install-vulkan.sh
record "install Vulkan (lavapipe)" $?
# libwayland prints "XDG_RUNTIME_DIR is invalid" when lavapipe starts without one.
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}

log "cargo test --workspace"
cargo test --workspace --locked --no-fail-fast 2>&1 | tee "$tmp/cargo-test.log"
record "cargo test" "${PIPESTATUS[0]}"
count "$tmp/cargo-test.log"

if [ "${OROGEN_SKIP_GODOT:-0}" != "1" ]; then
  log "Godot 4.6 tests (tests/godot/run.sh)"
  bash tests/godot/run.sh 2>&1 | tee "$tmp/godot.log"
  record "Godot tests" "${PIPESTATUS[0]}"
  count "$tmp/godot.log"

  # The release packages (issue #40): built from the test-profile build above, the Windows
  # CLI under Wine against the Linux one, the addon zip in a new Godot project.
  log "Packages (tests/package/run.sh)"
  bash tests/package/run.sh 2>&1 | tee "$tmp/package.log"
  record "package tests" "${PIPESTATUS[0]}"
  count "$tmp/package.log"

  # Tiled bakes over 4 MPI ranks (issue #41): Open MPI installed by scripts/install-mpi.sh,
  # the CLI built with its `mpi` feature, every file equal to the whole-map bake's.
  log "MPI (tests/mpi/run.sh)"
  bash tests/mpi/run.sh 2>&1 | tee "$tmp/mpi.log"
  record "MPI tests" "${PIPESTATUS[0]}"
  count "$tmp/mpi.log"

  if [ -f tests/godot/editor_test.sh ]; then
    log "Godot editor plugin test (tests/godot/editor_test.sh)"
    bash tests/godot/editor_test.sh 2>&1 | tee "$tmp/editor.log"
    record "Godot editor test" "${PIPESTATUS[0]}"
    count "$tmp/editor.log"
  fi
fi

log "done"
echo
printf 'time per step:\n%s  %5d s  total\n' "$times" $((SECONDS - start))
if [ "$failures" -ne 0 ]; then
  echo "check: $failures step(s) failed"
  echo "check: $passed passed, $((failed > 0 ? failed : failures)) failed"
  exit 1
fi
echo "check: $passed passed, $failed failed"
