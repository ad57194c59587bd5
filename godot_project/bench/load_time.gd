## Wall time of TerrainWorld.generate() from the call to the simulator's `finished`, for the
## default recipe at several sizes and StreamPower schedules (issue #12: a 1025² world at load
## in at most 2 s, a 4097² one in at most 60 s). Run by scripts/bench-godot-load.sh; not a test.
##
##   godot --headless --path godot_project -s res://bench/load_time.gd -- [--sizes=1025,4097]
extends SceneTree


func _initialize() -> void:
	run.call_deferred()


func generate_ms(side: int, schedule: String) -> float:
	var recipe: TerrainRecipe = TerrainRecipe.default_recipe()
	var err: String = recipe.set_value("size", "(%d, %d)" % [side, side])
	if err == "":
		err = recipe.set_value("stages[0].StreamPower.schedule", schedule)
	if err != "":
		printerr("recipe: ", err)
		return -1.0
	var terrain: TerrainWorld = TerrainWorld.new()
	terrain.recipe = recipe
	root.add_child(terrain)
	var done: Array[bool] = [false]
	var t0: int = Time.get_ticks_usec()
	var sim: ErosionSimulator = terrain.generate()
	sim.finished.connect(func() -> void: done[0] = true)
	sim.failed.connect(func(message: String) -> void:
		printerr("failed: ", message)
		done[0] = true)
	while not done[0]:
		await process_frame
	var ms: float = (Time.get_ticks_usec() - t0) / 1000.0
	terrain.queue_free()
	await process_frame
	return ms


func run() -> void:
	var sizes: Array[int] = [1025]
	for arg: String in OS.get_cmdline_user_args():
		if arg.begins_with("--sizes="):
			sizes.clear()
			for s: String in arg.trim_prefix("--sizes=").split(","):
				sizes.append(int(s))
	print("default recipe, TerrainWorld.generate() to finished, %d threads" % OS.get_processor_count())
	print("| size | schedule | wall |")
	print("|---|---|---|")
	for side: int in sizes:
		var schedules: Array[String] = ["Fine", "CoarseToFine(levels: 2)", "CoarseToFine(levels: 3)"]
		if side > 2049:
			schedules = ["CoarseToFine(levels: 2)", "CoarseToFine(levels: 3)"]
		for schedule: String in schedules:
			var ms: float = await generate_ms(side, schedule)
			print("| %d² | `%s` | %.2f s |" % [side, schedule, ms / 1000.0])
	quit()
