extends SceneTree
## Godot's built-in help (F1) for the extension's classes, in a headless editor. Run by
## tests/godot/run.sh in a scratch project that has the addon and this folder:
##
##   godot --headless --editor --path PROJECT -s res://tests/class_docs.gd
##
## It waits for the editor to start, then runs the checks of tests/editor/docs_test.gd (the
## same ones the editor self-test runs): each class's help page shows its description and its
## members', and no member shows Godot's "no description" placeholder.
## Prints `  ok   what` / `  FAIL what` and `RESULT passed=N failed=M`, then quits.

## Frames to let the editor finish starting (its first scan, the help's class list).
const START_FRAMES := 30

var _checker: Checker
var _frame := 0
var _started := false


## The `t` that docs_test.gd reports to: its `_check`, `_frames` and `_wait_for`.
class Checker:
	extends Node
	var passed := 0
	var failed := 0

	func _check(ok: bool, what: String) -> bool:
		if ok:
			passed += 1
			print("  ok   %s" % what)
		else:
			failed += 1
			printerr("  FAIL %s" % what)
		return ok

	func _frames(n: int) -> void:
		for _i: int in n:
			await get_tree().process_frame

	## Waits until `condition` holds, at most 30 s (the help is generated on a thread).
	func _wait_for(condition: Callable) -> bool:
		var start := Time.get_ticks_msec()
		while not bool(condition.call()):
			if Time.get_ticks_msec() - start > 30000:
				return false
			await get_tree().process_frame
		return true


func _initialize() -> void:
	_checker = Checker.new()
	root.add_child(_checker)


func _process(_delta: float) -> bool:
	_frame += 1
	if _frame == START_FRAMES and not _started:
		_started = true
		_run()
	return false


func _run() -> void:
	if not ClassDB.class_exists(&"TerrainWorld"):
		_checker._check(false, "the Orogen extension is loaded (TerrainWorld is a class)")
	else:
		await preload("res://tests/editor/docs_test.gd").new().run(_checker, null, null)
	print("RESULT passed=%d failed=%d" % [_checker.passed, _checker.failed])
	quit(1 if _checker.failed > 0 else 0)
