extends SceneTree
## What Orogen's headless Godot test scripts share: the pass/fail tally that
## tests/godot/run.sh reads (`PASS name`, `FAIL name: why`, `RESULT passed=N failed=M`),
## checks, settling the scene between tests and waiting for worker threads to end.

var passed: int = 0
var failed: int = 0
var current: String = ""
var current_failures: PackedStringArray = []


## Runs each test in turn (awaiting it), printing PASS or FAIL with at most `shown` of its
## failed checks, and frees what it left in the scene before the next.
func run_tests(tests: Array[Callable], shown: int = 1 << 30) -> void:
	for t: Callable in tests:
		current = t.get_method()
		current_failures = []
		await t.call()
		if current_failures.is_empty():
			passed += 1
			print("PASS ", current)
		else:
			failed += 1
			print("FAIL ", current, ": ", "; ".join(current_failures.slice(0, shown)))
		await _settle()


## Prints the tally run.sh reads and quits (status 1 when a test failed).
func finish() -> void:
	print("RESULT passed=%d failed=%d" % [passed, failed])
	quit(0 if failed == 0 else 1)


func check(cond: bool, what: String) -> bool:
	if not cond:
		current_failures.append(what)
	return cond


## True once no ErosionSimulator worker thread is alive, false after `timeout_ms`.
func wait_no_threads(timeout_ms: int) -> bool:
	var start: int = Time.get_ticks_msec()
	while ErosionSimulator.live_thread_count() != 0:
		if Time.get_ticks_msec() - start > timeout_ms:
			return false
		await process_frame
	return true


func _settle() -> void:
	for child: Node in root.get_children():
		child.queue_free()
	await process_frame
	await process_frame


## A TerrainWorld with an ErosionSimulator child, in the tree.
func make_scene(recipe: TerrainRecipe) -> TerrainWorld:
	var terrain: TerrainWorld = TerrainWorld.new()
	terrain.recipe = recipe
	var sim: ErosionSimulator = ErosionSimulator.new()
	sim.name = "Simulator"
	sim.terrain = NodePath("..")
	terrain.add_child(sim)
	root.add_child(terrain)
	return terrain


func sim_of(terrain: TerrainWorld) -> ErosionSimulator:
	return terrain.get_node("Simulator") as ErosionSimulator


## Waits until `sim` stops running (finished or failed) or `timeout_ms` passes; true if it stopped.
func wait_done(sim: ErosionSimulator, timeout_ms: int) -> bool:
	var start: int = Time.get_ticks_msec()
	while is_instance_valid(sim) and sim.is_running():
		if Time.get_ticks_msec() - start > timeout_ms:
			return false
		await process_frame
	return true


## The pixels of a one-channel float image as floats (converted to FORMAT_RF first).
func floats_of(img: Image) -> PackedFloat32Array:
	var copy: Image = img
	if img.get_format() != Image.FORMAT_RF:
		copy = Image.new()
		copy.copy_from(img)
		copy.convert(Image.FORMAT_RF)
	return copy.get_data().to_float32_array()
