extends Node3D
## Orogen painting demo: the built-in `paint` recipe eroding live (ErosionSimulator.start_live)
## while you paint its uplift with the mouse; each stroke rises into a range that rivers cut.
##
## Left drag raises (adds uplift), right drag lowers (subtracts it), the wheel sizes the brush,
## Tab paints rain instead of uplift, Ctrl+Z undoes a stroke, Space stops live erosion (the
## terrain then gets its rivers and lakes) and starts it again.
##
## `--orogen-screenshot=PATH` (after `--`): paints an S-shaped range from a script, lets it
## erode live for a few seconds, prints the refresh rate, stops, shows the brush on the
## terrain and saves PATH. `--orogen-views=PREFIX` does the same, then saves the applied
## terrain's views (views.gd: PREFIX-overview.png with the brush, PREFIX-valley.png,
## PREFIX-ridge.png), checked with `--orogen-check-views` (used by tests/godot/run.sh).

const Painter := preload("res://addons/orogen/runtime/painter.gd")
const Views := preload("res://views.gd")

@onready var terrain: TerrainWorld = $Terrain
@onready var simulator: ErosionSimulator = $Terrain/Simulator
@onready var camera: Camera3D = $Camera
@onready var status: Label = $HUD/Status

var painter := Painter.new()
var history := UndoRedo.new()
var screenshot_path := ""
var views_prefix := ""
var check_views := false
var _hit: Variant = null
var _live_since := 0
var _refreshes_at_start := 0


func _ready() -> void:
	for arg: String in OS.get_cmdline_user_args():
		if arg.begins_with("--orogen-screenshot="):
			screenshot_path = arg.get_slice("=", 1)
		elif arg.begins_with("--orogen-views="):
			views_prefix = arg.get_slice("=", 1)
		elif arg == "--orogen-check-views":
			check_views = true
	var scripted := screenshot_path != "" or views_prefix != ""
	painter.radius = 3500.0
	painter.strength = 0.6
	painter.value = 0.0015
	# A soft brush: the uplift fades over its whole radius, so a stroke rises as a ridge with
	# foothills, not a plateau with walls (at 0.5 the S-range came out flat-topped).
	painter.falloff = 1.0
	_frame_camera()
	simulator.failed.connect(func(message: String) -> void:
		status.text = "Orogen failed: " + message
		push_error("Orogen paint demo: " + message)
		if scripted:
			get_tree().quit(1))
	if scripted:
		# A software renderer shares the CPU with the erosion: leave it a core.
		simulator.threads = 1
	_start_live()
	if scripted:
		_scripted()


## The demo's camera: high over the near edge, looking across the whole plain.
func _frame_camera() -> void:
	var extent := 51200.0
	camera.look_at_from_position(Vector3(0.0, extent * 0.3, extent * 0.55), Vector3(0.0, 0.0, -extent * 0.04), Vector3.UP)
	# Far enough for the skirt out to the horizon (TerrainWorld.edge), as main.gd's.
	camera.far = extent * 220.0
	camera.near = extent * 0.0005


func _exit_tree() -> void:
	history.free()


func _start_live() -> void:
	if simulator.start_live():
		_live_since = Time.get_ticks_msec()
		_refreshes_at_start = 0


func _process(_delta: float) -> void:
	var what := "%s brush %.1f km (Tab: %s)" % [painter.map, painter.radius / 1000.0,
			"rain" if painter.map == "uplift" else "uplift"]
	if simulator.is_live():
		var seconds := maxf((Time.get_ticks_msec() - _live_since) / 1000.0, 0.001)
		status.text = "Orogen live erosion: %.1f refreshes/s · %s · Space stops" % [
				simulator.get_refresh_count() / seconds, what]
	elif simulator.is_running():
		status.text = "Orogen: applying the eroded terrain…"
	else:
		status.text = "Orogen: stopped · %s · Space erodes live again" % what


func _unhandled_input(event: InputEvent) -> void:
	if event is InputEventMouse:
		var pos: Vector2 = (event as InputEventMouse).position
		_hit = terrain.intersect_ray(camera.project_ray_origin(pos), camera.project_ray_normal(pos))
		terrain.set_brush_indicator(_hit != null, _hit if _hit != null else Vector3.ZERO, painter.radius)
	if event is InputEventMouseButton:
		var mb := event as InputEventMouseButton
		if mb.button_index == MOUSE_BUTTON_WHEEL_UP or mb.button_index == MOUSE_BUTTON_WHEEL_DOWN:
			painter.radius = clampf(painter.radius * (1.1 if mb.button_index == MOUSE_BUTTON_WHEEL_UP else 1.0 / 1.1), 300.0, 20000.0)
		elif mb.button_index == MOUSE_BUTTON_LEFT or mb.button_index == MOUSE_BUTTON_RIGHT:
			if mb.pressed and _hit != null:
				painter.mode = "add" if mb.button_index == MOUSE_BUTTON_LEFT else "subtract"
				painter.begin_stroke(terrain, _hit)
			elif not mb.pressed and painter.is_stroking():
				painter.end_stroke(history)
	elif event is InputEventMouseMotion and painter.is_stroking() and _hit != null:
		painter.stroke_to(_hit)
	elif event is InputEventKey and event.pressed and not event.echo:
		var key := event as InputEventKey
		if key.keycode == KEY_TAB:
			painter.map = "precipitation" if painter.map == "uplift" else "uplift"
			painter.value = Painter.default_value(painter.map) * (1.5 if painter.map == "uplift" else 1.0)
		elif key.keycode == KEY_Z and key.ctrl_pressed:
			history.undo()
		elif key.keycode == KEY_SPACE:
			if simulator.is_live():
				simulator.cancel()
			elif not simulator.is_running():
				_start_live()


## The screenshot run: an S-shaped range painted by script, a few seconds of live erosion,
## then the terrain applied and the brush shown.
func _scripted() -> void:
	# Nothing is drawn while the script paints: only the applied terrain is saved, and a
	# software renderer's frame at 1600x900 takes seconds from the erosion's cores (the live
	# refreshes below are then the erosion's rate, not the renderer's).
	get_viewport().disable_3d = true
	var t0 := Time.get_ticks_msec()
	while simulator.get_refresh_count() == 0 and Time.get_ticks_msec() - t0 < 60000:
		await get_tree().process_frame
	print("orogen-paint: first live view after %d ms" % (Time.get_ticks_msec() - t0))
	var start := Time.get_ticks_msec()
	var c0 := simulator.get_refresh_count()
	for pass_i in 3:
		painter.begin_stroke(terrain, _s_curve(0.0))
		for i in range(1, 41):
			painter.stroke_to(_s_curve(i / 40.0))
		painter.end_stroke(history)
		print("orogen-paint: pass %d at %d ms, %d refreshes" % [pass_i, Time.get_ticks_msec() - start, simulator.get_refresh_count()])
		# Let the range rise a while before the next pass (wall time: a software renderer
		# draws few frames a second).
		var t1 := Time.get_ticks_msec()
		while Time.get_ticks_msec() - t1 < 1500:
			await get_tree().process_frame
	print("orogen-paint: painted %d dabs in %d ms" % [painter.get_dab_count() * 3, Time.get_ticks_msec() - start])
	while Time.get_ticks_msec() - start < 8000:
		await get_tree().process_frame
	var seconds := (Time.get_ticks_msec() - start) / 1000.0
	var views := simulator.get_refresh_count() - c0
	# One refresh per frame at most; nothing is drawn meanwhile (run_tests.gd measures the
	# erosion's rate headless).
	print("orogen-paint: %d live refreshes in %.1f s while painting = %.1f per second" % [views, seconds, views / seconds])
	simulator.cancel()
	await simulator.finished
	get_viewport().disable_3d = false
	terrain.set_brush_indicator(true, _s_curve(0.72), painter.radius)
	if views_prefix != "":
		var shots := Views.new(self, terrain, camera, views_prefix)
		shots.overview = _frame_camera
		shots.check = check_views
		var ok: bool = await shots.save()
		if check_views:
			print("RESULT passed=%d failed=%d" % [shots.passed, shots.failed])
		get_tree().quit(0 if ok else 1)
		return
	# One frame takes the applied terrain's textures, the next draws it as it stays (only
	# the rivers' ripples move). Under llvmpipe each frame of this view takes about 6 s.
	for i in range(2):
		await get_tree().process_frame
	await RenderingServer.frame_post_draw
	var img: Image = get_viewport().get_texture().get_image()
	DirAccess.make_dir_recursive_absolute(screenshot_path.get_base_dir())
	if img.save_png(screenshot_path) != OK:
		push_error("Orogen paint demo: cannot save " + screenshot_path)
		get_tree().quit(1)
		return
	print("orogen-paint: screenshot saved to ", screenshot_path)
	get_tree().quit(0)


## A point along an S across the terrain, `t` from 0 to 1 (global metres).
func _s_curve(t: float) -> Vector3:
	var x := lerpf(-17000.0, 17000.0, t)
	var z := sin(t * TAU) * 9000.0 - 2000.0
	return Vector3(x, 0.0, z)
