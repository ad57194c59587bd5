#!/usr/bin/env bash
# The Orogen editor plugin's test, in a real Godot 4.6 editor.
#
#   tests/godot/editor_test.sh                 headless checks (+ a screenshot if Xvfb works)
#   OROGEN_EDITOR_SCREENSHOT=0 tests/godot/...  skip the screenshot
#
# It builds the extension (scripts/build-addon.sh), lays out a scratch copy of
# godot_project under target/editor-test/ (addons/orogen linked in, the plugin enabled, the
# dock's self-test registered as a tool autoload, every GDScript warning an error, untyped
# declarations included) and runs:
#   1. `godot --editor --headless --quit-after N`: the editor starts with the plugin and the
#      extension and prints no SCRIPT ERROR / Parse Error / ERROR:;
#   2. the dock's self-test (godot_project/tests/dock_self_test.gd; test code, not shipped in
#      the addon) in the headless editor: it opens a TerrainWorld scene, selects it and drives
#      the dock (recipe form, stage edits with undo, Generate → one undoable action, Cancel, a
#      failing run, Bake, RON import/export, recipe replacement and the dock's signal
#      connections, plugin disable/enable), with its output also scanned for errors;
#   3. the editor on a virtual display (Xvfb, Vulkan through lavapipe), a TerrainWorld generated
#      and selected, and `xwd -root | convert` of the dock as it opens, at its stages, at its
#      materials, at its strata and at its maps, with the preset gallery open and at the terrain
#      and uplift form, into
#      test-artifacts/editor-screenshot-{top,gallery,form,stages,materials,strata,maps,planet}.png.
# It ends with `editor: N passed, M failed` and exits non-zero if anything failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "  ok   $*"; }
fail() { failed=$((failed + 1)); echo "  FAIL $*"; }
finish() {
    echo "editor: $passed passed, $failed failed"
    [[ $failed -eq 0 ]]
    exit $?
}

ROOT="${OROGEN_GODOT_ROOT:-/var/cache/orogen/godot-sid}"
if [[ ! -x "$ROOT/usr/bin/godot" ]]; then
    bash scripts/install-godot.sh || { fail "Godot 4.6 installs (scripts/install-godot.sh)"; finish; }
fi
GODOT=(bash scripts/godot)
version=$("${GODOT[@]}" --headless --version 2>/dev/null | tail -n 1)
echo "editor_test: Godot $version"

# The extension, built and laid out the same way as for the runtime tests
# (scripts/build-addon.sh --test-profile: the workspace in the test profile, library copied into addons/orogen/bin).
echo "editor_test: scripts/build-addon.sh"
mkdir -p target
if ! bash scripts/build-addon.sh --test-profile >target/editor-test-build.log 2>&1; then
    tail -n 30 target/editor-test-build.log
    fail "the extension builds (scripts/build-addon.sh)"
    finish
fi

# A scratch project: godot_project's files, addons/orogen linked in, the plugin enabled.
WORK="$REPO/target/editor-test"
PROJ="$WORK/project"
ART="$REPO/test-artifacts"
rm -rf "$WORK"
mkdir -p "$PROJ/addons" "$ART"
if [[ -d godot_project ]]; then
    (cd godot_project && find . -mindepth 1 -maxdepth 1 ! -name .godot ! -name addons -exec cp -r {} "$PROJ/" \;)
fi
ln -s "$REPO/addons/orogen" "$PROJ/addons/orogen"
# HTerrain (Zylann's heightmap plugin), for the self-test's Send to HTerrain: copied (the editor
# writes .import files beside its assets) from $OROGEN_HTERRAIN or ../shared/vendor/hterrain
# beside the repository, as tests/godot/run.sh finds it. Without it that check is skipped with
# a note (as with OROGEN_HTERRAIN=none). Its plugin is not enabled (the dock only needs its node
# and data scripts).
HTERRAIN_SRC=""
[[ ${OROGEN_HTERRAIN:-} == none ]] || for c in "${OROGEN_HTERRAIN:-}" "$REPO/../shared/vendor/hterrain"; do
    if [[ -n $c && -d $c/addons/zylann.hterrain ]]; then
        HTERRAIN_SRC=$c
        break
    fi
done
if [[ -n $HTERRAIN_SRC ]]; then
    cp -r "$HTERRAIN_SRC/addons/zylann.hterrain" "$PROJ/addons/"
    echo "editor_test: HTerrain copied in from $HTERRAIN_SRC"
else
    echo "editor_test: note: no HTerrain (\$OROGEN_HTERRAIN or ../shared/vendor/hterrain): Send to HTerrain is not tried"
fi
if [[ ! -f $PROJ/project.godot ]]; then
    printf 'config_version=5\n\n[application]\n\nconfig/name="Orogen editor test"\n' >"$PROJ/project.godot"
fi
if ! grep -q 'res://addons/orogen/plugin.cfg' "$PROJ/project.godot"; then
    if [[ -f godot_project/project.godot ]]; then
        echo "editor_test: note: godot_project/project.godot does not enable the plugin; enabling it in the scratch copy"
    fi
    printf '\n[editor_plugins]\n\nenabled=PackedStringArray("res://addons/orogen/plugin.cfg")\n' >>"$PROJ/project.godot"
fi
# The dock's self-test is test code, not part of the addon: a tool autoload of the scratch
# project starts it beside the plugin (it does nothing without --orogen-editor-test).
SELF_TEST='OrogenDockSelfTest="*res://tests/dock_self_test.gd"'
if [[ ! -f $PROJ/tests/dock_self_test.gd ]]; then
    fail "the dock's self-test is at godot_project/tests/dock_self_test.gd"
    finish
fi
if grep -q '^\[autoload\]' "$PROJ/project.godot"; then
    sed -i "/^\[autoload\]/a $SELF_TEST" "$PROJ/project.godot"
else
    printf '\n[autoload]\n\n%s\n' "$SELF_TEST" >>"$PROJ/project.godot"
fi
# Every GDScript warning is an error here (the addon folder included), and so is an untyped
# declaration: the plugin's scripts must load cleanly under the strictest settings.
{
    echo "[debug]"
    # Every folder's warnings count (the default leaves res://addons out), but HTerrain's
    # (third-party code, not held to these rules).
    if [[ -n $HTERRAIN_SRC ]]; then
        echo 'gdscript/warnings/directory_rules={"res://addons/zylann.hterrain": 0}'
    else
        echo 'gdscript/warnings/directory_rules={}'
    fi
    for w in unassigned_variable unassigned_variable_op_assign unused_variable unused_local_constant \
        unused_private_class_variable unused_parameter unused_signal shadowed_variable \
        shadowed_variable_base_class shadowed_global_identifier unreachable_code unreachable_pattern \
        standalone_expression standalone_ternary incompatible_ternary untyped_declaration \
        unsafe_void_return static_called_on_instance missing_tool redundant_static_unload \
        redundant_await assert_always_true assert_always_false integer_division narrowing_conversion \
        int_as_enum_without_cast int_as_enum_without_match enum_variable_without_default empty_file \
        deprecated_keyword confusable_identifier confusable_local_declaration confusable_local_usage \
        confusable_capture_reassignment inference_on_variant native_method_override \
        get_node_default_without_onready onready_with_export property_used_as_function \
        constant_used_as_function function_used_as_property; do
        echo "gdscript/warnings/$w=2"
    done
} >"$PROJ/override.cfg"

export OROGEN_GODOT_HOME="$WORK/home"

# The log without the errors raised inside HTerrain's own scripts (their first backtrace frame
# in res://addons/zylann.hterrain/): its normal-map baker renders through a viewport, which the
# headless editor's dummy renderer cannot, once the self-test has made an HTerrain node.
drop_hterrain_errors() { # log file
    awk '
        function flush() {
            if (n > 0 && !ht) for (i = 1; i <= n; i++) print buf[i]
            n = 0; ht = 0; first = 1
        }
        BEGIN { first = 1 }
        /^(SCRIPT ERROR|ERROR|USER ERROR):/ { flush(); buf[++n] = $0; inb = 1; next }
        inb && /^[ \t]/ {
            buf[++n] = $0
            if (first && $0 ~ /\[0\]/) {
                first = 0
                if ($0 ~ /res:\/\/addons\/zylann\.hterrain\//) ht = 1
            }
            next
        }
        { flush(); inb = 0; print }
        END { flush() }
    ' "$1"
}

# Lines that mean something went wrong in the plugin, the extension or the engine.
scan_errors() { # log file, what
    local hits
    # Each hit with the two lines after it (a Rust panic's message and the function it was
    # in), without engine source locations or backtrace frames.
    hits=$(drop_hterrain_errors "$1" | grep -E -A2 'SCRIPT ERROR|Parse Error|^ERROR:|^USER ERROR:|panicked|Segmentation fault|signal 11' \
        | grep -vE '^[[:space:]]+(at:?|[0-9]+:) |^--$|panic backtrace|GDScript backtrace' \
        | grep -vE 'orogen_missing_uplift|no_such_recipe' | head -n 20)
    if [[ -z $hits ]]; then
        pass "$2: no errors in the output"
    else
        fail "$2: errors in the output:"
        echo "$hits" | sed 's/^/       /'
    fi
}

# HTerrain's many scripts register their class names in a first pass (as run.sh does), so the
# self-test does not start while the editor is still updating them.
if [[ -n $HTERRAIN_SRC ]]; then
    timeout 300 "${GODOT[@]}" --headless --path "$PROJ" --import >"$WORK/import.log" 2>&1
fi

# 1. The editor starts and quits with the plugin enabled. The first start also imports.
echo "editor_test: 1. headless editor start"
"${GODOT[@]}" --headless --editor --path "$PROJ" --quit-after 300 >"$WORK/start.log" 2>&1
code=$?
[[ $code -eq 0 ]] && pass "the editor starts and quits with the plugin (exit 0)" \
    || fail "the editor starts and quits with the plugin (exit $code)"
scan_errors "$WORK/start.log" "editor start"
if grep -q 'Orogen' "$WORK/start.log" && grep -qi 'failed to load\|not found' "$WORK/start.log"; then
    grep -i 'orogen' "$WORK/start.log" | head -n 5
fi

# 2. The dock's self-test.
echo "editor_test: 2. dock self-test (headless editor)"
timeout 900 "${GODOT[@]}" --headless --editor --path "$PROJ" -- --orogen-editor-test >"$WORK/selftest.log" 2>&1
code=$?
# Show the self-test's own lines; its totals line is renamed so check.sh does not count it twice.
grep -E '^(Orogen editor self-test|  ok   |  FAIL |  note |editor: |screenshot: )' "$WORK/selftest.log" \
    | sed -E 's/^editor: ([0-9]+) passed, ([0-9]+) failed/  (self-test totals: \1 passed, \2 failed)/'
sp=$(sed -nE 's/^editor: ([0-9]+) passed, ([0-9]+) failed.*/\1/p' "$WORK/selftest.log" | tail -n 1)
sf=$(sed -nE 's/^editor: ([0-9]+) passed, ([0-9]+) failed.*/\2/p' "$WORK/selftest.log" | tail -n 1)
if [[ -z $sp ]]; then
    fail "the self-test ran to its end (exit $code; last lines below)"
    tail -n 30 "$WORK/selftest.log" | sed 's/^/       /'
else
    passed=$((passed + sp))
    failed=$((failed + sf))
    [[ $code -eq 0 || $sf -gt 0 ]] || fail "the self-test's exit code ($code) matches its count"
fi
scan_errors "$WORK/selftest.log" "self-test"

# 3. A screenshot of the editor with the dock, on a virtual display.
if [[ "${OROGEN_EDITOR_SCREENSHOT:-1}" != "0" && -x "$ROOT/usr/bin/Xvfb" && -x "$ROOT/usr/bin/xwd" ]]; then
    echo "editor_test: 3. screenshot under Xvfb"
    SHOT="$WORK/shot"
    mkdir -p "$SHOT"
    # Vulkan through Mesa's lavapipe: Mesa's OpenGL cannot make a context on Xvfb (no DRI3).
    OROGEN_XVFB_SIZE=1600x1000x24 timeout 600 "${GODOT[@]}" --xvfb --rendering-driver vulkan \
        --audio-driver Dummy --resolution 1600x1000 --position 0,0 --editor --path "$PROJ" \
        -- --orogen-editor-test "--orogen-screenshot=$SHOT" >"$WORK/screenshot.log" 2>&1 &
    gpid=$!
    for view in top gallery form stages materials strata maps toolbar planet; do
        for _ in $(seq 1 1200); do
            [[ -f $SHOT/$view.ready ]] && break
            kill -0 "$gpid" 2>/dev/null || break
            sleep 0.5
        done
        if [[ ! -f $SHOT/$view.ready ]] && grep -q 'Xvfb did not start' "$WORK/screenshot.log"; then
            echo "editor_test: Xvfb cannot start on this machine; screenshots skipped"
            grep -A5 'Xvfb did not start' "$WORK/screenshot.log" | sed 's/^/       /'
            break
        elif [[ ! -f $SHOT/$view.ready ]]; then
            fail "the editor under Xvfb got ready for the '$view' screenshot"
            tail -n 20 "$WORK/screenshot.log" | sed 's/^/       /'
            break
        fi
        display=$(head -n 1 "$SHOT/$view.ready")
        out="$ART/editor-screenshot-$view.png"
        if chroot "$ROOT" /usr/bin/xwd -root -silent -display "$display" >"$SHOT/screen.xwd" 2>"$SHOT/xwd.err" \
            && chroot "$ROOT" /usr/bin/convert xwd:- png:- <"$SHOT/screen.xwd" >"$out" 2>>"$SHOT/xwd.err" \
            && [[ -s $out ]]; then
            pass "screenshot written to test-artifacts/editor-screenshot-$view.png"
            # A drawn editor has contrast; a black or blank frame has none.
            sd=$(chroot "$ROOT" /usr/bin/convert png:- -format '%[fx:standard_deviation]' info:- <"$out" 2>/dev/null)
            if awk -v s="${sd:-0}" 'BEGIN { exit !(s > 0.05) }'; then
                pass "the '$view' screenshot is not blank (grey-level deviation $sd)"
            else
                fail "the '$view' screenshot looks blank (grey-level deviation ${sd:-unknown})"
            fi
        else
            fail "xwd/convert could not take the '$view' screenshot: $(head -c 300 "$SHOT/xwd.err")"
        fi
        [[ -f $SHOT/editor-viewport-$view.png ]] && cp "$SHOT/editor-viewport-$view.png" "$ART/"
        touch "$SHOT/$view.shot"
    done
    wait "$gpid" 2>/dev/null
    # Every error line fails, "Can't use get_node() with absolute paths from outside the active
    # scene tree" included: the self-test quits with nothing selected, which is what kept that
    # engine message away (see _quit in godot_project/tests/dock_self_test.gd).
    scan_errors "$WORK/screenshot.log" "editor under Xvfb"
    grep -E '^screenshot: ' "$WORK/screenshot.log"
else
    echo "editor_test: 3. screenshot skipped (no Xvfb/xwd in $ROOT or OROGEN_EDITOR_SCREENSHOT=0)"
fi

finish
