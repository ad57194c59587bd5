#!/usr/bin/env bash
# Makes Orogen's release packages under dist/ (git-ignored), on this Linux machine:
#
#   dist/orogen-addon-VERSION.zip               addons/orogen/ as the Godot Asset Library
#                                               expects: the editor plugin and runtime files,
#                                               orogen.gdextension, bin/liborogen.so (Linux
#                                               x86_64) and bin/orogen.dll (Windows x86_64),
#                                               icons, LICENSE-MIT, LICENSE-APACHE, README.md
#   dist/orogen-cli-VERSION-x86_64-linux.tar.gz the command-line baker, licences, README
#   dist/orogen-cli-VERSION-x86_64-windows.zip  the same for Windows (orogen.exe)
#   dist/orogen-cli-VERSION-macos.tar.gz        the same for macOS (arm64 and x86_64 in one
#                                               universal program)
#
#   scripts/package.sh [--profile release|test] [--macos|--no-macos]
#
# macOS (the addon's bin/liborogen.dylib and the macOS CLI, each one universal arm64 + x86_64
# file, signed ad hoc) is built with Zig through cargo-zigbuild (scripts/install-macos-cross.sh
# installs both from PyPI); by default with the release profile only, since it doubles the
# build. Nothing here can load it: no Mac is at hand. What is checked: both slices are there,
# each exports `gdext_rust_init`, the arm64 slice carries its code signature, and only
# Apple's system libraries are imported.
#
# --profile release (default) builds optimised libraries and programs. --profile test reuses
# the test-profile build that scripts/check.sh has already made (tests/package/run.sh), so
# the packaging test compiles only the Windows side. Windows is cross-compiled with Debian's
# mingw-w64 (scripts/install-cross.sh installs it and Rust's x86_64-pc-windows-gnu target).
# Debug info is stripped from everything packaged. VERSION is the workspace's (Cargo.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

profile=release
macos=
while [[ $# -gt 0 ]]; do
    case "$1" in
        --macos) macos=yes; shift ;;
        --no-macos) macos=no; shift ;;
        --profile)
            profile=${2:-}
            shift 2 || { echo "package: --profile needs a value (release or test)" >&2; exit 2; }
            ;;
        --profile=*)
            profile=${1#--profile=}
            shift
            ;;
        *)
            echo "package: unknown option '$1' (expected --profile release|test, --macos, --no-macos)" >&2
            exit 2
            ;;
    esac
done
case "$profile" in
    release) cargo_profile=(--release); out_dir=release ;;
    # The test profile writes into target/.../debug, like dev.
    test) cargo_profile=(--profile test); out_dir=debug ;;
    *) echo "package: unknown profile '$profile' (expected release or test)" >&2; exit 2 ;;
esac

[[ -n "$macos" ]] || { [[ "$profile" == release ]] && macos=yes || macos=no; }
WIN=x86_64-pc-windows-gnu
MAC=universal2-apple-darwin
target_dir="${CARGO_TARGET_DIR:-$REPO/target}"
version=$(cargo pkgid --offline -p orogen-cli 2>/dev/null || cargo pkgid -p orogen-cli)
version=${version##*[@#]}
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || { echo "package: cannot read the version from Cargo ('$version')" >&2; exit 1; }
echo "package: Orogen $version, $profile profile"

bash scripts/install-cross.sh

# Linux. The test profile builds the whole workspace, as build-addon.sh --test-profile and
# cargo test do, so Cargo reuses their dependencies instead of resolving other features.
if [[ "$profile" == test ]]; then
    cargo build --locked --workspace "${cargo_profile[@]}"
else
    cargo build --locked -p orogen-cli -p orogen-godot "${cargo_profile[@]}"
fi
# The Windows and macOS CLIs and extensions are built CPU only for now (no `gpu` feature:
# no orogen-gpu, so `device: Gpu` is an error there and `Auto` runs on the CPU): wgpu's DX12
# and Metal backends have not been cross-built or tested here yet, and compiling wgpu for
# Windows would add minutes to every CI run. The extension keeps its `docs` feature.
# With --profile test, the Windows side is built in the lighter `cross-test` profile
# (Cargo.toml): it is compiled from nothing on every CI run.
win_profile=("${cargo_profile[@]}")
win_dir=$out_dir
if [[ "$profile" == test ]]; then
    win_profile=(--profile cross-test)
    win_dir=cross-test
fi
cargo build --locked --target "$WIN" -p orogen-godot --no-default-features --features docs "${win_profile[@]}"
cargo build --locked --target "$WIN" -p orogen-cli --no-default-features "${win_profile[@]}"

if [[ "$macos" == yes ]]; then
    zig_bin=$(bash scripts/install-macos-cross.sh)
    # Symbols stripped by the linker, before Zig signs the arm64 slice (stripping after
    # would break the signature).
    strip_config="profile.$([[ $profile == test ]] && echo test || echo release).strip=\"symbols\""
    PATH="$zig_bin:$PATH" cargo zigbuild --locked --target "$MAC" -p orogen-godot \
        --no-default-features --features docs "${cargo_profile[@]}" --config "$strip_config"
    PATH="$zig_bin:$PATH" cargo zigbuild --locked --target "$MAC" -p orogen-cli --no-default-features \
        "${cargo_profile[@]}" --config "$strip_config"
fi

lin="$target_dir/$out_dir"
win="$target_dir/$WIN/$win_dir"
for f in "$lin/liborogen.so" "$lin/orogen" "$win/orogen.dll" "$win/orogen.exe"; do
    [[ -f "$f" ]] || { echo "package: the build did not make $f" >&2; exit 1; }
done

mac="$target_dir/$MAC/$out_dir"
if [[ "$macos" == yes ]]; then
    for f in "$mac/liborogen.dylib" "$mac/orogen"; do
        [[ -f "$f" ]] || { echo "package: the build did not make $f" >&2; exit 1; }
        for arch in arm64 x86_64; do
            llvm-objdump --macho --arch="$arch" --private-headers "$f" >/dev/null 2>&1 ||
                { echo "package: $f has no $arch slice" >&2; exit 1; }
        done
        llvm-objdump --macho --arch=arm64 --private-headers "$f" | grep -q LC_CODE_SIGNATURE ||
            { echo "package: the arm64 slice of $f is not signed" >&2; exit 1; }
        bad=$(llvm-objdump --macho --dylibs-used --arch=all "$f" | sed -n 's/^[[:space:]]\+\(\/[^ ]*\) (.*/\1/p' |
            grep -v -e '^/usr/lib/' -e '^/System/Library/' -e "liborogen.dylib\$" || true)
        [[ -z "$bad" ]] || { echo "package: $f imports libraries a Mac lacks: $bad" >&2; exit 1; }
    done
    for arch in arm64 x86_64; do
        llvm-nm --arch="$arch" -gU "$mac/liborogen.dylib" | grep -q ' _gdext_rust_init$' ||
            { echo "package: the $arch slice of liborogen.dylib does not export gdext_rust_init" >&2; exit 1; }
    done
fi

built=$("$lin/orogen" --version)
[[ "$built" == "orogen $version" ]] || {
    echo "package: the CLI says '$built', the workspace version is $version" >&2
    exit 1
}

stage="$target_dir/package"
rm -rf "$stage"
mkdir -p "$stage" dist

# Every archive lists its files in name order with one timestamp (the last commit's), so
# the same sources give the same archives.
stamp=$(git log -1 --format=%ct 2>/dev/null || echo 0)
normalise() { # dir
    find "$1" -exec touch -h -d "@$stamp" {} +
    find "$1" -type d -exec chmod 755 {} +
    find "$1" -type f -exec chmod u+rw,go+r,go-w {} +
}
make_zip() { # zip file, dir to zip from, entries...
    local zipfile=$1 dir=$2
    shift 2
    rm -f "$zipfile"
    (cd "$dir" && find "$@" -print | LC_ALL=C sort | zip -q -X -D "$zipfile" -@)
}

# --- the addon: the tracked files of addons/orogen (no build output, no editor caches) ---
addon="$stage/addon"
mkdir -p "$addon/addons/orogen/bin"
git ls-files -z addons/orogen | while IFS= read -r -d '' f; do
    mkdir -p "$addon/$(dirname "$f")"
    cp "$f" "$addon/$f"
done
# The shipped .gdextension names only the libraries the zip holds (plus the macOS slot, for a
# library built on a Mac): drop Linux arm64, which a source build makes on an arm64 machine.
grep -v '^linux\.[a-z]*\.arm64' addons/orogen/orogen.gdextension >"$addon/addons/orogen/orogen.gdextension"
strip --strip-unneeded -o "$addon/addons/orogen/bin/liborogen.so" "$lin/liborogen.so"
x86_64-w64-mingw32-strip --strip-unneeded -o "$addon/addons/orogen/bin/orogen.dll" "$win/orogen.dll"
[[ "$macos" == yes ]] && cp "$mac/liborogen.dylib" "$addon/addons/orogen/bin/liborogen.dylib"
cp LICENSE-MIT LICENSE-APACHE "$addon/addons/orogen/"
sed "s/@VERSION@/$version/g" packaging/addon-README.md >"$addon/addons/orogen/README.md"
# Every library the .gdextension names for Linux and Windows (and macOS when built) is in
# the zip.
platforms="linux|windows$([[ $macos == yes ]] && echo '|macos' || true)"
for lib in $(sed -nE "s/^($platforms)\.[a-z.0-9_]+ *= *\"res:\/\/(.*)\"/\2/p" "$addon/addons/orogen/orogen.gdextension" | sort -u); do
    [[ -f "$addon/$lib" ]] || { echo "package: orogen.gdextension names $lib, which is not packaged" >&2; exit 1; }
done
normalise "$addon"
make_zip "$REPO/dist/orogen-addon-$version.zip" "$addon" addons

# --- the command-line baker, per platform ---
cli_dir() { # name → a staged folder with the licences and the README
    local d="$stage/$1"
    mkdir -p "$d"
    cp LICENSE-MIT LICENSE-APACHE "$d/"
    sed "s/@VERSION@/$version/g" packaging/cli-README.md >"$d/README.md"
    echo "$d"
}
name="orogen-cli-$version-x86_64-linux"
d=$(cli_dir "$name")
strip -o "$d/orogen" "$lin/orogen"
normalise "$d"
rm -f "dist/$name.tar.gz"
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$stamp" -cf - "$name" |
    gzip -n -9 >"dist/$name.tar.gz"

name="orogen-cli-$version-x86_64-windows"
d=$(cli_dir "$name")
x86_64-w64-mingw32-strip -o "$d/orogen.exe" "$win/orogen.exe"
normalise "$d"
make_zip "$REPO/dist/$name.zip" "$stage" "$name"

made=("dist/orogen-addon-$version.zip" "dist/orogen-cli-$version-x86_64-linux.tar.gz"
    "dist/orogen-cli-$version-x86_64-windows.zip")
if [[ "$macos" == yes ]]; then
    name="orogen-cli-$version-macos"
    d=$(cli_dir "$name")
    cp "$mac/orogen" "$d/orogen"
    normalise "$d"
    rm -f "dist/$name.tar.gz"
    tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$stamp" -cf - "$name" |
        gzip -n -9 >"dist/$name.tar.gz"
    made+=("dist/$name.tar.gz")
else
    rm -f "dist/orogen-cli-$version-macos.tar.gz"
fi

echo "package: made, in dist/ ($profile profile$([[ $macos == yes ]] && echo ', with macOS')):"
for f in "${made[@]}"; do
    printf '  %-48s %6d KiB\n' "$f" $(($(stat -c %s "$f") / 1024))
done
