extends SceneTree
## Run by tests/package/run.sh inside a new Godot project that holds nothing but the unpacked
## addon zip (dist/orogen-addon-VERSION.zip), as a user's project would after installing it:
## the extension's classes load, and a TerrainWorld generates the default recipe at 129² into
## finite, not flat, heights. Prints `RESULT passed=N failed=M` and exits 0 only if all pass.

const SIZE: int = 129
const TIMEOUT_MS: int = 120000

var passed: int = 0
var failed: int = 0


func _initialize() -> void:
	_run.call_deferred()


func check(ok: bool, what: String) -> bool:
	if ok:
		passed += 1
		print("PASS ", what)
	else:
		failed += 1
		print("FAIL ", what)
	return ok


func _run() -> void:
	await _test()
	print("RESULT passed=%d failed=%d" % [passed, failed])
	quit(0 if failed == 0 else 1)


func _test() -> void:
	for c: String in ["TerrainWorld", "ErosionSimulator", "TerrainRecipe", "TerrainData"]:
		check(ClassDB.class_exists(c), "class %s is registered by the addon's library" % c)
	if not ClassDB.class_exists("TerrainWorld"):
		return
	var recipe: TerrainRecipe = TerrainRecipe.default_recipe()
	var err: String = recipe.set_value("size", "(%d, %d)" % [SIZE, SIZE])
	if not check(err == "", "the default recipe takes size (%d, %d) (%s)" % [SIZE, SIZE, err]):
		return
	var terrain: TerrainWorld = TerrainWorld.new()
	terrain.recipe = recipe
	root.add_child(terrain)
	var sim: ErosionSimulator = terrain.generate()
	var state: Array[String] = [""]
	sim.finished.connect(func() -> void: state[0] = "finished")
	sim.failed.connect(func(message: String) -> void: state[0] = "failed: " + message)
	var t0: int = Time.get_ticks_msec()
	while state[0] == "" and Time.get_ticks_msec() - t0 < TIMEOUT_MS:
		await process_frame
	print("  measured: generate at %d² took %d ms" % [SIZE, Time.get_ticks_msec() - t0])
	if not check(state[0] == "finished", "TerrainWorld.generate() finishes (%s)" % state[0]):
		return
	var height: Image = terrain.get_map("height")
	if not check(height != null, "the terrain has a height map"):
		return
	check(height.get_width() == SIZE and height.get_height() == SIZE,
		"the height map is %d² (%dx%d)" % [SIZE, height.get_width(), height.get_height()])
	if height.get_format() != Image.FORMAT_RF:
		height.convert(Image.FORMAT_RF)
	var values: PackedFloat32Array = height.get_data().to_float32_array()
	var finite: bool = values.size() == SIZE * SIZE
	var lo: float = INF
	var hi: float = -INF
	for v: float in values:
		if not is_finite(v):
			finite = false
			break
		lo = minf(lo, v)
		hi = maxf(hi, v)
	check(finite, "every height is finite (%d values)" % values.size())
	check(finite and hi - lo > 1.0, "the terrain has relief (%.1f to %.1f m)" % [lo, hi])
	check(is_finite(terrain.get_height(0.0, 0.0)), "get_height answers at the centre")
	terrain.queue_free()
	await process_frame
