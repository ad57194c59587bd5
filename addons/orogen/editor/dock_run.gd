@tool
extends RefCounted
## The Orogen dock's run controls: Generate and Cancel, the progress bar and its line. It runs
## an ErosionSimulator (owned by the dock, never in the edited scene) on the followed terrain
## with live updates, and applies the result as one undoable action when it finishes; a
## cancelled or failed run puts the terrain back as it was.
##
## Nothing here blocks: the simulator runs on its own threads and reports through signals.

const Context := preload("dock_context.gd")
const UI := preload("dock_ui.gd")

## Seconds a simulator may stay stopped without reporting finished/failed before the dock
## gives up on it (it should never happen; it keeps the dock from waiting forever).
const SILENT_STOP_SECONDS := 2.0

## A generation ended: `ok` is false when it failed or was cancelled.
signal generation_ended(ok: bool, message: String)
## A run started or ended, or a cancel was asked for (buttons follow).
signal state_changed
## The terrain's maps changed; `now`: refresh the thumbnails without waiting.
signal maps_changed(now: bool)

var _ctx: Context
var _sim_host: Node

var _generate_button: Button
var _cancel_button: Button
var _progress: ProgressBar
var _progress_label: Label

var _sim: Node = null
var _run_terrain: Node3D = null
var _run_old_data: Resource = null
var _run_stage_count := 0
var _run_stage_index := 0
var _run_last_stage := ""
var _run_last_fraction := 0.0
var _run_iteration := 0
var _run_started_msec := 0
var _run_silent_for := 0.0
var _cancel_requested := false


func _init(ctx: Context) -> void:
	_ctx = ctx


## Adds the run controls to `parent`; the simulator, made on the first run, goes in `sim_host`.
func build(parent: Control, sim_host: Node) -> void:
	_sim_host = sim_host
	var run_row := HBoxContainer.new()
	_generate_button = UI.button("Generate", &"Play", "Run the recipe on this terrain (undoable).",
			func() -> void: generate())
	_generate_button.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	run_row.add_child(_generate_button)
	_cancel_button = UI.button("Cancel", &"Stop", "Stop the generation; the terrain stays as it was.",
			cancel_generation)
	run_row.add_child(_cancel_button)
	parent.add_child(run_row)
	_progress = ProgressBar.new()
	_progress.min_value = 0.0
	_progress.max_value = 1.0
	_progress.step = 0.0
	_progress.custom_minimum_size.y = 18
	parent.add_child(_progress)
	_progress_label = Label.new()
	_progress_label.text_overrun_behavior = TextServer.OVERRUN_TRIM_ELLIPSIS
	parent.add_child(_progress_label)


## Starts generating the followed terrain from its recipe; false (and an error in the dock)
## if it cannot start. The result is applied as one undoable action when it finishes.
## `live_view`: show the run's progress on the terrain (off after a preset's coarse preview,
## which then stays until the full result replaces it).
func generate(live_view := true) -> bool:
	if _ctx.generating:
		return false
	if _ctx.live:
		_ctx.show_error("Live erosion is on: turn it off first.")
		return false
	var terrain := _ctx.terrain
	var recipe := _ctx.recipe()
	if terrain == null or recipe == null:
		_ctx.show_error("Select a TerrainWorld with a recipe first.")
		return false
	var invalid := String(recipe.call(&"validate"))
	if invalid != "":
		_ctx.show_error("The recipe is not valid: %s" % invalid)
		return false
	var sim := _ensure_simulator()
	if sim == null:
		return false
	sim.set(&"terrain", sim.get_path_to(terrain))
	sim.set(&"recipe", recipe)
	sim.set(&"live_update", live_view)
	sim.set(&"apply_on_finish", false)
	_run_terrain = terrain
	_ctx.generating = true
	_run_old_data = terrain.get(&"data") as Resource
	_run_stage_count = Context.stage_kinds(recipe).size()
	_run_stage_index = 0
	_run_last_stage = ""
	_run_last_fraction = 0.0
	_run_iteration = 0
	_run_silent_for = 0.0
	_run_started_msec = Time.get_ticks_msec()
	_cancel_requested = false
	_ctx.clear_error()
	_ctx.set_status("Generating…")
	state_changed.emit()
	_update_progress()
	if not bool(sim.call(&"start")):
		# The simulator reports why through `failed`; make sure the dock is idle either way.
		if _ctx.generating:
			_on_sim_failed("the simulator could not start")
		return false
	return true


## Asks the running generation to stop; the terrain returns to what it was before.
func cancel_generation() -> void:
	if not _ctx.generating or _cancel_requested:
		return
	_cancel_requested = true
	_ctx.set_status("Cancelling…")
	if is_instance_valid(_sim):
		_sim.call(&"cancel")
	state_changed.emit()


## Stops a running generation at once and puts its terrain back (the plugin is going away).
func shutdown() -> void:
	if _ctx.generating:
		_cancel_requested = true
		if is_instance_valid(_sim):
			_sim.call(&"cancel")
		_restore_run_terrain()
		_end_run()


## Called every frame: notices a simulator that stopped without saying so.
func process(delta: float) -> void:
	if not _ctx.generating:
		return
	if is_instance_valid(_sim) and bool(_sim.call(&"is_running")):
		_run_silent_for = 0.0
		return
	_run_silent_for += delta
	if _run_silent_for >= SILENT_STOP_SECONDS:
		_on_sim_failed("the simulator stopped without reporting a result")


## Empties the progress bar and its line (another terrain is followed).
func reset_progress() -> void:
	_progress.value = 0.0
	_progress_label.text = ""


func update_ui() -> void:
	var running := _ctx.generating
	_generate_button.disabled = running or _ctx.live or _ctx.recipe() == null
	_cancel_button.disabled = not running or _cancel_requested
	_progress.visible = running or _progress.value > 0.0
	_progress_label.visible = running or _progress_label.text != ""


func _update_progress() -> void:
	var count := maxi(_run_stage_count, 1)
	var overall := (float(mini(_run_stage_index, count - 1)) + _run_last_fraction) / float(count)
	_progress.value = clampf(overall, 0.0, 1.0)
	var stage := _run_last_stage if _run_last_stage != "" else "starting"
	var text := "Stage %d/%d · %s" % [mini(_run_stage_index + 1, count), count, stage]
	if _run_iteration > 0:
		text += " · iteration %d" % _run_iteration
	text += " · %d%%" % roundi(_run_last_fraction * 100.0)
	_progress_label.text = text
	_progress_label.visible = true


func _ensure_simulator() -> Node:
	if is_instance_valid(_sim):
		return _sim
	if not ClassDB.class_exists(Context.SIMULATOR_CLASS):
		_ctx.show_error("The Orogen extension is not loaded (no ErosionSimulator class).")
		return null
	_sim = ClassDB.instantiate(Context.SIMULATOR_CLASS) as Node
	_sim.name = "EditorSimulator"
	# The simulator lives in the dock, never in the edited scene, so it is never saved.
	_sim_host.add_child(_sim)
	_sim.connect(&"progress", _on_sim_progress)
	_sim.connect(&"step_finished", _on_sim_step_finished)
	_sim.connect(&"finished", _on_sim_finished)
	_sim.connect(&"failed", _on_sim_failed)
	return _sim


func _on_sim_progress(stage_index: int, stage: String, fraction: float) -> void:
	if not _ctx.generating:
		return
	if stage_index != _run_stage_index:
		_run_iteration = 0
	_run_stage_index = stage_index
	_run_last_stage = stage
	_run_last_fraction = fraction
	_run_silent_for = 0.0
	_update_progress()


func _on_sim_step_finished(iteration: int) -> void:
	if not _ctx.generating:
		return
	_run_iteration = iteration
	_run_silent_for = 0.0
	maps_changed.emit(false)
	_update_progress()


func _on_sim_finished() -> void:
	if not _ctx.generating:
		return
	var terrain := _run_terrain
	var old := _run_old_data
	var cancelled := _cancel_requested
	var seconds := float(Time.get_ticks_msec() - _run_started_msec) / 1000.0
	var result: Resource = null
	if is_instance_valid(_sim):
		result = _sim.call(&"get_result") as Resource
	_end_run()
	if not is_instance_valid(terrain):
		_ctx.set_status("The terrain was removed before the generation finished.")
		generation_ended.emit(false, _ctx.get_status())
		return
	if cancelled or result == null:
		terrain.call(&"set_data", old)
		if cancelled:
			_ctx.set_status("Generation cancelled; the terrain is as it was.")
			generation_ended.emit(false, _ctx.get_status())
		else:
			_ctx.show_error("The simulator finished without a result.")
			generation_ended.emit(false, "no result")
		return
	_ctx.swap_data(terrain, result, old, "Generate terrain")
	_progress.value = 1.0
	_progress_label.text = "Done: %d stage(s) in %.1f s" % [_run_stage_count, seconds]
	_ctx.set_status("Generated. Undo (Ctrl+Z) restores the previous terrain.")
	maps_changed.emit(true)
	generation_ended.emit(true, _ctx.get_status())


func _on_sim_failed(message: String) -> void:
	if not _ctx.generating:
		return
	var cancelled := _cancel_requested
	_restore_run_terrain()
	_end_run()
	maps_changed.emit(true)
	if cancelled:
		_ctx.set_status("Generation cancelled; the terrain is as it was.")
		generation_ended.emit(false, _ctx.get_status())
		return
	_ctx.set_status("")
	# Shown once, in the dock (no warning in the Output panel as well).
	_ctx.show_error("Generation failed: %s" % message)
	generation_ended.emit(false, message)


## Puts the terrain back as it was before the run (live updates may have changed it).
func _restore_run_terrain() -> void:
	if is_instance_valid(_run_terrain):
		_run_terrain.call(&"set_data", _run_old_data)


func _end_run() -> void:
	_run_terrain = null
	_run_old_data = null
	_ctx.generating = false
	_cancel_requested = false
	state_changed.emit()
