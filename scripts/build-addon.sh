#!/usr/bin/env bash
# Builds Orogen's GDExtension and lays out the addon for Godot:
#   - cargo build -p orogen-godot (debug; `--release` for an optimised build), into
#     $CARGO_TARGET_DIR when that is set, else target/
#   - copies the library into addons/orogen/bin/ (git-ignored), replacing it atomically so a
#     running editor never maps a half-written file
#   - links godot_project/addons/orogen to the top-level addons/orogen (one source only)
#
#   scripts/build-addon.sh [--release | --test-profile]
#
# `--test-profile` (used by the Godot tests) builds the whole workspace in Cargo's `test`
# profile: the dependencies then have the same profile and features as `cargo test
# --workspace` built them, so after the Rust tests only the extension itself is compiled
# (26 s) instead of godot-core and the rest again (about 10 minutes cold on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."

profile=debug
args=(-p orogen-godot)
case "${1:-}" in
    --release)
        profile=release
        args=(-p orogen-godot --release)
        ;;
    --test-profile)
        # The test profile writes into target/debug, like dev.
        args=(--workspace --profile test)
        ;;
    "") ;;
    *)
        echo "build-addon: unknown option '$1' (expected --release or --test-profile)" >&2
        exit 2
        ;;
esac
cargo build --locked "${args[@]}"

target_dir="${CARGO_TARGET_DIR:-target}"
lib=""
for name in liborogen.so liborogen.dylib orogen.dll; do
    if [[ -f "$target_dir/$profile/$name" ]]; then
        lib="$name"
        break
    fi
done
[[ -n "$lib" ]] || { echo "build-addon: no library in $target_dir/$profile" >&2; exit 1; }

mkdir -p addons/orogen/bin
cp "$target_dir/$profile/$lib" "addons/orogen/bin/.$lib.tmp"
mv -f "addons/orogen/bin/.$lib.tmp" "addons/orogen/bin/$lib"

mkdir -p godot_project/addons
if [[ ! -e godot_project/addons/orogen ]]; then
    ln -s ../../addons/orogen godot_project/addons/orogen
fi
echo "build-addon: addons/orogen/bin/$lib ($profile)"
