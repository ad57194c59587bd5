extends Node3D
## Orogen demo: grows a terrain at load (ErosionSimulator on TerrainWorld's recipe), shows it
## growing live, then orbits the camera around it. Used by main.tscn (a mountain range and a
## sea: TerrainWorld's `sea_enabled`) and strata.tscn (layered rock cut into mesas, no sea).
##
## Command-line options (after `--`): `--orogen-screenshot=PATH` saves one frame to PATH once
## the terrain is finished and quits; `--orogen-views=PREFIX` saves PREFIX-overview.png,
## PREFIX-valley.png and PREFIX-ridge.png from three camera positions (the orbit, low over a
## valley, and close to the highest ground looking across it; views.gd), with
## `--orogen-closeup` also PREFIX-closeup.png 2 m above the ground, and quits (used by
## tests/godot/run.sh, which adds `--orogen-check-views` and, for the demo and rills,
## `--orogen-check-snow`).

const Views := preload("res://views.gd")

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
## With `--orogen-check-views`, each view is checked after it is saved (views.gd).
var check_views: bool = false
## With `--orogen-check-snow` too, the views are also checked for snow below the snowline.
var check_snow: bool = false
## With `--orogen-closeup`, the views end with one 2 m above the ground.
var closeup: bool = false


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
		elif arg == "--orogen-closeup":
			closeup = true
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


## Saves the views (views.gd: overview, valley, ridge, and the close-up with
## `--orogen-closeup`), checks them with `--orogen-check-views`, and quits.
func _save_views() -> void:
	set_process(false)
	var views := Views.new(self, terrain, camera, views_prefix)
	views.overview = _frame_camera
	views.closeup = closeup
	views.check = check_views
	views.check_snow = check_snow
	var ok: bool = await views.save()
	if check_views:
		print("RESULT passed=%d failed=%d" % [views.passed, views.failed])
	get_tree().quit(0 if ok else 1)
