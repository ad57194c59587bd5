extends Node3D
## Orogen demo: grows a terrain at load (ErosionSimulator on TerrainWorld's recipe), shows it
## growing live, then orbits the camera around it. Used by main.tscn (a mountain range and a
## sea plane) and strata.tscn (layered rock cut into mesas, no sea).
##
## Command-line options (after `--`): `--orogen-screenshot=PATH` saves one frame to PATH once
## the terrain is finished and quits (used by tests/godot/run.sh).

@onready var terrain: TerrainWorld = $Terrain
@onready var simulator: ErosionSimulator = $Terrain/Simulator
@onready var camera: Camera3D = $Camera
## The sea plane, if the scene has one.
@onready var water: MeshInstance3D = get_node_or_null(^"Water") as MeshInstance3D
@onready var status: Label = $HUD/Status

## Camera height and orbit radius as fractions of the terrain's extent.
@export var camera_height: float = 0.36
@export var camera_radius: float = 0.58
@export var orbit_angle: float = 0.6

var orbit_speed: float = 0.05
var screenshot_path: String = ""


func _ready() -> void:
	for arg: String in OS.get_cmdline_user_args():
		if arg.begins_with("--orogen-screenshot="):
			screenshot_path = arg.get_slice("=", 1)
			orbit_speed = 0.0
	simulator.progress.connect(_on_progress)
	simulator.failed.connect(_on_failed)
	_frame_camera()
	if not simulator.start():
		return
	await simulator.finished
	status.text = "Orogen: %d x %d cells, %.0f m" % [terrain.data.get_width(), terrain.data.get_depth(), _relief()]
	_terrain_ready()
	_frame_camera()
	if screenshot_path != "":
		_save_screenshot()


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
	if screenshot_path != "":
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
	camera.far = extent * 4.0
	camera.near = extent * 0.0005
	if water != null:
		# Wider than the far plane reaches, so the sea ends at the far plane (a straight
		# line, hidden in main.tscn's depth fog), never at the plane's own edge.
		(water.mesh as PlaneMesh).size = Vector2(extent * 12.0, extent * 12.0)


func _save_screenshot() -> void:
	# Let the renderer settle (shadows, sky) for a few frames.
	for i: int in range(8):
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
