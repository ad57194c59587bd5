## Frame times and peak memory of a live ErosionSimulator run on the default recipe (issue
## #13, "no hitch when a run finishes"): the longest frame while the run goes, the longest
## frame from the worker's end until `finished` (the result applied: images, textures,
## collision), and the process's peak resident memory. Run by scripts/bench-godot-apply.sh,
## one size per process so the peak is that size's; not a test.
##
##   godot --headless --path godot_project -s res://bench/apply_frames.gd -- --size=1025
extends SceneTree


func _initialize() -> void:
	run.call_deferred()


## A line of /proc/self/status in MiB (`VmHWM`: peak resident, `VmRSS`: now); -1 elsewhere.
## (FileAccess reads /proc files as empty: they report no length.)
func status_mib(key: String) -> float:
	var out: Array = []
	if OS.execute("cat", ["/proc/%d/status" % OS.get_process_id()], out) != 0 or out.is_empty():
		return -1.0
	for line: String in str(out[0]).split("\n"):
		if line.begins_with(key + ":"):
			return int(line.trim_prefix(key + ":").strip_edges().trim_suffix(" kB")) / 1024.0
	return -1.0


func run() -> void:
	var side: int = 1025
	var live: bool = true
	for arg: String in OS.get_cmdline_user_args():
		if arg.begins_with("--size="):
			side = int(arg.trim_prefix("--size="))
		elif arg == "--no-live":
			live = false
	var recipe: TerrainRecipe = TerrainRecipe.default_recipe()
	var err: String = recipe.set_value("size", "(%d, %d)" % [side, side])
	if err != "":
		printerr("recipe: ", err)
		quit(1)
		return
	var terrain: TerrainWorld = TerrainWorld.new()
	terrain.recipe = recipe
	root.add_child(terrain)
	var sim: ErosionSimulator = ErosionSimulator.new()
	sim.live_update = live
	sim.apply_on_finish = true
	terrain.add_child(sim)
	await process_frame
	var rss_before: float = status_mib("VmRSS")
	var state: Array[int] = [0] # 1 finished, 2 failed
	var steps: Array[int] = [0]
	sim.finished.connect(func() -> void: state[0] = 1)
	sim.failed.connect(func(message: String) -> void:
		printerr("failed: ", message)
		state[0] = 2)
	sim.step_finished.connect(func(_i: int) -> void: steps[0] += 1)
	if not sim.start():
		quit(1)
		return
	var t0: int = Time.get_ticks_usec()
	var last: int = t0
	var worst_running: int = 0
	var worst_finishing: int = 0
	var frames: int = 0
	var finishing_frames: int = 0
	var worker_done_at: int = -1
	while state[0] == 0 and Time.get_ticks_usec() - t0 < 300_000_000:
		await process_frame
		var now: int = Time.get_ticks_usec()
		var took: int = now - last
		last = now
		# The worker has ended once live snapshots stop; the frames from the first one
		# that handles the result to `finished` are the finishing frames.
		if sim.has_method("is_finishing") and sim.call("is_finishing"):
			if worker_done_at < 0:
				worker_done_at = now
				print("peak before the result is applied: %.0f MiB" % status_mib("VmHWM"))
			worst_finishing = max(worst_finishing, took)
			finishing_frames += 1
		elif state[0] == 0:
			worst_running = max(worst_running, took)
			frames += 1
		else:
			worst_finishing = max(worst_finishing, took)
			finishing_frames += 1
	for i in 3:
		await process_frame
		var now: int = Time.get_ticks_usec()
		worst_finishing = max(worst_finishing, now - last)
		last = now
	var ok: bool = state[0] == 1 and terrain.data != null and terrain.data.get_width() == side
	print("| %d² | %s | %d | %d | %.1f ms | %.1f ms (%d frames) | %.0f MiB | %.0f MiB |" % [
		side, "ok" if ok else "FAILED", frames, steps[0], worst_running / 1000.0,
		worst_finishing / 1000.0, finishing_frames, rss_before, status_mib("VmHWM")])
	terrain.queue_free()
	await process_frame
	quit(0 if ok else 1)
