extends RefCounted
## The demo scenes' views of a finished TerrainWorld (tests/godot/run.sh and the README's
## gallery): `overview` (the scene's own orbit camera), `valley` (low over the terrain's edge,
## or its shore where the edge is under the sea, looking in along the ground towards the
## highest point), `ridge` (beside the highest ground,
## looking across and down) and, when `closeup` is set, `closeup` (2 m above dry ground). Each
## is saved as PREFIX-NAME.png and, with `check` set, checked (see `_check_view`), each check
## printed as `PASS name` / `FAIL name: why` and counted in `passed` / `failed`.
##
## Used by main.gd (and the scenes built on it), paint.gd and lod.gd:
##     var views := Views.new(self, terrain, camera, prefix)
##     views.overview = _frame_camera
##     if not await views.save(): ...   # false when a file could not be written
##
## Frames: a software renderer takes seconds a frame at 1600x900, so each view costs the
## frames it needs and no more. Moving the camera changes only what the next frame draws:
## TerrainWorld takes the camera's LOD centre in its process step, before the frame is drawn,
## so the first frame drawn after the move is final: the demo's four views grabbed after three
## frames differ from these only in the rivers' animated ripples (OROGEN_VIEWS_SETTLE=3 draws
## those frames, to compare again). The first view waits one frame more for the applied
## terrain's textures.

var scene: Node3D
var terrain: TerrainWorld
var camera: Camera3D
var prefix: String
## Sets the camera for the overview; by default an orbit at `orbit_height` and `orbit_radius`
## times the extent, at `orbit_angle`, looking at the middle.
var overview: Callable
var orbit_height: float = 0.36
var orbit_radius: float = 0.58
var orbit_angle: float = 0.6
## The close-up 2 m above the ground (the demo's; the other scenes skip it).
var closeup: bool = false
## Checks each view after saving it: no background below the horizon.
var check: bool = false
## With `check`, also no snow-coloured pixel below the snowline (the terrain shader's debug
## view 5 marks the ground below it).
var check_snow: bool = false
## Frames drawn after the camera moves, before the one grabbed (see the header).
var settle_frames: int = 0
var passed: int = 0
var failed: int = 0


func _init(p_scene: Node3D, p_terrain: TerrainWorld, p_camera: Camera3D, p_prefix: String) -> void:
	scene = p_scene
	terrain = p_terrain
	camera = p_camera
	prefix = p_prefix
	overview = _orbit
	# OROGEN_VIEWS_SETTLE=N draws N more frames before each grab (to compare: the pictures
	# must not change).
	if OS.has_environment("OROGEN_VIEWS_SETTLE"):
		settle_frames = int(OS.get_environment("OROGEN_VIEWS_SETTLE"))


## The names of the views `save` renders, in order.
func names() -> PackedStringArray:
	var out: PackedStringArray = ["overview", "valley", "ridge"]
	if closeup:
		out.append("closeup")
	return out


## Renders, saves and (with `check`) checks every view; false when a file could not be
## written (after push_error naming it).
func save() -> bool:
	var extent: float = extent_m()
	var top: Vector3 = highest_point()
	var first: bool = true
	for view: String in names():
		match view:
			"overview":
				overview.call()
			"valley":
				# Low over the terrain's edge, looking in along the ground towards the high point.
				var from := Vector3(-top.x * 0.2 + extent * 0.45, 0.0, -top.z * 0.2 + extent * 0.45)
				# On an island, in from the sea to its shore (from the sea the view showed the
				# whole island's coast, and no valley).
				for i: int in range(16):
					if not terrain.sea_enabled or terrain.get_height(from.x, from.z) > terrain.sea_level + 2.0:
						break
					from = from.lerp(Vector3(top.x, 0.0, top.z), 0.08)
				from.y = terrain.get_height(from.x, from.z) + extent * 0.03
				camera.look_at_from_position(from, Vector3(top.x, top.y * 0.5, top.z), Vector3.UP)
			"ridge":
				# Beside the highest ground, a little above it, looking across and down.
				var from := top + Vector3(extent * 0.08, extent * 0.015, extent * 0.08)
				from.y = max(from.y, terrain.get_height(from.x, from.z) + extent * 0.01)
				camera.look_at_from_position(from, top + Vector3(-extent * 0.2, -top.y * 0.6, -extent * 0.05), Vector3.UP)
			"closeup":
				# 2 m above dry ground about half way from the middle to the highest point (not
				# in a lake or on a river: from 2 m up those fill the frame), looking along the
				# ground away from the peak.
				var at := dry_point(top)
				at.y = terrain.get_height(at.x, at.z) + 2.0
				var away := Vector3(at.x - top.x, 0.0, at.z - top.z).normalized()
				if away.length() < 0.5:
					away = Vector3(1.0, 0.0, 0.0)
				var target := at + away * 60.0
				target.y = terrain.get_height(target.x, target.z)
				camera.look_at_from_position(at, target, Vector3.UP)
		# The LOD centre on the camera now, for the next frame drawn.
		terrain.follow_camera()
		if view != "overview":
			# Near and far planes for views from low over the ground (2 m for the close-up)
			# out to where the skirt or the sea meets the horizon within a pixel.
			camera.near = 0.5 if view == "closeup" else 2.0
			camera.far = extent * 20.0
		var t0: int = Time.get_ticks_msec()
		var img: Image = await grab(settle_frames + (1 if first else 0))
		var drawn_ms: int = Time.get_ticks_msec() - t0
		first = false
		var path: String = "%s-%s.png" % [prefix, view]
		DirAccess.make_dir_recursive_absolute(path.get_base_dir())
		if img.save_png(path) != OK:
			push_error("Orogen views: cannot save " + path)
			return false
		t0 = Time.get_ticks_msec()
		# The keyed frame costs as much as the view: it is drawn for every overview (no
		# background below the horizon, #37), and for every view where snow is checked.
		if check and (view == "overview" or check_snow):
			await _check_view(view, img)
		print("orogen-views: %s saved to %s (drawn in %d ms, checked in %d ms)" % [
			view, path, drawn_ms, Time.get_ticks_msec() - t0])
	return true


## The terrain's extent in metres (its longer side).
func extent_m() -> float:
	if terrain.data == null:
		return 25600.0
	return float(max(terrain.data.get_width(), terrain.data.get_depth()) - 1) * terrain.data.cell_size


## The default overview: an orbit around the terrain, looking at its middle.
func _orbit() -> void:
	var extent: float = extent_m()
	var radius: float = extent * orbit_radius
	var pos := Vector3(cos(orbit_angle) * radius, extent * orbit_height, sin(orbit_angle) * radius)
	camera.look_at_from_position(pos, Vector3(0.0, 0.0, extent * 0.06 * sin(orbit_angle)), Vector3.UP)
	camera.far = extent * 220.0
	camera.near = extent * 0.0005


## The frame the viewport shows after `frames` more frames are drawn (0: the next one).
func grab(frames: int) -> Image:
	for i: int in range(frames):
		await RenderingServer.frame_post_draw
	await RenderingServer.frame_post_draw
	return scene.get_viewport().get_texture().get_image()


## The highest point of the height map (x, z in the terrain's local metres, y its height),
## read on a grid of at most about 512² samples.
func highest_point() -> Vector3:
	var img: Image = terrain.get_map("height")
	var best := Vector3(0.0, -INF, 0.0)
	var w: int = img.get_width()
	var d: int = img.get_height()
	var stride: int = maxi(2, maxi(w, d) / 512)
	for y: int in range(0, d, stride):
		for x: int in range(0, w, stride):
			var h: float = img.get_pixel(x, y).r
			if h > best.y:
				best = Vector3(x, h, y)
	var dx: float = terrain.data.cell_size
	var dz: float = terrain.data.cell_size_y if terrain.data.cell_size_y > 0.0 else dx
	return Vector3((best.x - (w - 1) * 0.5) * dx, best.y, (best.z - (d - 1) * 0.5) * dz)


## A point near half way from the middle to `top` (terrain-local metres) whose cell and the
## cells 100 m around it hold no lake and no river, or half way itself if none is found.
func dry_point(top: Vector3) -> Vector3:
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


func report(name: String, ok: bool, why: String) -> void:
	if ok:
		passed += 1
		print("PASS ", name)
	else:
		failed += 1
		print("FAIL ", name, ": ", why)


## Checks a view just grabbed (`lit`), the camera unmoved (the overview always; the other
## views where snow is checked):
## - no background below the horizon: the frame again with the sky and fog replaced by a green
##   key colour, and no key-coloured pixel below the eye-level horizon (the row of a point far
##   ahead at the camera's height);
## - with `check_snow`, no snow below the snowline: that same second frame also with the
##   terrain shader's debug view 5 (magenta below the snowline's altitude), and no
##   snow-coloured pixel of the lit frame (near white, not warm) on magenta.
func _check_view(view: String, lit: Image) -> void:
	var env: Environment = scene.get_world_3d().environment
	var fwd: Vector3 = -camera.global_transform.basis.z
	fwd.y = 0.0
	var horizon: int = lit.get_height()
	if fwd.length() > 1.0e-3:
		var far_point: Vector3 = camera.global_position + fwd.normalized() * camera.far * 0.5
		horizon = int(clamp(camera.unproject_position(far_point).y, 0.0, float(lit.get_height())))
	# One more frame answers both checks: the sky and fog swapped for a green key colour
	# and, with check_snow, the terrain shader's debug view 5 (the ground below the snowline
	# magenta, above it black; the sea, lakes and skirt keep their colours).
	var saved := [env.background_mode, env.background_color, env.fog_enabled]
	env.background_mode = Environment.BG_COLOR
	env.background_color = Color(0.0, 1.0, 0.0)
	env.fog_enabled = false
	var material: ShaderMaterial = terrain.get_terrain_material()
	# 6: the ground unshaded (only where it is counts here); 5: also the snowline.
	material.set_shader_parameter("debug_view", 5 if check_snow else 6)
	# The camera has not moved since the lit frame: the next frame drawn shows the change.
	var t0: int = Time.get_ticks_msec()
	var keyed: Image = await grab(0)
	print("orogen-views: %s keyed frame drawn in %d ms" % [view, Time.get_ticks_msec() - t0])
	material.set_shader_parameter("debug_view", 0)
	env.background_mode = saved[0]
	env.background_color = saved[1]
	env.fog_enabled = saved[2]
	keyed.convert(Image.FORMAT_RGB8)
	var w: int = keyed.get_width()
	var h: int = keyed.get_height()
	# Every second pixel of every second row, read from the bytes (get_pixel makes a Color a
	# pixel, several times slower): a key-coloured one has g > 0.9, r and b < 0.1.
	var kb: PackedByteArray = keyed.get_data()
	var below: int = 0
	var counted: int = 0
	for y: int in range(min(horizon + 3, h), h, 2):
		var i: int = y * w * 3
		for x: int in range(0, w, 2):
			counted += 1
			var k: int = i + x * 3
			if kb[k + 1] > 229 and kb[k] < 26 and kb[k + 2] < 26:
				below += 1
	if below > 0 or OS.has_environment("OROGEN_KEEP_KEYED"):
		keyed.save_png("%s-%s-background.png" % [prefix, view])
	report("%s_no_background_below_horizon" % view, below == 0,
		"%d of %d pixels below the horizon (row %d) are background" % [below, counted, horizon])
	if not check_snow:
		return
	# Snow below the snowline: a snow-coloured pixel of the lit frame on magenta. Snow: near
	# white (value over 0.85, saturation under 0.08) and not warm (blue at least red - 0.02;
	# pale sand and lit limestone are warm); magenta: r and b over 0.9, g under 0.1.
	lit.convert(Image.FORMAT_RGB8)
	var lb: PackedByteArray = lit.get_data()
	var snow_below: int = 0
	var snow: int = 0
	for y: int in range(0, h, 2):
		var i: int = y * w * 3
		for x: int in range(0, w, 2):
			var k: int = i + x * 3
			var r: int = lb[k]
			var g: int = lb[k + 1]
			var b: int = lb[k + 2]
			var hi: int = maxi(r, maxi(g, b))
			if hi * 100 <= 85 * 255:
				continue
			var lo: int = mini(r, mini(g, b))
			if (hi - lo) * 100 >= 8 * hi or b * 50 < r * 50 - 255:
				continue
			snow += 1
			if kb[k] > 229 and kb[k + 2] > 229 and kb[k + 1] < 26:
				snow_below += 1
	report("%s_no_snow_below_snowline" % view, snow_below == 0,
		"%d of %d snow-coloured pixels lie below the snowline" % [snow_below, snow])
