extends Node3D
## Orogen planet demo: a tectonic planet (PlanetWorld) simulated live off the main thread,
## its plates drifting and colliding; when done, a marker shows its strongest collision and
## the recipe of a TerrainWorld made from that region is printed.
##
## Command-line options (after `--`): `--orogen-screenshot=PATH` checks the finished planet
## (PASS/FAIL lines, `RESULT passed=N failed=M`), saves one frame to PATH and quits with 0
## when every check passed. `--orogen-views=PREFIX` does the same checks, then saves and
## checks three views: PREFIX-overview.png (the whole globe over the strongest collision),
## PREFIX-limb.png (low over the surface, the curved horizon against space) and
## PREFIX-coast.png (close over a coast near the strongest collision); used by
## tests/godot/run.sh. `--plates` colours by plate.

@onready var planet: PlanetWorld = $Planet
@onready var camera: Camera3D = $Camera
@onready var status: Label = $HUD/Status
@onready var sun: DirectionalLight3D = $Sun

var orbit_angle: float = 0.6
var orbit_speed: float = 0.1
var screenshot_path: String = ""
var views_prefix: String = ""
var passed: int = 0
var failed: int = 0
var marker: MeshInstance3D
## Set once the run is done in screenshot mode: the camera looks down on this direction.
var focus := Vector3.ZERO


func _ready() -> void:
	for arg: String in OS.get_cmdline_user_args():
		if arg.begins_with("--orogen-screenshot="):
			screenshot_path = arg.get_slice("=", 1)
			orbit_speed = 0.0
		elif arg.begins_with("--orogen-views="):
			views_prefix = arg.get_slice("=", 1)
			orbit_speed = 0.0
		elif arg == "--plates":
			planet.colour_by = 1
	planet.stepped.connect(_on_stepped)
	planet.failed.connect(_on_failed)
	_frame_camera()
	var started_ms: int = Time.get_ticks_msec()
	if not planet.start():
		return
	await planet.finished
	var seconds: float = (Time.get_ticks_msec() - started_ms) / 1000.0
	var at: Vector2 = planet.greatest_uplift()
	status.text = "Orogen planet: %d points, %d steps in %.1f s; strongest collision at %.1f°, %.1f°" % [
		planet.get_point_count(), planet.get_steps_done(), seconds, at.x, at.y]
	_place_marker(at)
	var ron: String = planet.make_region_recipe(at.x, at.y, 1024.0, 257)
	print("orogen-planet: region recipe of the strongest collision:\n", ron)
	if screenshot_path != "" or views_prefix != "":
		_check(at, ron)
		# Look down on the strongest collision, from a little to its east and north.
		focus = _direction(at.x + 12.0, at.y + 25.0).normalized()
		_frame_camera()
		if views_prefix != "":
			_save_views(at)
		else:
			_save_screenshot()


func _process(delta: float) -> void:
	orbit_angle += orbit_speed * delta
	_frame_camera()


func _on_stepped(step: int) -> void:
	status.text = "Orogen planet: step %d / %d" % [step, planet.steps]


func _on_failed(message: String) -> void:
	status.text = "Orogen planet failed: " + message
	push_error("Orogen planet demo: " + message)
	if screenshot_path != "" or views_prefix != "":
		get_tree().quit(1)


## Unit vector (Godot axes, y up) at latitude / longitude in degrees: the planet's x, y, z
## (z north) drawn as x, -z, y.
func _direction(lat: float, lon: float) -> Vector3:
	var la: float = deg_to_rad(lat)
	var lo: float = deg_to_rad(lon)
	return Vector3(cos(la) * cos(lo), sin(la), -cos(la) * sin(lo))


func _place_marker(at: Vector2) -> void:
	if is_nan(at.x):
		return
	marker = MeshInstance3D.new()
	var ring := TorusMesh.new()
	ring.inner_radius = 0.9
	ring.outer_radius = 1.0
	marker.mesh = ring
	var mat := StandardMaterial3D.new()
	mat.albedo_color = Color(1.0, 0.2, 0.1)
	mat.shading_mode = BaseMaterial3D.SHADING_MODE_UNSHADED
	marker.material_override = mat
	var up: Vector3 = _direction(at.x, at.y)
	var pos: Vector3 = up * planet.display_radius * 1.08
	var side: Vector3 = up.cross(Vector3.UP if abs(up.y) < 0.9 else Vector3.RIGHT).normalized()
	marker.transform = Transform3D(Basis(side, up, side.cross(up)).scaled(Vector3.ONE * 0.8), pos)
	add_child(marker)


func _frame_camera() -> void:
	var r: float = planet.display_radius * 2.5
	var pos := Vector3(cos(orbit_angle) * r, r * 0.35, -sin(orbit_angle) * r)
	if focus != Vector3.ZERO:
		pos = focus * r
	_aim(pos, Vector3.ZERO)


## The camera at `pos` looking at `target` (the frame's up towards `up`, else the world's),
## the sun shining from beside and above the camera, so the side in view is lit at a slant
## that shows the relief.
func _aim(pos: Vector3, target: Vector3, up: Vector3 = Vector3.ZERO) -> void:
	var r: float = planet.display_radius * 2.5
	if up == Vector3.ZERO:
		up = Vector3.UP if abs((target - pos).normalized().y) < 0.95 else Vector3.RIGHT
	camera.look_at_from_position(pos, target, up)
	var side: Vector3 = camera.global_transform.basis.x
	sun.look_at_from_position(pos + side * r * 0.9 + camera.global_transform.basis.y * r * 0.5,
		Vector3.ZERO, up)


func report(name: String, ok: bool, why: String = "") -> void:
	if ok:
		passed += 1
		print("PASS ", name)
	else:
		failed += 1
		print("FAIL ", name, ": ", why)


func _check(at: Vector2, ron: String) -> void:
	var n: int = planet.get_point_count()
	report("planet_finished", n >= 12 and planet.get_steps_done() == planet.steps,
		"points %d, steps %d of %d" % [n, planet.get_steps_done(), planet.steps])
	# Every point, and one vertex on each edge of the closed triangulation (3n - 6 edges),
	# where each triangle is split into four.
	report("mesh_has_every_point", planet.get_drawn_vertex_count() == 4 * n - 6,
		"drawn %d vertices for %d points (want 4n - 6)" % [planet.get_drawn_vertex_count(), n])
	var s: Dictionary = planet.sample(at.x, at.y)
	report("sample_at_strongest_collision", s.has("elevation") and s.uplift > 0.0
		and s.elevation >= -10000.0 and s.elevation <= 10000.0, str(s))
	# A ray from outside straight down onto (lat, lon) picks that place.
	var worst: float = 0.0
	for ll: Vector2 in [Vector2(10, 20), Vector2(-45, 170), Vector2(60, -100), Vector2(at.x, at.y)]:
		var d: Vector3 = _direction(ll.x, ll.y)
		var got: Vector2 = planet.pick(d * planet.display_radius * 3.0, -d)
		var dlon: float = fposmod(got.y - ll.y + 180.0, 360.0) - 180.0
		worst = max(worst, max(abs(got.x - ll.x), abs(dlon)))
	report("pick_finds_lat_lon", worst < 0.01, "worst error %.4f°" % worst)
	report("pick_misses_outside", is_nan(planet.pick(Vector3(0, 50, 0), Vector3(1, 0, 0)).x))
	var recipe := TerrainRecipe.new()
	recipe.ron = ron
	var err: String = recipe.validate()
	report("region_recipe_validates", ron != "" and err == "" and ron.contains("Planet("), err)
	report("bad_region_is_refused", planet.make_region_recipe(95.0, 0.0, 1024.0, 257) == ""
		and planet.get_last_error().contains("region.lat"), planet.get_last_error())


## A coast on a 2° grid: a low land sample (under 800 m) beside a sea one, at least 15° from
## the strongest collision `at` (latitude, longitude in degrees; its belt is a wall at this
## exaggeration) and the nearest such to it; `at` itself when none is found.
func _coast_near(at: Vector2) -> Vector2:
	var best := at
	var best_d: float = INF
	var centre: Vector3 = _direction(at.x, at.y)
	for ilat: int in range(-70, 71, 2):
		for ilon: int in range(-180, 180, 2):
			var lat: float = ilat
			var lon: float = ilon
			var d: float = _direction(lat, lon).angle_to(centre)
			if d < deg_to_rad(15.0) or d >= best_d:
				continue
			var e: float = float(planet.sample(lat, lon).get("elevation", 0.0))
			if e <= 0.0 or e > 800.0:
				continue
			for o: Vector2 in [Vector2(2, 0), Vector2(-2, 0), Vector2(0, 2), Vector2(0, -2)]:
				if float(planet.sample(lat + o.x, lon + o.y).get("elevation", 1.0)) < 0.0:
					best_d = d
					best = Vector2(lat, lon)
					break
	return best


## Saves and checks the three views (see the header), then quits.
func _save_views(at: Vector2) -> void:
	# The orbit no longer moves the camera.
	set_process(false)
	var r: float = planet.display_radius
	var coast: Vector2 = _coast_near(at)
	var c: Vector3 = _direction(coast.x, coast.y)
	# Over a point 30° towards the equator from the strongest collision, 12% of the radius
	# up, looking at the collision: its range on the curved horizon, space above.
	var over: Vector3 = _direction(at.x - 30.0 * signf(at.x), at.y)
	var limb_at: Vector3 = over * r * 1.12
	var views: Array = [
		["overview", func() -> void: _frame_camera()],
		["limb", func() -> void: _aim(limb_at, _direction(at.x, at.y) * r, over)],
		["coast", func() -> void: _aim(c * r * 1.35 + over.cross(c).normalized() * r * 0.15, c * r)],
	]
	var limits: Dictionary = {"overview": [15.0, 90.0], "limb": [30.0, 97.0], "coast": [60.0, 100.0]}
	# The finished planet's mesh goes to the renderer in the next frame.
	for i: int in range(2):
		await get_tree().process_frame
	for view: Array in views:
		(view[1] as Callable).call()
		# The ring marks the collision on the globe; close up it would hide the ground.
		if marker != null:
			marker.visible = view[0] == "overview"
		var limit: Array = limits[view[0]]
		await _grab_and_check(String(view[0]), "%s-%s.png" % [views_prefix, view[0]], limit[0], limit[1])
	print("orogen-planet: coast view over %.0f°, %.0f°" % [coast.x, coast.y])
	print("RESULT passed=%d failed=%d" % [passed, failed])
	get_tree().quit(0 if failed == 0 else 1)


## Grabs the next frame drawn, saves it to `path` and checks the planet covers between `lo`
## and `hi` percent of it, in at least three hues.
func _grab_and_check(view: String, path: String, lo: float, hi: float) -> void:
	await RenderingServer.frame_post_draw
	var img: Image = get_viewport().get_texture().get_image()
	DirAccess.make_dir_recursive_absolute(path.get_base_dir())
	var err: Error = img.save_png(path)
	report("%s_saved" % view, err == OK, "%s: %s" % [path, error_string(err)])
	var cover: Array = _coverage(img)
	var share: float = cover[0]
	var hues: int = cover[1]
	print("  screenshot %s: planet covers %.1f%% of the frame, %d hue bins" % [view, share, hues])
	report("%s_planet_in_frame" % view, share > lo and share <= hi and hues >= 3,
		"%.1f%% lit (%.0f to %.0f%% wanted), %d hues" % [share, lo, hi, hues])


## The share of `img` (percent) brighter than the night behind the planet, and how many of
## twelve hue bins that lit part fills; every fourth pixel of every fourth row.
func _coverage(img: Image) -> Array:
	img.convert(Image.FORMAT_RGB8)
	var lit: int = 0
	var total: int = 0
	var hues: Dictionary = {}
	for y: int in range(0, img.get_height(), 4):
		for x: int in range(0, img.get_width(), 4):
			var col: Color = img.get_pixel(x, y)
			total += 1
			if col.get_luminance() > 0.08:
				lit += 1
				hues[int(col.h * 12.0)] = true
	return [100.0 * lit / max(total, 1), hues.size()]


func _save_screenshot() -> void:
	# The finished planet's mesh, then a frame drawing it; a third for margin.
	for i: int in range(3):
		await get_tree().process_frame
	await RenderingServer.frame_post_draw
	var img: Image = get_viewport().get_texture().get_image()
	DirAccess.make_dir_recursive_absolute(screenshot_path.get_base_dir())
	var err: Error = img.save_png(screenshot_path)
	report("screenshot_saved", err == OK, error_string(err))
	# The planet covers a good part of the frame, in more than one colour.
	var cover: Array = _coverage(img)
	var share: float = cover[0]
	var hues: int = cover[1]
	print("  screenshot: planet covers %.1f%% of the frame, %d hue bins" % [share, hues])
	report("planet_in_frame", share > 15.0 and share < 90.0 and hues >= 3,
		"%.1f%% lit, %d hues" % [share, hues])
	print("RESULT passed=%d failed=%d" % [passed, failed])
	get_tree().quit(0 if failed == 0 else 1)
