extends "res://tests/test_tree.gd"
## The GPU path in Godot (issue #42), on whatever Vulkan adapter the machine has (Mesa's
## lavapipe in CI). Run by tests/godot/run.sh twice:
##
##   godot --headless --path godot_project -s res://tests/gpu_tests.gd -- \
##       --recipes=DIR [--gpu-bake=DIR]
##   OROGEN_GPU_DISABLE=1 godot ... -- --recipes=DIR --no-adapter
##
## With a GPU: a `device: Gpu` run within 1e-3 relative of the CPU's and equal to the CLI's
## `--device gpu` bake of it (`--gpu-bake`), `Auto` saying it ran on the GPU, live painting
## on the GPU. With OROGEN_GPU_DISABLE set (no adapter): `Gpu` fails naming `device`, `Auto`
## runs the CPU's bytes and says why. Each test asserts the device reported, so a run that
## did not take the path it tests fails.

var recipes_dir: String = ""
var gpu_bake: String = ""
## `--no-adapter`: the tests for a machine without a GPU (run with OROGEN_GPU_DISABLE=1).
var no_adapter: bool = false


func _initialize() -> void:
	for arg: String in OS.get_cmdline_user_args():
		if arg.begins_with("--recipes="):
			recipes_dir = arg.get_slice("=", 1)
		elif arg.begins_with("--gpu-bake="):
			gpu_bake = arg.get_slice("=", 1)
		elif arg == "--no-adapter":
			no_adapter = true
	_run_all.call_deferred()


func _run_all() -> void:
	var tests: Array[Callable] = []
	if no_adapter:
		tests = [test_no_adapter_gpu_fails_naming_device, test_no_adapter_auto_runs_the_cpu]
	else:
		tests = [test_gpu_run_matches_cpu, test_auto_runs_on_the_gpu, test_live_painting_on_the_gpu]
	await run_tests(tests)
	finish()


# --- helpers -----------------------------------------------------------------------------

## gpu.ron with its `device: Gpu` replaced by `device` (and without its Thermal stage when
## `hillslope` is false).
func recipe_on(device: String, hillslope: bool = true) -> TerrainRecipe:
	var f: FileAccess = FileAccess.open(recipes_dir.path_join("gpu.ron"), FileAccess.READ)
	if f == null:
		current_failures.append("cannot read gpu.ron in " + recipes_dir)
		return TerrainRecipe.new()
	var r: TerrainRecipe = TerrainRecipe.new()
	var text: String = f.get_as_text().replace("device: Gpu,", "device: %s," % device)
	if not hillslope:
		text = text.replace("Thermal(iterations: 2),", "")
	r.ron = text
	return r


## Runs gpu.ron on `device` to the end; the terrain (its heights in `data`), or null.
func run_on(device: String) -> TerrainWorld:
	var terrain: TerrainWorld = make_scene(recipe_on(device))
	var sim: ErosionSimulator = sim_of(terrain)
	var failures: Array[String] = []
	sim.failed.connect(func(m: String) -> void: failures.append(m))
	if not check(sim.start(), "start on %s" % device):
		return null
	if not check(await wait_done(sim, 300000), "the %s run finished in time" % device):
		return null
	if not check(failures.is_empty() and terrain.data != null, "the %s run succeeded: %s" % [device, failures]):
		return null
	return terrain


## The largest |a - b| / max(|b|, 1 m) over the cells.
func worst_relative(a: PackedFloat32Array, b: PackedFloat32Array) -> float:
	var worst := 0.0
	for i: int in b.size():
		worst = maxf(worst, absf(a[i] - b[i]) / maxf(absf(b[i]), 1.0))
	return worst


# --- with a GPU --------------------------------------------------------------------------

## `device: Gpu`: the thermal and stream-power stages ran on the GPU (said by
## get_device_used() and the stages' reports), its heights within 1e-3 relative of the same recipe on the CPU (and not the CPU's
## bytes: f32 against f64), and equal byte for byte to the CLI's `--device gpu` bake.
func test_gpu_run_matches_cpu() -> void:
	var gpu: TerrainWorld = await run_on("Gpu")
	var cpu: TerrainWorld = await run_on("Cpu")
	if gpu == null or cpu == null:
		return
	var used: String = sim_of(gpu).get_device_used()
	check(used.begins_with("gpu: "), "device_used says the GPU ran (got '%s')" % used)
	check(sim_of(cpu).get_device_used() == "cpu", "the Cpu run says cpu (got '%s')" % sim_of(cpu).get_device_used())
	var stages: Array[String] = []
	for r: Dictionary in sim_of(gpu).get_stage_reports():
		stages.append("%s=%s" % [r["stage"], r.get("device", "?")])
	# (Thermal runs on the GPU too since issue #42's thermal stepper; the initial terrain is
	# the CPU's.)
	check(stages.size() == 3 and stages[0] == "initial terrain=cpu" and stages[1].begins_with("Thermal=gpu: ") and stages[2].begins_with("StreamPower=gpu: "), "each stage's device reported (got %s)" % [stages])
	var a: PackedFloat32Array = floats_of(gpu.get_map("height"))
	var b: PackedFloat32Array = floats_of(cpu.get_map("height"))
	if not check(a.size() == 64 * 48 and b.size() == a.size(), "both 64 × 48"):
		return
	var worst := worst_relative(a, b)
	print("  measured: Godot's GPU run against its CPU run, worst relative height difference %s (%s)" % [String.num_scientific(worst), used])
	check(worst <= 1e-3, "GPU heights within 1e-3 relative of the CPU's (worst %s)" % String.num_scientific(worst))
	check(a != b, "the GPU's heights are its own (f32), not the CPU's bytes")
	check(gpu.get_map_names().has("drainage"), "the stage's hydrology maps are there")
	if check(gpu_bake != "", "--gpu-bake given (the CLI's `--device gpu` bake)"):
		var ref: Image = Image.load_from_file(gpu_bake.path_join("height.exr"))
		check(ref != null and ref.get_data() == gpu.get_map("height").get_data(), "the same height bytes as `orogen bake --device gpu`")


## `device: Auto` with an adapter: the GPU, and it says so.
func test_auto_runs_on_the_gpu() -> void:
	var t: TerrainWorld = await run_on("Auto")
	if t == null:
		return
	var used: String = sim_of(t).get_device_used()
	check(used.begins_with("gpu: "), "Auto ran on the GPU (got '%s')" % used)


## Live painting with `device: Gpu` (no Thermal stage, so the GPU's heights are read back
## only for the views shown): the terrain erodes and refreshes while a script paints strong
## uplift over the west half; the heights stay finite, the painted half rises more than the
## other, and cancel() stops it and applies the terrain, saying the GPU ran.
func test_live_painting_on_the_gpu() -> void:
	var start_terrain: TerrainWorld = await run_on("Cpu")
	if start_terrain == null:
		return
	var before: PackedFloat32Array = floats_of(start_terrain.get_map("height"))
	var sim: ErosionSimulator = sim_of(start_terrain)
	sim.recipe = recipe_on("Gpu", false)
	var failures: Array[String] = []
	sim.failed.connect(func(m: String) -> void: failures.append(m))
	var steps: Array[int] = [0]
	sim.step_finished.connect(func(_i: int) -> void: steps[0] += 1)
	if not check(sim.start_live(), "start_live"):
		return
	var t0 := Time.get_ticks_msec()
	while steps[0] < 3 and Time.get_ticks_msec() - t0 < 60000:
		await process_frame
	check(steps[0] >= 3, "live steps ran (%d)" % steps[0])
	# 5 mm/yr over the west half: 50 m a step against the recipe's 10.
	var up := PackedFloat32Array()
	up.resize(64 * 48)
	for i: int in up.size():
		up[i] = 0.005 if i % 64 < 32 else 0.001
	check(String(start_terrain.set_paint_values("uplift", up)) == "", "paint uplift")
	var painted_at := steps[0]
	t0 = Time.get_ticks_msec()
	while steps[0] < painted_at + 10 and Time.get_ticks_msec() - t0 < 120000:
		await process_frame
	check(steps[0] >= painted_at + 10, "ten steps after the paint (%d)" % (steps[0] - painted_at))
	check(sim.get_refresh_count() > 0, "the terrain refreshed while live")
	check(sim.is_live(), "still live")
	sim.cancel()
	check(await wait_done(sim, 60000), "cancel stops it and applies the terrain")
	check(await wait_no_threads(10000), "no worker thread left")
	if not check(failures.is_empty() and start_terrain.data != null, "no failure: %s" % [failures]):
		return
	var used: String = sim.get_device_used()
	check(used.begins_with("gpu: "), "live painting ran on the GPU (got '%s')" % used)
	var after: PackedFloat32Array = floats_of(start_terrain.get_map("height"))
	var changed := 0
	var finite := true
	var rise := [0.0, 0.0]
	for i: int in after.size():
		finite = finite and is_finite(after[i])
		if after[i] != before[i]:
			changed += 1
		rise[0 if i % 64 < 32 else 1] += after[i] - before[i]
	var west: float = rise[0] / (32 * 48)
	var east: float = rise[1] / (32 * 48)
	print("  measured: live painting on the GPU, %d steps, mean rise west (painted) %.1f m, east %.1f m, %d views" % [steps[0], west, east, sim.get_refresh_count()])
	check(finite, "heights finite")
	check(changed > after.size() / 2, "the heights changed (%d of %d cells)" % [changed, after.size()])
	check(west > east + 20.0, "the painted west half rose more (%.1f m against %.1f m)" % [west, east])
	check(start_terrain.get_map_names().has("drainage"), "the stopped terrain has its drainage")


# --- without an adapter (OROGEN_GPU_DISABLE=1) -------------------------------------------

## `device: Gpu` without an adapter: `failed` names `device`, for a run and live painting.
func test_no_adapter_gpu_fails_naming_device() -> void:
	for live: bool in [false, true]:
		var terrain: TerrainWorld = make_scene(recipe_on("Gpu"))
		var sim: ErosionSimulator = sim_of(terrain)
		var failures: Array[String] = []
		sim.failed.connect(func(m: String) -> void: failures.append(m))
		var started: bool = sim.start_live() if live else sim.start()
		check(started, "started (the GPU is opened on the worker)")
		check(await wait_done(sim, 120000), "ended")
		var what := "live" if live else "run"
		check(failures.size() == 1 and "`device`" in failures[0] and "OROGEN_GPU_DISABLE" in failures[0], "%s: failed naming `device` (got %s)" % [what, failures])
		check(sim.get_device_used() == "", "%s: no device_used after a failure" % what)
		terrain.queue_free()


## `device: Auto` without an adapter: the CPU's bytes, and device_used says why.
func test_no_adapter_auto_runs_the_cpu() -> void:
	var auto: TerrainWorld = await run_on("Auto")
	var cpu: TerrainWorld = await run_on("Cpu")
	if auto == null or cpu == null:
		return
	var used: String = sim_of(auto).get_device_used()
	check(used.begins_with("cpu (Auto: ") and "OROGEN_GPU_DISABLE" in used, "Auto says it ran the CPU and why (got '%s')" % used)
	check(auto.get_map("height").get_data() == cpu.get_map("height").get_data(), "Auto without a GPU gives the CPU's bytes")
