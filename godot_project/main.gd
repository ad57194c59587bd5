extends Node3D
## Orogen demo: grows a terrain at load (ErosionSimulator on TerrainWorld's recipe), shows it
## growing live, then orbits the camera around it. Used by main.tscn (a mountain range and a
## sea: TerrainWorld's `sea_enabled`) and strata.tscn (layered rock cut into mesas, no sea).
##
## Command-line options (after `--`): `--orogen-screenshot=PATH` saves one frame to PATH once
## the terrain is finished and quits (used by tests/godot/run.sh); `--orogen-views=PREFIX` saves
## PREFIX-overview.png, PREFIX-valley.png and PREFIX-ridge.png from three camera positions (the
## orbit, low over a valley, and close to the highest ground looking across it) and quits.

@onready var terrain: TerrainWorld = $Terrain
@onready var simulator: ErosionSimulator = $Terrain/Simulator
@onready var camera: Camera3D = $Camera
@onready var status: Label = $HUD/Status

## Camera height and orbit radius as fractions of the terrain's extent.
@export var camera_height: float = 0.36
@export var camera_radius: float = 0.58
@export var orbit_angle: float = 0.6

var orbit_speed: float = 0.05
var screenshot_path: String = ""
var views_prefix: String = ""
## With `--orogen-check-views`, each view is checked after it is saved (ViewChecks).
var check_views: bool = false
## With `--orogen-check-snow` too, the views are also checked for snow below the snowline.
var check_snow: bool = false


func _ready() -> void:
	for arg: String in OS.get_cmdline_user_args():
		if arg.begins_with("--orogen-screenshot="):
			screenshot_path = arg.get_slice("=", 1)
			orbit_speed = 0.0
		elif arg.begins_with("--orogen-views="):
			views_prefix = arg.get_slice("=", 1)
			orbit_speed = 0.0
		elif arg == "--orogen-check-views":
			check_views = true
		elif arg == "--orogen-check-snow":
			check_snow = true
		elif arg.begins_with("--orogen-debug-view="):
			# The terrain shader's debug views (1 albedo, 2 dominant material, 3 normal).
			terrain.get_terrain_material().set_shader_parameter("debug_view", int(arg.get_slice("=", 1)))
	simulator.progress.connect(_on_progress)
	simulator.failed.connect(_on_failed)
	_frame_camera()
	# Saving pictures, nothing needs to be drawn until the terrain is finished: a software
	# renderer's frame of the growing terrain takes seconds from the simulation's cores.
	var quiet: bool = screenshot_path != "" or views_prefix != ""
	get_viewport().disable_3d = quiet
	if not simulator.start():
		return
	await simulator.finished
	get_viewport().disable_3d = false
	status.text = "Orogen: %d x %d cells, %.0f m" % [terrain.data.get_width(), terrain.data.get_depth(), _relief()]
	_terrain_ready()
	_frame_camera()
	if screenshot_path != "":
		_save_screenshot()
	elif views_prefix != "":
		_save_views()


## Called once the terrain is finished, before the screenshot: scenes add to it here.
func _terrain_ready() -> void:
	pass


func _process(delta: float) -> void:
	orbit_angle += orbit_speed * delta
	_frame_camera()


func _on_progress(stage_index: int, stage: String, fraction: float) -> void:
	status.text = "Orogen: %d. %s %3d%%" % [stage_index + 1, stage, int(fraction * 100.0)]


func _on_failed(message: String) -> void:
	status.text = "Orogen failed: " + message
	push_error("Orogen demo: " + message)
	if screenshot_path != "" or views_prefix != "":
		get_tree().quit(1)


func _extent() -> float:
	if terrain.data == null:
		return 25600.0
	return float(max(terrain.data.get_width(), terrain.data.get_depth()) - 1) * terrain.data.cell_size


func _relief() -> float:
	var img: Image = terrain.get_map("height")
	if img == null:
		return 0.0
	var hi: float = -INF
	for y: int in range(0, img.get_height(), 4):
		for x: int in range(0, img.get_width(), 4):
			hi = max(hi, img.get_pixel(x, y).r)
	return hi


## Places the camera on a circle around the terrain, looking at its centre.
func _frame_camera() -> void:
	var extent: float = _extent()
	var radius: float = extent * camera_radius
	var pos := Vector3(cos(orbit_angle) * radius, extent * camera_height, sin(orbit_angle) * radius)
	camera.look_at_from_position(pos, Vector3(0.0, 0.0, extent * 0.06 * sin(orbit_angle)), Vector3.UP)
	# Far enough for the skirt or the sea out to the horizon (TerrainWorld.edge).
	camera.far = extent * 220.0
	camera.near = extent * 0.0005


func _save_screenshot() -> void:
	# One frame takes the applied terrain's textures and the camera's LOD centre, the next
	# draws them (later frames differ only in the rivers' ripples); a third for margin. Each
	# frame of a software renderer takes seconds.
	for i: int in range(3):
		await get_tree().process_frame
	await RenderingServer.frame_post_draw
	var img: Image = get_viewport().get_texture().get_image()
	DirAccess.make_dir_recursive_absolute(screenshot_path.get_base_dir())
	var err: Error = img.save_png(screenshot_path)
	if err != OK:
		push_error("Orogen demo: cannot save %s (%s)" % [screenshot_path, error_string(err)])
		get_tree().quit(1)
		return
	print("orogen-demo: screenshot saved to ", screenshot_path)
	get_tree().quit(0)


## The highest point of the height map (x, z in the terrain's local metres, y its height).
func _highest_point() -> Vector3:
	var img: Image = terrain.get_map("height")
	var best := Vector3(0.0, -INF, 0.0)
	var w: int = img.get_width()
	var d: int = img.get_height()
	for y: int in range(0, d, 2):
		for x: int in range(0, w, 2):
			var h: float = img.get_pixel(x, y).r
			if h > best.y:
				best = Vector3(x, h, y)
	var dx: float = terrain.data.cell_size
	var dz: float = terrain.data.cell_size_y if terrain.data.cell_size_y > 0.0 else dx
	return Vector3((best.x - (w - 1) * 0.5) * dx, best.y, (best.z - (d - 1) * 0.5) * dz)


## A point near half way from the middle to `top` (terrain-local metres) whose cell and the
## cells 100 m around it hold no lake and no river, or half way itself if none is found.
func _dry_point(top: Vector3) -> Vector3:
	var lakes: Image = terrain.get_map("lake_depth")
	var rivers: Image = terrain.get_map("rivers")
	var dx: float = terrain.data.cell_size
	var dz: float = terrain.data.cell_size_y if terrain.data.cell_size_y > 0.0 else dx
	var w: int = terrain.data.get_width()
	var d: int = terrain.data.get_depth()
	var wet := func(p: Vector3) -> bool:
		for oz: float in [-100.0, 0.0, 100.0]:
			for ox: float in [-100.0, 0.0, 100.0]:
				var i: int = clampi(roundi((p.x + ox) / dx + (w - 1) * 0.5), 0, w - 1)
				var j: int = clampi(roundi((p.z + oz) / dz + (d - 1) * 0.5), 0, d - 1)
				if lakes != null and lakes.get_pixel(i, j).r > 0.01:
					return true
				if rivers != null and rivers.get_pixel(i, j).r > 0.0:
					return true
		return false
	for t: float in [0.5, 0.45, 0.55, 0.4, 0.6, 0.35, 0.65, 0.3, 0.7]:
		for side: float in [0.0, 0.05, -0.05, 0.1, -0.1]:
			var p := Vector3(top.x * t - top.z * side, 0.0, top.z * t + top.x * side)
			if not wet.call(p):
				return p
	return top * 0.5


## Saves three views (see the header) and quits.
func _save_views() -> void:
	set_process(false)
	var extent: float = _extent()
	var top: Vector3 = _highest_point()
	var views: Array = [
		["overview", Callable(self, "_frame_camera")],
		["valley", func() -> void:
			# Low over the terrain's edge, looking in along the ground towards the high point.
			var from := Vector3(-top.x * 0.2 + extent * 0.45, 0.0, -top.z * 0.2 + extent * 0.45)
			from.y = terrain.get_height(from.x, from.z) + extent * 0.03
			camera.look_at_from_position(from, Vector3(top.x, top.y * 0.5, top.z), Vector3.UP)],
		["ridge", func() -> void:
			# Beside the highest ground, a little above it, looking across and down.
			var from := top + Vector3(extent * 0.08, extent * 0.015, extent * 0.08)
			from.y = max(from.y, terrain.get_height(from.x, from.z) + extent * 0.01)
			camera.look_at_from_position(from, top + Vector3(-extent * 0.2, -top.y * 0.6, -extent * 0.05), Vector3.UP)],
		["closeup", func() -> void:
			# 2 m above dry ground about half way from the middle to the highest point (not
			# in a lake or on a river: from 2 m up those fill the frame), looking along the
			# ground away from the peak.
			var at := _dry_point(top)
			at.y = terrain.get_height(at.x, at.z) + 2.0
			var away := Vector3(at.x - top.x, 0.0, at.z - top.z).normalized()
			if away.length() < 0.5:
				away = Vector3(1.0, 0.0, 0.0)
			var target := at + away * 60.0
			target.y = terrain.get_height(target.x, target.z)
			camera.look_at_from_position(at, target, Vector3.UP)],
	]
	var checks := ViewChecks.new()
	for view: Array in views:
		(view[1] as Callable).call()
		if view[0] != "overview":
			# Near and far planes for views from low over the ground (2 m for the close-up)
			# out to where the skirt or the sea meets the horizon within a pixel.
			camera.near = 0.5 if view[0] == "closeup" else 2.0
			camera.far = extent * 20.0
		var img: Image = await _grab()
		var path: String = "%s-%s.png" % [views_prefix, view[0]]
		DirAccess.make_dir_recursive_absolute(path.get_base_dir())
		if img.save_png(path) != OK:
			push_error("Orogen demo: cannot save " + path)
			get_tree().quit(1)
			return
		print("orogen-demo: view saved to ", path)
		if check_views:
			await checks.run(self, String(view[0]), img)
	if check_views:
		checks.finish()
	get_tree().quit(0)


## The frame the viewport shows `frames` frames from now: three after the camera moved (one
## takes the LOD centre, the next draws it, a third for margin), one after a change of
## colours only.
func _grab(frames: int = 3) -> Image:
	for i: int in range(frames):
		await get_tree().process_frame
	await RenderingServer.frame_post_draw
	return get_viewport().get_texture().get_image()


## Checks on the demo's views (`--orogen-check-views`, tests/godot/run.sh), each printed as
## `PASS name` / `FAIL name: why`, then `RESULT passed=N failed=M`:
## - no background below the horizon: the frame again with the sky and fog replaced by a green
##   key colour, and no key-coloured pixel below the eye-level horizon (the row of a point far
##   ahead at the camera's height);
## - with `--orogen-check-snow`, no snow below the snowline: that same second frame also with
##   the terrain shader's debug view 5 (magenta below the snowline's altitude), and no
##   snow-coloured pixel of the lit frame (near white, not warm) on magenta.
class ViewChecks:
	var passed: int = 0
	var failed: int = 0

	func report(name: String, ok: bool, why: String) -> void:
		if ok:
			passed += 1
			print("PASS ", name)
		else:
			failed += 1
			print("FAIL ", name, ": ", why)

	func run(demo: Node3D, view: String, lit: Image) -> void:
		var camera: Camera3D = demo.camera
		var env: Environment = demo.get_world_3d().environment
		var fwd: Vector3 = -camera.global_transform.basis.z
		fwd.y = 0.0
		var horizon: int = lit.get_height()
		if fwd.length() > 1.0e-3:
			var far_point: Vector3 = camera.global_position + fwd.normalized() * camera.far * 0.5
			horizon = int(clamp(camera.unproject_position(far_point).y, 0.0, float(lit.get_height())))
		# One more frame answers both checks: the sky and fog swapped for a green key colour
		# and, with --orogen-check-snow, the terrain shader's debug view 5 (the ground below
		# the snowline magenta, above it black; the sea, lakes and skirt keep their colours).
		var saved := [env.background_mode, env.background_color, env.fog_enabled]
		env.background_mode = Environment.BG_COLOR
		env.background_color = Color(0.0, 1.0, 0.0)
		env.fog_enabled = false
		var material: ShaderMaterial = demo.terrain.get_terrain_material()
		if demo.check_snow:
			material.set_shader_parameter("debug_view", 5)
		# The camera has not moved since the lit frame: the next frame drawn shows the change.
		var keyed: Image = await demo._grab(1)
		material.set_shader_parameter("debug_view", 0)
		env.background_mode = saved[0]
		env.background_color = saved[1]
		env.fog_enabled = saved[2]
		keyed.convert(Image.FORMAT_RGB8)
		var below: int = 0
		var counted: int = 0
		for y: int in range(min(horizon + 3, keyed.get_height()), keyed.get_height(), 2):
			for x: int in range(0, keyed.get_width(), 2):
				counted += 1
				var c: Color = keyed.get_pixel(x, y)
				if c.g > 0.9 and c.r < 0.1 and c.b < 0.1:
					below += 1
		if below > 0 or OS.has_environment("OROGEN_KEEP_KEYED"):
			keyed.save_png("%s-%s-background.png" % [demo.views_prefix, view])
		report("%s_no_background_below_horizon" % view, below == 0,
			"%d of %d pixels below the horizon (row %d) are background" % [below, counted, horizon])
		if not demo.check_snow:
			return
		# Snow below the snowline: a snow-coloured pixel of the lit frame on magenta.
		lit.convert(Image.FORMAT_RGB8)
		var snow_below: int = 0
		var snow: int = 0
		for y: int in range(0, lit.get_height(), 2):
			for x: int in range(0, lit.get_width(), 2):
				var c: Color = lit.get_pixel(x, y)
				# Snow: near white and not warm (pale sand and lit limestone are warm).
				if c.v > 0.85 and c.s < 0.08 and c.b >= c.r - 0.02:
					snow += 1
					var m: Color = keyed.get_pixel(x, y)
					if m.r > 0.9 and m.b > 0.9 and m.g < 0.1:
						snow_below += 1
		report("%s_no_snow_below_snowline" % view, snow_below == 0,
			"%d of %d snow-coloured pixels lie below the snowline" % [snow_below, snow])

	func finish() -> void:
		print("RESULT passed=%d failed=%d" % [passed, failed])
