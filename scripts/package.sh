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
#
#   scripts/package.sh [--profile release|test]
#
# --profile release (default) builds optimised libraries and programs. --profile test reuses
# the test-profile build that scripts/check.sh has already made (tests/package/run.sh), so
# the packaging test compiles only the Windows side. Windows is cross-compiled with Debian's
# mingw-w64 (scripts/install-cross.sh installs it and Rust's x86_64-pc-windows-gnu target).
# Debug info is stripped from everything packaged. VERSION is the workspace's (Cargo.toml).
# macOS: not built here; see the README's Install section for why.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

profile=release
while [[ $# -gt 0 ]]; do
    case "$1" in
        --profile)
            profile=${2:-}
            shift 2 || { echo "package: --profile needs a value (release or test)" >&2; exit 2; }
            ;;
        --profile=*)
            profile=${1#--profile=}
            shift
            ;;
        *)
            echo "package: unknown option '$1' (expected --profile release|test)" >&2
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

WIN=x86_64-pc-windows-gnu
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
cargo build --locked --target "$WIN" -p orogen-cli -p orogen-godot "${cargo_profile[@]}"

lin="$target_dir/$out_dir"
win="$target_dir/$WIN/$out_dir"
for f in "$lin/liborogen.so" "$lin/orogen" "$win/orogen.dll" "$win/orogen.exe"; do
    [[ -f "$f" ]] || { echo "package: the build did not make $f" >&2; exit 1; }
done

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
cp LICENSE-MIT LICENSE-APACHE "$addon/addons/orogen/"
sed "s/@VERSION@/$version/g" packaging/addon-README.md >"$addon/addons/orogen/README.md"
# Every library the .gdextension names for Linux and Windows is in the zip.
for lib in $(sed -nE 's/^(linux|windows)\.[a-z.0-9_]+ *= *"res:\/\/(.*)"/\2/p' "$addon/addons/orogen/orogen.gdextension" | sort -u); do
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

echo "package: made, in dist/ ($profile profile):"
for f in "dist/orogen-addon-$version.zip" "dist/orogen-cli-$version-x86_64-linux.tar.gz" \
    "dist/orogen-cli-$version-x86_64-windows.zip"; do
    printf '  %-48s %6d KiB\n' "$f" $(($(stat -c %s "$f") / 1024))
done
