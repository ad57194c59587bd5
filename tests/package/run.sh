#!/usr/bin/env bash
# Tests of the release packages (issue #40), called by scripts/check.sh:
#
#   1. scripts/package.sh --profile test makes dist/'s addon zip and CLI archives from the
#      test-profile build check.sh has already made (only the Windows side is compiled here);
#   2. the Windows library exports `gdext_rust_init` (Godot's entry symbol) and, like the
#      Windows CLI, imports only DLLs every Windows has (no MinGW runtime DLL to ship);
#   3. the Windows CLI under Wine (Debian unstable's, scripts/install-wine.sh, in a root cached
#      outside the clone) bakes the default recipe and three other built-in ones to the same
#      bytes as the Linux CLI: every file, bake.json's timings aside;
#   4. the addon zip, unpacked into a new empty Godot project under target/ (not this
#      repository's), loads in headless Godot 4.6 (the editor's first scan with the plugin on,
#      then tests/package/addon_test.gd: TerrainWorld.generate() at 129², finite heights).
#
# The last line is `package: N passed, M failed`; exits non-zero on any failure.
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$REPO"

passed=0
failed=0
WORK="${CARGO_TARGET_DIR:-$REPO/target}/package-test"
# Baked by both CLIs at this size, so the step stays short; the maths is the same at any size.
RECIPES=(default strata dunes rills)
SIZE="size=(129,129)"

ok() { echo "PASS $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
check() { # what, command...
    local what=$1
    shift
    if "$@"; then ok "$what"; else bad "$what"; fi
}
finish() {
    echo "package: took $SECONDS s"
    echo "package: $passed passed, $failed failed"
    [[ $failed -eq 0 ]]
    exit $?
}

# bake.json with its timings ("seconds", "total_seconds") blanked: the only values in it that
# differ between two runs of one recipe (it holds no output path).
untimed() { sed -E 's/("(total_)?seconds": )[-0-9.eE+]+/\1T/' "$1"; }
# Two bakes hold the same file names, and the same bytes in each (bake.json untimed).
same_bakes() { # dir, dir
    local a=$1 b=$2 f diffs=0
    if ! diff <(cd "$a" && find . -type f | LC_ALL=C sort) <(cd "$b" && find . -type f | LC_ALL=C sort); then
        echo "  the two bakes hold different files"
        return 1
    fi
    while IFS= read -r f; do
        if [[ "$f" == ./bake.json ]]; then
            if ! diff <(untimed "$a/$f") <(untimed "$b/$f") >"$WORK/bake-json.diff"; then
                echo "  $f differs beyond its timings:"
                head -n 10 "$WORK/bake-json.diff"
                diffs=$((diffs + 1))
            fi
        elif ! cmp "$a/$f" "$b/$f" >/dev/null 2>&1; then
            echo "  $f differs: $(cmp "$a/$f" "$b/$f" 2>&1 | head -n 1)"
            diffs=$((diffs + 1))
        fi
    done < <(cd "$a" && find . -type f | LC_ALL=C sort)
    [[ $diffs -eq 0 ]]
}

echo "==> tools: mingw-w64, Wine, Godot (at ${SECONDS} s)"
bash scripts/install-cross.sh || { bad "scripts/install-cross.sh"; finish; }
bash scripts/install-wine.sh || bad "scripts/install-wine.sh installs Wine"
bash scripts/install-godot.sh || bad "scripts/install-godot.sh installs Godot"

echo "==> scripts/package.sh --profile test (at ${SECONDS} s)"
rm -rf "$WORK"
mkdir -p "$WORK"
if ! bash scripts/package.sh --profile test >"$WORK/package.log" 2>&1; then
    tail -n 40 "$WORK/package.log"
    bad "scripts/package.sh --profile test makes the packages"
    finish
fi
tail -n 4 "$WORK/package.log"
version=$(sed -nE 's/^package: Orogen ([^,]+),.*/\1/p' "$WORK/package.log")
addon_zip="dist/orogen-addon-$version.zip"
linux_tgz="dist/orogen-cli-$version-x86_64-linux.tar.gz"
windows_zip="dist/orogen-cli-$version-x86_64-windows.zip"
for f in "$addon_zip" "$linux_tgz" "$windows_zip"; do
    check "$f is made" test -s "$f"
done

mkdir -p "$WORK/addon" "$WORK/cli"
unzip -q "$addon_zip" -d "$WORK/addon" || bad "$addon_zip unzips"
tar -xzf "$linux_tgz" -C "$WORK/cli" || bad "$linux_tgz unpacks"
unzip -q "$windows_zip" -d "$WORK/cli" || bad "$windows_zip unzips"
lin_cli="$WORK/cli/orogen-cli-$version-x86_64-linux/orogen"
win_cli="$WORK/cli/orogen-cli-$version-x86_64-windows/orogen.exe"
dll="$WORK/addon/addons/orogen/bin/orogen.dll"

# What the zip holds: the addon and nothing of the repository's tests or build output.
listing=$(unzip -Z1 "$addon_zip")
expected_in_zip() {
    local f
    for f in addons/orogen/orogen.gdextension addons/orogen/plugin.cfg addons/orogen/plugin.gd \
        addons/orogen/bin/liborogen.so addons/orogen/bin/orogen.dll addons/orogen/LICENSE-MIT \
        addons/orogen/LICENSE-APACHE addons/orogen/README.md \
        addons/orogen/editor/icons/terrain_world.svg; do
        grep -qx "$f" <<<"$listing" || { echo "  missing: $f"; return 1; }
    done
    if grep -vE '^addons/(orogen/.*)?$' <<<"$listing" | grep -q .; then
        echo "  outside addons/orogen/:"; grep -vE '^addons/(orogen/.*)?$' <<<"$listing" | head
        return 1
    fi
    if grep -E '(^|/)(tests?|\.godot)/|\.tmp$|\.import$' <<<"$listing" | grep -q .; then
        echo "  junk:"; grep -E '(^|/)(tests?|\.godot)/|\.tmp$|\.import$' <<<"$listing" | head
        return 1
    fi
}
check "the addon zip holds addons/orogen/ with both libraries, licences and README, and no junk" expected_in_zip
for f in "$lin_cli" "$win_cli" "$(dirname "$lin_cli")/LICENSE-MIT" "$(dirname "$win_cli")/LICENSE-APACHE" "$(dirname "$win_cli")/README.md"; do
    check "the CLI archives hold $(basename "$(dirname "$f")")/$(basename "$f")" test -s "$f"
done
not_debug() { ! readelf -S "$1" 2>/dev/null | grep -q '\.debug_info'; }
check "the packaged Linux library and CLI carry no debug info" eval 'not_debug "$WORK/addon/addons/orogen/bin/liborogen.so" && not_debug "$lin_cli"'
check "the Linux CLI prints the workspace version" eval '[[ "$("$lin_cli" --version)" == "orogen $version" ]]'

echo "==> the Windows library and program (objdump) (at ${SECONDS} s)"
exports_entry() {
    x86_64-w64-mingw32-objdump -p "$dll" >"$WORK/dll.txt" || return 1
    # The export table lists each name after its ordinal: `[  12] +base[  13] 0000 gdext_rust_init`.
    sed -n '/^\[Ordinal\/Name Pointer\] Table/,/^$/p' "$WORK/dll.txt" | grep -qw gdext_rust_init
}
check "orogen.dll exports gdext_rust_init" exports_entry
# DLLs a Windows 10 or later install always has; a MinGW runtime DLL (libgcc_s_seh-1,
# libwinpthread-1) would have to ship beside the library, or it would not load.
system_dlls_only() { # pe file
    local imports odd
    imports=$(x86_64-w64-mingw32-objdump -p "$1" | sed -nE 's/^\s*DLL Name: (.*)$/\1/p' | tr 'A-Z' 'a-z' | sort -u)
    [[ -n "$imports" ]] || return 1
    odd=$(grep -vE '^(kernel32|ntdll|user32|advapi32|bcrypt|bcryptprimitives|ws2_32|userenv|msvcrt|ucrtbase|shell32|ole32|oleaut32|secur32|crypt32|dbghelp|synchronization|api-ms-win-[a-z0-9-]+)\.dll$' <<<"$imports")
    if [[ -n "$odd" ]]; then echo "  $(basename "$1") imports: $odd"; return 1; fi
}
check "orogen.dll imports only Windows' own DLLs" system_dlls_only "$dll"
check "orogen.exe imports only Windows' own DLLs" system_dlls_only "$win_cli"

echo "==> the Windows CLI under Wine against the Linux CLI (at ${SECONDS} s)"
WINE_ROOT="${OROGEN_WINE_ROOT:-/var/cache/orogen/wine-sid}"
wine_prog=$(bash scripts/install-wine.sh --loader 2>/dev/null)
if [[ -n "$wine_prog" ]]; then
    # Wine runs chrooted in its root (it needs that root's newer C library, and starts its
    # wineserver and preloader from there); the program, its prefix and its bakes live in a
    # folder of the root's /tmp made for this run.
    inside=$(mktemp -d "$WINE_ROOT/tmp/orogen-package.XXXXXX")
    trap cleanup_wine EXIT
    rel="/tmp/$(basename "$inside")"
    # Wine finds its own files through /proc/self; mount the root's /proc for this run if
    # nothing has (and unmount it after).
    mounted_proc=0
    if [[ ! -e "$WINE_ROOT/proc/self" ]]; then
        mount -t proc proc "$WINE_ROOT/proc" && mounted_proc=1
    fi
    cleanup_wine() {
        rm -rf --one-file-system "$inside"
        if [[ $mounted_proc -eq 1 ]]; then umount "$WINE_ROOT/proc" || true; fi
    }
    cp "$win_cli" "$inside/orogen.exe"
    chroot_prog=$(command -v chroot)
    wine() { # args... (run in $rel)
        env -i PATH=/usr/bin:/bin HOME="$rel" WINEPREFIX="$rel/prefix" WINEDEBUG=-all \
            WINEDLLOVERRIDES="mscoree,mshtml=" LANG=C.UTF-8 XDG_RUNTIME_DIR="$rel" \
            timeout 600 "$chroot_prog" "$WINE_ROOT" /bin/sh -c 'cd "$0" && exec "$@"' "$rel" "$wine_prog" "$@"
    }
    t0=$SECONDS
    if wine "$rel/orogen.exe" --version >"$WORK/wine-version.txt" 2>"$WORK/wine-version.err"; then
        ok "orogen.exe runs under Wine ($(tr -d '\r' <"$WORK/wine-version.txt"), $((SECONDS - t0)) s with the prefix's creation)"
        check "orogen.exe prints the workspace version" \
            eval '[[ "$(tr -d "\r" <"$WORK/wine-version.txt")" == "orogen $version" ]]'
        for r in "${RECIPES[@]}"; do
            t0=$SECONDS
            if ! "$lin_cli" bake "$r" --out "$WORK/linux/$r" --set "$SIZE" --threads 2 --quiet \
                >"$WORK/linux-$r.log" 2>&1; then
                tail -n 5 "$WORK/linux-$r.log"
                bad "the Linux CLI bakes $r"
                continue
            fi
            t1=$SECONDS
            if ! wine "$rel/orogen.exe" bake "$r" --out "out-$r" --set "$SIZE" --threads 2 --quiet \
                >"$WORK/windows-$r.log" 2>&1; then
                tail -n 5 "$WORK/windows-$r.log"
                bad "the Windows CLI bakes $r under Wine"
                continue
            fi
            echo "  measured: $r at 129²: Linux $((t1 - t0)) s, Wine $((SECONDS - t1)) s"
            check "$r: the Windows CLI writes the same bytes as the Linux CLI" \
                same_bakes "$WORK/linux/$r" "$inside/out-$r"
        done
    else
        cat "$WORK/wine-version.err" | tail -n 20
        bad "orogen.exe runs under Wine"
    fi
else
    bad "Wine is installed in $WINE_ROOT"
fi

echo "==> the addon zip in a new Godot project (at ${SECONDS} s)"
P="$WORK/project"
mkdir -p "$P"
cp -r "$WORK/addon/addons" "$P/"
cp tests/package/addon_test.gd "$P/"
cat >"$P/project.godot" <<'GODOT'
config_version=5

[application]

config/name="Orogen package test"

[editor_plugins]

enabled=PackedStringArray("res://addons/orogen/plugin.cfg")
GODOT
GODOT=(bash scripts/godot)
# As a user's first editor start would: the editor scans the project, registers the extension
# (.godot/extension_list.cfg) and loads the plugin.
timeout 300 "${GODOT[@]}" --headless --path "$P" --import >"$WORK/godot-import.log" 2>&1
check "the editor's first scan registers the extension" \
    grep -qs 'res://addons/orogen/orogen.gdextension' "$P/.godot/extension_list.cfg"
errors=$(grep -E 'SCRIPT ERROR|Parse Error|ERROR:|panicked' "$WORK/godot-import.log" | head -n 10)
[[ -z "$errors" ]] || echo "$errors"
check "the editor loads the addon and its plugin without an error line" test -z "$errors"
timeout 300 "${GODOT[@]}" --headless --path "$P" -s res://addon_test.gd >"$WORK/godot-test.log" 2>&1
grep -E '^(PASS|FAIL) |^  measured' "$WORK/godot-test.log"
line=$(grep -E '^RESULT passed=[0-9]+ failed=[0-9]+' "$WORK/godot-test.log" | tail -n 1)
if [[ -z "$line" ]]; then
    tail -n 30 "$WORK/godot-test.log"
    bad "addon_test.gd gives a result (crashed or timed out)"
else
    passed=$((passed + $(sed -E 's/.*passed=([0-9]+).*/\1/' <<<"$line")))
    failed=$((failed + $(sed -E 's/.*failed=([0-9]+).*/\1/' <<<"$line")))
    errors=$(grep -E 'SCRIPT ERROR|Parse Error|ERROR:|panicked' "$WORK/godot-test.log" | head -n 10)
    [[ -z "$errors" ]] || echo "$errors"
    check "the addon test runs without an engine error line" test -z "$errors"
fi

finish
